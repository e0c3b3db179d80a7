/* The kernel's symbol table, shared by its reader (kallsyms.c) and its
 * saved copy (kallsyms_cache.c). */
#ifndef FTSTACK_SYMBOLIZE_KALLSYMS_INT_H
#define FTSTACK_SYMBOLIZE_KALLSYMS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "aggregate/aggregate.h"
#include "symbolize/symbolize.h"

struct ksym {
	uint64_t addr;   /* first: sym_addr_upper_bound */
	uint32_t name;   /* offset into buf */
	uint32_t module; /* offset into buf, 0 = vmlinux */
	uint32_t line : 31; /* order in the file: a stable tie-break */
	uint32_t global : 1; /* T/W: the name callers and probes use */
};

/* Big buffers come from mmap with MAP_POPULATE: on a VM, faulting in the
 * ~10 MiB one page at a time costs more than the parsing. A table read
 * back maps its file here (kallsyms_cache.c); either is let go by munmap. */
struct sym_region {
	void *p;
	size_t cap;
};

struct sym_kernel {
	struct ksym *syms;
	size_t n;
	struct agg_index byname; /* name -> index + 1 into syms: the first by address */
	bool indexed;
	char *buf; /* the names, NUL-terminated */
	struct sym_region rbuf, rsyms;
	/* A table read back from its saved copy has the symbols of vmlinux
	 * and of the modules, not those the kernel makes and drops as it runs
	 * (BPF programs, trampolines, probes' instruction pages): an address
	 * none of the first holds is named from the kernel's own list, read
	 * from LIVE_PATH once (LIVE). */
	char *live_path;
	struct sym_kernel *live;
	bool live_failed;
	pthread_mutex_t live_lock;
};

/* A new empty table (its lock made). Returns it, or NULL. */
struct sym_kernel *sym_kernel_alloc(void);

#endif
