/* tracefs: ftstack's thin layer over libtracefs and libtraceevent. Finding
 * (or mounting) tracefs, listing and describing events, the capability probe
 * behind `ftstack check`, and every change ftstack makes to it, made with
 * libtracefs's calls and recorded in one undo log as it is made, undone in
 * reverse order on every exit path (trace-cmd's reset-file list is the model).
 * Functions take the tracefs root directory (or a log made for one) and point
 * libtracefs at it, so tests run them on a fixture tree. Nothing here prints;
 * --debug (and libtracefs's warnings) go through tfs_set_debug().
 */
#ifndef FTSTACK_TRACEFS_H
#define FTSTACK_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TRACEFS_DEFAULT_ROOT "/sys/kernel/tracing"

/* ---- finding it ---- */

/* Finds the mounted tracefs with libtracefs (tracefs_tracing_dir: the first
 * in /proc/mounts; when none is mounted, it mounts it at /sys/kernel/tracing
 * and leaves it mounted, as perf and trace-cmd do) and points the library at
 * it. Copies the directory to buf. Returns 0, -ENOENT (not in this kernel)
 * or -EPERM. */
int tfs_find_root(char *buf, size_t len);

/* ---- debug hook (collector installs it for --debug); the libraries'
 * own logging is off (tracefs_set_loglevel(TEP_LOG_NONE)) ---- */
typedef void (*tfs_debug_fn)(const char *what, const char *path, const char *value);
void tfs_set_debug(tfs_debug_fn fn);

/* ---- reading ---- */

/* Reads ROOT/REL into a malloc'd NUL-terminated string (*out, caller frees).
 * Returns the length or -errno. */
ssize_t tfs_read_file(const char *root, const char *rel, char **out);

struct tfs_event {
	char system[64];
	char name[128];
	uint32_t id;
};

/* Lists tracepoints whose "system:name" matches SYSTEM_PAT and NAME_PAT
 * (globs, or POSIX extended regexes when regex is true) from ROOT/events.
 * Regexes are anchored (^(PAT)$). Sorted by system, then name; directories
 * without a numeric id are skipped; the "ftrace" system (not perf-openable)
 * is listed like any other. Returns the count (>= 0) and a malloc'd array in
 * *out (NULL when none; caller frees), or -errno (-EINVAL for a bad regex). */
int tfs_events_match(const char *root, const char *system_pat, const char *name_pat,
			 bool regex, struct tfs_event **out);

/* The Levenshtein distance between A and B (the edits that make one the
 * other), for suggesting close names; names over 200 characters are 1000. */
int tfs_name_distance(const char *a, const char *b);
/* Up to MAX (at most 8) event names ("system:name") closest to SYSTEM:NAME
 * by edit distance (of "system:name", or of the name alone plus one), nearest
 * first, ties alphabetical, for "did you mean" messages, written
 * comma-separated into buf. Names farther than 1 + strlen(NAME)/2 edits, and
 * names that do not fit buf whole, are left out. Returns the number written. */
int tfs_events_suggest(const char *root, const char *system, const char *name,
			   int max, char *buf, size_t len);

struct tfs_field {
	char name[64];
	uint32_t offset;
	uint32_t size;
	bool is_signed;
};
/* Parses ROOT/events/SYSTEM/NAME/format with libtraceevent (that event
 * only). Returns the number of fields (common ones first) and a malloc'd
 * array in *out (caller frees), or -errno (-EINVAL: not parsable). */
int tfs_event_fields(const char *root, const char *system, const char *name,
			 struct tfs_field **out);
/* Returns the field named NAME in FIELDS, or NULL. */
const struct tfs_field *tfs_field_find(const struct tfs_field *fields, int n,
					       const char *name);
/* Returns the offset of the 8-byte field FIELD of event SYSTEM/NAME
 * (libtraceevent's tep_find_field), or -ENOENT when the event has no such
 * field (or another size). */
int tfs_event_u64_offset(const char *root, const char *system, const char *name,
			     const char *field);
/* The type id (common_type) of SYSTEM/NAME from its format, which every
 * event has (the ftrace system's record formats have no id file). Returns
 * it, or -errno. */
int tfs_event_type_id(const char *root, const char *system, const char *name);

/* ---- the undo log: every change ftstack makes ---- */

/* libtracefs's objects, passed through (struct tracefs_instance * is NULL
 * for the top level, as in libtracefs). */
struct tracefs_instance;
struct tracefs_dynevent;

enum tfs_undo_kind {
	TRACEFS_UNDO_WRITE,    /* write `undo` to inst's file (its previous setting) */
	TRACEFS_UNDO_APPEND,   /* append `undo` to inst's file (remove a trigger) */
	TRACEFS_UNDO_DISABLE,  /* tracefs_event_disable: `file` is the system, `undo` the event */
	TRACEFS_UNDO_INSTANCE, /* tracefs_instance_destroy, then free inst */
	TRACEFS_UNDO_DYNEVENT, /* tracefs_dynevent_destroy, then free dyn */
};

struct tfs_undo {
	enum tfs_undo_kind kind;
	struct tracefs_instance *inst;
	struct tracefs_dynevent *dyn;
	char *file;            /* relative to inst's directory */
	char *undo;
};

struct tfs_log {
	char root[256];
	struct tfs_undo *items;
	size_t n, cap;
};

/* Starts an empty log for ROOT (the live tracefs or a fixture tree). */
void tfs_log_init(struct tfs_log *log, const char *root);
/* Writes VALUE to FILE of INST (NULL: the top level; truncating unless
 * append) with libtracefs and, when it succeeded, records how to undo it:
 * writing or appending UNDO, or, when UNDO is NULL, writing back the file's
 * first word as it was before (-ENOENT when it cannot be read). Returns 0 or
 * -errno; on failure the kernel's error_log line (if any) is copied to err
 * (may be NULL). */
int tfs_log_write(struct tfs_log *log, struct tracefs_instance *inst, const char *file,
		  const char *value, bool append, enum tfs_undo_kind undo_kind,
		  const char *undo, char *err, size_t errlen);
/* Records ITEM (its strings copied; the objects it names now belong to the
 * log). Returns 0 or -ENOMEM. */
int tfs_log_add(struct tfs_log *log, const struct tfs_undo *item);
/* Undoes every recorded change, newest first, and empties the log (freeing
 * the instances and dynamic events it holds). Tries every item even when
 * one fails; returns 0 or the first -errno. Safe to call from the exit path
 * more than once. */
int tfs_log_undo(struct tfs_log *log);
/* Frees the log without undoing anything. */
void tfs_log_free(struct tfs_log *log);

/* ---- objects ftstack owns ---- */

/* Writes "ftstack_<pid>" to buf: the name of PID's instance and event group. */
void tfs_owned_name(pid_t pid, char *buf, size_t len);

/* Finds instances and dynamic-event groups named ftstack_<pid> whose pid is
 * not a running ftstack process (PROC_ROOT/<pid>/comm) and removes them
 * (events disabled and triggers cleared first). Names other than exactly
 * ftstack_<digits> are never touched. For each removed object, calls
 * report(ctx, description): "instance ftstack_12" or "FILE ftstack_12/EVENT".
 * Returns the number removed, or the first -errno when a stale object could
 * not be removed (the others are still removed and reported). proc_root is
 * normally "/proc". Returns -EACCES when ROOT's instances or events cannot
 * be listed (a user without access to tracefs). */
int tfs_cleanup_stale(const char *root, const char *proc_root,
		      void (*report)(void *ctx, const char *what), void *ctx);

/* Makes the dynamic event of DEFINITION (a kprobe_events or uprobe_events
 * line, FILE, such as "p:ftstack_1/x __kmalloc" or
 * "p:ftstack_1/u /bin/true:0x1010 ra=+0($stack)") as libtracefs's kprobe or
 * uprobe object, recording its destruction. Returns 0 or -errno (the
 * kernel's error_log line in err). */
int tfs_dynevent_create(struct tfs_log *log, const char *file, const char *group,
			const char *event, const char *definition, char *err, size_t errlen);
/* tracefs_dynevent_destroy, retried while the event is busy (a killed
 * owner's perf events go a moment after it dies). Returns 0 or -errno. */
int tfs_dynevent_destroy(struct tracefs_dynevent *dyn);
/* Returns 0 and the id of tracepoint SYSTEM:NAME in *id, or -errno. */
int tfs_event_id(const char *root, const char *system, const char *name, uint32_t *id);

/* ---- making objects through the log (each undone by tfs_log_undo) ---- */

/* Makes the instance NAME (without '/') with tracefs_instance_create and
 * records its destruction; *out is valid until the log is undone or freed.
 * Returns 0 or -errno (-EEXIST when it exists: it is then not ours). */
int tfs_instance_create(struct tfs_log *log, const char *name, struct tracefs_instance **out);
/* Enables SYSTEM:NAME in INST (NULL: the top level) with
 * tracefs_event_enable, recording its disabling. Returns 0 or -errno
 * (-ENOENT: no such event). */
int tfs_event_enable(struct tfs_log *log, struct tracefs_instance *inst, const char *system,
		     const char *name);
/* Sets the event's filter (tracefs_event_file_write), recording "0" (no
 * filter). Returns 0 or -errno (the kernel's complaint in err). */
int tfs_event_filter(struct tfs_log *log, struct tracefs_instance *inst, const char *system,
		     const char *name, const char *filter, char *err, size_t errlen);
/* Appends TRIGGER (e.g. "stacktrace", "stacktrace if pid == 1") to the
 * event's trigger file (tracefs_event_file_append), recording the append of
 * "!" and its command (the part before any blank: "!stacktrace"). Returns 0
 * or -errno (the kernel's complaint in err). */
int tfs_trigger_add(struct tfs_log *log, struct tracefs_instance *inst, const char *system,
		    const char *name, const char *trigger, char *err, size_t errlen);

/* ---- what this kernel allows (ftstack check) ---- */

struct tfs_check_item {
	const char *what;   /* "tracefs", "kprobes (PMU)", ... */
	bool ok;
	char detail[256];   /* path, value or why not */
};
/* Probes what this kernel's tracefs at ROOT (NULL: none) offers without
 * leaving anything behind (the function tracer is tried in an
 * ftstack_<pid> instance, removed again). Fills up to MAX items; returns
 * the number filled. */
int tfs_check(const char *root, struct tfs_check_item *items, int max);
/* Tries current_tracer=function on one listed function (vfs_read when
 * there) in a private instance (ftstack_<pid>), removed again; never
 * unfiltered. Returns 0 when the kernel takes it, -ENOENT when the tracer
 * is not in available_tracers, -ENODATA when no function is listed, -EINVAL
 * when the filter did not take the function, else the failed read's or
 * write's -errno (EPERM: refused). AVAIL is available_filter_functions when
 * the caller has read it already, else NULL (read here). */
int tfs_function_tracer_try(const char *root, const char *avail);

/* ---- the function tracer's lists (functions.c) ---- */

/* Whether a line of LIST (available_filter_functions or set_ftrace_filter:
 * "name" or "name [module]") is NAME. The kernel lists one name for each
 * address: of aliases such as __x64_sys_getppid = __do_sys_getppid only one
 * is there, and writing another to set_ftrace_filter fails. */
bool tfs_functions_listed(const char *list, const char *name);
/* The number of functions set_ftrace_filter's text FILTER names, or -1 when
 * it says all functions are enabled (an empty filter: the tracer would
 * trace every function in the kernel). */
int tfs_functions_count(const char *filter);
/* Reads instance INST's (a path under ROOT) set_ftrace_filter: *count is
 * tfs_functions_count of it. Returns 0, or the read's -errno. */
int tfs_ftrace_filter_read(const char *root, const char *inst, int *count);
/* Adds FUNC (a name available_filter_functions lists; the first call
 * without APPEND empties the filter first) to INST's set_ftrace_filter with
 * tracefs_function_filter, recording its emptying. Returns 0 or -errno
 * (-EINVAL: not listed, or refused; the kernel's complaint in err). */
int tfs_function_filter(struct tfs_log *log, struct tracefs_instance *inst, const char *func,
			bool append, char *err, size_t errlen);

/* ---- reading per-CPU trace_pipe_raw (cpu.c) ---- */

struct tracefs_cpu;
/* Opens INST's per_cpu/cpuCPU/trace_pipe_raw non-blocking as libtracefs's
 * tracefs_cpu reading SUBBUF bytes at a time. Returns its descriptor (to
 * poll; closed by tfs_cpu_close) and the reader in *out, or -errno. */
int tfs_cpu_open(struct tracefs_instance *inst, int cpu, size_t subbuf,
		 struct tracefs_cpu **out);
/* Reads one sub-buffer into BUF (SUBBUF bytes). Returns its length, 0 when
 * none is ready, or -errno. */
ssize_t tfs_cpu_read(struct tracefs_cpu *c, void *buf);
void tfs_cpu_close(struct tracefs_cpu *c);

/* ---- raw ring-buffer pages: per-CPU trace_pipe_raw (raw.c) ----
 * Pure decoding, no I/O: sub-buffers (pages) as read from trace_pipe_raw,
 * decoded with libtraceevent's kbuffer, and the pairing of each traced event
 * with the ftrace:user_stack / ftrace:kernel_stack records that the
 * userstacktrace option and the stacktrace trigger write after it on the same
 * CPU. One struct tfs_raw per CPU. */

#define TRACEFS_RAW_MAX_IPS 512 /* frames kept of one stack record */
#define TRACEFS_RAW_PENDING 4   /* events awaiting stacks (task, softirq, irq, nmi) */

enum tfs_raw_kind {
	TRACEFS_RAW_OTHER,  /* a type not listed in tfs_raw_types */
	TRACEFS_RAW_EVENT,  /* one of the traced events */
	TRACEFS_RAW_KSTACK, /* ftrace:kernel_stack */
	TRACEFS_RAW_USTACK, /* ftrace:user_stack */
};

#define TRACEFS_RAW_WANT_KSTACK 1
#define TRACEFS_RAW_WANT_USTACK 2

/* A traced kernel function of the function tracer: records of type
 * tfs_raw_types.function whose ip is in [start, end) are that event's. */
struct tfs_raw_func {
	uint64_t start, end;
	int event;
};

/* The common_type ids to recognise (ftrace's own from events/ftrace/X/format). */
struct tfs_raw_types {
	uint16_t kernel_stack, user_stack;
	/* traced events' ids; the index is the event number; 0 = not by type
	 * (a function of the function tracer) */
	const uint16_t *events;
	int nevents;
	/* per event, the offset of a u64 field to hand on with the sample
	 * (a uprobe's ra=$stack0), or -1; NULL = none for any event */
	const int *arg_offsets;
	/* per event, the stacks that follow it, TRACEFS_RAW_WANT_*: a uprobe
	 * gets no kernel stack worth waiting for (only its breakpoint's
	 * handling), the function tracer writes no user stack; NULL = both */
	const uint8_t *stacks;
	/* the function tracer's records (ftrace:function) and where their ip is */
	uint16_t function;
	uint32_t function_ip_offset;
	const struct tfs_raw_func *funcs; /* copied and sorted */
	int nfuncs;
};

/* One decoded record; pointers are valid during the callback only. */
struct tfs_raw_record {
	enum tfs_raw_kind kind;
	uint16_t type;          /* common_type */
	int32_t pid;            /* common_pid (the thread id) */
	uint64_t ts;            /* ring-buffer time (the instance's trace_clock) */
	int event;              /* EVENT: index in tfs_raw_types.events, else -1 */
	uint8_t stacks;         /* EVENT: the TRACEFS_RAW_WANT_* stacks it gets */
	uint32_t tgid;          /* USTACK: the process, else 0 */
	bool has_arg;           /* EVENT: its arg_offsets field was in the record */
	uint64_t arg;
	const uint64_t *ips;    /* stacks: leaf first, trailing zeros dropped */
	uint32_t nips;
};
/* Return non-zero to stop decoding the page. */
typedef int (*tfs_raw_record_fn)(void *ctx, const struct tfs_raw_record *rec);

/* An event with the stacks that followed it; pointers valid during the callback. */
struct tfs_raw_sample {
	int event;
	int32_t tid;
	uint32_t tgid;          /* from its user_stack record, 0 when none came */
	uint64_t ts;
	bool has_kstack, has_ustack, has_arg;
	uint64_t arg;           /* the event's arg_offsets field, when has_arg */
	const uint64_t *kips, *uips;
	uint32_t nkips, nuips;
};
typedef void (*tfs_raw_sample_fn)(void *ctx, const struct tfs_raw_sample *smp);

struct tfs_raw_stats {
	uint64_t pages, records;
	uint64_t events, kstacks, ustacks, others;
	uint64_t orphans;       /* stack records with no pending event of their pid */
	uint64_t incomplete;    /* events given out before all wanted stacks came */
	uint64_t missed;        /* events the kernel reports lost before a page */
	uint64_t missed_unknown; /* pages saying "events lost" without a count */
	uint64_t bad_pages;     /* pages whose header sizes do not fit */
};

struct tfs_raw;

/* A decoder for sub-buffers of SUBBUF_SIZE bytes (buffer_subbuf_size_kb,
 * normally the page size). An event is complete once its kernel stack (when
 * WANT_KSTACK) and user stack (when WANT_USTACK) arrived. TYPES->events is
 * copied. Returns 0, -EINVAL or -ENOMEM. */
int tfs_raw_alloc(const struct tfs_raw_types *types, size_t subbuf_size,
		       bool want_kstack, bool want_ustack, struct tfs_raw **out);
void tfs_raw_free(struct tfs_raw *r);

/* Decodes one sub-buffer of LEN bytes (LEN <= subbuf size; a short read of
 * trace_pipe_raw is fine as long as the header's size fits) and calls FN for
 * each data record. Returns the number of records, or -EINVAL for a page
 * whose header does not fit LEN (counted in bad_pages). */
int tfs_raw_decode(struct tfs_raw *r, const void *page, size_t len,
		       tfs_raw_record_fn fn, void *ctx);

/* Decodes one sub-buffer and pairs its records: FN gets each event once it is
 * complete, or when TRACEFS_RAW_PENDING newer events wait, or at flush.
 * A stack record goes to the newest pending event of the same pid that lacks
 * that kind of stack; one that finds none is an orphan (dropped). Returns the
 * number of records or -EINVAL. */
int tfs_raw_feed(struct tfs_raw *r, const void *page, size_t len,
		     tfs_raw_sample_fn fn, void *ctx);
/* Gives out every pending event, oldest first, with whatever stacks it has. */
void tfs_raw_flush(struct tfs_raw *r, tfs_raw_sample_fn fn, void *ctx);
const struct tfs_raw_stats *tfs_raw_stats(const struct tfs_raw *r);

#endif
