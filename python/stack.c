/* One sample's Python frames. Its walk gave each frame's rsp, so each
 * activation of _PyEval_EvalFrameDefault has its CFA, and at a fixed offset
 * from it the record the eval loop keeps on the C stack: 3.11 and 3.12 a
 * _PyCFrame (current_frame: the activation's newest interpreter frame;
 * previous: the next outer activation's _PyCFrame, or the thread state's
 * root_cframe for the first), 3.13 an entry frame (previous: the next outer
 * activation's newest frame when it called in, NULL for the first). The
 * offset is learnt once per binary, from the first sample whose
 * activations it makes chain, checked against the thread state read by
 * native thread id. Each sample's records come from its own copy of the
 * stack, as they were when it was taken, and must chain the same way; the
 * interpreter frames they point at are read from the process, each
 * activation's until its entry (3.11 is_entry; 3.12 the entry frame owned
 * by the C stack; 3.13 the activation's entry frame), where the next outer
 * one's must begin. 3.13's newest activation has no record of its newest
 * frame on the C stack: the thread state's current_frame is read, and must
 * lead back to that activation's entry frame. */
#include <errno.h>
#include <string.h>
#include "python/internal.h"

#define PY_ACTS 64          /* eval loop activations per stack, at most */

struct act {
	uint32_t k;             /* its index in the stack */
	uint64_t cfa, rec;      /* its CFA; its record's address */
	uint64_t newest;        /* its newest interpreter frame */
};

/* Whether S's copy holds the LEN bytes at ADDR */
static bool copy_holds(const struct py_stack *s, uint64_t addr, size_t len)
{
	uint64_t sp = s->sps[0];
	return addr >= sp && addr - sp <= s->size && s->size - (addr - sp) >= len;
}

/* The LEN bytes at ADDR in S's copy into OUT; false outside it. */
static bool in_copy(const struct py_stack *s, uint64_t addr, void *out, size_t len)
{
	if (!copy_holds(s, addr, len))
		return false;
	memcpy(out, s->stack + (addr - s->sps[0]), len);
	return true;
}

/* Whether interpreter frame F is read from P (act_frames takes one in
 * the copy from there) */
static bool frame_read(const struct py_proc *p, const struct py_stack *s, uint64_t f)
{
	return f && !copy_holds(s, f, p->lay.fr_size);
}

static uint64_t copy_word(const struct py_stack *s, uint64_t addr, bool *ok)
{
	uint64_t w = 0;
	*ok &= in_copy(s, addr, &w, 8);
	return w;
}

/* S's eval loop activations in P, newest first, into A: how many; *OPEN
 * when one's CFA is not known (the walk stopped in it): those above it are
 * not in the stack either. */
static uint32_t find_acts(const struct py_proc *p, const struct py_stack *s, struct act *a,
			  bool *open)
{
	uint32_t n = 0;
	*open = false;
	for (uint32_t k = 0; k < s->n && n < PY_ACTS; k++) {
		uint64_t v = s->ips[k] - (k > 0) - p->bias;
		if (v < p->bin->eval_lo || v >= p->bin->eval_hi)
			continue;
		if (k + 1 >= s->n || !s->sps[k + 1] || !s->sps[k]) {
			*open = true;
			break;
		}
		a[n++] = (struct act){ .k = k, .cfa = s->sps[k + 1] };
	}
	return n;
}

/* Whether OFF puts every activation's _PyCFrame where the chain holds:
 * each one's previous the next one's, the last's the thread's root_cframe
 * ROOT (0: no thread state found), or, when the stack is not whole (the
 * next activation not in it), an address above its own on the stack */
static bool cframes_chain(const struct py_proc *p, const struct py_stack *s, const struct act *a,
			  uint32_t n, int64_t off, uint64_t root)
{
	const struct py_layout *l = &p->lay;
	bool ok = true;
	for (uint32_t i = 0; i < n && ok; i++) {
		uint64_t rec = a[i].cfa + (uint64_t)off;
		uint64_t prev = copy_word(s, rec + l->cf_previous, &ok);
		uint64_t cur = copy_word(s, rec + l->cf_current, &ok);
		if (i + 1 < n)
			ok &= cur != 0 && prev == a[i + 1].cfa + (uint64_t)off;
		else
			ok &= cur != 0 && ((root && prev == root) || (!s->whole && prev > rec));
	}
	return ok;
}

/* The thread state's root_cframe for S's thread (0: no thread state) */
static uint64_t root_cframe(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
			    bool fresh)
{
	uint64_t ts = py_proc_tstate(r, p, s->tid, fresh);
	return ts ? ts + p->lay.ts_root_cframe : 0;
}

/* 3.11, 3.12: the _PyCFrame's offset from the CFA, the one that makes the
 * chain hold below the CFA of A's activations */
static int learn_cframe(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
			const struct act *a, uint32_t n)
{
	uint64_t root = root_cframe(r, p, s, true);
	if (!root)
		return -EAGAIN; /* nothing to check a candidate against */
	struct py_stack strict = *s;
	strict.whole = true; /* learnt only where the thread state confirms it */
	s = &strict;
	int64_t found = 0, lowest = -(int64_t)(a[0].cfa - s->sps[a[0].k]);
	int nfound = 0;
	for (int64_t off = -8; off >= lowest && off >= -PY_SCAN; off -= 8)
		if (cframes_chain(p, s, a, n, off, root) && nfound++ == 0)
			found = off;
	if (nfound != 1)
		return -EAGAIN;
	p->bin->rec_off = (int32_t)found;
	p->bin->learnt = true;
	return 0;
}

/* 3.13: the entry frame's offset from the CFA: the thread's current frame
 * leads back to the newest activation's, on the C stack below its CFA */
static int learn_entry(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		       const struct act *a, uint32_t n)
{
	const struct py_layout *l = &p->lay;
	uint64_t ts = py_proc_tstate(r, p, s->tid, true), f = 0;
	if (!ts || py_proc_read(r, p, ts + l->ts_current_frame, &f, 8) < 0)
		return -EAGAIN;
	for (int i = 0; f && i < PY_MAX_FRAMES; i++) {
		uint8_t owner = 0;
		if (f >= s->sps[a[0].k] && f < a[0].cfa) {
			int64_t off = (int64_t)(f - a[0].cfa);
			bool ok = true;
			for (uint32_t j = 0; j < n && ok; j++)
				ok = in_copy(s, a[j].cfa + (uint64_t)off + l->fr_owner, &owner, 1) &&
				     owner == l->owner_cstack;
			if (!ok)
				return -EAGAIN;
			p->bin->rec_off = (int32_t)off;
			p->bin->learnt = true;
			return 0;
		}
		if (py_proc_read(r, p, f + l->fr_previous, &f, 8) < 0)
			return -EAGAIN;
	}
	return -EAGAIN;
}

/* 3.11, 3.12: whether the newest activation's sampled newest frame is
 * still live when its frames are read: the live _PyCFrame at the same
 * place on the thread's stack has it as its current frame, or a frame
 * that leads back to it (the thread went deeper since). A thread that
 * returned from it may since have run other functions at the same depth,
 * in frames at the same addresses: those are not the sampled ones. */
static bool still_live(struct py_reader *r, struct py_proc *p, const struct act *a)
{
	const struct py_layout *l = &p->lay;
	uint64_t live[2];
	if (py_proc_read(r, p, a->rec + l->cf_current, live, sizeof(live)) < 0)
		return false;
	uint64_t f = l->cf_current < l->cf_previous ? live[0] : live[1];
	for (int i = 0; f && i < PY_MAX_FRAMES; i++) {
		if (f == a->newest)
			return true;
		if (py_proc_read(r, p, f + l->fr_previous, &f, 8) < 0)
			return false;
	}
	return false;
}

/* 3.13: whether the thread's current frame F, read now, was the newest
 * activation's newest when the sample was taken: the eval loop keeps it in
 * a callee-saved register, so it is among the sampled registers or was
 * saved on the stack below the activation's CFA (its callees push it).
 * Not a proof (a stale word may hold it), but a thread that has left
 * that frame since leaves it nowhere there. */
static bool sampled_newest(const struct py_stack *s, const uint64_t *regs, const struct act *a,
			   uint64_t f)
{
	for (int i = 0; regs && i < 17; i++)
		if (regs[i] == f)
			return true;
	for (uint64_t at = s->sps[0]; at + 8 <= a->cfa; at += 8) {
		uint64_t w;
		if (!in_copy(s, at, &w, 8))
			return false;
		if (w == f)
			return true;
	}
	return false;
}

/* Whether the sample points into [LO, HI): a sampled register, or a word
 * of the stack below the newest activation A's CFA. The eval loop keeps
 * its next instruction (in the newest frame's bytecode) in a register or
 * its own frame, so a sample taken in that code points into it; one that
 * does not was taken in other code, which a thread that returned and
 * called again at the same depth since leaves in the same frame. */
static bool points_into(const struct py_stack *s, const struct act *a, uint64_t lo, uint64_t hi)
{
	for (int i = 0; s->regs && i < 17; i++)
		if (s->regs[i] >= lo && s->regs[i] < hi)
			return true;
	for (uint64_t at = s->sps[0]; at + 8 <= a->cfa; at += 8) {
		uint64_t w;
		if (!in_copy(s, at, &w, 8))
			return false;
		if (w >= lo && w < hi)
			return true;
	}
	return false;
}

/* Has the next read take along frame F's, when it is read (frame_read) */
static void prefetch_frame(struct py_reader *r, const struct py_proc *p, const struct py_stack *s,
			   uint64_t f)
{
	if (frame_read(p, s, f))
		py_proc_prefetch(r, f, p->lay.fr_size);
}

static bool check_span(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		       const struct act *a, uint64_t *addr, size_t *len);

/* Has the next read take along the newest frame F of S's thread (unless
 * it is in the copy); when its last sample's newest was the same, the
 * frames and code objects it read after it and, for a stack of one
 * activation, the liveness check after them: all of a stack's reads but
 * the first in one system call, when they are the last sample's (the
 * first that differs reads its own, and the rest as before) */
static void prefetch_newest(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
			    const struct act *a, uint32_t n, uint64_t f)
{
	const struct py_layout *l = &p->lay;
	const struct py_thread *t = py_proc_thread(p, s->tid);
	uint64_t addr;
	size_t len;
	if (!t || !t->nguess || t->frame[0] != f) {
		prefetch_frame(r, p, s, f);
		return;
	}
	uint32_t k = 0;
	for (; k < t->nguess && frame_read(p, s, t->frame[k]); k++) {
		py_proc_prefetch(r, t->frame[k], l->fr_size);
		py_proc_prefetch(r, t->code[k], l->co_size);
	}
	if (k == t->nguess && n == 1 && check_span(r, p, s, a, &addr, &len))
		py_proc_prefetch(r, addr, len);
}

/* What unchanged() reads first, into *ADDR and *LEN: 3.11 and 3.12 the
 * newest activation's live record, 3.13 the thread state's current
 * frame. False when not known without a read. */
static bool check_span(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		       const struct act *a, uint64_t *addr, size_t *len)
{
	const struct py_layout *l = &p->lay;
	if (!l->entry_frame) {
		*addr = a[0].rec + l->cf_current, *len = 16; /* still_live's */
		return true;
	}
	uint64_t ts = py_proc_tstate(r, p, s->tid, false);
	*addr = ts + l->ts_current_frame, *len = 8;
	return ts != 0;
}

/* Each activation's record and newest frame, checked to chain: 0 or the
 * reason it does not */
static int records(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		   struct act *a, uint32_t n)
{
	const struct py_layout *l = &p->lay;
	bool ok = true;
	for (uint32_t i = 0; i < n; i++)
		a[i].rec = a[i].cfa + (uint64_t)(int64_t)p->bin->rec_off;
	if (!l->entry_frame) {
		if (!cframes_chain(p, s, a, n, p->bin->rec_off, root_cframe(r, p, s, false)) &&
		    !cframes_chain(p, s, a, n, p->bin->rec_off, root_cframe(r, p, s, true)))
			return PY_FAIL_CHAIN;
		for (uint32_t i = 0; i < n; i++)
			a[i].newest = copy_word(s, a[i].rec + l->cf_current, &ok);
		prefetch_newest(r, p, s, a, n, a[0].newest); /* read next, if still live */
		return still_live(r, p, &a[0]) ? 0 : PY_FAIL_MOVED;
	}
	for (uint32_t i = 0; i < n && ok; i++) {
		uint8_t owner = 0;
		ok = in_copy(s, a[i].rec + l->fr_owner, &owner, 1) && owner == l->owner_cstack;
		uint64_t prev = copy_word(s, a[i].rec + l->fr_previous, &ok);
		if (i + 1 < n)
			a[i + 1].newest = prev;
		else if (s->whole)
			ok &= prev == 0;
	}
	if (!ok)
		return PY_FAIL_CHAIN;
	uint64_t ts = py_proc_tstate(r, p, s->tid, false);
	const struct py_thread *t = ts ? py_proc_thread(p, s->tid) : NULL;
	if (t && t->nguess) /* its current frame is read first: the last one's along */
		prefetch_newest(r, p, s, a, n, t->frame[0]);
	if (!ts || py_proc_read(r, p, ts + l->ts_current_frame, &a[0].newest, 8) < 0)
		return PY_FAIL_READ;
	return sampled_newest(s, s->regs, &a[0], a[0].newest) ? 0 : PY_FAIL_MOVED;
}

/* Has the read of a frame's code object take along what is read after
 * it: the caller's frame PREV; once activation I's frames end there (or
 * LAST: 3.11's entry frame), the next activation's newest; after the
 * last activation's, the check unchanged() makes, which then reads in
 * the same system call, after the code object, as it would by itself */
static void prefetch_next(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
			  const struct act *a, uint32_t n, uint32_t i, bool last, uint64_t prev)
{
	uint64_t addr;
	size_t len;
	bool ends = last || (p->lay.entry_frame && prev == a[i].rec) || !frame_read(p, s, prev);
	if (!ends)
		prefetch_frame(r, p, s, prev);
	else if (i + 1 < n)
		prefetch_frame(r, p, s, a[i + 1].newest);
	else if (check_span(r, p, s, a, &addr, &len))
		py_proc_prefetch(r, addr, len);
}

/* Activation I's Python frames, newest first, into OUT (room for MAX):
 * how many, or -(the reason) when its frames do not lead back to it. */
static int act_frames(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		      const struct act *a, uint32_t n, uint32_t i, uint64_t *out, uint32_t max)
{
	const struct py_layout *l = &p->lay;
	uint64_t f = a[i].newest, end = i + 1 < n ? a[i + 1].newest : 0;
	uint8_t fr[128];
	enum py_fail why;
	struct py_thread *t = i == 0 ? py_proc_thread(p, s->tid) : NULL; /* the guess of the next */
	for (uint32_t m = 0; m < PY_MAX_FRAMES; ) {
		if (!f)
			return -PY_FAIL_FRAMES;
		if (l->entry_frame && f == a[i].rec)
			return (int)m; /* 3.13: back at the activation's entry frame */
		if (in_copy(s, f, fr, l->fr_size)) {
			/* 3.12's entry frame, this activation's own */
			bool mine = f >= s->sps[a[i].k] && f < a[i].cfa && fr[l->fr_owner] == l->owner_cstack;
			uint64_t prev;
			memcpy(&prev, fr + l->fr_previous, 8);
			return mine && l->owner_cstack && !l->entry_frame &&
			       (i + 1 < n ? prev == end : !s->whole || prev == 0) ? (int)m : -PY_FAIL_FRAMES;
		}
		if (l->fr_size > sizeof(fr) || py_proc_read(r, p, f, fr, l->fr_size) < 0)
			return -PY_FAIL_READ;
		uint64_t code, prev;
		memcpy(&code, fr + l->fr_code, 8);
		memcpy(&prev, fr + l->fr_previous, 8);
		if (l->owner_cstack && fr[l->fr_owner] == l->owner_cstack)
			return -PY_FAIL_FRAMES; /* another activation's entry frame */
		if (m >= max)
			return -PY_FAIL_ROOM;
		if (t && m < PY_GUESS_FRAMES)
			t->frame[m] = f, t->code[m] = code, t->nguess = m + 1;
		prefetch_next(r, p, s, a, n, i, l->fr_is_entry && fr[l->fr_is_entry], prev);
		if (!(out[m++] = py_code_frame(r, p, code, &why)))
			return -(int)why;
		uint64_t lo, hi;
		py_code_bytecode(r, &lo, &hi);
		if (i == 0 && m == 1 && hi && !points_into(s, &a[0], lo, hi))
			return -PY_FAIL_MOVED; /* the newest frame runs other code now */
		if (l->fr_is_entry && fr[l->fr_is_entry])
			/* 3.11: the activation's first frame; the outer one's next */
			return (i + 1 < n ? prev == end : !s->whole || prev == 0) ? (int)m :
			       -PY_FAIL_FRAMES;
		f = prev;
	}
	return -PY_FAIL_FRAMES;
}

/* Whether the thread still runs the newest activation's newest frame once
 * its frames were read: the reads are not one snapshot, and a thread that
 * returned and called again meanwhile may have changed a caller's frame
 * after the newest was read */
static bool unchanged(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		      const struct act *a)
{
	if (!p->lay.entry_frame)
		return still_live(r, p, &a[0]);
	uint64_t ts = py_proc_tstate(r, p, s->tid, false), f = 0;
	return ts && py_proc_read(r, p, ts + p->lay.ts_current_frame, &f, 8) == 0 &&
	       f == a[0].newest;
}

/* S's frames with each activation's Python frames before it, into OUT */
static int expand(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		  const struct act *a, uint32_t n, uint64_t *out, uint32_t max)
{
	uint64_t py[PY_MAX_FRAMES];
	uint32_t o = 0, k = 0;
	for (uint32_t i = 0; i < n; i++) {
		int m = act_frames(r, p, s, a, n, i, py, PY_MAX_FRAMES);
		if (m < 0)
			return m;
		if (o + (a[i].k - k) + (uint32_t)m > max)
			return -PY_FAIL_ROOM;
		memcpy(out + o, s->ips + k, (a[i].k - k) * sizeof(*out));
		o += a[i].k - k;
		memcpy(out + o, py, (uint32_t)m * sizeof(*out));
		o += (uint32_t)m;
		k = a[i].k;
	}
	if (o + (s->n - k) > max)
		return -PY_FAIL_ROOM;
	memcpy(out + o, s->ips + k, (s->n - k) * sizeof(*out));
	return (int)(o + s->n - k);
}

/* The Python frames of S's activations A (N of them), each put in before
 * its eval loop, into OUT: the count, or -(the reason) they were not read */
static int read_acts(struct py_reader *r, struct py_proc *p, const struct py_stack *s,
		     struct act *a, uint32_t n, uint64_t *out, uint32_t max)
{
	py_proc_prefetch_drop(r);
	int why = records(r, p, s, a, n);
	int got = why ? -why : expand(r, p, s, a, n, out, max);
	if (got >= 0 && !unchanged(r, p, s, a))
		got = -PY_FAIL_MOVED; /* it moved while its frames were read */
	py_proc_prefetch_drop(r);
	return got;
}

bool py_reader_runs_python(struct py_reader *r, uint32_t pid, uint64_t time)
{
	const struct py_proc *p = py_proc_get(r, pid, time);
	return p && (p->kind == PY_YES || p->kind == PY_UNSUPPORTED); /* the latter to be said */
}

int py_reader_expand(struct py_reader *r, const struct py_stack *s, uint64_t *out, uint32_t max)
{
	struct py_proc *p = py_proc_get(r, s->pid, s->time);
	if (!p || p->kind != PY_YES)
		return -1;
	struct act a[PY_ACTS];
	bool open;
	uint32_t n = find_acts(p, s, a, &open);
	uint32_t keep = s->n < max ? s->n : max;
	memcpy(out, s->ips, keep * sizeof(*out));
	if (n == 0 && !open)
		return (int)keep;
	py_live_add(r, s->pid);
	r->cnt.stacks++;
	int why = n == 0 ? PY_FAIL_NO_CFA : s->age_ns > PY_MAX_AGE_NS ? PY_FAIL_LATE :
		  s->behind ? PY_FAIL_BEHIND : 0;
	struct py_stack whole = *s;
	whole.whole &= !open;
	if (!why && !p->bin->learnt &&
	    (p->lay.entry_frame ? learn_entry(r, p, &whole, a, n) : learn_cframe(r, p, &whole, a, n)) < 0)
		why = PY_FAIL_LEARN;
	int got = why ? -why : read_acts(r, p, &whole, a, n, out, max);
	/* the newest eval loop sampled in its own code (the leaf, having
	 * called nothing) with its record not made yet, or stale from the
	 * last call at that depth, or given up already: its entry or exit.
	 * Its callers' frames are read, the frame it enters or leaves is left
	 * unnamed, its native frame kept. */
	bool edge = false;
	if ((got == -PY_FAIL_CHAIN || got == -PY_FAIL_MOVED) && n > 1 && a[0].k == 0) {
		int outer = read_acts(r, p, &whole, a + 1, n - 1, out, max);
		if (outer >= 0)
			got = outer, edge = true;
	}
	if (got < 0) {
		r->cnt.failed[-got]++;
		memcpy(out, s->ips, keep * sizeof(*out));
		return (int)keep;
	}
	r->cnt.read++;
	r->cnt.edge += edge;
	r->cnt.frames += (uint64_t)got - s->n; /* a try that failed put in none */
	return got;
}
