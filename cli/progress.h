/* Progress on stderr while many probes are attached or detached (each can
 * take tens of milliseconds: kprobe registration, RCU grace periods). */
#ifndef FTSTACK_PROGRESS_H
#define FTSTACK_PROGRESS_H

#include <stdbool.h>

/* Below this many, attaching is quick enough to need no progress. */
#define FT_PROGRESS_MIN 100

struct ft_progress {
	const char *verb;   /* "attaching" */
	const char *noun;   /* "probes" */
	int total, done;
	bool on;            /* total >= FT_PROGRESS_MIN */
	bool tty;           /* stderr is a terminal: one line rewritten in place */
	int tenths;         /* last tenth of total reported (plain lines) */
	double last;        /* monotonic seconds of the last line written */
};

/* Starts progress over TOTAL items; prints the first line if TOTAL is large. */
void ft_progress_start(struct ft_progress *p, const char *verb, const char *noun, int total);
/* One more item done: on a terminal the line is rewritten at most 10 times a
 * second; otherwise a plain line is written each tenth of the way, at most
 * one a second, so a log gets a few lines, not hundreds. */
void ft_progress_step(struct ft_progress *p);
/* Ends it: clears the terminal line, so the caller's final line replaces it. */
void ft_progress_end(struct ft_progress *p);

#endif
