/* stack_pool.h says what and why. */
#include <stdlib.h>
#include "collector/stack_pool.h"

/* The class of N addresses: 8 << class holds them; FT_STACK_POOL_CLASSES
 * when none does. */
static unsigned class_of(uint32_t n)
{
	unsigned c = 0;
	while (c < FT_STACK_POOL_CLASSES && (8u << c) < n)
		c++;
	return c;
}

uint64_t *ft_stack_pool_get(struct ft_stack_pool *p, uint32_t n)
{
	unsigned c = class_of(n);
	if (c == FT_STACK_POOL_CLASSES)
		return malloc((size_t)n * sizeof(uint64_t));
	void *b = p->free[c];
	if (b) {
		p->free[c] = *(void **)b;
		p->nfree[c]--;
	} else if ((b = malloc((size_t)(8u << c) * sizeof(uint64_t)))) {
		p->made++;
	} else {
		return NULL;
	}
	p->nused[c]++;
	return b;
}

void ft_stack_pool_put(struct ft_stack_pool *p, uint64_t *b, uint32_t n)
{
	unsigned c = class_of(n);
	if (!b)
		return;
	if (c == FT_STACK_POOL_CLASSES) {
		free(b);
		return;
	}
	p->nused[c]--;
	if (p->nfree[c] < p->nused[c] + FT_STACK_POOL_SLACK) {
		*(void **)b = p->free[c];
		p->free[c] = b;
		p->nfree[c]++;
		return;
	}
	/* the load fell: the free list shrinks with what is in use */
	free(b);
	while (p->nfree[c] > p->nused[c] + FT_STACK_POOL_SLACK) {
		void *next = *(void **)p->free[c];
		free(p->free[c]);
		p->free[c] = next;
		p->nfree[c]--;
	}
}

size_t ft_stack_pool_kept(const struct ft_stack_pool *p)
{
	size_t n = 0;
	for (unsigned c = 0; c < FT_STACK_POOL_CLASSES; c++)
		n += p->nfree[c];
	return n;
}

void ft_stack_pool_clear(struct ft_stack_pool *p)
{
	for (unsigned c = 0; c < FT_STACK_POOL_CLASSES; c++) {
		while (p->free[c]) {
			void *next = *(void **)p->free[c];
			free(p->free[c]);
			p->free[c] = next;
		}
		p->nfree[c] = 0;
	}
}
