/* Perf records and rings built by hand, for the tests that decode or drain
 * them (perfev_decode_test, perfev_ring_test, perf_source_test): records
 * laid out as the kernel writes them for PERFEV_SAMPLE_TYPE, and 4 KB rings
 * in plain memory. */
#ifndef FTSTACK_TEST_PERF_RECORDS_H
#define FTSTACK_TEST_PERF_RECORDS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "perfev/perfev.h"

/* ---- building records ---- */
struct bld {
	uint64_t w[512]; /* u64 storage keeps records aligned like the ring */
	size_t n;
};

static inline uint8_t *bytes_of(struct bld *b) { return (uint8_t *)b->w; }

static inline void put(struct bld *b, const void *p, size_t n)
{
	memcpy(bytes_of(b) + b->n, p, n);
	b->n += n;
}

static inline void p64(struct bld *b, uint64_t v) { put(b, &v, 8); }
#define P64S(b, ...) do { const uint64_t v_[] = { __VA_ARGS__ }; \
	for (size_t i_ = 0; i_ < sizeof(v_) / 8; i_++) p64(b, v_[i_]); } while (0)

static inline void p32x2(struct bld *b, uint32_t x, uint32_t y)
{
	uint32_t v[2] = { x, y };
	put(b, v, 8);
}

/* A record's body starts after its 8-byte header, which finish() writes. */
static inline void begin(struct bld *b)
{
	memset(b, 0, sizeof(*b));
	b->n = 8;
}

/* Writes the header (TYPE, MISC, the size so far); returns the size. */
static inline size_t finish(struct bld *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)b->n };
	memcpy(b->w, &h, 8);
	return b->n;
}

/* The sample_id trailer for PERFEV_SAMPLE_TYPE: tid, time, cpu, identifier. */
static inline void trailer(struct bld *b, uint32_t pid, uint32_t tid, uint64_t time,
			   uint32_t cpu, uint64_t id)
{
	p32x2(b, pid, tid);
	p64(b, time);
	p32x2(b, cpu, 0);
	p64(b, id);
}

/* A PERF_RECORD_SAMPLE body for PERFEV_SAMPLE_TYPE: identifier 77, pid/tid
 * 10/11, time 123456789, cpu 1, period 3, then the N-entry CHAIN. Returns
 * the size so far; the caller may append more, then finish(). */
static inline size_t build_sample(struct bld *b, const uint64_t *chain, size_t n)
{
	begin(b);
	p64(b, 77);          /* identifier */
	p32x2(b, 10, 11);    /* pid, tid */
	p64(b, 123456789);   /* time */
	p32x2(b, 1, 0);      /* cpu, res */
	p64(b, 3);           /* period */
	p64(b, n);
	for (size_t i = 0; i < n; i++)
		p64(b, chain[i]);
	return b->n;
}

/* ---- rings in memory ---- */
/* Writes N bytes of REC at *POS (wrapping at the ring's end) and advances it. */
static inline void ring_put(struct perfev_ring *r, uint64_t *pos, const void *rec, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r->data[(*pos + i) & (r->data_size - 1)] = ((const uint8_t *)rec)[i];
	*pos += n;
}

/* A ring of our own of SIZE bytes (a power of two, at least 4096): its
 * meta page is returned (head and tail). */
static inline struct perf_event_mmap_page *fake_ring_of(struct perfev_ring *r, size_t size)
{
	*r = (struct perfev_ring){ .fd = -1, .data_size = size };
	r->base = aligned_alloc(4096, 4096);
	r->data = aligned_alloc(4096, size);
	r->scratch = malloc(65536);
	memset(r->base, 0, 4096);
	return r->base;
}

/* A 4 KB ring of our own: its meta page is returned (head and tail). */
static inline struct perf_event_mmap_page *fake_ring(struct perfev_ring *r)
{
	return fake_ring_of(r, 4096);
}

/* Frees a fake_ring's memory; R is left unmapped (base NULL). */
static inline void fake_ring_free(struct perfev_ring *r)
{
	free(r->scratch);
	free(r->data);
	free(r->base);
	*r = (struct perfev_ring){ .fd = -1 };
}

#endif
