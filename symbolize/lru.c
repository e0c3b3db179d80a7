/* The unwinder's files are kept by least recent use, bounded by count and
 * by the bytes they map: a mapped file's pages count in RSS once touched,
 * so on a host running many programs (a build farm: every compiler and
 * linker a different file) the kept set must not grow with what ran. */
#include "symbolize/internal.h"

long sym_lru_victim(const struct sym_lru_entry *e, size_t n, const struct sym_lru_bound *b,
		    uint64_t add)
{
	uint64_t bytes = add;
	size_t live = 0;
	long victim = -1;
	for (size_t i = 0; i < n; i++) {
		if (!e[i].used)
			continue;
		live++;
		bytes += e[i].bytes;
		if (!e[i].pinned && (victim < 0 || e[i].used < e[(size_t)victim].used))
			victim = (long)i;
	}
	/* room for one more entry of ADD bytes; a file larger than the bound
	 * alone is let in once everything that may go went */
	if (live + 1 <= b->max_entries && bytes <= b->max_bytes)
		return -1;
	return victim;
}
