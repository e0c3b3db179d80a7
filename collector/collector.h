/* collector: the run: the session (records -> aggregate), the event loop,
 * counting, user stacks, kernel-stack filters, offcpu pairing, printing,
 * the sink, bounded memory. session.h is its interface to cmd/ and source/.
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

#endif
