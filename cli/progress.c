/* Progress lines on stderr (stdout holds the result). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "cli/progress.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void show(struct ft_progress *p)
{
	if (p->done == 0)
		fprintf(stderr, "ftstack: %s %d %s...%s", p->verb, p->total, p->noun, p->tty ? "" : "\n");
	else if (p->tty)
		fprintf(stderr, "\rftstack: %s %d/%d %s...", p->verb, p->done, p->total, p->noun);
	else
		fprintf(stderr, "ftstack: %s %d/%d %s...\n", p->verb, p->done, p->total, p->noun);
	fflush(stderr);
	p->last = now();
}

void ft_progress_start(struct ft_progress *p, const char *verb, const char *noun, int total)
{
	*p = (struct ft_progress){ .verb = verb, .noun = noun, .total = total,
				   .on = total >= FT_PROGRESS_MIN, .tty = isatty(STDERR_FILENO) };
	if (p->on)
		show(p);
}

void ft_progress_step(struct ft_progress *p)
{
	p->done++;
	if (!p->on || p->done >= p->total)
		return;
	if (p->tty) {
		if (now() - p->last >= 0.1)
			show(p);
		return;
	}
	int tenths = (int)((long long)p->done * 10 / p->total);
	if (tenths > p->tenths && now() - p->last >= 1.0) {
		p->tenths = tenths;
		show(p);
	}
}

void ft_progress_end(struct ft_progress *p)
{
	if (p->on && p->tty) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	p->on = false;
}
