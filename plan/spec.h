/* EVENT spec parsing, internal to collector/ (tests/unit/spec_test.c). */
#ifndef FTSTACK_SPEC_H
#define FTSTACK_SPEC_H

#include <stdbool.h>
#include <stdint.h>

enum ft_spec_kind { FT_SPEC_TRACEPOINT = 1, FT_SPEC_KFUNC, FT_SPEC_UPROBE, FT_SPEC_USDT,
		    FT_SPEC_PERF /* perf's generic software and hardware events */ };

struct ft_spec {
	enum ft_spec_kind kind;
	char lib[256];      /* tracepoint: subsystem; uprobe/usdt: library or path */
	char provider[128]; /* usdt provider, may be empty */
	char name[256];     /* event, function or probe (may be a glob) */
	char text[512];     /* as the user wrote it */
	/* FT_SPEC_PERF: name is perf's canonical name ("page-faults") */
	uint32_t perf_type;  /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t perf_config;
	uint64_t period;     /* a sample every PERIOD events (1: every event, counted) */
	uint64_t freq;       /* or FREQ samples a second (then period is 0) */
};

/* Whether NAME is one of perf's generic event names (or its alias: faults,
 * cs, migrations, cycles, branches, ...); if so, and the out pointers are
 * given, its type, config and canonical name (static). */
bool ft_spec_perf_name(const char *name, uint32_t *type, uint64_t *config,
		       const char **canonical);

/* Classifies S. DEFLIB is -l LIB (a bare name is then a user function).
 * Generic events: `software:NAME[:N]`, `s:NAME[:N]`, `hardware:NAME[:N]`,
 * `h:NAME[:N]` (bpftrace's forms; N a period, or `Nhz` a frequency), and
 * perf's bare names (`page-faults`, `cycles`): a bare perf name is that
 * event, as in perf; `kprobe:NAME` or `p::NAME` is the kernel function.
 * Without N, events that count something the program does (faults,
 * switches, migrations) take every event (period 1, exact counts); clocks
 * and hardware events are sampled at 4000 Hz, perf's default.
 * Returns 0, -EINVAL for a malformed spec (`t:x`, `u:`, `p:`), or
 * -ENAMETOOLONG. */
int ft_spec_parse(const char *s, const char *deflib, struct ft_spec *sp);

#endif
