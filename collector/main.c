/* ftstack: count stack traces with the kernel's own tracing machinery. */
#include <stdarg.h>
#include <stdio.h>
#include "collector/collector.h"
#include "tracefs/tracefs.h"

bool ft_debug_on;

void ft_debug(const char *fmt, ...)
{
	if (!ft_debug_on)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ftstack: debug: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void ft_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ftstack: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void debug_tracefs(const char *what, const char *path, const char *value)
{
	ft_debug("%s %s%s%s", what, path, value ? " <- " : "", value ? value : "");
}

int main(int argc, char **argv)
{
	struct ft_options o;
	int ret = ft_options_parse(argc, argv, &o);
	if (ret == 1)
		return 0;
	if (ret < 0)
		return 2;
	ft_debug_on = o.debug;
	if (o.debug)
		tracefs_set_debug(debug_tracefs);
	switch (o.cmd) {
	case FT_CHECK:
		return ft_cmd_check(&o);
	case FT_CLEANUP:
		return ft_cmd_cleanup(&o);
	case FT_REPORT:
		return ft_cmd_report(&o);
	default:
		return ft_cmd_record(&o);
	}
}
