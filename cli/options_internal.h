/* Shared by cli/options.c (the option table and the parse) and
 * cli/option_values.c (each option's value, checked), not outside cli/. */
#ifndef FTSTACK_CLI_OPTIONS_INTERNAL_H
#define FTSTACK_CLI_OPTIONS_INTERNAL_H

#include "cli/cli.h"

/* getopt_long's values of the long options without a short one */
enum {
	OPT_FORMAT = 256, OPT_BACKEND, OPT_CALL_GRAPH, OPT_BUFFER_SIZE, OPT_MAX_STACKS,
	OPT_THROUGH, OPT_DEBUG, OPT_PERIOD, OPT_MIN_BLOCK, OPT_MAX_BLOCK, OPT_STATE,
	OPT_MIN_TOTAL, OPT_HELP, OPT_VERSION, OPT_MAX_PROBES, OPT_INPUT_FORMAT, OPT_DIFF, OPT_MECHANISM,
	OPT_NO_DEMANGLE,
	OPT_WEIGHT, /* report --weight */
	OPT_KEEP_ROOT,
	OPT_FORCE,
	OPT_SINK, OPT_SINK_BUFFER, OPT_HOST_NAME, OPT_SINCE, OPT_UNTIL, OPT_HOST,
	OPT_EVENT, OPT_MODE,
	OPT_CGROUP, OPT_PER_CGROUP,
	OPT_DEBUGINFOD, OPT_NO_DEBUGINFOD, OPT_BUILD_IDS, OPT_DEBUG_DIR,
};

/* Says what is wrong with the command line; the caller exits 2. */
#define bad(...) (ft_error(__VA_ARGS__), -EINVAL)

/* Applies option C (a short option's letter or an OPT_ value) with value
 * ARG to O. Returns 0, or -EINVAL after saying what is wrong. */
int ft_option_apply(int c, const char *arg, struct ft_options *o);
/* Applies the positional word ARG to O (events, the duration, report's
 * files, by O's subcommand). Returns 0, or -EINVAL after saying why. */
int ft_option_positional(const char *arg, struct ft_options *o);

#endif
