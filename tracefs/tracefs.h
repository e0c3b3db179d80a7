/* tracefs: the tracing file system. Finding (or mounting) it, listing and
 * describing events, the capability probe behind `ftstack check`, and every
 * change ftstack makes to it: recorded in one undo log as it is made, undone in
 * reverse order on every exit path (trace-cmd's reset-file list is the model).
 * Every function takes the tracefs root directory, so tests can point it at a
 * fixture tree. Nothing here prints; --debug goes through tracefs_set_debug().
 */
#ifndef FTSTACK_TRACEFS_H
#define FTSTACK_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TRACEFS_DEFAULT_ROOT "/sys/kernel/tracing"

/* ---- finding it ---- */

/* Finds the mounted tracefs (via /proc/mounts, then the usual paths); when
 * none is mounted, mounts it at /sys/kernel/tracing and leaves it mounted, as
 * perf and trace-cmd do. Copies the directory to buf. Returns 0, -ENOENT (not
 * in this kernel) or -EPERM. */
int tracefs_find_root(char *buf, size_t len);

/* ---- debug hook (collector installs it for --debug) ---- */
typedef void (*tracefs_debug_fn)(const char *what, const char *path, const char *value);
void tracefs_set_debug(tracefs_debug_fn fn);

/* ---- reading ---- */

/* Reads ROOT/REL into a malloc'd NUL-terminated string (*out, caller frees).
 * Returns the length or -errno. */
ssize_t tracefs_read_file(const char *root, const char *rel, char **out);

struct tracefs_event {
	char system[64];
	char name[128];
	uint32_t id;
};

/* Lists tracepoints whose "system:name" matches SYSTEM_PAT and NAME_PAT
 * (globs, or POSIX extended regexes when regex is true) from ROOT/events.
 * Returns the count (>= 0) and a malloc'd array in *out (caller frees), or
 * -errno (-EINVAL for a bad regex). */
int tracefs_events_match(const char *root, const char *system_pat, const char *name_pat,
			 bool regex, struct tracefs_event **out);

/* Up to MAX event names ("system:name") closest to SYSTEM:NAME by edit
 * distance, for "did you mean" messages, written comma-separated into buf.
 * Returns the number written. */
int tracefs_events_suggest(const char *root, const char *system, const char *name,
			   int max, char *buf, size_t len);

struct tracefs_field {
	char name[64];
	uint32_t offset;
	uint32_t size;
	bool is_signed;
};
/* Parses ROOT/events/SYSTEM/NAME/format. Returns the number of fields and a
 * malloc'd array in *out (caller frees), or -errno. */
int tracefs_event_fields(const char *root, const char *system, const char *name,
			 struct tracefs_field **out);
/* Returns the field named NAME in FIELDS, or NULL. */
const struct tracefs_field *tracefs_field_find(const struct tracefs_field *fields, int n,
					       const char *name);

/* ---- the undo log: every change ftstack makes ---- */

enum tracefs_undo_kind {
	TRACEFS_UNDO_WRITE,    /* write `undo` to path (a file changed, e.g. enable) */
	TRACEFS_UNDO_APPEND,   /* append `undo` to path (remove a dynamic event / trigger) */
	TRACEFS_UNDO_RMDIR,    /* rmdir path (an instance) */
};

struct tracefs_undo {
	enum tracefs_undo_kind kind;
	char *path;
	char *undo;
};

struct tracefs_log {
	char root[256];
	struct tracefs_undo *items;
	size_t n, cap;
};

/* Starts an empty log for ROOT. */
void tracefs_log_init(struct tracefs_log *log, const char *root);
/* Writes VALUE to ROOT/REL (truncating unless append) and, when it
 * succeeded, records how to undo it. Returns 0 or -errno; on failure the
 * kernel's error_log line (if any) is copied to err (may be NULL). */
int tracefs_log_write(struct tracefs_log *log, const char *rel, const char *value,
		      bool append, enum tracefs_undo_kind undo_kind, const char *undo,
		      char *err, size_t errlen);
/* mkdir ROOT/REL (an instance) and records its rmdir. Returns 0 or -errno. */
int tracefs_log_mkdir(struct tracefs_log *log, const char *rel);
/* Undoes every recorded change, newest first, and empties the log. Tries
 * every item even when one fails; returns 0 or the first -errno. Safe to call
 * from the exit path more than once. */
int tracefs_log_undo(struct tracefs_log *log);
void tracefs_log_free(struct tracefs_log *log);

/* ---- objects ftstack owns ---- */

/* Writes "ftstack_<pid>" to buf: the name of PID's instance and event group. */
void tracefs_owned_name(pid_t pid, char *buf, size_t len);

/* Finds instances and dynamic-event groups named ftstack_<pid> whose pid is
 * not a running ftstack process and removes them (triggers first). For each
 * removed object, calls report(ctx, description). Returns the number removed
 * or -errno. proc_root is normally "/proc". */
int tracefs_cleanup_stale(const char *root, const char *proc_root,
			  void (*report)(void *ctx, const char *what), void *ctx);

/* ---- what this kernel allows (ftstack check) ---- */

struct tracefs_check_item {
	const char *what;   /* "tracefs", "kprobes (PMU)", ... */
	bool ok;
	char detail[160];   /* path, value or why not */
};
/* Probes this kernel and these privileges without leaving anything behind
 * (probe objects are created in an ftstack_<pid> group and removed). Fills up
 * to MAX items; returns the number filled. */
int tracefs_check(const char *root, const char *proc_root, struct tracefs_check_item *items,
		  int max);

#endif
