/* Each option's value, parsed and checked (numbers in their bounds,
 * names among those known, URLs and times parsed as their users will),
 * and the positional words by subcommand: what cli/options.c's getopt
 * loop hands over, one case per option. Every refusal says what is wrong
 * in one line; the caller exits 2. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/options_internal.h"
#include "host/host.h"
#include "report/report.h"
#include "fleet/fleet.h"

/* Parses a non-negative integer that must fit in uint64; rejects junk. */
static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return bad("%s needs a non-negative integer, got '%s'", opt, s ? s : "");
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad("%s needs a non-negative integer, got '%s'", opt, s);
	*out = v;
	return 0;
}

/* parse_u64 of a value in MIN..MAX (MAX UINT64_MAX: no upper bound); UNIT
 * follows the bounds in the message (" Hz"). */
static int parse_u64_in(const char *opt, const char *s, uint64_t min, uint64_t max,
			const char *unit, uint64_t *out)
{
	uint64_t v;
	if (parse_u64(opt, s, &v) < 0)
		return -EINVAL;
	if (v < min && max == UINT64_MAX)
		return bad("%s needs at least %" PRIu64 "%s, got '%s'", opt, min, unit, s);
	if (v < min || v > max)
		return bad("%s needs %" PRIu64 "..%" PRIu64 "%s, got '%s'", opt, min, max, unit, s);
	*out = v;
	return 0;
}

/* Which of WORDS (NULL-ended) ARG is, into *OUT; else says "OPT takes a,
 * b or c, got 'ARG'". */
static int parse_word(const char *opt, const char *arg, const char *const *words, int *out)
{
	char list[160] = "";
	size_t n = 0;
	for (int i = 0; words[i]; i++) {
		if (strcmp(arg, words[i]) == 0) {
			*out = i;
			return 0;
		}
		n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
				      i == 0 ? "" : words[i + 1] ? ", " : " or ", words[i]);
	}
	return bad("%s takes %s, got '%s'", opt, list, arg);
}

/* Parses seconds (fractions allowed), > 0. */
static int parse_secs(const char *opt, const char *s, double *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return bad("%s needs a positive number of seconds, got '%s'", opt, s ? s : "");
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e7)
		return bad("%s needs a positive number of seconds, got '%s'", opt, s);
	*out = v;
	return 0;
}

static bool is_number(const char *s)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return false;
	(void)strtod(s, &end);
	return *end == '\0';
}

/* "1,2,5" into ints, each checked (whether they exist is the run's
 * question: task/targets.c). */
static int parse_id_list(const char *opt, const char *s, pid_t *ids, int *n, int max)
{
	char *copy = strdup(s), *save = NULL;
	int ret = 0;
	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if ((ret = parse_u64(opt, tok, &v)) < 0)
			break;
		if (v == 0 || v > INT_MAX || *n >= max) {
			ret = bad("%s: '%s' is not a valid id", opt, tok);
			break;
		}
		ids[(*n)++] = (pid_t)v;
	}
	free(copy);
	return ret;
}

static int parse_cpus(const char *s, struct ft_options *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int max = ncpu < FT_MAX_CPUS ? (int)ncpu : FT_MAX_CPUS;
	const char *item = s;
	int ret = host_cpu_list_parse(s, o->cpus, max, &item);
	o->cpus_set = true;
	if (ret == -EINVAL)
		return bad("-C needs CPU numbers and ranges like 0-1,4, got '%s'", s);
	if (ret == -ERANGE)
		return bad("-C: no CPU %.*s on this machine (it has CPUs 0-%s)", (int)strcspn(item, ","),
			   item, ncpu > 1 ? "N" : "0");
	return ret < 0 ? ret : 0;
}

/* copy[,SIZE] and dwarf[,SIZE]: MODE is the word before the comma. */
static int parse_copy_mode(const char *s, const char *mode, uint32_t dflt, struct ft_options *o)
{
	size_t len = strlen(mode);
	o->call_graph_copy = true;
	o->copy_size = dflt;
	if (s[len] != ',')
		return 0;
	char what[32];
	uint64_t v;
	snprintf(what, sizeof(what), "--call-graph %s,SIZE", mode);
	if (parse_u64(what, s + len + 1, &v) < 0)
		return -EINVAL;
	if (v < 64 || v > 65528 || v % 8)
		return bad("%s: SIZE must be a multiple of 8 in 64..65528, got '%s'", what, s + len + 1);
	o->copy_size = (uint32_t)v;
	return 0;
}

static int parse_call_graph(const char *s, struct ft_options *o)
{
	o->call_graph_copy = o->call_graph_dwarf = false;
	o->call_graph_set = true;
	if (strcmp(s, "fp") == 0)
		return 0;
	if (strncmp(s, "copy", 4) == 0 && (s[4] == '\0' || s[4] == ','))
		return parse_copy_mode(s, "copy", FT_COPY_SIZE_DEFAULT, o);
	if (strncmp(s, "dwarf", 5) == 0 && (s[5] == '\0' || s[5] == ',')) {
		o->call_graph_dwarf = true;
		return parse_copy_mode(s, "dwarf", FT_DWARF_SIZE_DEFAULT, o);
	}
	return bad("--call-graph takes fp, copy[,SIZE] or dwarf[,SIZE], got '%s'", s);
}

/* --sink URL: refused here when malformed, so a typo exits 2 at once. */
static int parse_sink(const char *arg, struct ft_options *o)
{
	struct fleet_url u;
	char err[256];
	int ret = fleet_url_parse(arg, NULL, &u, err, sizeof(err));
	explicit_bzero(u.password, sizeof(u.password));
	if (ret < 0)
		return bad("--sink: %s", err);
	o->sink = arg;
	return 0;
}

static int parse_time(const char *opt, const char *arg, const char **out)
{
	int64_t t;
	if (fleet_time_parse(arg, time(NULL), &t) < 0)
		return bad("%s: '%s' is not a time (epoch seconds, YYYY-MM-DD[ HH:MM[:SS]][Z], now, -2h)",
			   opt, arg);
	*out = arg;
	return 0;
}

/* The fleet options: the sink, and report's filters on a clickhouse:// source. */
static int apply_fleet_option(int c, const char *arg, struct ft_options *o)
{
	switch (c) {
	case OPT_SINK: return parse_sink(arg, o);
	case OPT_SINK_BUFFER: {
		char *end;
		errno = 0;
		double mb = strtod(arg, &end);
		if (errno || *end || !(mb > 0) || mb > 1048576)
			return bad("--sink-buffer needs megabytes above 0 (0.5, 64), got '%s'", arg);
		o->sink_buffer = (size_t)(mb * 1048576.0);
		o->sink_buffer_given = true;
		return 0;
	}
	case OPT_HOST_NAME:
		if (!*arg)
			return bad("--host-name needs a name");
		o->host_name = arg;
		return 0;
	case OPT_SINCE: return parse_time("--since", arg, &o->since);
	case OPT_UNTIL: return parse_time("--until", arg, &o->until);
	case OPT_HOST: o->host_pattern = arg; return 0;
	case OPT_EVENT: o->event_filter = arg; return 0;
	case OPT_MODE:
		if (strcmp(arg, "count") != 0 && strcmp(arg, "profile") != 0 && strcmp(arg, "offcpu") != 0)
			return bad("--mode takes count, profile or offcpu, got '%s'", arg);
		o->mode_filter = arg;
		return 0;
	default:
		return -EINVAL;
	}
}

int ft_option_apply(int c, const char *arg, struct ft_options *o)
{
	uint64_t v;
	switch (c) {
	case 'e':
		if (o->nspecs >= FT_MAX_EVENTS)
			return bad("too many -e events (at most %s)", "1024");
		o->specs[o->nspecs++] = arg;
		return 0;
	case 'l': o->lib = arg; return 0;
	case 'p': return parse_id_list("-p", arg, o->pids, &o->npids, 256);
	case 'L': return parse_id_list("-L", arg, o->tids, &o->ntids, 256);
	case 'c':
		if (o->command)
			return bad("give the command once (-c or --)");
		if (ft_command_split(arg, &o->command) < 0)
			return bad("-c: cannot parse command '%s'", arg);
		o->owned[o->nowned++] = o->command;
		/* the words live in one buffer: argv[0], or argv[2] of sh -c */
		o->owned[o->nowned++] = strcmp(o->command[0], "/bin/sh") == 0 &&
					o->command[1] && strcmp(o->command[1], "-c") == 0 ?
					o->command[2] : o->command[0];
		return 0;
	case 'C': return parse_cpus(arg, o);
	case 'U': o->user_only = true; return 0;
	case 'K': o->kernel_only = true; return 0;
	case 'f': o->format = OUT_FOLDED; return 0;
	case OPT_FORMAT:
		if (out_format_parse(arg, &o->format) < 0)
			return bad("--format: unknown format '%s' (text, folded, top, pprof, speedscope, svg)", arg);
		return 0;
	case 'o': o->output = arg; return 0;
	case 'd': o->delimiter = true; return 0;
	case 'a': o->annotate = true; return 0;
	case 's': o->offsets = true; return 0;
	case 'v': o->addresses = true; return 0;
	case 'P': o->per_process = o->pid_frame = true; return 0;
	case 'm':
		if (parse_u64("-m", arg, &v) < 0)
			return -EINVAL;
		o->min_count = v;
		o->min_block_us = v;
		return 0;
	case OPT_MIN_BLOCK: return parse_u64("--min-block", arg, &o->min_block_us);
	case 'M':
	case OPT_MAX_BLOCK: return parse_u64("--max-block", arg, &o->max_block_us);
	case OPT_MIN_TOTAL: return parse_u64("--min-total", arg, &o->min_total_us);
	case 't':
		if (parse_u64_in("-t", arg, 1, UINT64_MAX, "", &v) < 0)
			return -EINVAL;
		o->top = v;
		return 0;
	case 'x':
		if (o->nexcludes >= 63)
			return bad("too many -x patterns");
		/* "a,b" is two patterns, as kmalloc-top's -e takes them */
		{
			char *dup = strdup(arg), *save = NULL;
			if (!dup || o->nowned >= 128)
				return bad("out of memory");
			o->owned[o->nowned++] = dup;
			for (char *tok = strtok_r(dup, ",", &save); tok && o->nexcludes < 63;
			     tok = strtok_r(NULL, ",", &save))
				o->excludes[o->nexcludes++] = tok;
		}
		return 0;
	case 'r': o->regex = true; return 0;
	case 'i': return parse_secs("-i", arg, &o->interval);
	case 'T': o->timestamp = true; return 0;
	case 'D': return parse_secs("-D", arg, &o->duration);
	case 'F':
		if (parse_u64_in("-F", arg, 1, UINT64_MAX, " Hz", &v) < 0)
			return -EINVAL;
		o->freq = v;
		return 0;
	case OPT_PERIOD:
		if (parse_u64_in("--period", arg, 10000, UINT64_MAX, " ns", &v) < 0)
			return -EINVAL;
		o->period_ns = v;
		return 0;
	case 'I': o->idle = true; return 0;
	case 'u': o->user_threads = true; return 0;
	case 'k': o->kernel_threads = true; return 0;
	case OPT_STATE:
		if (parse_u64("--state", arg, &v) < 0)
			return -EINVAL;
		if (v > 0xffff)
			return bad("--state: '%s' is not a task state mask (0 running, 1 interruptible, 2 uninterruptible, ...)", arg);
		o->state = (long)v;
		return 0;
	case OPT_BACKEND: {
		static const char *const backends[] = { "perf", "ftrace", NULL };
		int b;
		if (parse_word("--backend", arg, backends, &b) < 0)
			return -EINVAL;
		o->backend = b == 0 ? FT_BACKEND_PERF : FT_BACKEND_FTRACE;
		return 0;
	}
	case OPT_CALL_GRAPH: return parse_call_graph(arg, o);
	case OPT_BUFFER_SIZE:
		if (parse_u64_in("--buffer-size", arg, 8, 1024 * 1024, " KB per CPU", &v) < 0)
			return -EINVAL;
		o->buffer_kb = v;
		o->buffer_set = true;
		return 0;
	case OPT_MAX_STACKS:
		if (parse_u64_in("--max-stacks", arg, 1, UINT64_MAX, "", &v) < 0)
			return -EINVAL;
		o->max_stacks = v;
		return 0;
	case OPT_THROUGH: o->through = arg; return 0;
	case OPT_MAX_PROBES:
		if (parse_u64_in("--max-probes", arg, 1, UINT64_MAX, "", &v) < 0)
			return -EINVAL;
		o->max_probes = v;
		return 0;
	case OPT_DEBUG: o->debug = true; return 0;
	case OPT_NO_DEMANGLE: o->no_demangle = true; return 0;
	case OPT_DEBUGINFOD: o->debuginfod = FT_DEBUGINFOD_ON; return 0;
	case OPT_NO_DEBUGINFOD: o->debuginfod = FT_DEBUGINFOD_OFF; return 0;
	case OPT_BUILD_IDS: o->build_ids = true; return 0;
	case OPT_DEBUG_DIR:
		if (!*arg)
			return bad("--debug-dir needs a directory");
		o->debug_dir = arg;
		return 0;
	case OPT_KEEP_ROOT: o->keep_root = true; return 0;
	case OPT_FORCE: o->force = true; return 0;
	case OPT_CGROUP:
		if (!*arg)
			return bad("--cgroup needs a cgroup2 path (/system.slice/x.service)");
		o->cgroup = arg;
		return 0;
	case OPT_PER_CGROUP: o->per_cgroup = true; return 0;
	case OPT_INPUT_FORMAT:
		if (report_format_parse(arg, &(enum report_format){ REPORT_AUTO }) < 0)
			return bad("--input-format takes auto, ftrace, perf-script, hist or folded, got '%s'", arg);
		o->input_format = arg;
		return 0;
	case OPT_DIFF: o->diff = true; return 0;
	case OPT_WEIGHT: {
		static const char *const weights[] = { "samples", "period", NULL };
		int w;
		if (parse_word("--weight", arg, weights, &w) < 0)
			return -EINVAL;
		o->weight = w == 0 ? FT_WEIGHT_SAMPLES : FT_WEIGHT_PERIOD;
		return 0;
	}
	case OPT_MECHANISM: {
		static const char *const mechs[] = { "kprobe-pmu", "kprobe-events", "function",
						     "tracepoint", NULL };
		int m;
		if (parse_word("--mechanism", arg, mechs, &m) < 0)
			return -EINVAL;
		o->mechanism = arg;
		return 0;
	}
	default:
		return apply_fleet_option(c, arg, o);
	}
}

/* Positional words: count mode takes events and one number (the duration);
 * profile/offcpu take the duration; report takes files. */
int ft_option_positional(const char *arg, struct ft_options *o)
{
	switch (o->cmd) {
	case FT_REPORT:
		if (o->nreport_files >= 64)
			return bad("report: at most 64 files");
		o->report_files[o->nreport_files++] = arg;
		return 0;
	case FT_COUNT:
		if (!is_number(arg)) {
			if (o->nspecs >= FT_MAX_EVENTS)
				return bad("too many events");
			o->specs[o->nspecs++] = arg;
			return 0;
		}
		/* a number is the duration */
		__attribute__((fallthrough));
	case FT_PROFILE:
	case FT_OFFCPU:
		if (o->duration > 0)
			return bad("unexpected argument '%s': the duration was already given", arg);
		return parse_secs("DURATION", arg, &o->duration);
	default:
		return bad("unexpected argument '%s'", arg);
	}
}

