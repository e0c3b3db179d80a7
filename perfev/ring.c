/* perfev: the mmap'd ring buffer, read in place.
 *
 * The kernel writes records at data_head and never past data_tail; we own
 * data_tail. data_head is loaded with acquire so the record bytes it covers
 * are visible before we read them; data_tail is stored with release so the
 * kernel does not overwrite bytes we are still reading, and is stored as a
 * drain goes, not only at its end: a drain that runs long holds nothing
 * it has read. Records are 8-byte
 * aligned; one that runs past the end of the data area is copied whole into
 * the scratch buffer so decoders see contiguous bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfev/perfev.h"

/* A record's size is a u16, so no record is larger than this. */
#define PERFEV_MAX_RECORD 65536
/* The bytes of the next record fetched ahead: header to registers */
#define RING_PREFETCH 512u
/* A drain hands the space it has read back each 1/RING_RELEASE of the
 * ring. Handed back only at its end, a drain far behind the kernel held
 * all it had read until it was done, and offcpu's 16 KB copies filled the
 * rest meanwhile (doc/PERFORMANCE.md, offcpu). A store each record would
 * bounce the line the kernel writes data_head to for each record. */
#define RING_RELEASE 32u

size_t perfev_ring_data_size(size_t data_bytes)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t size = ps > 0 ? (size_t)ps : 0;
	while (size && size < data_bytes)
		size = size > ((size_t)1 << 40) ? 0 : size << 1;
	return size;
}

int perfev_ring_map(struct perfev_ring *r, int fd, size_t data_bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = perfev_ring_data_size(data_bytes);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!size)
		return -EINVAL;
	uint8_t *scratch = malloc(PERFEV_MAX_RECORD);
	if (!scratch)
		return -ENOMEM;
	void *base = mmap(NULL, page + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		int err = errno;
		free(scratch);
		return -err;
	}
	r->fd = fd;
	r->base = base;
	r->data = (uint8_t *)base + page;
	r->data_size = size;
	r->map_size = page + size;
	r->scratch = scratch;
	return 0;
}

void perfev_ring_unmap(struct perfev_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_size);
	free(r->scratch);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* Copies N bytes at ring offset POS (any value; it wraps) into DST. */
static void ring_copy(const struct perfev_ring *r, uint64_t pos, void *dst, size_t n)
{
	size_t off = (size_t)(pos & (r->data_size - 1));
	size_t first = r->data_size - off < n ? r->data_size - off : n;
	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, n - first);
}

/* The record at TAIL, contiguous: in place, or copied into scratch when it
 * wraps. SIZE was checked against what is available. */
static const void *record_at(const struct perfev_ring *r, uint64_t tail, size_t size)
{
	size_t off = (size_t)(tail & (r->data_size - 1));
	if (off + size <= r->data_size)
		return r->data + off;
	ring_copy(r, tail, r->scratch, size);
	return r->scratch;
}

/* The kernel wrote the ring on other CPUs, long before a drain reads it:
 * the next record's first lines (header, ids, callchain, registers) are
 * asked for while this one is handled, not waited for when it comes.
 * Its last line is loaded, taking it to be as long as this one (a run's
 * samples are alike): a user stack copy's dynamic size lies there, the
 * decoder's first read past the first lines and most often on a page of
 * its own. A prefetch of it did not help (bench/ab: 1.038 of the
 * reader's CPU) where this load does (0.83 in count, 0.92 in offcpu): a
 * prefetch that finds no translation may be dropped, a load walks the
 * page tables. Only a line the kernel has written whole: one it still
 * writes would go back to the kernel's CPU, and the workload would wait. */
static void prefetch_next(const struct perfev_ring *r, uint64_t pos, uint64_t size, uint64_t head)
{
	for (uint64_t o = 0; o < RING_PREFETCH && pos + o < head; o += 64)
		__builtin_prefetch(r->data + ((pos + o) & (r->data_size - 1)));
	uint64_t last = pos + size - 8;
	if (size > RING_PREFETCH && (last | 63) < head)
		(void)*(volatile const uint8_t *)(r->data + (last & (r->data_size - 1)));
}

int perfev_ring_first_time(struct perfev_ring *r, uint64_t sample_type, uint64_t regs_mask,
			   uint64_t *time)
{
	struct perf_event_mmap_page *meta = r->base;
	if (!meta)
		return -EINVAL;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	struct perf_event_header h;
	if (head - tail < sizeof(h))
		return -ENOENT;
	ring_copy(r, tail, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size > head - tail || h.size > r->data_size)
		return -EINVAL;
	struct perfev_record out;
	if (perfev_decode(record_at(r, tail, h.size), h.size, sample_type, regs_mask, &out) < 0)
		return -EINVAL;
	*time = out.time;
	return 0;
}

long perfev_ring_drain_until(struct perfev_ring *r, uint64_t sample_type, uint64_t regs_mask,
			     uint64_t until, perfev_record_fn fn, void *ctx, uint64_t *next)
{
	struct perf_event_mmap_page *meta = r->base;
	if (next)
		*next = UINT64_MAX;
	if (!meta)
		return -EINVAL;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail; /* only we write it */
	if (head - tail > r->max_fill)
		r->max_fill = head - tail;
	uint64_t released = tail, step = r->data_size / RING_RELEASE;
	uint64_t written = head; /* the kernel's head, read again at each release */
	long n = 0;
	int ret = 0;
	while (tail < head && !ret) {
		struct perf_event_header h;
		if (head - tail < sizeof(h)) {
			ret = -EINVAL;
			break;
		}
		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail || h.size > r->data_size) {
			ret = -EINVAL;
			break;
		}
		const void *rec = record_at(r, tail, h.size);
		prefetch_next(r, tail + h.size, h.size, head);
		struct perfev_record out;
		if (perfev_decode(rec, h.size, sample_type, regs_mask, &out) < 0) {
			r->bad_records++;
		} else if (out.time > until) {
			if (next)
				*next = out.time;
			break; /* left for a later drain: another ring's come first */
		} else {
			n++;
			out.sample.behind = out.kind == PERFEV_SAMPLE &&
					    written - tail > r->data_size / 8 * 3;
			if (fn && fn(ctx, &out))
				ret = 1;
		}
		tail += h.size; /* done with the record: nothing keeps it */
		if (tail - released >= step) {
			__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
			released = tail;
			written = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		}
	}
	/* hand the consumed space back only after we are done reading it */
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return ret < 0 ? ret : n;
}

long perfev_ring_drain(struct perfev_ring *r, uint64_t sample_type, uint64_t regs_mask,
		       perfev_record_fn fn, void *ctx)
{
	return perfev_ring_drain_until(r, sample_type, regs_mask, UINT64_MAX, fn, ctx, NULL);
}
