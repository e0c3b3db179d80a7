/* ftstack: count stack traces with the kernel's own tracing machinery. */
#include <stdarg.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "cmd/cmd.h"
#include "tracefs/tracefs.h"

static void debug_tracefs(const char *what, const char *path, const char *value)
{
	ft_debug("%s %s%s%s", what, path, value ? " <- " : "", value ? value : "");
}

int main(int argc, char **argv)
{
	/* not on the stack (14 KB): the command's child is forked deeper and
	 * its stack before its exec is walked like any other (cmd/run.c) */
	static struct ft_options o;
#ifdef __GLIBC__
	/* Blocks of 128 KB and more (an ELF file's symbol table, a table's
	 * slots) get pages of their own, given back when freed. glibc's
	 * default raises this bound to the largest such block freed, after
	 * which the next ones come from the heap and stay in RSS when freed. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
	int ret = ft_options_parse(argc, argv, &o);
	if (ret == 1 || ret < 0) {
		ft_options_free(&o);
		return ret == 1 ? 0 : 2;
	}
	ft_debug_on = o.debug;
	if (o.debug)
		tfs_set_debug(debug_tracefs);
	switch (o.cmd) {
	case FT_CHECK:
		ret = ft_cmd_check(&o);
		break;
	case FT_CLEANUP:
		ret = ft_cmd_cleanup(&o);
		break;
	case FT_REPORT:
		ret = ft_cmd_report(&o);
		break;
	default:
		ret = ft_cmd_run(&o);
	}
	ft_options_free(&o);
	return ret;
}
