/* report: helpers shared by the parsers; not part of the public API. */
#ifndef FTSTACK_REPORT_INTERNAL_H
#define FTSTACK_REPORT_INTERNAL_H

#include "report/report.h"

/* One line of the input: [p, p+len), without the '\n' (and a '\r' before
 * it). nul: the line holds a NUL byte. partial: the input ended without a
 * newline after it. */
struct report_line {
	const char *p;
	size_t len;
	bool nul;
	bool partial;
};

/* Reader over the whole buffer. */
struct report_in {
	const char *buf;
	size_t len;
	size_t pos;
	struct report_stats *st;
};

/* Returns true and fills *l with the next line, false at the end. */
bool report_in_next(struct report_in *in, struct report_line *l);
/* Returns true and fills *l with the next line without consuming it. */
bool report_in_peek(const struct report_in *in, struct report_line *l);

/* Names stored back to back, NUL-terminated, with their offsets. */
struct report_sb {
	char *buf;
	size_t len, cap;
	uint32_t *off;
	uint32_t n, ncap;
};

void report_sb_reset(struct report_sb *sb);
void report_sb_free(struct report_sb *sb);
/* Appends a copy of [p, p+n) (a NUL byte replaced by '?', cut at
 * REPORT_MAX_NAME). Frames beyond REPORT_MAX_FRAMES are counted in
 * st->frames_cut and ignored. Returns 0 or -ENOMEM. */
int report_sb_add(struct report_sb *sb, const char *p, size_t n, struct report_stats *st);
/* Returns the i-th name. */
const char *report_sb_get(const struct report_sb *sb, uint32_t i);

/* Pointer arrays reused across stacks, and the callback. */
struct report_emitter {
	const char **kp, **up;
	report_fn fn;
	void *ctx;
	struct report_stats *st;
	uint64_t period; /* the next stack's period (perf script), 0 for none;
	                  * report_emit passes it on and clears it */
};

/* Delivers one stack: drops leading machinery frames of k, turns remaining
 * bare addresses into "[unknown]", calls the callback. NULL strings become
 * "". Returns 0, -ENOMEM or the callback's return. */
int report_emit(struct report_emitter *em, const struct report_sb *k,
		const struct report_sb *u, const char *comm, uint32_t pid,
		const char *event, uint64_t count);
void report_emitter_free(struct report_emitter *em);

/* Text helpers on (pointer, length) ranges. */
void report_trim(const char **p, size_t *n);
bool report_starts(const char *p, size_t n, const char *prefix);
/* Strips " <hex>", " [module]" and "+0x.../0x..." from a symbol. */
void report_norm_sym(const char **p, size_t *n);
/* True when [p, p+n) is "0x" followed by hex digits. */
bool report_is_hexaddr(const char *p, size_t n);
/* Parses a decimal number of at most 19 digits; returns false otherwise. */
bool report_parse_u64(const char *p, size_t n, uint64_t *out);
/* Parses hex digits (no prefix, at most 16); returns false otherwise. */
bool report_parse_hex(const char *p, size_t n, uint64_t *out);
/* Copies [p, p+n) into dst (size cap) NUL-terminated, a NUL byte as '?'. */
void report_copy(char *dst, size_t cap, const char *p, size_t n);

/* A perf script header: see perf_header.c. Pointers are into the line. */
struct report_perf_header {
	const char *comm; /* "" (ncomm 0) when -F left it out */
	size_t ncomm;
	bool has_pid, has_period;
	uint32_t pid, tid;
	uint64_t period;
	const char *event; /* without its ':'; NULL when absent */
	size_t nevent;
	const char *rest;  /* after the fields: tracepoint data or a frame */
	size_t nrest;
};
/* Parses [p, p+n) as a header. Returns the number of fields found (pid,
 * cpu, time, period, event, a frame in the rest), or -1 when it is none. */
int report_perf_header(const char *p, size_t n, struct report_perf_header *h);
/* True when [p, p+n) reads "HEX SYM...", a perf script frame. */
bool report_perf_frame_like(const char *p, size_t n);

int report_parse_ftrace(struct report_in *in, struct report_emitter *em);
int report_parse_perf(struct report_in *in, struct report_emitter *em);
int report_parse_hist(struct report_in *in, struct report_emitter *em);
int report_parse_folded(struct report_in *in, struct report_emitter *em);

#endif
