/* The reader object: what it keeps (processes, binaries, code names), its
 * counts and what it could not read, for the summary. stack.c reads a
 * sample's frames; procs.c finds the interpreters; codes.c names code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "python/internal.h"

int py_reader_alloc(struct sym_procs *procs, const char *proc_root, py_read_fn read, void *ctx,
		    struct py_reader **out)
{
	struct py_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->procs = procs;
	r->proc_root = proc_root;
	r->read = read;
	r->read_ctx = ctx;
	*out = r;
	return 0;
}

void py_reader_free(struct py_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nbins; i++) {
		free(r->bins[i]->path);
		free(r->bins[i]);
	}
	free(r->bins);
	for (size_t i = 0; i < r->nunsupported; i++)
		free(r->unsupported[i]);
	free(r->unsupported);
	free(r->said);
	py_codes_free(r);
	free(r);
}

const char *py_fail_text(enum py_fail f)
{
	static const char *const text[PY_FAILS] = {
		[PY_FAIL_NONE] = "read",
		[PY_FAIL_NO_CFA] = "the walk stopped inside an eval loop",
		[PY_FAIL_LEARN] = "the eval loop's record on the C stack not found yet",
		[PY_FAIL_CHAIN] = "the eval loops' records do not chain to the thread's state",
		[PY_FAIL_READ] = "the process's memory could not be read",
		[PY_FAIL_FRAMES] = "the interpreter frames had changed",
		[PY_FAIL_LATE] = "they would have been read too long after the sample",
		[PY_FAIL_MOVED] = "the thread's frames when read did not match the sample (it had left them, or was popping one)",
		[PY_FAIL_CODE] = "a frame's code object had changed",
		[PY_FAIL_ROOM] = "too deep",
		[PY_FAIL_BEHIND] = "ftstack was behind the kernel, and reading them would have lost samples",
	};
	return f < PY_FAILS ? text[f] : "?";
}

void py_reader_counts(const struct py_reader *r, struct py_counts *c)
{
	*c = r->cnt;
}

void py_reader_unsupported(struct py_reader *r, void (*fn)(void *ctx, const char *what),
			   void *ctx)
{
	for (size_t i = 0; i < r->nunsupported; i++)
		if (!r->said[i]) {
			r->said[i] = true;
			fn(ctx, r->unsupported[i]);
		}
}

void py_live_add(struct py_reader *r, uint32_t pid)
{
	for (unsigned i = r->nlive; i-- > 0;)
		if (r->live[i] == pid)
			return;
	if (r->nlive < PY_LIVE)
		r->live[r->nlive++] = pid;
	else
		r->live_full = true;
}

void py_reader_exit(struct py_reader *r, uint32_t pid)
{
	for (unsigned i = 0; r && i < r->nlive; i++)
		if (r->live[i] == pid) {
			r->live[i] = r->live[--r->nlive];
			return;
		}
}

bool py_reader_active(const struct py_reader *r)
{
	return r && (r->nlive > 0 || r->live_full);
}

const char *py_versions(void)
{
	return "3.11, 3.12, 3.13";
}
