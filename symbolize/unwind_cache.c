/* Where the unwinder's caches keep what they learnt of an ip in a process
 * (its CFA rule, its repair, a first sight of it): CACHE_WAYS slots a set,
 * not one. Direct-mapped, two hot ips that met in a slot evicted each other
 * at every sample and were learnt again each time: a pipe ping-pong's two
 * processes did so in about 1 run of 20 (the keys' and pids' low bits
 * cancelled in the old hash), every switch-out then stepped by libunwind,
 * and the reader fell 5x behind and lost records. */
#include <string.h>
#include "aggregate/aggregate.h"
#include "symbolize/unwind_internal.h"

unsigned sym_uw_cache_set(uint64_t key, uint32_t pid, unsigned n)
{
	uint64_t h = agg_hash_finish(agg_hash_mix(agg_hash_mix(0, key), pid));
	return (unsigned)(h & (n / CACHE_WAYS - 1)) * CACHE_WAYS;
}

void *sym_uw_cache_front(void *set, size_t size)
{
	memmove((char *)set + size, set, size * (CACHE_WAYS - 1));
	return set;
}
