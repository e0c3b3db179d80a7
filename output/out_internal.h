/* output internals shared by the format writers. Not part of the public API. */
#ifndef FTSTACK_OUT_INTERNAL_H
#define FTSTACK_OUT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "output/output.h"

#define OUT_UNKNOWN "[unknown]"

/* One frame of a stack as a format shows it. */
struct out_frame {
	const char *name;
	bool kernel;    /* a kernel frame (svg colours, folded _[k]) */
	bool synthetic; /* event name, comm or delimiter: not a code frame */
};

/* A stack flattened leaf first: [event] kernel... [delim] user... */
struct out_path {
	struct out_frame *v;
	size_t n;
	char *event; /* owned "[name]" when the event frame is shown */
	const char *comm; /* the stack's comm, cleaned (out_clean_name); NULL if none */
	const char *cgroup; /* the stack's cgroup path, cleaned; NULL if none */
	char **own;  /* cleaned names this path owns */
	size_t nown, capown;
};

/* Fills P (leaf first) for S, every name cleaned by out_clean_name. DELIM, when not NULL and o->delimiter is set
 * and both kernel and user frames exist, goes between them. Returns 0 or
 * -ENOMEM; release with out_path_free. */
int out_path_build(const struct out_options *o, const struct agg_named_stack *s,
		   const char *delim, struct out_path *p);
void out_path_free(struct out_path *p);

/* The number a stack is ranked and printed by: weight for offcpu and for
 * events weighted by period (o->event_weighted), else count. */
uint64_t out_value(const struct out_options *o, const struct agg_named_stack *s);
/* True when some event of o is weighted by period. */
bool out_any_weighted(const struct out_options *o);
/* A frame name already carrying a FlameGraph annotation (_[k], _[i], _[j]). */
bool out_annotated(const char *name);

enum out_kind { OUT_K_USER, OUT_K_KERNEL, OUT_K_OTHER /* comm, event, delimiter */ };

/* The folded sequence root first: [cgroup] [comm] user... [-] kernel... [event], with
 * the folded rules (annotate, ';' replaced). Each name is heap-allocated into
 * *names, its kind in *kind; returns the count or -ENOMEM. Free with
 * out_names_free. */
int out_folded_names(const struct out_options *o, const struct agg_named_stack *s,
		     char ***names, enum out_kind **kind);
void out_names_free(char **names, size_t n, enum out_kind *kind);

/* String interning: names to dense indexes in insertion order. */
struct out_strtab {
	char **str;
	size_t n, cap;
	struct agg_index index; /* items: index+1 into str */
};
/* Returns the index of S (copied on first sight) or -1 on -ENOMEM. */
long out_strtab_intern(struct out_strtab *t, const char *s);
void out_strtab_free(struct out_strtab *t);

/* Returns 0, or -EPIPE/-EIO when F has a write error (after flushing). */
int out_finish(FILE *f);

int out_write_text(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		   size_t n);
int out_write_folded(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		     size_t n);
int out_write_top(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		  size_t n, const struct out_totals *totals);
int out_write_pprof(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		    size_t n);
int out_write_speedscope(FILE *f, const struct out_options *o,
			 const struct agg_named_stack *s, size_t n);
int out_write_svg(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		  size_t n);

/* The svg's embedded JavaScript (svgjs.c). */
extern const char out_svg_script[];

#endif
