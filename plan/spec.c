/* EVENT specs: bcc stackcount's forms and bpftrace's long forms (doc/DESIGN.md
 * section 1), classified here; the plan resolves them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "plan/spec.h"

/* perf's generic events, by the names perf list gives them; an alias
 * (perf's short name) follows its canonical name with the same config. */
static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
	bool counted; /* default: every event (else sampled at 4000 Hz) */
} perf_names[] = {
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, true },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, true },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, true },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, true },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, false },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, false },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, false },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, false },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, false },
};
#define NPERF (sizeof(perf_names) / sizeof(*perf_names))

/* The entry of NAME (a length-N prefix of a string), or -1. */
static int perf_find(const char *name, size_t n)
{
	for (size_t i = 0; i < NPERF; i++)
		if (strlen(perf_names[i].name) == n && strncmp(perf_names[i].name, name, n) == 0)
			return (int)i;
	return -1;
}

/* The canonical name of entry I: the first one with its type and config. */
static const char *canonical(int i)
{
	for (size_t j = 0; j < NPERF; j++)
		if (perf_names[j].type == perf_names[i].type &&
		    perf_names[j].config == perf_names[i].config)
			return perf_names[j].name;
	return perf_names[i].name;
}

bool ft_spec_perf_name(const char *name, uint32_t *type, uint64_t *config, const char **canon)
{
	int i = perf_find(name, strlen(name));
	if (i < 0)
		return false;
	if (type)
		*type = perf_names[i].type;
	if (config)
		*config = perf_names[i].config;
	if (canon)
		*canon = canonical(i);
	return true;
}

/* A generic event NAME (N bytes) of TYPE (0: either), with COUNT (CLEN
 * bytes, 0: none): "1", "100000", or "99hz". Returns 0 or -EINVAL. */
static int perf_spec(struct ft_spec *sp, uint32_t type, const char *name, size_t n,
		     const char *count, size_t clen)
{
	int i = perf_find(name, n);
	if (i < 0 || (type && perf_names[i].type != type))
		return -EINVAL;
	sp->kind = FT_SPEC_PERF;
	sp->perf_type = perf_names[i].type;
	sp->perf_config = perf_names[i].config;
	snprintf(sp->name, sizeof(sp->name), "%s", canonical(i));
	snprintf(sp->lib, sizeof(sp->lib), "%s",
		 sp->perf_type == PERF_TYPE_HARDWARE ? "hardware" : "software");
	if (!clen) {
		sp->period = perf_names[i].counted ? 1 : 0;
		sp->freq = perf_names[i].counted ? 0 : 4000;
		return 0;
	}
	char buf[32], *end;
	if (clen >= sizeof(buf) || count[0] < '0' || count[0] > '9')
		return -EINVAL;
	memcpy(buf, count, clen);
	buf[clen] = '\0';
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	bool hz = strcmp(end, "hz") == 0 || strcmp(end, "Hz") == 0;
	if (errno || v == 0 || (*end && !hz))
		return -EINVAL;
	if (hz)
		sp->freq = v;
	else
		sp->period = v;
	return 0;
}

static int set(char *dst, size_t len, const char *s, size_t n)
{
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* Splits S at ':' into at most 4 parts; returns the count. */
static int split(const char *s, const char *parts[4], size_t lens[4])
{
	int n = 0;
	const char *p = s;
	for (;;) {
		const char *c = strchr(p, ':');
		if (n == 3 || !c) {
			parts[n] = p;
			lens[n++] = strlen(p);
			return n;
		}
		parts[n] = p;
		lens[n++] = (size_t)(c - p);
		p = c + 1;
	}
}

static int fill(struct ft_spec *sp, enum ft_spec_kind kind, const char *lib, size_t llen,
		const char *prov, size_t plen, const char *name, size_t nlen)
{
	sp->kind = kind;
	if (set(sp->lib, sizeof(sp->lib), lib, llen) < 0 ||
	    set(sp->provider, sizeof(sp->provider), prov, plen) < 0 ||
	    set(sp->name, sizeof(sp->name), name, nlen) < 0)
		return -ENAMETOOLONG;
	return nlen ? 0 : -EINVAL;
}

int ft_spec_parse(const char *s, const char *deflib, struct ft_spec *sp)
{
	const char *p[4];
	size_t l[4];
	memset(sp, 0, sizeof(*sp));
	snprintf(sp->text, sizeof(sp->text), "%s", s);
	if (!*s)
		return -EINVAL;
	int n = split(s, p, l);
	if (n == 1 && !deflib && perf_find(p[0], l[0]) >= 0) /* perf's bare names */
		return perf_spec(sp, 0, p[0], l[0], "", 0);
	if (n == 1) /* func, or -l LIB func */
		return deflib ? fill(sp, FT_SPEC_UPROBE, deflib, strlen(deflib), "", 0, p[0], l[0])
			      : fill(sp, FT_SPEC_KFUNC, "", 0, "", 0, p[0], l[0]);
#define IS(i, w) (l[i] == strlen(w) && strncmp(p[i], w, l[i]) == 0)
	bool sw = IS(0, "software") || IS(0, "s"), hw = IS(0, "hardware") || IS(0, "h");
	if ((sw || hw) && (n == 2 || n == 3))
		return perf_spec(sp, sw ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE, p[1], l[1],
				 n == 3 ? p[2] : "", n == 3 ? l[2] : 0);
	if (sw || hw)
		return -EINVAL;
	if (IS(0, "t") || IS(0, "tracepoint")) {
		if (n != 3 || !l[1] || !l[2])
			return -EINVAL;
		return fill(sp, FT_SPEC_TRACEPOINT, p[1], l[1], "", 0, p[2], l[2]);
	}
	if (IS(0, "kprobe")) {
		if (n != 2)
			return -EINVAL;
		return fill(sp, FT_SPEC_KFUNC, "", 0, "", 0, p[1], l[1]);
	}
	if (IS(0, "p")) {
		if (n == 3 && l[1] == 0) /* p::func */
			return fill(sp, FT_SPEC_KFUNC, "", 0, "", 0, p[2], l[2]);
		if (n == 3) /* p:LIB:func */
			return fill(sp, FT_SPEC_UPROBE, p[1], l[1], "", 0, p[2], l[2]);
		return -EINVAL;
	}
	if (IS(0, "uprobe")) {
		if (n != 3 || !l[1])
			return -EINVAL;
		return fill(sp, FT_SPEC_UPROBE, p[1], l[1], "", 0, p[2], l[2]);
	}
	if (IS(0, "u") || IS(0, "usdt")) {
		if (n == 3 && l[1]) /* u:LIB:probe (a uprobe when LIB has no such probe) */
			return fill(sp, FT_SPEC_USDT, p[1], l[1], "", 0, p[2], l[2]);
		if (n == 4 && l[1]) /* u:LIB:provider:probe */
			return fill(sp, FT_SPEC_USDT, p[1], l[1], p[2], l[2], p[3], l[3]);
		return -EINVAL;
	}
#undef IS
	if (n == 2 && l[0]) /* LIB:func, as bcc's c:malloc */
		return fill(sp, FT_SPEC_UPROBE, p[0], l[0], "", 0, p[1], l[1]);
	return -EINVAL;
}
