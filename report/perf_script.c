/* report: `perf script` output.
 *
 * A sample is a header line "comm pid[/tid] [cpu] time: [period] event: ..."
 * (with -F comm,pid,tid,ip,sym,dso just "comm pid/tid"), then one indented
 * line per frame "addr sym+off (dso)", leaf first, then a blank line. A frame
 * is a kernel frame when its address is in the kernel half or its dso is the
 * kernel's. Samples without frame lines (recorded without -g) carry no stack
 * and are skipped.
 */
#include "report/internal.h"

#include <errno.h>
#include <string.h>

#define KERNEL_START 0xffff800000000000ULL
#define PS_PID_SCAN 128 /* bytes of a header searched for the pid */

struct ps_sample {
	bool open;
	char comm[256];
	char event[256];
	uint32_t pid;
	struct report_sb k, u;
};

static size_t tok_len(const char *p, size_t n)
{
	const char *sp = memchr(p, ' ', n);

	return sp ? (size_t)(sp - p) : n;
}

static bool is_pid_tok(const char *p, size_t n, uint64_t *pid)
{
	const char *slash = memchr(p, '/', n);
	size_t d = slash ? (size_t)(slash - p) : n;
	uint64_t tid;

	if (slash && !report_parse_u64(slash + 1, n - d - 1, &tid))
		return false;
	return report_parse_u64(p, d, pid) && *pid <= UINT32_MAX;
}

/* What may follow the pid: "[cpu]", a "time:" or nothing. */
static bool after_pid_ok(const char *p, size_t n)
{
	report_trim(&p, &n);
	if (n == 0 || p[0] == '[')
		return true;
	size_t t = tok_len(p, n);
	if (t < 2 || p[t - 1] != ':')
		return false;
	for (size_t i = 0; i + 1 < t; i++)
		if ((p[i] < '0' || p[i] > '9') && p[i] != '.')
			return false;
	return true;
}

/* "cpu-clock:ppp" -> "cpu-clock": drops a trailing group of modifier letters. */
static size_t strip_modifiers(const char *p, size_t n)
{
	const char *colon = memrchr(p, ':', n);

	if (!colon || colon == p)
		return n;
	size_t c = (size_t)(colon - p);
	if (c + 1 == n)
		return n;
	for (size_t i = c + 1; i < n; i++)
		if (!strchr("ukhpPGHISDWeb", p[i]))
			return n;
	return memchr(p, ':', c) ? n : c; /* "sched:sched_switch" keeps its ':' */
}

/* The event: the first token after the timestamp that ends with ':'. */
static void header_event(struct ps_sample *s, const char *p, size_t n)
{
	bool seen_time = false;

	while (n > 0) {
		report_trim(&p, &n);
		size_t t = tok_len(p, n);
		if (t >= 2 && p[t - 1] == ':') {
			if (seen_time) {
				report_copy(s->event, sizeof(s->event), p, strip_modifiers(p, t - 1));
				return;
			}
			seen_time = true;
		}
		p += t;
		n -= t;
	}
}

static bool parse_header(struct ps_sample *s, const char *p, size_t n)
{
	report_trim(&p, &n);
	/* The pid follows a comm of at most 16 bytes (padded): bounded search. */
	for (size_t i = 1; i < n && i < PS_PID_SCAN; i++) {
		if (p[i - 1] != ' ' || p[i] == ' ')
			continue;
		size_t t = tok_len(p + i, n - i);
		uint64_t pid;
		if (!is_pid_tok(p + i, t, &pid) || !after_pid_ok(p + i + t, n - i - t))
			continue;
		const char *c = p;
		size_t nc = i;
		report_trim(&c, &nc);
		report_copy(s->comm, sizeof(s->comm), c, nc);
		s->pid = (uint32_t)pid;
		s->event[0] = '\0';
		header_event(s, p + i + t, n - i - t);
		return true;
	}
	return false;
}

static int flush(struct report_emitter *em, struct ps_sample *s)
{
	int ret = 0;

	if (s->k.n || s->u.n)
		ret = report_emit(em, &s->k, &s->u, s->comm, s->pid, s->event, 1);
	else if (s->open)
		em->st->skipped++;
	report_sb_reset(&s->k);
	report_sb_reset(&s->u);
	s->open = false;
	s->comm[0] = s->event[0] = '\0';
	s->pid = 0;
	return ret;
}

/* "addr sym+off (dso)"; returns 1 when the line is no frame. */
static int parse_frame(struct ps_sample *s, const char *p, size_t n, struct report_stats *st)
{
	uint64_t addr;
	size_t t = tok_len(p, n);

	if (!report_parse_hex(p, t, &addr))
		return 1;
	p += t;
	n -= t;
	report_trim(&p, &n);
	const char *dso = NULL;
	size_t ndso = 0;
	if (n >= 3 && p[n - 1] == ')') {
		for (size_t i = n - 1; i-- > 1;) {
			if (p[i] == '(' && p[i - 1] == ' ') {
				dso = p + i + 1;
				ndso = n - i - 2;
				n = i - 1;
				break;
			}
		}
	}
	report_norm_sym(&p, &n);
	if (n == 0) {
		p = "[unknown]";
		n = 9;
	}
	bool kernel = addr >= KERNEL_START ||
		      (dso && report_starts(dso, ndso, "[kernel.")) ||
		      (dso && report_starts(dso, ndso, "[guest.kernel."));
	return report_sb_add(kernel ? &s->k : &s->u, p, n, st);
}

static int on_line(struct report_emitter *em, struct ps_sample *s, const struct report_line *l)
{
	const char *p = l->p;
	size_t n = l->len;
	bool indented = n > 0 && (p[0] == ' ' || p[0] == '\t');

	report_trim(&p, &n);
	if (l->nul) {
		em->st->malformed++;
		return 0;
	}
	if (n == 0)
		return flush(em, s);
	if (l->partial) {
		em->st->truncated = 1;
		return 0;
	}
	if (indented) {
		int ret = parse_frame(s, p, n, em->st);
		if (ret == 1) {
			em->st->skipped++; /* srcline, brstack and such */
			ret = 0;
		}
		return ret;
	}
	int ret = flush(em, s);
	if (ret)
		return ret;
	if (p[0] == '#') {
		em->st->skipped++;
		return 0;
	}
	if (!parse_header(s, p, n)) {
		em->st->malformed++;
		return 0;
	}
	s->open = true;
	return 0;
}

int report_parse_perf(struct report_in *in, struct report_emitter *em)
{
	struct ps_sample s = { 0 };
	struct report_line l;
	int ret = 0;

	while (!ret && report_in_next(in, &l))
		ret = on_line(em, &s, &l);
	if (!ret)
		ret = flush(em, &s);
	report_sb_free(&s.k);
	report_sb_free(&s.u);
	return ret;
}
