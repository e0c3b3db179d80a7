/* report: the header line of a `perf script` sample.
 *
 * perf script prints the fields -F asks for, in this order, separated by
 * blanks: comm (may hold blanks), pid and/or tid ("PID", "TID" or
 * "PID/TID"), "[CPU]", "SECS.USECS:", the period, "EVENT:" (right-aligned
 * when there are several events), then the rest: a tracepoint's fields, or
 * the one frame of a sample recorded without a callchain. Any of these may
 * be absent. A comm can hold blanks and digits, so the fields are found by
 * trying every token as the start of the run "pid [cpu] time period event"
 * and keeping the start where the run holds the most fields.
 */
#include "report/internal.h"

#include <string.h>

#define HDR_MAX_TOKENS 64 /* tokens of a header looked at; the rest is kept as text */

struct tok {
	const char *p;
	size_t n;
};

static bool is_digits(const char *p, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static bool is_pid(const struct tok *t, uint64_t *pid, uint64_t *tid)
{
	const char *slash = memchr(t->p, '/', t->n);
	size_t d = slash ? (size_t)(slash - t->p) : t->n;

	if (!report_parse_u64(t->p, d, pid) || *pid > UINT32_MAX)
		return false;
	if (!slash) {
		*tid = *pid;
		return true;
	}
	return report_parse_u64(slash + 1, t->n - d - 1, tid) && *tid <= UINT32_MAX;
}

static bool is_cpu(const struct tok *t)
{
	return t->n >= 3 && t->p[0] == '[' && t->p[t->n - 1] == ']' &&
	       is_digits(t->p + 1, t->n - 2);
}

/* "388.694354:" (or without the fraction). */
static bool is_time(const struct tok *t)
{
	if (t->n < 2 || t->p[t->n - 1] != ':')
		return false;
	const char *dot = memchr(t->p, '.', t->n - 1);
	if (!dot)
		return is_digits(t->p, t->n - 1);
	size_t d = (size_t)(dot - t->p);
	return is_digits(t->p, d) && is_digits(dot + 1, t->n - 2 - d);
}

/* "cpu-clock:", "sched:sched_switch:", "cycles:ppp:": ends in ':', not a time. */
static bool is_event(const struct tok *t)
{
	return t->n >= 2 && t->p[t->n - 1] == ':' && !is_time(t) && t->p[0] != '[';
}

/* The rest of a header is a frame when it reads "HEX SYM...": a sample
 * recorded without a callchain. */
bool report_perf_frame_like(const char *p, size_t n)
{
	uint64_t addr;
	const char *sp = memchr(p, ' ', n);

	if (!sp || !report_parse_hex(p, (size_t)(sp - p), &addr))
		return false;
	size_t rest = n - (size_t)(sp - p);
	const char *q = sp;
	report_trim(&q, &rest);
	return rest > 0;
}

/* Fields of the run starting at token i, or -1 when token i starts none. */
static int run_at(const struct tok *t, size_t nt, size_t i, const char *end,
		  struct report_perf_header *h)
{
	struct report_perf_header r = { 0 };
	int score = 0;
	uint64_t pid, tid;

	if (i < nt && is_pid(&t[i], &pid, &tid)) {
		r.has_pid = true;
		r.pid = (uint32_t)pid;
		r.tid = (uint32_t)tid;
		score++;
		i++;
	}
	if (i < nt && is_cpu(&t[i]) && r.has_pid) {
		score++;
		i++;
	}
	if (i < nt && is_time(&t[i])) {
		score++;
		i++;
	}
	if (score == 0)
		return -1; /* a run starts with the pid or the time */
	/* The period: digits before the event, before a frame or at the end. */
	if (i < nt && is_digits(t[i].p, t[i].n) &&
	    (i + 1 == nt || is_event(&t[i + 1]) ||
	     report_perf_frame_like(t[i + 1].p, (size_t)(end - t[i + 1].p)))) {
		report_parse_u64(t[i].p, t[i].n, &r.period);
		r.has_period = true;
		score++;
		i++;
	}
	if (i < nt && is_event(&t[i])) {
		r.event = t[i].p;
		r.nevent = t[i].n - 1;
		score++;
		i++;
	}
	r.rest = i < nt ? t[i].p : end;
	r.nrest = (size_t)(end - r.rest);
	if (r.nrest && report_perf_frame_like(r.rest, r.nrest))
		score++;
	*h = r;
	return score;
}

int report_perf_header(const char *p, size_t n, struct report_perf_header *h)
{
	struct tok t[HDR_MAX_TOKENS];
	size_t nt = 0;
	const char *end;

	report_trim(&p, &n);
	end = p + n;
	for (const char *q = p; q < end && nt < HDR_MAX_TOKENS;) {
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (q == end)
			break;
		const char *s = q;
		while (q < end && *q != ' ' && *q != '\t')
			q++;
		t[nt++] = (struct tok){ s, (size_t)(q - s) };
	}
	int best = -1;
	/* A comm is at most 15 bytes (TASK_COMM_LEN): it ends in the first tokens. */
	for (size_t i = 0; i < nt && i < 8; i++) {
		struct report_perf_header r;
		int score = run_at(t, nt, i, end, &r);
		if (score <= best)
			continue;
		best = score;
		*h = r;
		h->comm = p;
		h->ncomm = i ? (size_t)(t[i - 1].p + t[i - 1].n - p) : 0;
	}
	return best;
}
