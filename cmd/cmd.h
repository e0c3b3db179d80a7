/* cmd: the subcommands (count/profile/offcpu through run.c, check,
 * cleanup, report and its diff and fleet parts) and the result writer
 * (stdout or -o FILE). */
#ifndef FTSTACK_CMD_H
#define FTSTACK_CMD_H

#include <stdbool.h>
#include <stdio.h>
#include "cli/cli.h"
#include "output/output.h"
#include "task/task.h"

/* ---- subcommands ---- */
int ft_cmd_run(const struct ft_options *o);  /* count, profile, offcpu */
int ft_cmd_check(const struct ft_options *o);
int ft_cmd_cleanup(const struct ft_options *o);
int ft_cmd_report(const struct ft_options *o);
/* cleanup's work on the tracefs at TRACEFS, with PROC_ROOT saying which
 * ftstack runs are alive; what it removed goes to OUT. Returns the exit status. */
int ft_cleanup_run(const char *tracefs, const char *proc_root, FILE *out);
struct host_access;
struct tfs_check_item;
/* check's lines on what the host lets this user do: perf_event_max_stack
 * and perf_event_paranoid (read under PROC_ROOT), kptr_restrict, lockdown
 * and privileges (from H, host_access_read's). Fills up to MAX items;
 * returns the number filled. */
int ft_check_host(const struct host_access *h, const char *proc_root,
		  struct tfs_check_item *items, int max);
struct ft_session;
/* count, profile and offcpu's opening line (bcc's: what is traced, whose,
 * which stacks, until when), on stderr so folded stdout stays clean. */
void ft_cmd_announce(const struct ft_session *s);

/* ---- the result: stdout or -o FILE (result_file.c) ---- */
struct ft_dest {
	FILE *f;               /* stdout, or the new file that replaces -o FILE */
	struct out_file *file; /* NULL for stdout */
};
/* Returns 0, or the exit status after saying why (2: FILE is a symlink or
 * a directory; 1: it cannot be written, nothing changed). */
int ft_dest_open(const struct ft_options *o, struct ft_dest *r);
/* Complete: renames the new file over FILE; else drops it. Returns 0, or 1
 * after saying why. Safe on a result never opened (zeroed). */
int ft_dest_close(const struct ft_options *o, struct ft_dest *r, bool complete);

/* ---- names of stripped binaries' frames (names.c) ---- */
struct sym_debuginfod;
struct ft_names {
	struct sym_debuginfod *client; /* NULL: no debuginfod */
	const char *debug_dir;         /* --debug-dir, else /usr/lib/debug */
	struct ft_child who;           /* under sudo: the user who fetches */
	bool tty;                      /* stderr is a terminal */
	const char *file;              /* progress: the file being fetched */
	double start, last;
	bool shown;
};
/* Decides from O and the environment whether debuginfod is used, and
 * readies its client. Returns 0, or the exit status after saying why (2:
 * --debuginfod with no server to ask). */
int ft_names_open(const struct ft_options *o, struct ft_names *n);
/* Says in one line what failed, if a fetch did, and releases N. */
void ft_names_close(struct ft_names *n);
/* `ftstack check`'s debuginfod line into BUF; *OK when URLs are set. */
void ft_names_check(char *buf, size_t len, bool *ok);

#endif
