/* collector: the run: main, the event loop, the sources, the session,
 * check, cleanup and the report command.
 */
#ifndef FTSTACK_COLLECTOR_H
#define FTSTACK_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "aggregate/aggregate.h"
#include "output/output.h"
#include "symbolize/symbolize.h"
#include "tracefs/tracefs.h"
#include "cli/cli.h"
#include "plan/plan.h"

/* ---- subcommands ---- */
int ft_cmd_record(const struct ft_options *o);  /* count, profile, offcpu */
int ft_cmd_check(const struct ft_options *o);
int ft_cmd_cleanup(const struct ft_options *o);
int ft_cmd_report(const struct ft_options *o);

#endif
