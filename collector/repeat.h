/* The record like the last one counted (repeat.c). */
#ifndef FTSTACK_COLLECTOR_REPEAT_H
#define FTSTACK_COLLECTOR_REPEAT_H

#include <stdbool.h>
#include <stdint.h>
#include "aggregate/aggregate.h"

/* What the last sample counted whole was made of, where its key is a
 * function of that alone: its task, event and cgroup, its kernel stack,
 * and the user frame-pointer chain, process layout and stack word its
 * user frames came from (or its user stack as the kernel gave it, where
 * nothing is walked here). */
struct ft_repeat {
	bool valid;
	bool counted;           /* count_now's: the last sample went to a key */
	bool walked;            /* its user frames were walked here (else: as given) */
	uint32_t pid, tid, event, nk, nu, slot;
	uint64_t cgroup, image, word;
	uint64_t hits;          /* samples counted as a repeat (--debug) */
	uint64_t kips[AGG_MAX_DEPTH];
	uint64_t uips[AGG_MAX_DEPTH]; /* the chain (walked), or the user stack */
};

#endif
