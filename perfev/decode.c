/* perfev: decoding one perf record from bytes. Every read goes through a
 * bounded cursor, so a truncated or lying record yields -EINVAL, never a read
 * past its end. */
#include <errno.h>
#include <string.h>

#include "perfev/perfev.h"

struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static bool need(struct cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	return true;
}

static uint64_t u64(struct cur *c)
{
	uint64_t v = 0;
	if (need(c, 8)) {
		memcpy(&v, c->p, 8);
		c->p += 8;
	}
	return v;
}

/* Two u32 in one u64 slot ({ u32 pid, tid; }, { u32 cpu, res; }). */
static void u32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	uint32_t v[2] = { 0, 0 };
	if (need(c, 8)) {
		memcpy(v, c->p, 8);
		c->p += 8;
	}
	*a = v[0];
	*b = v[1];
}

/* N u64s in place; NULL when N is 0 or they do not fit. */
static const uint64_t *u64s(struct cur *c, uint64_t n)
{
	if (n > (size_t)(c->end - c->p) / 8) {
		c->bad = true;
		return NULL;
	}
	if (!need(c, n * 8))
		return NULL;
	const uint64_t *v = n ? (const uint64_t *)(const void *)c->p : NULL;
	c->p += n * 8;
	return v;
}

static const uint8_t *bytes(struct cur *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	const uint8_t *v = c->p;
	c->p += n;
	return v;
}

/* Splits the callchain at its PERF_CONTEXT_* markers: the kernel segment is
 * what follows PERF_CONTEXT_KERNEL up to the next marker, the user segment
 * what follows PERF_CONTEXT_USER. Entries in other contexts (guest,
 * hypervisor, before any marker) are not ftstack's and are dropped. */
static void split_chain(const uint64_t *ips, uint64_t n, struct perfev_sample *s)
{
	enum { NONE, KERN, USER } ctx = NONE;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t ip;
		memcpy(&ip, &ips[i], 8);
		if (ip >= PERF_CONTEXT_MAX) {
			ctx = ip == PERF_CONTEXT_KERNEL ? KERN : ip == PERF_CONTEXT_USER ? USER : NONE;
			/* a repeated marker starts the segment again; the last wins */
			if (ctx == KERN) {
				s->kips = NULL;
				s->nkips = 0;
			} else if (ctx == USER) {
				s->uips = NULL;
				s->nuips = 0;
			}
			continue;
		}
		if (ctx == KERN) {
			if (!s->nkips++)
				s->kips = &ips[i];
		} else if (ctx == USER) {
			if (!s->nuips++)
				s->uips = &ips[i];
		}
	}
}

static void sample_callchain(struct cur *c, struct perfev_sample *s)
{
	uint64_t nr = u64(c);
	const uint64_t *ips = u64s(c, nr);
	if (!c->bad && nr > UINT32_MAX)
		c->bad = true;
	if (!c->bad)
		split_chain(ips, nr, s);
}

/* { u32 size; char data[size]; } padded so the next field is u64-aligned. */
static void sample_raw(struct cur *c, struct perfev_sample *s)
{
	uint32_t size = 0;
	if (need(c, 4)) {
		memcpy(&size, c->p, 4);
		c->p += 4;
	}
	const uint8_t *data = bytes(c, size);
	uint64_t pad = (8 - ((4 + (uint64_t)size) & 7)) & 7;
	bytes(c, pad);
	if (!c->bad) {
		s->raw = data;
		s->raw_size = size;
	}
}

static void sample_user(struct cur *c, uint64_t type, uint64_t regs_mask,
			struct perfev_sample *s)
{
	if (type & PERF_SAMPLE_REGS_USER) {
		s->uregs_abi = u64(c);
		if (s->uregs_abi)
			s->uregs = u64s(c, (uint64_t)__builtin_popcountll(regs_mask));
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = u64(c);
		if (size) {
			const uint8_t *data = bytes(c, size);
			uint64_t dyn = u64(c);
			if (dyn > size)
				c->bad = true;
			if (!c->bad && dyn) {
				s->ustack = data;
				s->ustack_size = dyn;
				s->ustack_room = size;
			}
		}
	}
}

/* The fields the kernel writes after the user stack, up to the cgroup id:
 * ftstack asks for none but the cgroup, and skips the others' u64s. */
static void sample_tail(struct cur *c, uint64_t type, struct perfev_sample *s)
{
	if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		u64(c);
	if (type & PERF_SAMPLE_DATA_SRC)
		u64(c);
	if (type & PERF_SAMPLE_TRANSACTION)
		u64(c);
	if (type & PERF_SAMPLE_PHYS_ADDR)
		u64(c);
	if (type & PERF_SAMPLE_CGROUP)
		s->cgroup = u64(c);
}

static int decode_sample(struct cur *c, uint64_t type, uint64_t regs_mask,
			 struct perfev_record *r)
{
	struct perfev_sample *s = &r->sample;
	uint32_t res;
	if (type & (PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_INTR))
		return -EINVAL;
	if (type & PERF_SAMPLE_IDENTIFIER)
		s->id = u64(c);
	if (type & PERF_SAMPLE_IP)
		u64(c);
	if (type & PERF_SAMPLE_TID)
		u32x2(c, &s->pid, &s->tid);
	if (type & PERF_SAMPLE_TIME)
		s->time = u64(c);
	if (type & PERF_SAMPLE_ADDR)
		u64(c);
	if (type & PERF_SAMPLE_ID)
		s->id = u64(c);
	if (type & PERF_SAMPLE_STREAM_ID)
		u64(c);
	if (type & PERF_SAMPLE_CPU)
		u32x2(c, &s->cpu, &res);
	if (type & PERF_SAMPLE_PERIOD)
		s->period = u64(c);
	if (type & PERF_SAMPLE_CALLCHAIN)
		sample_callchain(c, s);
	if (type & PERF_SAMPLE_RAW)
		sample_raw(c, s);
	sample_user(c, type, regs_mask, s);
	sample_tail(c, type, s);
	if (c->bad)
		return -EINVAL;
	r->kind = PERFEV_SAMPLE;
	r->pid = s->pid;
	r->tid = s->tid;
	r->time = s->time;
	r->cpu = s->cpu;
	r->id = s->id;
	return 0;
}

/* The sample_id trailer that sample_id_all appends to non-sample records,
 * read from the end of the record. Shrinks C to the body before it. */
static int trailer(struct cur *c, uint64_t type, struct perfev_record *r)
{
	static const uint64_t bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER };
	size_t n = 0;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		n += (type & bits[i]) ? 8 : 0;
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	struct cur t = { c->end - n, c->end, false };
	uint32_t res;
	if (type & PERF_SAMPLE_TID)
		u32x2(&t, &r->pid, &r->tid);
	if (type & PERF_SAMPLE_TIME)
		r->time = u64(&t);
	if (type & PERF_SAMPLE_ID)
		r->id = u64(&t);
	if (type & PERF_SAMPLE_STREAM_ID)
		u64(&t);
	if (type & PERF_SAMPLE_CPU)
		u32x2(&t, &r->cpu, &res);
	if (type & PERF_SAMPLE_IDENTIFIER)
		r->id = u64(&t);
	c->end -= n;
	return 0;
}

/* A NUL-terminated string that must end inside C (the kernel pads it). */
static const char *cstr(struct cur *c)
{
	if (c->bad || c->p >= c->end || !memchr(c->p, 0, (size_t)(c->end - c->p))) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = c->end;
	return s;
}

static void decode_mmap2(struct cur *c, uint16_t misc, struct perfev_record *r)
{
	u32x2(c, &r->pid, &r->tid);
	r->mmap2.start = u64(c);
	r->mmap2.len = u64(c);
	r->mmap2.pgoff = u64(c);
	/* maj, min, ino, ino_generation -- or the build-id form: same 24 bytes */
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		bytes(c, 24);
	} else {
		u32x2(c, &r->mmap2.maj, &r->mmap2.min);
		r->mmap2.ino = u64(c);
		u64(c); /* ino_generation */
	}
	u32x2(c, &r->mmap2.prot, &r->mmap2.flags);
	r->mmap2.filename = cstr(c);
}

static void decode_body(struct cur *c, uint32_t type, uint16_t misc, struct perfev_record *r)
{
	switch (type) {
	case PERF_RECORD_MMAP2:
		r->kind = PERFEV_MMAP2;
		decode_mmap2(c, misc, r);
		break;
	case PERF_RECORD_COMM:
		r->kind = PERFEV_COMM;
		u32x2(c, &r->pid, &r->tid);
		r->comm.comm = cstr(c);
		r->comm.exec = misc & PERF_RECORD_MISC_COMM_EXEC;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r->kind = type == PERF_RECORD_FORK ? PERFEV_FORK : PERFEV_EXIT;
		u32x2(c, &r->pid, &r->task.ppid);
		u32x2(c, &r->tid, &r->task.ptid);
		r->time = u64(c);
		break;
	case PERF_RECORD_LOST:
		r->kind = PERFEV_LOST;
		r->id = u64(c);
		r->lost.lost = u64(c);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		r->kind = type == PERF_RECORD_THROTTLE ? PERFEV_THROTTLE : PERFEV_UNTHROTTLE;
		r->time = u64(c);
		r->id = u64(c);
		u64(c); /* stream_id */
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->kind = PERFEV_LOST_SAMPLES;
		r->lost.lost = u64(c);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		r->kind = PERFEV_SWITCH;
		r->sw.out = misc & PERF_RECORD_MISC_SWITCH_OUT;
		if (type == PERF_RECORD_SWITCH_CPU_WIDE)
			u32x2(c, &r->sw.other_pid, &r->sw.other_tid);
		break;
	case PERF_RECORD_CGROUP:
		r->kind = PERFEV_CGROUP;
		r->cgroup.id = u64(c);
		r->cgroup.path = cstr(c);
		break;
	default:
		r->kind = PERFEV_OTHER;
		break;
	}
}

int perfev_decode(const void *buf, size_t len, uint64_t sample_type,
		  uint64_t regs_mask, struct perfev_record *out)
{
	struct perf_event_header h;
	memset(out, 0, sizeof(*out));
	if (!buf || len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	/* the kernel writes whole u64s: a size that is not is a damaged record */
	if (h.size != len || len % 8)
		return -EINVAL;
	struct cur c = { (const uint8_t *)buf + sizeof(h), (const uint8_t *)buf + len, false };
	out->misc = h.misc;
	if (h.type == PERF_RECORD_SAMPLE) {
		int ret = decode_sample(&c, sample_type, regs_mask, out);
		if (ret < 0)
			memset(out, 0, sizeof(*out));
		return ret;
	}
	/* the body's own pid/tid/time/id, read after, override the trailer's */
	bool short_trailer = trailer(&c, sample_type, out) < 0;
	decode_body(&c, h.type, h.misc, out);
	out->misc = h.misc;
	/* records ftstack does not read may be anything; the rest must fit */
	if (out->kind != PERFEV_OTHER && (c.bad || short_trailer)) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}
