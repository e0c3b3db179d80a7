/* What output_test.c and output_rich_test.c share: two stacks of two
 * events, and out_write run into memory. Static: each test includes it
 * once. */
#ifndef FTSTACK_TEST_OUTPUT_FIXTURE_H
#define FTSTACK_TEST_OUTPUT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include "output/output.h"
#include "tests/unit/check.h"

static const char *k1[] = { "__kmalloc", "do_sys_open", "entry_SYSCALL_64" };
static const char *ku[] = { "kfree", "sys_close", "main", "__libc_start_main" };
static const char *ev_names[] = { "__kmalloc", "t:syscalls:sys_enter_read" };
static const bool ev_in[] = { true, false };

static struct agg_named_stack stacks[] = {
	{ .event = 0, .pid = 0, .comm = NULL, .frames = k1, .nkframes = 3, .nuframes = 0,
	  .count = 2, .weight = 20 },
	{ .event = 1, .pid = 185, .comm = "bash", .frames = ku, .nkframes = 2, .nuframes = 2,
	  .count = 7, .weight = 70 },
};

/* Runs out_write into a memory buffer; returns a malloc'd string or NULL. */
static char *run(const struct out_options *o, const struct agg_named_stack *s, size_t n,
		 const struct out_totals *t, int *ret, size_t *len)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	if (!f)
		return NULL;
	*ret = out_write(f, o, s, n, t);
	fclose(f);
	if (len)
		*len = sz;
	return buf;
}

static void check_out(const struct out_options *o, const struct agg_named_stack *s, size_t n,
		      const struct out_totals *t, const char *want, const char *what)
{
	int ret = -1;
	char *got = run(o, s, n, t, &ret, NULL);
	CHECK_EQ_U64(ret, 0, what);
	CHECK_STR(got, want, what);
	free(got);
}

#endif
