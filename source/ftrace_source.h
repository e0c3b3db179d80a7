/* Internals of the ftrace backend shared by ftrace_source.c,
 * ftrace_function.c and ftrace_instance.c. */
#ifndef FTSTACK_FTRACE_SOURCE_H
#define FTSTACK_FTRACE_SOURCE_H

#include "source/source.h"

#define TGID_CACHE 4096 /* threads whose process is known: aggregate/cache.c's sets */

struct ft_ftrace_cpu {
	struct ft_ftrace_source *src;
	int cpu;
	int fd;                     /* polled; belongs to tcpu */
	struct tracefs_cpu *tcpu;
	struct tfs_raw *raw;
	uint64_t overrun, dropped;  /* last values read from per_cpu/cpuN/stats */
	uint64_t missed;            /* kbuffer's count, added when stats are unreadable */
};

struct ft_ftrace_source {
	struct ft_ftrace_config cfg;
	char inst[64];              /* "instances/ftstack_<pid>" */
	struct tracefs_instance *ti; /* the plan's log owns it */
	struct ft_ftrace_cpu *cpus;
	int ncpus;
	size_t subbuf;
	uint8_t *buf;
	uint64_t bad_pages;
	struct { uint32_t tid, tgid; } tgids[TGID_CACHE];
};

/* ftrace_instance.c: writes VALUE to the instance file REL (appends when
 * APPEND), recording UNDO in the plan's log. Returns 0 or -errno after printing the kernel's
 * complaint. */
int ft_ftrace_write(struct ft_ftrace_source *fs, const char *rel, const char *value,
		    bool append, enum tfs_undo_kind kind, const char *undo);

/* The function tracer in the instance for the plan's FT_EV_FUNCTION events:
 * set_ftrace_filter, func_stack_trace, current_tracer (its set_ftrace_pid
 * is written with set_event_pid, by ftrace_source.c's follow_tid).
 * Fills T's function fields for decoding. Returns 0 or -errno. */
int ft_ftrace_function_setup(struct ft_ftrace_source *fs, struct tfs_raw_types *t);

/* ftrace_source.c: decodes one sub-buffer of PC's CPU (LEN bytes, as
 * trace_pipe_raw gave it) and hands each complete sample to the count
 * callback; a page that does not decode is counted in bad_pages. */
void ft_ftrace_cpu_feed(struct ft_ftrace_cpu *pc, const void *page, size_t len);
/* Hands on every sample still waiting for its stacks (the end of a drain). */
void ft_ftrace_cpu_flush(struct ft_ftrace_cpu *pc);

/* Cuts a function event's kernel stack at the traced function: the
 * function tracer's own frames (its trampoline) come before it. */
void ft_ftrace_function_cut(const struct ft_event *e, const uint64_t **ips, uint32_t *n);

#endif
