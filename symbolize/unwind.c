/* --call-graph dwarf: a sample's copied user stack unwound with the DWARF
 * call-frame information of the files mapped in its process (libdw's
 * dwfl_frame; where a file has none, libdw's own frame-pointer fallback).
 * One Dwfl per process image, its modules reported as the walks reach
 * them, so each file's CFI is read once; an exec starts a new one. Stack words come from the copy only: a walk that
 * needs more stack than was copied stops there, counted as cut. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/symbolize.h"

#define UNWIND_PROCS 64     /* processes with a Dwfl kept */
#define UNWIND_PASSES 8     /* modules reported during one walk, at most */
#define UNWIND_CUT_RANGE (64ULL << 20)

struct proc_dwfl {
	uint32_t pid;
	uint64_t image; /* sym_procs_image: an exec starts afresh */
	Dwfl *dwfl;
};

struct sym_unwinder {
	struct sym_procs *procs;
	struct proc_dwfl cache[UNWIND_PROCS];
	unsigned next_evict;
	/* the walk in progress (the callbacks' argument) */
	const struct sym_ustack *cur;
	uint64_t *ips;
	uint32_t n, max;
	bool cut;
};

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct sym_unwinder *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->cur->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct sym_unwinder *u = arg;
	const struct sym_ustack *s = u->cur;
	uint64_t sp = s->regs[7];
	if (addr < sp)
		return false;
	uint64_t off = addr - sp;
	if (off > s->size || s->size - off < sizeof(*result)) {
		u->cut |= off <= s->size || off - s->size < UNWIND_CUT_RANGE;
		return false;
	}
	memcpy(result, s->stack + off, sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct sym_unwinder *u = thread_arg;
	return dwfl_thread_state_registers(thread, 0, 17, u->cur->regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

int sym_unwinder_create(struct sym_procs *procs, struct sym_unwinder **out)
{
	struct sym_unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->procs = procs;
	*out = u;
	return 0;
}

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < UNWIND_PROCS; i++)
		if (u->cache[i].dwfl)
			dwfl_end(u->cache[i].dwfl);
	free(u);
}

/* Reports the file mapped at ADDR to D. Returns 0, or -ENOENT when no ELF
 * file is mapped there, -EEXIST when it overlaps a module reported before
 * (the process exec'd). */
static int report_module(struct sym_unwinder *u, Dwfl *d, uint64_t addr)
{
	const char *path;
	uint64_t bias;
	const struct sym_ustack *s = u->cur;
	if (sym_procs_module(u->procs, s->pid, s->time, addr, &path, &bias) < 0)
		return -ENOENT;
	dwfl_report_begin_add(d);
	Dwfl_Module *m = dwfl_report_elf(d, path, path, -1, bias, false);
	dwfl_report_end(d, NULL, NULL);
	return m ? 0 : -EEXIST;
}

/* The Dwfl of the sample's process, holding the module of its ip and
 * attached to the callbacks; NULL when the ip is in no ELF file. */
static Dwfl *proc_dwfl(struct sym_unwinder *u)
{
	const struct sym_ustack *s = u->cur;
	uint64_t image = sym_procs_image(u->procs, s->pid, s->time);
	struct proc_dwfl *slot = NULL;
	for (int i = 0; i < UNWIND_PROCS && !slot; i++)
		if (u->cache[i].dwfl && u->cache[i].pid == s->pid)
			slot = &u->cache[i];
	if (slot && (slot->image != image ||
		     (!dwfl_addrmodule(slot->dwfl, s->regs[16]) &&
		      report_module(u, slot->dwfl, s->regs[16]) == -EEXIST))) {
		dwfl_end(slot->dwfl); /* another image: start the process afresh */
		slot->dwfl = NULL;
	}
	if (slot && slot->dwfl)
		return slot->dwfl;
	if (!slot) {
		slot = &u->cache[u->next_evict++ % UNWIND_PROCS];
		if (slot->dwfl)
			dwfl_end(slot->dwfl);
	}
	*slot = (struct proc_dwfl){ .pid = s->pid, .image = image,
				    .dwfl = dwfl_begin(&dwfl_callbacks) };
	if (!slot->dwfl)
		return NULL;
	/* the architecture comes from a module: report the ip's first */
	if (report_module(u, slot->dwfl, s->regs[16]) < 0 ||
	    !dwfl_attach_state(slot->dwfl, NULL, (pid_t)s->pid, &thread_callbacks, u)) {
		dwfl_end(slot->dwfl);
		slot->dwfl = NULL;
	}
	return slot->dwfl;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct sym_unwinder *u = arg;
	Dwarf_Addr pc;
	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	u->ips[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

uint32_t sym_unwind(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
		    uint32_t max, bool *cut)
{
	*cut = false;
	if (max == 0)
		return 0;
	u->cur = s;
	u->ips = ips;
	u->max = max;
	Dwfl *d = proc_dwfl(u);
	if (!d) {
		ips[0] = s->regs[16];
		return 1;
	}
	/* a walk stops at the first return address in a module not reported
	 * yet: report it and walk again */
	for (int pass = 0; pass < UNWIND_PASSES; pass++) {
		u->n = 0;
		u->cut = false;
		dwfl_getthread_frames(d, (pid_t)s->tid, frame_cb, u);
		if (u->n == 0 || u->n >= max)
			break;
		uint64_t last = ips[u->n - 1];
		if (dwfl_addrmodule(d, last - 1) || report_module(u, d, last - 1) < 0)
			break;
	}
	if (u->n == 0)
		ips[u->n++] = s->regs[16];
	*cut = u->cut;
	return u->n;
}
