/* The record like the last one counted (repeat.c). */
#ifndef FTSTACK_COLLECTOR_REPEAT_H
#define FTSTACK_COLLECTOR_REPEAT_H

#include <stdbool.h>
#include <stdint.h>
#include "aggregate/aggregate.h"

#define FT_REPEAT_WORDS 64 /* stack words a walk by rules may have read, at most */

struct ft_cut_file;
/* Whether a walk was cut at the copy's end, at the stack's top too, and
 * the file its stack was counted under (ustack.c's note_cut) */
struct ft_cut_of {
	bool cut, top;
	struct ft_cut_file *file;
};

/* What the last sample counted whole was made of, where its key is a
 * function of that alone: its task, event and cgroup, its kernel stack,
 * and the user frame-pointer chain, process layout and stack words its
 * user frames came from (or its user stack as the kernel gave it, where
 * nothing is walked here). */
struct ft_repeat {
	bool valid;
	bool counted;           /* count_now's: the last sample went to a key, */
	bool entry, entry_added; /* its event a uprobe's at an entry, its caller put back */
	bool walked;            /* its user frames were walked here (else: as given) */
	/* walked by kept rules (sym_unwind_walked_by_rules): rip, rbp less
	 * rsp (checked when RBP), the copy's size, and NW words WORDS at
	 * offsets OFFS from rsp (less rsp where LESS_SP) */
	bool by_rules, rbp;
	uint32_t pid, tid, event, nk, nu, slot, nw;
	uint64_t cgroup, image, word, size, rip, rbp_less_sp;
	uint32_t offs[FT_REPEAT_WORDS];
	bool less_sp[FT_REPEAT_WORDS];
	uint64_t words[FT_REPEAT_WORDS];
	struct ft_cut_of cut;   /* the walk was cut: counted so again */
	uint64_t hits;          /* samples counted as a repeat (--debug) */
	uint64_t kips[AGG_MAX_DEPTH];
	uint64_t uips[AGG_MAX_DEPTH]; /* the chain (walked), or the user stack */
};

#endif
