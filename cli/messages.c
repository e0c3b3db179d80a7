/* The one place that writes what a person reads on stderr: warnings,
 * errors and --debug lines. */
#include <stdarg.h>
#include <stdio.h>
#include "cli/cli.h"

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

static void say(const char *fmt, va_list ap)
{
	fprintf(stderr, "ftstack: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ft_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

void ft_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void ft_progress_line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputc('\r', stderr);
	if (fmt) {
		fprintf(stderr, "ftstack: ");
		vfprintf(stderr, fmt, ap);
	} else {
		fprintf(stderr, "\033[K"); /* clears the line */
	}
	fflush(stderr);
	va_end(ap);
}

void ft_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}
