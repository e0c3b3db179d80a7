/* report: hist-trigger output keyed on a stack.
 *
 *   { stacktrace:                       (or common_stacktrace, or after other
 *            func+0x5c/0x220             keys: "{ common_pid: sh [ 12], stacktrace:")
 *            ...
 *   } hitcount:          1
 *
 * then a "Totals:" section whose "Hits:" is kept in the stats. Entries keyed
 * on something else (one line "{ key: v } hitcount: N") hold no stack and
 * are skipped.
 */
#include "report/internal.h"

#include <errno.h>
#include <string.h>

struct hist_entry {
	bool open;
	char comm[256];
	uint32_t pid;
	struct report_sb k;
};

static const char *find(const char *p, size_t n, const char *what)
{
	return memmem(p, n, what, strlen(what));
}

/* The number after "what", or false. */
static bool value_after(const char *p, size_t n, const char *what, uint64_t *v)
{
	const char *w = find(p, n, what);

	if (!w)
		return false;
	size_t off = (size_t)(w - p) + strlen(what);
	const char *q = p + off;
	size_t m = n - off;
	report_trim(&q, &m);
	size_t d = 0;
	while (d < m && q[d] >= '0' && q[d] <= '9')
		d++;
	return report_parse_u64(q, d, v);
}

/* One "name: value" key: a pid ("1234" or "comm [ 1234]") or a comm. */
static void key(struct hist_entry *e, const char *p, size_t n)
{
	const char *colon = memchr(p, ':', n);

	if (!colon)
		return;
	size_t nn = (size_t)(colon - p);
	const char *v = colon + 1;
	size_t nv = n - nn - 1;
	report_trim(&p, &nn);
	report_trim(&v, &nv);
	if (nn >= 3 && memcmp(p + nn - 3, "pid", 3) == 0) {
		const char *open = memchr(v, '[', nv);
		const char *num = v;
		size_t nnum = nv;
		if (open) {
			size_t nc = (size_t)(open - v);
			const char *c = v;
			report_trim(&c, &nc);
			report_copy(e->comm, sizeof(e->comm), c, nc);
			num = open + 1;
			const char *close = memchr(num, ']', (size_t)(v + nv - num));
			nnum = close ? (size_t)(close - num) : (size_t)(v + nv - num);
			report_trim(&num, &nnum);
		}
		uint64_t pid;
		if (report_parse_u64(num, nnum, &pid) && pid <= UINT32_MAX)
			e->pid = (uint32_t)pid;
	} else if (nn >= 4 && memcmp(p + nn - 4, "comm", 4) == 0) {
		report_copy(e->comm, sizeof(e->comm), v, nv);
	}
}

/* Keys separated by ", ", up to a '}' or the end. */
static void keys(struct hist_entry *e, const char *p, size_t n)
{
	const char *end = memchr(p, '}', n);

	if (end)
		n = (size_t)(end - p);
	while (n > 0) {
		const char *sep = memmem(p, n, ", ", 2);
		size_t k = sep ? (size_t)(sep - p) : n;
		key(e, p, k);
		if (!sep)
			break;
		p += k + 2;
		n -= k + 2;
	}
}

static void reset(struct hist_entry *e)
{
	e->open = false;
	e->comm[0] = '\0';
	e->pid = 0;
	report_sb_reset(&e->k);
}

static int close_entry(struct report_emitter *em, struct hist_entry *e, const char *p, size_t n)
{
	uint64_t hits;

	keys(e, p, n); /* keys printed after the stack, if any */
	if (!value_after(p, n, "hitcount:", &hits)) {
		em->st->malformed++;
		hits = 1;
	}
	int ret = report_emit(em, &e->k, NULL, e->comm, e->pid, "", hits);
	reset(e);
	return ret;
}

static int on_line(struct report_emitter *em, struct hist_entry *e, bool *totals,
		   const struct report_line *l)
{
	const char *p = l->p;
	size_t n = l->len;
	uint64_t v;

	report_trim(&p, &n);
	if (l->nul) {
		em->st->malformed++;
		return 0;
	}
	if (e->open && l->partial) {
		em->st->truncated = 1;
		return 0;
	}
	if (e->open && n > 0 && p[0] == '}')
		return close_entry(em, e, p + 1, n - 1);
	if (e->open && n > 0 && p[0] == ',') {
		keys(e, p + 1, n - 1);
		return 0;
	}
	if (n > 0 && p[0] == '{') {
		if (e->open) {
			em->st->malformed++; /* the previous entry never closed */
			reset(e);
		}
		bool stack = n >= 12 && memcmp(p + n - 11, "stacktrace:", 11) == 0;
		if (!stack) {
			em->st->skipped++;
			return 0;
		}
		e->open = true;
		keys(e, p + 1, n - 1);
		return 0;
	}
	if (e->open) {
		report_norm_sym(&p, &n);
		if (n == 0) {
			em->st->malformed++;
			return 0;
		}
		return report_sb_add(&e->k, p, n, em->st);
	}
	if (report_starts(p, n, "Totals:"))
		*totals = true;
	else if (*totals && report_starts(p, n, "Hits:") && value_after(p, n, "Hits:", &v))
		em->st->hist_hits = v;
	em->st->skipped++;
	return 0;
}

int report_parse_hist(struct report_in *in, struct report_emitter *em)
{
	struct hist_entry e = { 0 };
	struct report_line l;
	bool totals = false;
	int ret = 0;

	while (!ret && report_in_next(in, &l))
		ret = on_line(em, &e, &totals, &l);
	if (!ret && e.open)
		em->st->truncated = 1;
	report_sb_free(&e.k);
	return ret;
}
