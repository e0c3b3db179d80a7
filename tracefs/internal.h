/* Shared inside tracefs/. */
#ifndef FTSTACK_TRACEFS_INTERNAL_H
#define FTSTACK_TRACEFS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Calls the --debug hook, if one is installed. */
void tfs_debug(const char *what, const char *path, const char *value);

/* Points libtracefs at ROOT (its tracing directory is one per process:
 * tracefs_set_tracing_dir), unless it already is. Every function that takes
 * a root and calls libtracefs calls this first, so fixture trees and the
 * live tracefs go through the same calls. Returns 0 or -ENOMEM. */
int tfs_use_root(const char *root);

/* The errno of a failed libtracefs call: its -1 or NULL leaves errno set,
 * except where a call fails without a system error (no event matched):
 * then FALLBACK. */
int tfs_errno(int fallback);

/* Joins "A/B" into buf. Returns 0, or -ENAMETOOLONG when it does not fit. */
int tfs_join(char *buf, size_t len, const char *a, const char *b);

/* Whether PATH is a directory (tracefs and old file systems may report
 * DT_UNKNOWN in readdir, so callers fall back to this). */
bool tfs_is_dir(const char *path);

/* The kernel's newest error_log entry of INSTANCE (NULL: the top level) as
 * tracefs_error_last gives it, first line (with its time stamp, which tells
 * entries apart) to raw; its message to err as
 * "trace_kprobe: error: Invalid argument (Command: p:ftstack_1/x nosuchfn)".
 * Both are empty when there is no entry. */
struct tracefs_instance;
void tfs_last_error(struct tracefs_instance *inst, char *raw, size_t rawlen, char *err,
		    size_t errlen);

#endif
