/* Shared by python/'s files, not outside it: the layouts of CPython's
 * structs per version (layout.c), the interpreter binaries and processes
 * (procs.c), the code objects' names (codes.c); stack.c reads a sample's
 * frames with them. */
#ifndef FTSTACK_PYTHON_INTERNAL_H
#define FTSTACK_PYTHON_INTERNAL_H

#include "aggregate/aggregate.h"
#include "python/python.h"

/* processes whose interpreter is known (or known to be none), direct-mapped
 * by pid: a system-wide run samples hundreds, each found from its /proc
 * maps once, not again each time another took its slot in turn */
#define PY_PROCS 1024
#define PY_LIVE 64          /* Python processes alive at once, kept by pid */
#define PY_THREADS 16       /* thread states kept per process (replaced in turn) */
#define PY_MAX_FRAMES 256   /* interpreter frames read per eval loop, at most */
#define PY_SCAN 4096        /* bytes below a CFA the C-stack record is looked for in */

/* Where CPython keeps what the reader follows, in bytes; 0 where a
 * version has no such field. */
struct py_layout {
	unsigned minor;                   /* 3.MINOR */
	uint32_t rt_interp_head;          /* _PyRuntime.interpreters.head */
	uint32_t is_next, is_threads_head;/* PyInterpreterState */
	uint32_t ts_next, ts_native_tid;  /* PyThreadState */
	uint32_t ts_root_cframe;          /* 3.11, 3.12: &tstate->root_cframe */
	uint32_t ts_current_frame;        /* 3.13: tstate->current_frame */
	uint32_t cf_current, cf_previous; /* _PyCFrame (3.11, 3.12) */
	uint32_t fr_code, fr_previous, fr_owner, fr_is_entry; /* _PyInterpreterFrame */
	uint32_t fr_size;                 /* bytes read of a frame */
	uint8_t owner_cstack;             /* FRAME_OWNED_BY_CSTACK (3.12+) */
	bool entry_frame;                 /* 3.13: the C stack holds an entry frame, no cframe */
	uint32_t ob_type;
	uint32_t co_filename, co_name, co_qualname, co_firstlineno, co_size;
	uint32_t co_code;                 /* co_code_adaptive: the bytecode, 2 bytes a unit
					   * (PyVarObject's ob_size units, at 16) */
	uint32_t str_length, str_state, str_ascii, str_compact; /* PyUnicode */
};

/* The layout of 3.MINOR when it is built in (3.11, 3.12); NULL else. */
const struct py_layout *py_layout_of(unsigned minor);
/* 3.13's layout from the _Py_DebugOffsets at the start of its _PyRuntime
 * (WORDS of it, N words): 0; -EAGAIN when they hold no cookie (not
 * there yet: a loader that has not mapped the data segment); -ENOTSUP when
 * the version or the offsets are not ones this reader knows. */
int py_layout_debug(const uint64_t *words, size_t n, struct py_layout *out);
#define PY_DEBUG_WORDS 72

/* One interpreter binary (a python program or a libpython), by path. */
struct py_binary {
	char *path;
	uint64_t runtime, code_type, version; /* vaddrs of _PyRuntime, PyCode_Type, Py_Version */
	uint64_t eval_lo, eval_hi;        /* _PyEval_EvalFrameDefault's vaddrs */
	uint64_t text_off, text_vaddr;    /* its executable PT_LOAD: file offset, vaddr */
	int32_t rec_off;                  /* the C-stack record's offset from the eval CFA */
	bool learnt;
};

#define PY_PREFETCH_MAX 256 /* a frame's or a code object's bytes (fr_size, co_size), at most */
#define PY_GUESS_FRAMES 4   /* a thread's frames read again as its last sample's, at most */
/* those frames and their code objects, the liveness check after */
#define PY_PREFETCH_SPANS (2 * PY_GUESS_FRAMES + 1)

struct py_thread {
	uint32_t tid;
	uint64_t tstate;
	/* the newest activation's frames of its last sample read, newest
	 * first, and their code objects: a loop's next sample has the same,
	 * and the first read of its frames takes them along (python/stack.c) */
	uint32_t nguess;
	uint64_t frame[PY_GUESS_FRAMES], code[PY_GUESS_FRAMES];
};

/* One process, as long as its layout (sym_procs_image) lasts. */
struct py_proc {
	uint32_t pid;
	uint64_t image;
	enum { PY_UNKNOWN, PY_NOT, PY_YES, PY_UNSUPPORTED } kind;
	size_t mappings;                  /* sym_procs_image_mappings' when kind was found */
	/* PY_NOT for now, its libpython mapped but its memory not telling
	 * yet: the sample time from which it is looked at again, and the
	 * wait after that (0: not such a process) */
	uint64_t again_at, again_wait;
	struct py_binary *bin;
	struct py_layout lay;
	uint64_t bias;                    /* the binary's load bias */
	struct py_thread threads[PY_THREADS];
	unsigned nthreads, next_thread;
};

/* A code object seen, and its name: index I's synthetic address is
 * PY_TAG | I. */
struct py_code {
	uint32_t pid;
	uint64_t addr;
	uint64_t name, filename, qualname; /* the object's pointers, as when it was named */
	int32_t firstlineno;
	char *text;
};
#define PY_TAG 0xa5a5000000000000ull
#define PY_TAG_MASK 0xffff000000000000ull

struct py_reader {
	struct sym_procs *procs;
	const char *proc_root;
	py_read_fn read;
	void *read_ctx;
	struct py_proc procs_cache[PY_PROCS];
	struct py_binary **bins;
	size_t nbins, bins_cap;
	struct py_code *codes;            /* [0] unused: an index's item 0 is empty */
	uint32_t ncodes, codes_cap;
	struct agg_index code_index;
	char **unsupported;               /* versions not read, and whether said */
	bool *said;
	size_t nunsupported, unsupported_cap, said_cap;
	/* the processes whose stacks ran a Python read here and that have not
	 * exited (py_reader_active); past PY_LIVE of them, active to the end */
	uint32_t live[PY_LIVE];
	unsigned nlive;
	bool live_full;
	uint64_t last_code_lo, last_code_hi; /* py_code_bytecode's answer */
	/* reads the next one takes along (py_proc_prefetch): the spans asked
	 * for, then those read, each served once, in order */
	struct {
		struct { uint64_t addr; size_t len; } want[PY_PREFETCH_SPANS];
		struct { uint64_t addr; size_t len; uint8_t bytes[PY_PREFETCH_MAX]; } have[PY_PREFETCH_SPANS];
		unsigned nwant, head, nhave;
	} pre;
	struct py_counts cnt;
};

/* ---- procs.c ---- */
/* S's process as the reader knows it (its interpreter found on first
 * sight, from its mappings); NULL when out of memory. */
struct py_proc *py_proc_get(struct py_reader *r, uint32_t pid, uint64_t time);
/* The thread state of TID in P (cached; FRESH: looked up again): its
 * address, or 0 when no thread state has that native id. */
uint64_t py_proc_tstate(struct py_reader *r, struct py_proc *p, uint32_t tid, bool fresh);
/* TID's entry in P's threads (py_proc_tstate made it), or NULL. */
struct py_thread *py_proc_thread(struct py_proc *p, uint32_t tid);
/* R's read of P's memory, counted (a read served by a prefetch is not):
 * 0 or -errno. */
int py_proc_read(struct py_reader *r, const struct py_proc *p, uint64_t addr, void *buf,
		 size_t len);
/* Has R's next read of a process's memory (py_proc_read) that makes a system
 * call read LEN bytes at ADDR too, after its own and those asked for
 * before (PY_PREFETCH_SPANS at most), in the same call: the reads that
 * then ask for exactly those spans, in that order, get their bytes
 * without one (a span read ahead and not taken yet is not asked again).
 * The reads of a stack whose next address is known before the read in
 * between is made (a frame's code object, then its caller's frame) take
 * one call where they took two. A read of another span drops those not
 * taken yet. One stack's reads only: python/stack.c drops what is left
 * (py_proc_prefetch_drop) before and after them. */
void py_proc_prefetch(struct py_reader *r, uint64_t addr, size_t len);
/* Drops what py_proc_prefetch asked for or read and was not taken. */
void py_proc_prefetch_drop(struct py_reader *r);

/* ---- codes.c ---- */
/* The synthetic address of the code object at ADDR in P: its name read the
 * first time, checked each time (still a code object, with the same name,
 * file and line). 0 with *WHY set when it cannot be. */
uint64_t py_code_frame(struct py_reader *r, struct py_proc *p, uint64_t addr,
		       enum py_fail *why);
/* The [lo, hi) of the bytecode of the code object at ADDR in P, as the
 * last py_code_frame of it read (0, 0 when not known). */
void py_code_bytecode(const struct py_reader *r, uint64_t *lo, uint64_t *hi);
void py_codes_free(struct py_reader *r);

/* ---- reader.c ---- */
/* Process PID's stack ran a Python read here: the reader is active until
 * its exit (py_reader_exit). */
void py_live_add(struct py_reader *r, uint32_t pid);

#endif
