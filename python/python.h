/* python: the Python functions each CPython eval loop in a user stack was
 * running, read out of the process (process_vm_readv; no pause, no BPF),
 * put in place into the stack as synthetic addresses that name them.
 *
 * A stack walked with CFI knows each frame's stack pointer; each
 * activation of _PyEval_EvalFrameDefault keeps, at a fixed offset from its
 * CFA, the C-stack record that points at its Python frames (3.11, 3.12:
 * its _PyCFrame; 3.13: its entry frame), learnt once per interpreter binary
 * by matching the chain between activations and the thread's state. The
 * sample's own copy of the stack gives those records as they were when it
 * was taken; the interpreter frames and code objects they point at are
 * read from the process. Nothing here prints. */
#ifndef FTSTACK_PYTHON_H
#define FTSTACK_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_procs;
struct py_reader;

/* LEN bytes of a process's memory at ADDR, read into BUF. */
struct py_span {
	uint64_t addr;
	void *buf;
	size_t len;
};
/* Reads SPANS (N of them, at most 10) of process PID, in order, as N
 * reads one after the other would: how many were read whole from the
 * first on, or -errno when not even the first was. */
typedef int (*py_read_fn)(void *ctx, uint32_t pid, const struct py_span *spans, unsigned n);

/* process_vm_readv: the py_read_fn of a live run (CTX unused), one system
 * call for all N. */
int py_read_process(void *ctx, uint32_t pid, const struct py_span *spans, unsigned n);

/* What the reader takes from an interpreter binary's ELF file: the vaddrs
 * of _PyRuntime, PyCode_Type, Py_Version (0: none, before 3.11),
 * _PyEval_EvalFrameDefault's [lo, hi), and its executable PT_LOAD's file
 * offset and vaddr. */
struct py_symbols {
	uint64_t runtime, code_type, version, eval_lo, eval_hi, text_off, text_vaddr;
};
/* Tells R the symbols of the binary at PATH instead of reading its file
 * (tests replay a process whose binary need not be on the machine).
 * Returns 0 or -ENOMEM. */
int py_reader_binary(struct py_reader *r, const char *path, const struct py_symbols *sy);

/* A reader for the processes PROCS follows (borrowed), reading their
 * memory with READ(CTX, ...) and their mappings under PROC_ROOT ("/proc").
 * Returns 0 or -ENOMEM. */
int py_reader_alloc(struct sym_procs *procs, const char *proc_root, py_read_fn read, void *ctx,
		    struct py_reader **out);
void py_reader_free(struct py_reader *r);

/* One walked user stack: IPS[0] the sampled ip, then return addresses;
 * SPS[i] frame i's rsp (0: not known); the copy STACK of SIZE bytes from
 * SPS[0]; REGS the sampled registers; WHOLE when the walk reached the stack's start (its outermost
 * eval loop is then the thread's first). */
struct py_stack {
	uint32_t pid, tid;
	uint64_t time;
	const uint64_t *ips, *sps;
	uint32_t n;
	const uint64_t *regs;     /* the sampled registers, DWARF's numbering (NULL: none) */
	uint64_t age_ns;          /* how long ago it was taken (0: not known, or a blocked thread's) */
	const uint8_t *stack;
	uint64_t size;
	bool whole;
	bool behind;              /* the reader is behind the kernel: not read, so no record is lost */
};

/* A sample read later than this after it was taken is not read: its
 * thread's Python frames above the newest may have changed in between (a
 * function returned and another called in its place, at the same
 * addresses), which nothing in the sample can tell. */
#define PY_MAX_AGE_NS 1000000ull

/* Why a stack's Python frames could not be read (py_reader_counts). */
enum py_fail {
	PY_FAIL_NONE,
	PY_FAIL_NO_CFA,         /* an eval loop's CFA unknown (the walk stopped above it) */
	PY_FAIL_LEARN,      /* the eval loop's C-stack record not found yet */
	PY_FAIL_CHAIN,      /* the records in the copy do not chain to the thread's state */
	PY_FAIL_READ,       /* the process's memory could not be read (gone, or refused) */
	PY_FAIL_FRAMES,     /* the interpreter frames do not lead back to their eval loop */
	PY_FAIL_MOVED,      /* the thread's frames when read did not match the sample */
	PY_FAIL_LATE,       /* read more than PY_MAX_AGE_NS after the sample */
	PY_FAIL_CODE,       /* a frame's code is not a code object */
	PY_FAIL_ROOM,       /* the stack would pass MAX frames */
	PY_FAIL_BEHIND,     /* not read: the reader was behind, and reading would have lost records */
	PY_FAILS
};
/* What each reason says in the summary. */
const char *py_fail_text(enum py_fail f);

/* Whether process PID runs a CPython at TIME (one this reader reads, or
 * one whose version it says once it cannot): the
 * question a sample of any process asks before its registers are decoded
 * and its age taken (count's samples of other programs pay only this). */
bool py_reader_runs_python(struct py_reader *r, uint32_t pid, uint64_t time);
/* Writes S's frames into OUT (room for MAX), each eval loop activation's
 * Python frames (leaf first, as a synthetic address py_frame_name names)
 * just before it. Returns the count: S->n and a copy of S->ips when the
 * stack runs no Python code, or its Python frames cannot be read (then
 * counted by why); -1 when S's process is not a Python the reader knows. */
int py_reader_expand(struct py_reader *r, const struct py_stack *s, uint64_t *out, uint32_t max);

/* Whether ADDR is one of py_reader_expand's synthetic addresses. */
bool py_frame_is(uint64_t addr);
/* The name of synthetic address ADDR: "qualname (file.py:defline)"; NULL
 * when it is not one. Owned by R, kept after the process exits. */
const char *py_frame_name(const struct py_reader *r, uint64_t addr);

struct py_counts {
	uint64_t stacks;     /* stacks that ran Python code (an eval loop in them) */
	uint64_t read;       /* whose Python frames were read */
	uint64_t edge;       /* of them, sampled in an eval loop's entry or exit:
				* its callers' frames, not the one it enters or leaves */
	uint64_t failed[PY_FAILS];
	uint64_t frames;     /* Python frames put in */
	uint64_t reads;      /* reads of the processes' memory */
};
void py_reader_counts(const struct py_reader *r, struct py_counts *c);
/* The Python versions seen that the reader cannot read, said once each:
 * calls FN for each not yet reported ("3.10 (/usr/bin/python3.10)"). */
void py_reader_unsupported(struct py_reader *r, void (*fn)(void *ctx, const char *what),
			   void *ctx);
/* Whether a process whose stacks ran a Python the reader reads has not
 * exited yet: the run then reads its records promptly (the frames are
 * read when the sample is). */
bool py_reader_active(const struct py_reader *r);
/* Process PID exited (a PERF_RECORD_EXIT of its main thread): no sample
 * of it is left to read promptly. R may be NULL (no reader: nothing). */
void py_reader_exit(struct py_reader *r, uint32_t pid);

/* The versions read, for `ftstack check`: "3.11, 3.12, 3.13". */
const char *py_versions(void);

#endif
