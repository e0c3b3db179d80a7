/* stack_pool: buffers of stack addresses used again instead of malloc'd
 * and freed one per event (offcpu.c keeps each switch-out's stacks until
 * its switch-in is read). Sizes go by power-of-two classes; each class
 * keeps at most as many free buffers as it has in use, plus a few, so the
 * pool follows the load and gives memory back when it falls. */
#ifndef FTSTACK_STACK_POOL_H
#define FTSTACK_STACK_POOL_H

#include <stddef.h>
#include <stdint.h>

#define FT_STACK_POOL_CLASSES 10 /* 8 to 4096 addresses; larger: malloc and free */
#define FT_STACK_POOL_SLACK 16   /* free buffers a class keeps beyond those in use */

struct ft_stack_pool {
	void *free[FT_STACK_POOL_CLASSES];  /* lists linked through each buffer's first word */
	size_t nfree[FT_STACK_POOL_CLASSES], nused[FT_STACK_POOL_CLASSES];
	uint64_t made;                      /* buffers malloc'd */
};

/* A buffer of at least N addresses (N > 0), or NULL without memory. */
uint64_t *ft_stack_pool_get(struct ft_stack_pool *p, uint32_t n);
/* Gives back B (from ft_stack_pool_get with the same N; NULL: nothing). */
void ft_stack_pool_put(struct ft_stack_pool *p, uint64_t *b, uint32_t n);
/* How many free buffers the pool holds. */
size_t ft_stack_pool_kept(const struct ft_stack_pool *p);
/* Frees the free buffers (those in use stay the caller's to give back). */
void ft_stack_pool_clear(struct ft_stack_pool *p);

#endif
