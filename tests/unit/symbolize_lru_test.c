/* sym_lru_victim: the unwinder's file cache stays within its count and
 * byte bounds, least recently used out, never a pinned entry. */
#include "symbolize/internal.h"
#include "tests/unit/check.h"

#define N 4

/* Adds an entry of BYTES at time NOW the way unwind.c does: empties the
 * victims first, then takes the first empty slot. Returns the slot, or -1
 * when none is empty. Counts what was evicted into *evicted. */
static int add(struct sym_lru_entry *e, const struct sym_lru_bound *b, uint64_t now,
	       uint64_t bytes, int *evicted)
{
	long v;
	while ((v = sym_lru_victim(e, N, b, bytes)) >= 0) {
		e[v] = (struct sym_lru_entry){ 0 };
		(*evicted)++;
	}
	for (int i = 0; i < N; i++)
		if (!e[i].used) {
			e[i] = (struct sym_lru_entry){ .used = now, .bytes = bytes };
			return i;
		}
	return -1;
}

static uint64_t total(const struct sym_lru_entry *e, int *n)
{
	uint64_t t = 0;
	*n = 0;
	for (int i = 0; i < N; i++)
		if (e[i].used) {
			t += e[i].bytes;
			(*n)++;
		}
	return t;
}

int main(void)
{
	struct sym_lru_entry e[N] = { 0 };
	struct sym_lru_bound b = { .max_entries = 3, .max_bytes = 100 };
	int ev = 0, n;

	CHECK(sym_lru_victim(e, N, &b, 10) == -1, "an empty cache takes an entry");
	add(e, &b, 1, 10, &ev);
	add(e, &b, 2, 20, &ev);
	add(e, &b, 3, 30, &ev);
	CHECK_EQ_U64(ev, 0, "three entries of 60 bytes fit 3 entries and 100 bytes");
	e[0].used = 4; /* the first one used again: the second is now the oldest */
	int slot = add(e, &b, 5, 5, &ev);
	CHECK_EQ_U64(ev, 1, "a fourth entry evicts one (count bound)");
	CHECK_EQ_U64(slot, 1, "the least recently used one (the entry used at time 2)");
	CHECK_EQ_U64(total(e, &n), 45, "bytes kept: 10 + 5 + 30");
	CHECK_EQ_U64(n, 3, "entries kept");

	ev = 0;
	slot = add(e, &b, 6, 80, &ev);
	CHECK_EQ_U64(ev, 1, "80 bytes more evict one (byte bound: 45 + 80 > 100, 15 + 80 is not)");
	CHECK(slot == 2 && total(e, &n) == 95 && n == 3,
	      "the oldest went (30 bytes, used at time 3): 95 bytes kept (slot %d, %d entries)",
	      slot, n);

	ev = 0;
	for (int i = 0; i < N; i++)
		e[i].pinned = e[i].used != 0; /* all held by a walk */
	slot = add(e, &b, 7, 50, &ev);
	CHECK(ev == 0 && slot == 3 && total(e, &n) == 145 && n == 4,
	      "pinned entries stay: the new one comes in over both bounds (%d evicted, %d entries)",
	      ev, n);
	for (int i = 0; i < N; i++)
		e[i].pinned = i == 1; /* the 5 bytes' entry only */

	ev = 0;
	slot = add(e, &b, 8, 500, &ev);
	CHECK(ev == 3 && e[1].used && total(e, &n) == 505 && n == 2,
	      "an entry larger than the bound: all but the pinned one go, it comes in "
	      "(%d evicted, %d entries)", ev, n);
	e[1].pinned = false;
	ev = 0;
	add(e, &b, 9, 1, &ev);
	CHECK(ev == 2 && total(e, &n) == 1 && n == 1, "and both go at the next entry (%d evicted)", ev);

	/* a long run of distinct files: never more than the bounds after each add */
	struct sym_lru_entry big[N] = { 0 };
	bool within = true;
	for (uint64_t t = 1; t <= 1000; t++) {
		add(big, &b, t, 10 + t % 70, &ev);
		uint64_t bytes = total(big, &n);
		within &= n <= 3 && bytes <= 100;
	}
	CHECK(within, "1000 distinct entries: at most 3 entries and 100 bytes after each add");
	CHECK_DONE();
}
