/* Raw ring-buffer pages from per-CPU trace_pipe_raw: decoding with
 * libtraceevent's kbuffer and pairing each traced event with the
 * ftrace:user_stack and ftrace:kernel_stack records written after it.
 * Pure: bytes in, callbacks out, so tests feed it captured pages. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/kbuffer.h>
#include "tracefs/tracefs.h"

#define PAGE_HDR 16u                     /* u64 timestamp, u64 commit */
#define COMMIT_SIZE_MASK ((1u << 27) - 1) /* the high bits of commit are flags */
#define STACK_OFF 16u                    /* caller[] in kernel_stack and user_stack */

struct id_map {
	uint16_t id;
	int event;
	int arg_off;    /* -1 = no argument */
	uint8_t stacks; /* TRACEFS_RAW_WANT_* */
};

struct pending {
	int event;
	int32_t tid;
	uint32_t tgid;
	uint64_t ts;
	uint8_t stacks;
	bool has_arg;
	uint64_t arg;
	bool has_k, has_u;
	uint32_t nk, nu;
	uint64_t kips[TRACEFS_RAW_MAX_IPS];
	uint64_t uips[TRACEFS_RAW_MAX_IPS];
};

struct tfs_raw {
	struct kbuffer *kb;
	size_t subbuf_size;
	uint8_t *page;        /* aligned copy, zero slack after it for kbuffer */
	uint16_t kstack_id, ustack_id;
	struct id_map *ids;   /* sorted by id */
	int nids;
	uint16_t function_id;
	uint32_t function_ip_off;
	struct tfs_raw_func *funcs; /* sorted by start */
	int nfuncs;
	bool want_k, want_u;
	struct pending pend[TRACEFS_RAW_PENDING]; /* oldest first */
	int npend;
	uint64_t ips[TRACEFS_RAW_MAX_IPS];        /* the record being decoded */
	struct tfs_raw_stats st;
};

static int id_cmp(const void *a, const void *b)
{
	const struct id_map *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int func_cmp(const void *a, const void *b)
{
	const struct tfs_raw_func *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int copy_funcs(struct tfs_raw *r, const struct tfs_raw_types *t)
{
	r->funcs = calloc((size_t)t->nfuncs, sizeof(*r->funcs));
	if (!r->funcs)
		return -ENOMEM;
	memcpy(r->funcs, t->funcs, (size_t)t->nfuncs * sizeof(*r->funcs));
	r->nfuncs = t->nfuncs;
	qsort(r->funcs, (size_t)r->nfuncs, sizeof(*r->funcs), func_cmp);
	r->function_id = t->function;
	r->function_ip_off = t->function_ip_offset;
	return 0;
}

int tfs_raw_alloc(const struct tfs_raw_types *types, size_t subbuf_size,
		       bool want_kstack, bool want_ustack, struct tfs_raw **out)
{
	*out = NULL;
	if (!types || types->nevents < 0 || (types->nevents && !types->events) ||
	    subbuf_size <= PAGE_HDR || subbuf_size > (1u << 27))
		return -EINVAL;
	struct tfs_raw *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->subbuf_size = subbuf_size;
	r->page = calloc(1, subbuf_size + 16);
	r->ids = calloc((size_t)types->nevents + 1, sizeof(*r->ids));
	r->kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!r->page || !r->ids || !r->kb) {
		tfs_raw_free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < types->nevents; i++) {
		if (!types->events[i])
			continue;
		r->ids[r->nids++] = (struct id_map){
			types->events[i], i, types->arg_offsets ? types->arg_offsets[i] : -1,
			types->stacks ? types->stacks[i] : TRACEFS_RAW_WANT_KSTACK | TRACEFS_RAW_WANT_USTACK,
		};
	}
	qsort(r->ids, (size_t)r->nids, sizeof(*r->ids), id_cmp);
	if (types->nfuncs > 0 && copy_funcs(r, types) < 0) {
		tfs_raw_free(r);
		return -ENOMEM;
	}
	r->kstack_id = types->kernel_stack;
	r->ustack_id = types->user_stack;
	r->want_k = want_kstack;
	r->want_u = want_ustack;
	*out = r;
	return 0;
}

void tfs_raw_free(struct tfs_raw *r)
{
	if (!r)
		return;
	if (r->kb)
		kbuffer_free(r->kb);
	free(r->page);
	free(r->ids);
	free(r->funcs);
	free(r);
}

const struct tfs_raw_stats *tfs_raw_stats(const struct tfs_raw *r)
{
	return &r->st;
}

static const struct id_map *event_of(const struct tfs_raw *r, uint16_t type)
{
	int lo = 0, hi = r->nids;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (r->ids[mid].id == type)
			return &r->ids[mid];
		if (r->ids[mid].id < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The traced function whose text holds the function record's ip: the
 * entry's ip is its fentry call site, a few bytes into the function. */
static const struct tfs_raw_func *func_of(const struct tfs_raw *r, const uint8_t *data,
					      uint32_t size)
{
	uint64_t ip;
	if ((uint64_t)r->function_ip_off + 8 > size)
		return NULL;
	memcpy(&ip, data + r->function_ip_off, sizeof(ip));
	int lo = 0, hi = r->nfuncs; /* first start > ip */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (r->funcs[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && ip < r->funcs[lo - 1].end ? &r->funcs[lo - 1] : NULL;
}

/* The event's u64 argument, when its record is long enough to hold it. */
static void copy_arg(const struct id_map *m, const uint8_t *data, uint32_t size,
		     struct tfs_raw_record *rec)
{
	if (m->arg_off < 0 || (uint64_t)m->arg_off + 8 > size)
		return;
	memcpy(&rec->arg, data + m->arg_off, sizeof(rec->arg));
	rec->has_arg = true;
}

/* Copies up to N callers from the record (4-byte aligned in the ring, so
 * never read in place) into r->ips. */
static uint32_t copy_ips(struct tfs_raw *r, const uint8_t *data, uint32_t size, int64_t n)
{
	if (size < STACK_OFF || n <= 0)
		return 0;
	uint64_t avail = (size - STACK_OFF) / 8;
	if ((uint64_t)n > avail)
		n = (int64_t)avail;
	if (n > TRACEFS_RAW_MAX_IPS)
		n = TRACEFS_RAW_MAX_IPS;
	memcpy(r->ips, data + STACK_OFF, (size_t)n * 8);
	return (uint32_t)n;
}

/* Fills REC from one data record of SIZE bytes. */
static void parse_record(struct tfs_raw *r, const uint8_t *data, uint32_t size,
			 struct tfs_raw_record *rec)
{
	const struct id_map *m;
	const struct tfs_raw_func *f;
	memset(rec, 0, sizeof(*rec));
	rec->event = -1;
	rec->ips = r->ips;
	if (size < 8) {
		rec->kind = TRACEFS_RAW_OTHER;
		return;
	}
	memcpy(&rec->type, data, sizeof(rec->type));
	memcpy(&rec->pid, data + 4, sizeof(rec->pid));
	if (rec->type == r->kstack_id && size >= STACK_OFF) {
		int32_t n;
		memcpy(&n, data + 8, sizeof(n));
		rec->kind = TRACEFS_RAW_KSTACK;
		rec->nips = copy_ips(r, data, size, n);
		while (rec->nips && r->ips[rec->nips - 1] == 0)
			rec->nips--;
	} else if (rec->type == r->ustack_id && size >= STACK_OFF) {
		memcpy(&rec->tgid, data + 8, sizeof(rec->tgid));
		rec->kind = TRACEFS_RAW_USTACK;
		uint32_t n = copy_ips(r, data, size, TRACEFS_RAW_MAX_IPS);
		/* unused slots of the fixed caller[] are zero: the stack ends there */
		while (rec->nips < n && r->ips[rec->nips] != 0)
			rec->nips++;
	} else if ((m = event_of(r, rec->type))) {
		rec->kind = TRACEFS_RAW_EVENT;
		rec->event = m->event;
		rec->stacks = m->stacks;
		copy_arg(m, data, size, rec);
	} else if (r->nfuncs && rec->type == r->function_id && (f = func_of(r, data, size))) {
		rec->kind = TRACEFS_RAW_EVENT;
		rec->event = f->event;
		rec->stacks = TRACEFS_RAW_WANT_KSTACK; /* func_stack_trace; no user stack */
	} else {
		rec->kind = TRACEFS_RAW_OTHER;
	}
}

static void count_kind(struct tfs_raw *r, enum tfs_raw_kind k)
{
	switch (k) {
	case TRACEFS_RAW_EVENT: r->st.events++; break;
	case TRACEFS_RAW_KSTACK: r->st.kstacks++; break;
	case TRACEFS_RAW_USTACK: r->st.ustacks++; break;
	default: r->st.others++; break;
	}
}

/* True when each record of the committed DATA[0, SIZE) starts past the one
 * before it, taking each header's length as kbuffer takes it. kbuffer
 * follows a padding record's length inside one call, so a padding whose
 * length leads back (-4 leads to itself) spins there forever: a corrupt page
 * hung the raw fuzz target. Header rules: a u32 of type_len (low 5 bits) and
 * time delta; 29 padding and 0 carry a u32 length after it, 30 and 31 a u32
 * of time, 1-28 are type_len words of data. */
static bool records_advance(const uint8_t *data, uint32_t size)
{
	for (uint32_t cur = 0; cur < size;) {
		uint32_t word, len;
		int64_t next;
		memcpy(&word, data + cur, sizeof(word));
		memcpy(&len, data + cur + 4, sizeof(len)); /* 16 zero bytes follow the page */
		switch (word & 31) {
		case 29: next = (int64_t)cur + 4 + (int32_t)len; break;
		case 30:
		case 31: next = (int64_t)cur + 8; break;
		case 0: /* kbuffer: (u32 - 4) as int, rounded up to 4, wrapping */
			next = (int64_t)cur + 8 + (int32_t)((len - 4u + 3u) & ~3u);
			break;
		default: next = (int64_t)cur + 4 + (word & 31) * 4; break;
		}
		if (next <= cur)
			return false;
		cur = next > size ? size : (uint32_t)next;
	}
	return true;
}

/* Copies the page and checks that its header's sizes fit, and that its
 * records move forward, before kbuffer trusts them. Returns 0 or -EINVAL. */
static int load_page(struct tfs_raw *r, const void *page, size_t len)
{
	uint64_t commit;
	if (len < PAGE_HDR || len > r->subbuf_size)
		return -EINVAL;
	memcpy(r->page, page, len);
	memset(r->page + len, 0, r->subbuf_size + 16 - len);
	memcpy(&commit, r->page + 8, sizeof(commit));
	if ((commit & COMMIT_SIZE_MASK) > len - PAGE_HDR ||
	    !records_advance(r->page + PAGE_HDR, (uint32_t)(commit & COMMIT_SIZE_MASK)))
		return -EINVAL;
	if (kbuffer_load_subbuffer(r->kb, r->page) < 0)
		return -EINVAL;
	int missed = kbuffer_missed_events(r->kb);
	if (missed > 0)
		r->st.missed += (uint64_t)missed;
	else if (missed < 0)
		r->st.missed_unknown++;
	return 0;
}

int tfs_raw_decode(struct tfs_raw *r, const void *page, size_t len,
		       tfs_raw_record_fn fn, void *ctx)
{
	if (load_page(r, page, len) < 0) {
		r->st.bad_pages++;
		return -EINVAL;
	}
	r->st.pages++;
	uint64_t commit;
	memcpy(&commit, r->page + 8, sizeof(commit));
	const uint8_t *end = r->page + PAGE_HDR + (commit & COMMIT_SIZE_MASK);
	unsigned long long ts;
	int n = 0;
	for (void *d = kbuffer_read_event(r->kb, &ts); d; d = kbuffer_next_event(r->kb, &ts)) {
		int esize = kbuffer_event_size(r->kb);
		if (esize < 0 || (const uint8_t *)d + esize > end)
			break; /* kbuffer went past the committed data: a corrupt page */
		struct tfs_raw_record rec;
		parse_record(r, d, (uint32_t)esize, &rec);
		rec.ts = ts;
		r->st.records++;
		count_kind(r, rec.kind);
		n++;
		if (fn && fn(ctx, &rec))
			break;
	}
	return n;
}

/* ---- pairing ---- */

struct feed_ctx {
	struct tfs_raw *r;
	tfs_raw_sample_fn fn;
	void *ctx;
};

static bool complete(const struct tfs_raw *r, const struct pending *p)
{
	return (!r->want_k || !(p->stacks & TRACEFS_RAW_WANT_KSTACK) || p->has_k) &&
	       (!r->want_u || !(p->stacks & TRACEFS_RAW_WANT_USTACK) || p->has_u);
}

/* Gives out pending event I and removes it. */
static void emit(struct tfs_raw *r, int i, tfs_raw_sample_fn fn, void *ctx)
{
	struct pending *p = &r->pend[i];
	if (!complete(r, p))
		r->st.incomplete++;
	struct tfs_raw_sample smp = {
		.event = p->event, .tid = p->tid, .tgid = p->tgid, .ts = p->ts,
		.has_kstack = p->has_k, .has_ustack = p->has_u, .has_arg = p->has_arg, .arg = p->arg,
		.kips = p->kips, .nkips = p->nk, .uips = p->uips, .nuips = p->nu,
	};
	if (fn)
		fn(ctx, &smp);
	/* slots are large: rotate the freed one to the end instead of copying */
	struct pending tmp;
	if (i < r->npend - 1) {
		memcpy(&tmp, p, sizeof(tmp));
		memmove(&r->pend[i], &r->pend[i + 1], (size_t)(r->npend - 1 - i) * sizeof(*p));
		memcpy(&r->pend[r->npend - 1], &tmp, sizeof(tmp));
	}
	r->npend--;
}

static void add_event(struct tfs_raw *r, const struct tfs_raw_record *rec,
		      const struct feed_ctx *fc)
{
	if (r->npend == TRACEFS_RAW_PENDING)
		emit(r, 0, fc->fn, fc->ctx); /* its stacks are not coming */
	struct pending *p = &r->pend[r->npend++];
	p->event = rec->event;
	p->tid = rec->pid;
	p->tgid = 0;
	p->ts = rec->ts;
	p->stacks = rec->stacks;
	p->has_arg = rec->has_arg;
	p->arg = rec->arg;
	p->has_k = p->has_u = false;
	p->nk = p->nu = 0;
	if (complete(r, p))
		emit(r, r->npend - 1, fc->fn, fc->ctx);
}

/* Attaches a stack record to the newest pending event of its pid that lacks
 * that kind: nested contexts (an interrupt's event between an event and its
 * stacks) finish innermost first. */
static void add_stack(struct tfs_raw *r, const struct tfs_raw_record *rec,
		      const struct feed_ctx *fc)
{
	bool kernel = rec->kind == TRACEFS_RAW_KSTACK;
	for (int i = r->npend - 1; i >= 0; i--) {
		struct pending *p = &r->pend[i];
		uint8_t want = kernel ? TRACEFS_RAW_WANT_KSTACK : TRACEFS_RAW_WANT_USTACK;
		if (p->tid != rec->pid || !(p->stacks & want) || (kernel ? p->has_k : p->has_u))
			continue;
		if (kernel) {
			p->has_k = true;
			p->nk = rec->nips;
			memcpy(p->kips, rec->ips, (size_t)rec->nips * 8);
		} else {
			p->has_u = true;
			p->nu = rec->nips;
			p->tgid = rec->tgid;
			memcpy(p->uips, rec->ips, (size_t)rec->nips * 8);
		}
		if (complete(r, p))
			emit(r, i, fc->fn, fc->ctx);
		return;
	}
	r->st.orphans++;
}

static int pair_record(void *ctx, const struct tfs_raw_record *rec)
{
	struct feed_ctx *fc = ctx;
	switch (rec->kind) {
	case TRACEFS_RAW_EVENT:
		add_event(fc->r, rec, fc);
		break;
	case TRACEFS_RAW_KSTACK:
	case TRACEFS_RAW_USTACK:
		add_stack(fc->r, rec, fc);
		break;
	default:
		break;
	}
	return 0;
}

int tfs_raw_feed(struct tfs_raw *r, const void *page, size_t len,
		     tfs_raw_sample_fn fn, void *ctx)
{
	struct feed_ctx fc = { r, fn, ctx };
	return tfs_raw_decode(r, page, len, pair_record, &fc);
}

void tfs_raw_flush(struct tfs_raw *r, tfs_raw_sample_fn fn, void *ctx)
{
	while (r->npend)
		emit(r, 0, fn, ctx);
}
