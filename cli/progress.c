/* Progress lines on stderr (stdout holds the result), through messages.c. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/progress.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void show(struct ft_progress *p)
{
	if (p->tty && p->done == 0)
		ft_progress_line("%s %d %s...", p->verb, p->total, p->noun);
	else if (p->tty)
		ft_progress_line("%s %d/%d %s...", p->verb, p->done, p->total, p->noun);
	else if (p->done == 0)
		ft_warn("%s %d %s...", p->verb, p->total, p->noun);
	else
		ft_warn("%s %d/%d %s...", p->verb, p->done, p->total, p->noun);
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
	if (p->on && p->tty)
		ft_progress_line(NULL);
	p->on = false;
}
