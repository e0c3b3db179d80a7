/* report: format names, detection and the entry point. */
#include "report/internal.h"

#include <errno.h>
#include <string.h>

#define DETECT_BYTES 65536

static const struct {
	const char *name;
	enum report_format fmt;
} names[] = {
	{ "auto", REPORT_AUTO },        { "ftrace", REPORT_FTRACE },
	{ "trace", REPORT_FTRACE },     { "perf", REPORT_PERF_SCRIPT },
	{ "perf-script", REPORT_PERF_SCRIPT }, { "perf_script", REPORT_PERF_SCRIPT },
	{ "hist", REPORT_HIST },        { "folded", REPORT_FOLDED },
};

int report_format_parse(const char *name, enum report_format *out)
{
	if (!name || !out)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		if (strcmp(name, names[i].name) == 0) {
			*out = names[i].fmt;
			return 0;
		}
	}
	return -EINVAL;
}

const char *report_format_name(enum report_format fmt)
{
	switch (fmt) {
	case REPORT_AUTO: return "auto";
	case REPORT_FTRACE: return "ftrace";
	case REPORT_PERF_SCRIPT: return "perf";
	case REPORT_HIST: return "hist";
	case REPORT_FOLDED: return "folded";
	}
	return "?";
}

static bool ends_with(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return n >= k && memcmp(p + n - k, s, k) == 0;
}

/* "addr sym (dso)" after the indentation of a perf script frame. */
static bool perf_frame(const char *p, size_t n)
{
	const char *sp = memchr(p, ' ', n);
	uint64_t addr;

	return sp && report_parse_hex(p, (size_t)(sp - p), &addr);
}

/* "frames COUNT" with at least one ';' or a single frame. */
static int folded_line(const char *p, size_t n)
{
	const char *sp = memrchr(p, ' ', n);
	uint64_t count;

	if (!sp || sp == p || !report_parse_u64(sp + 1, (size_t)(p + n - sp - 1), &count))
		return 0;
	return memchr(p, ';', (size_t)(sp - p)) ? 2 : 1;
}

/* Adds the evidence one line gives to the scores, indexed by format. */
static void score_line(const struct report_line *l, unsigned *score)
{
	const char *p = l->p;
	size_t n = l->len;
	bool indented = n > 0 && (p[0] == ' ' || p[0] == '\t');
	struct report_perf_header h;
	int sc;

	report_trim(&p, &n);
	if (l->nul || n == 0)
		return;
	if (report_starts(p, n, "# tracer:") || memmem(p, n, "<stack trace>", 13) ||
	    memmem(p, n, "<user stack trace>", 18))
		score[REPORT_FTRACE] += 5;
	else if (report_starts(p, n, "=>"))
		score[REPORT_FTRACE] += 1;
	else if (report_starts(p, n, "# event histogram") ||
		 (p[0] == '{' && ends_with(p, n, "stacktrace:")) ||
		 (p[0] == '}' && memmem(p, n, "hitcount:", 9)))
		score[REPORT_HIST] += 5;
	else if (indented && perf_frame(p, n))
		score[REPORT_PERF_SCRIPT] += ends_with(p, n, ")") ? 2 : 1;
	else if (perf_frame(p, n) && ends_with(p, n, ")"))
		score[REPORT_PERF_SCRIPT] += 1; /* frame lines without indentation */
	else if ((sc = report_perf_header(p, n, &h)) >= 3 || (sc == 2 && ends_with(p, n, ")")))
		score[REPORT_PERF_SCRIPT] += 2; /* comm pid time: [period] event: [frame] */
	else if (!indented)
		score[REPORT_FOLDED] += (unsigned)folded_line(p, n);
}

bool report_is_blank(const char *buf, size_t len)
{
	struct report_stats st = { 0 };
	struct report_in in = { .buf = buf, .len = len, .st = &st };
	struct report_line l;

	while (report_in_next(&in, &l)) {
		const char *p = l.p;
		size_t n = l.len;
		report_trim(&p, &n);
		if (n && p[0] != '#')
			return false;
	}
	return true;
}

bool report_is_binary(const char *buf, size_t len)
{
	size_t n = len < DETECT_BYTES ? len : DETECT_BYTES, bad = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		bad += (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
	}
	/* a stray NUL in a damaged trace is not binary; random bytes are 12% */
	return bad * 20 > n;
}

enum report_format report_detect(const char *buf, size_t len)
{
	struct report_stats st = { 0 };
	struct report_in in = { .buf = buf, .len = len < DETECT_BYTES ? len : DETECT_BYTES, .st = &st };
	struct report_line l;
	unsigned score[REPORT_FOLDED + 1] = { 0 };
	enum report_format best = REPORT_AUTO;

	if (!buf || report_is_binary(buf, len))
		return REPORT_AUTO;
	while (report_in_next(&in, &l))
		score_line(&l, score);
	for (int f = REPORT_FTRACE; f <= REPORT_FOLDED; f++)
		if (score[f] > score[best])
			best = (enum report_format)f;
	return best;
}

int report_parse(const char *buf, size_t len, enum report_format fmt,
		 report_fn fn, void *ctx, struct report_stats *stats)
{
	struct report_stats local = { 0 };
	struct report_stats *st = stats ? stats : &local;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!buf || !fn)
		return -EINVAL;
	if (report_is_blank(buf, len))
		return 0; /* nothing in it: no stacks, and no error */
	if (fmt == REPORT_AUTO)
		fmt = report_detect(buf, len);
	st->format = fmt;

	struct report_in in = { .buf = buf, .len = len, .st = st };
	struct report_emitter em = { .fn = fn, .ctx = ctx, .st = st };
	switch (fmt) {
	case REPORT_FTRACE: ret = report_parse_ftrace(&in, &em); break;
	case REPORT_PERF_SCRIPT: ret = report_parse_perf(&in, &em); break;
	case REPORT_HIST: ret = report_parse_hist(&in, &em); break;
	case REPORT_FOLDED: ret = report_parse_folded(&in, &em); break;
	default: ret = -EINVAL; break;
	}
	report_emitter_free(&em);
	/* Lines, but no stack in them: not this format (perf samples' frame
	 * lines outside a sample are perf script, ignored). */
	if (ret == 0 && st->stacks == 0 && !st->orphans && !report_is_blank(buf, len))
		ret = -EINVAL;
	return ret;
}
