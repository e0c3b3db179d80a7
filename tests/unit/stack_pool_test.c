/* collector/stack_pool.c: a buffer given back is the next one given out
 * (no malloc per event), sizes share a class up to its power of two, the
 * free buffers follow what is in use (at most FT_STACK_POOL_SLACK more),
 * and sizes beyond the classes are plain malloc and free. */
#include <stdint.h>
#include "collector/stack_pool.h"
#include "tests/unit/check.h"

int main(void)
{
	struct ft_stack_pool p = { 0 };
	uint64_t *a = ft_stack_pool_get(&p, 5);
	CHECK(a != NULL, "a buffer of 5");
	a[4] = 1;
	ft_stack_pool_put(&p, a, 5);
	uint64_t *b = ft_stack_pool_get(&p, 8);
	CHECK(b == a, "given back, then asked for 8 (the same class): the same buffer");
	ft_stack_pool_put(&p, b, 8);
	for (int i = 0; i < 100000; i++) { /* a thread switching out and in */
		uint64_t *c = ft_stack_pool_get(&p, 1 + (uint32_t)(i % 8));
		ft_stack_pool_put(&p, c, 1 + (uint32_t)(i % 8));
	}
	CHECK_EQ_U64(p.made, 1, "100000 switch-outs of up to 8 addresses: one buffer made");
	/* 1000 threads off CPU at once, then all back */
	static uint64_t *held[1000];
	for (int i = 0; i < 1000; i++)
		held[i] = ft_stack_pool_get(&p, 100);
	CHECK_EQ_U64(p.made, 1001, "1000 at once of a larger class: made once each");
	for (int i = 0; i < 1000; i++)
		ft_stack_pool_put(&p, held[i], 100);
	CHECK(ft_stack_pool_kept(&p) == 1 + FT_STACK_POOL_SLACK,
	      "all given back: the class keeps %d free, not 1000 (%zu kept in all)",
	      FT_STACK_POOL_SLACK, ft_stack_pool_kept(&p));
	for (int i = 0; i < 1000; i++)
		held[i] = ft_stack_pool_get(&p, 128);
	CHECK_EQ_U64(p.made, 1001 + 1000 - FT_STACK_POOL_SLACK,
		     "1000 again: the kept ones used first");
	for (int i = 0; i < 1000; i++)
		ft_stack_pool_put(&p, held[i], 128);
	uint64_t *big = ft_stack_pool_get(&p, 100000);
	CHECK(big != NULL, "beyond the classes: a buffer of its own");
	big[99999] = 1;
	ft_stack_pool_put(&p, big, 100000);
	CHECK(ft_stack_pool_kept(&p) == 1 + FT_STACK_POOL_SLACK, "and not kept");
	ft_stack_pool_clear(&p);
	CHECK_EQ_U64(ft_stack_pool_kept(&p), 0, "cleared: nothing kept");
	CHECK_DONE();
}
