/* Where a fixed-size cache keeps what it learnt of a key (an ip, a pid):
 * AGG_CACHE_WAYS slots a set, not one. Direct-mapped, two hot keys that
 * met in a slot evicted each other at every use and were learnt again each
 * time: the unwinder's rules for a pipe ping-pong's two processes did so
 * in about 1 run of 20 (their low bits cancelled in a hash of xors), each
 * switch-out was stepped by libunwind, and the reader fell 5x behind and
 * lost records. */
#include <string.h>
#include "aggregate/aggregate.h"

unsigned agg_cache_set(uint64_t key, uint64_t qual, unsigned n)
{
	uint64_t h = agg_hash_finish(agg_hash_mix(agg_hash_mix(0, key), qual));
	return (unsigned)(h & (n / AGG_CACHE_WAYS - 1)) * AGG_CACHE_WAYS;
}

void *agg_cache_front(void *set, size_t size)
{
	memmove((char *)set + size, set, size * (AGG_CACHE_WAYS - 1));
	return set;
}
