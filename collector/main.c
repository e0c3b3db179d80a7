/* ftstack: count stack traces with the kernel's own tracing machinery. */
#include <stdarg.h>
#include <stdio.h>
#include "collector/collector.h"
#include "tracefs/tracefs.h"

static void debug_tracefs(const char *what, const char *path, const char *value)
{
	ft_debug("%s %s%s%s", what, path, value ? " <- " : "", value ? value : "");
}

int main(int argc, char **argv)
{
	struct ft_options o;
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
		ret = ft_cmd_record(&o);
	}
	ft_options_free(&o);
	return ret;
}
