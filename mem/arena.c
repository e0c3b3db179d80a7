/* mem: the chunked bump allocator (mem.h). */
#include "mem/mem.h"

#include <stdlib.h>
#include <string.h>

struct mem_chunk {
	struct mem_chunk *next;
	size_t used, cap;
	_Alignas(8) char data[];
};

/* SIZE bytes at an offset rounded up to ALIGN (1 or 8) in the newest
 * chunk, or in a new one when they do not fit (the rest of the old one is
 * left unused). */
static void *take(struct mem_arena *a, size_t size, size_t align)
{
	struct mem_chunk *c = a->head;
	size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || at > c->cap || c->cap - at < size) {
		size_t cap = a->chunk ? a->chunk : MEM_ARENA_CHUNK;
		if (size > cap)
			cap = size;
		if (cap > SIZE_MAX - sizeof(*c) || !(c = malloc(sizeof(*c) + cap)))
			return NULL;
		*c = (struct mem_chunk){ .next = a->head, .cap = cap };
		a->head = c;
		at = 0;
	}
	c->used = at + size;
	return c->data + at;
}

void *mem_arena_alloc(struct mem_arena *a, size_t size)
{
	return take(a, (size + 7) & ~(size_t)7, 8);
}

char *mem_arena_strdup(struct mem_arena *a, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = take(a, len, 1);
	return p ? memcpy(p, s, len) : NULL;
}

void mem_arena_free(struct mem_arena *a)
{
	for (struct mem_chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}
