/* bench/skim.h: the cheapest reader of a perf ring, shared by bench/floor
 * and bench/switchin (header-only: each is one file linked against
 * libftstack.a). Records are skipped over, not decoded: only their headers
 * are read, and a LOST record's count. */
#ifndef FTSTACK_BENCH_SKIM_H
#define FTSTACK_BENCH_SKIM_H

#include <linux/perf_event.h>
#include <stdint.h>
#include "perfev/perfev.h"

struct skim_counts {
	unsigned long long samples, switches, lost;
};

/* PERF_RECORD_LOST at TAIL: header, id, lost; the body may wrap the end. */
static inline uint64_t skim_lost(const struct perfev_ring *r, uint64_t tail)
{
	uint64_t v[3];
	for (int i = 0; i < 3; i++)
		v[i] = *(const uint64_t *)(r->data + ((tail + 8 * i) & (r->data_size - 1)));
	return v[2];
}

/* Skips over the records waiting in R, counting samples, switch records
 * and what the kernel lost into C, and hands the space back. */
static inline void skim_ring(struct perfev_ring *r, struct skim_counts *c)
{
	struct perf_event_mmap_page *meta = r->base;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		/* headers are 8-byte aligned, so one never wraps the end */
		const struct perf_event_header *h =
			(const void *)(r->data + (tail & (r->data_size - 1)));
		if (h->type == PERF_RECORD_SAMPLE)
			c->samples++;
		else if (h->type == PERF_RECORD_SWITCH)
			c->switches++;
		else if (h->type == PERF_RECORD_LOST)
			c->lost += skim_lost(r, tail);
		if (h->size < sizeof(*h))
			break;
		tail += h->size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

#endif
