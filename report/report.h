/* report: parsers of saved stack-trace text, for `ftstack report`.
 * Pure code: no I/O, no kernel, nothing printed.
 *
 * Formats: the kernel's trace / trace_pipe text with <stack trace> and
 * <user stack trace> blocks, `perf script` output, hist-trigger output keyed
 * on a stack, and folded lines. Every parser works on a (buffer, length) pair
 * that may hold anything (NUL bytes, binary, a cut-off tail): it never reads
 * past the length, never loops without consuming input, and bounds every
 * stack (REPORT_MAX_FRAMES) and name (REPORT_MAX_NAME).
 *
 * Frames are delivered leaf first, as bare names: offsets ("+0x1a/0x40"),
 * module suffixes (" [ext4]") and raw addresses (" <ffffffff81000130>") are
 * stripped. Kernel addresses without a symbol become "[unknown]", as do user
 * addresses in ftrace's " <00007f...>" form; ftrace's userobj form
 * "/usr/lib/libc.so.6[+0xaf4f7]" is kept as it is (a file and an offset that
 * a symbolizer can still resolve). Tracing-machinery frames at the leaf end
 * of a kernel stack are dropped (see report_is_machinery), so a saved trace
 * and a live run of the same event give the same stacks. `perf script`
 * frames are named as FlameGraph's stackcollapse-perf.pl names them
 * (perf_script.c), and folded lines keep their frame order (folded.c).
 */
#ifndef FTSTACK_REPORT_H
#define FTSTACK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPORT_MAX_FRAMES 512 /* frames kept per kernel or user stack */
#define REPORT_MAX_NAME 1024  /* bytes kept of one frame, comm or event name */

enum report_format {
	REPORT_AUTO,        /* detect with report_detect() */
	REPORT_FTRACE,      /* tracefs trace / trace_pipe text */
	REPORT_PERF_SCRIPT, /* perf script, any -F field set, with or without -g */
	REPORT_HIST,        /* hist trigger output, keys=stacktrace / common_stacktrace */
	REPORT_FOLDED,      /* "a;b;c N" lines */
};

/* One parsed stack, valid only during the callback. Strings are
 * NUL-terminated and never NULL ("" when unknown). */
struct report_stack {
	const char *comm;           /* task name; "" when the format has none */
	uint32_t pid;               /* pid (ftrace: the thread's pid); 0 when unknown */
	const char *event;          /* event name ("kmalloc_probe", "__kmalloc",
	                             * "sys_getppid", "kmem:kmalloc"); "" when unknown */
	const char *const *kframes; /* kernel frames, leaf first */
	uint32_t nk;
	const char *const *uframes; /* user frames, leaf first */
	uint32_t nu;
	uint64_t count;             /* 1 per trace block / perf sample; hist: hitcount;
	                             * folded: the line's count */
	uint64_t period;            /* perf script: the sample's period when its
	                             * header shows one, else 0 */
};

struct report_stats {
	enum report_format format; /* the format parsed (after detection) */
	uint64_t lines;            /* lines read */
	uint64_t stacks;           /* stacks delivered to the callback */
	uint64_t events;           /* sum of the delivered counts */
	uint64_t skipped;          /* lines ignored: comments, headers, event lines,
	                            * funcgraph output, blank lines */
	uint64_t malformed;        /* lines that could not be parsed (binary, NUL
	                            * bytes, frames outside a block, bad counts) */
	uint64_t truncated;        /* 1 when the input ended inside a block */
	uint64_t machinery;        /* tracing-machinery frames dropped */
	uint64_t frames_cut;       /* frames beyond REPORT_MAX_FRAMES, names cut
	                            * at REPORT_MAX_NAME */
	uint64_t hist_hits;        /* hist: "Hits:" of the Totals section, 0 if absent */
	uint64_t orphans;          /* perf script: frame lines outside a sample
	                            * (after a blank line, no header), ignored */
};

/* Called once per parsed stack; a nonzero return stops the parse and
 * report_parse returns that value. */
typedef int (*report_fn)(void *ctx, const struct report_stack *s);

/* Parses a format name: "auto", "ftrace" (or "trace"), "perf" (or
 * "perf-script", "perf_script"), "hist", "folded". Returns 0 and sets *out,
 * or -EINVAL for an unknown name (or NULL arguments). */
int report_format_parse(const char *name, enum report_format *out);

/* Returns the name report_format_parse accepts for fmt ("auto", "ftrace",
 * "perf", "hist", "folded"), or "?" for a value outside the enum. */
const char *report_format_name(enum report_format fmt);

/* Returns true when more than 5% of buf's first 64 KiB are control bytes
 * (NUL, ESC...: not tab, newline or carriage return): binary data, which
 * none of the formats is. */
bool report_is_binary(const char *buf, size_t len);

/* Returns true when buf holds nothing but blank lines and '#' comments. */
bool report_is_blank(const char *buf, size_t len);

/* Guesses the format of buf from its first 64 KiB. Returns REPORT_FTRACE,
 * REPORT_PERF_SCRIPT, REPORT_HIST or REPORT_FOLDED, or REPORT_AUTO when the
 * text looks like none of them or is binary (report_is_binary). */
enum report_format report_detect(const char *buf, size_t len);

/* Parses len bytes of buf as fmt (REPORT_AUTO: detected) and calls fn for
 * every stack, in input order. Duplicated stacks (e.g. repeated folded lines)
 * are delivered one by one: summing is the caller's aggregation. stats may
 * be NULL; otherwise it is zeroed and filled in. Returns 0 when at least one
 * stack was delivered or the input held nothing to parse (blank lines,
 * comments, perf samples' orphaned frame lines; check stats->malformed /
 * truncated to warn about a partial result), -EINVAL when the format is
 * unknown or none of its lines could be parsed (or buf/fn is NULL),
 * -ENOMEM, or the callback's nonzero return. */
int report_parse(const char *buf, size_t len, enum report_format fmt,
		 report_fn fn, void *ctx, struct report_stats *stats);

/* Returns true when name (a bare function name, offsets stripped) is a
 * frame of the tracing machinery itself — kprobe dispatch, ftrace trampolines
 * and callers, event/trigger/ring-buffer code, perf/BPF glue — which a stack
 * taken inside a tracer shows on its leaf side. Bare hex addresses ("0x...")
 * and "[FTRACE TRAMPOLINE]" count as machinery (unsymbolized ftrace
 * trampolines). Callers drop such frames only while they lead the stack. */
bool report_is_machinery(const char *name);

#endif
