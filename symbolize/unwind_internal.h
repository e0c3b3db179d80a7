/* Shared by the unwinder's files (unwind.c, unwind_files.c,
 * unwind_space.c, unwind_rules.c, unwind_splice.c), not outside
 * symbolize/: the one struct sym_unwinder they all work on, and the few
 * functions one file calls in another. unwind.c says how they fit. */
#ifndef FTSTACK_SYMBOLIZE_UNWIND_INTERNAL_H
#define FTSTACK_SYMBOLIZE_UNWIND_INTERNAL_H

#define UNW_REMOTE_ONLY
#include <libunwind.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "aggregate/aggregate.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

#define UNWIND_PROCS 64     /* processes with an address space kept */
/* files kept mapped, least recently used out (symbolize/lru.c): a walk
 * of clang touches libLLVM (110 MB) and libclang-cpp (59 MB), which must
 * both stay */
#define UNWIND_FILES 64
#define WALK_FILES 8        /* files one walk remembers */
#define MAX_LOADS 16
/* the per-ip caches: AGG_CACHE_WAYS slots a set (aggregate/cache.c) */
#define FP_CACHE 4096       /* ips whose repair is known (a power of two) */
#define RULE_CACHE 8192     /* ips whose CFA rule is known (a power of two) */
#define RULE_FRAMES 128     /* frames of one walk whose rules are learnt */
#define READ_MAX 256        /* stack words one walk by rules reads, kept */
#define BP_SAMPLED UINT32_MAX /* bp_src: rbp as sampled */
enum { NEED_NOT, NEED_WORD, NEED_LESS_SP }; /* read_need: what the frames depend on */
#define LEAF_SEEN 4096      /* sampled ips remembered for a second sight (unwind_leaf.c) */
/* how far above sp an address is taken for a stack word (beyond the copy:
 * the stack was cut) rather than nothing of the stack's */
#define SYM_UW_STACK_RANGE (64ULL << 20)
/* what a probe reads beyond the copy (fill_beyond): one value for every
 * address, so a CFA read from the stack (a signal frame's) does not move
 * with rsp or rbp and fails the probes' shift checks; not 0, which would
 * end the stack */
#define SYM_UW_FILLER 0x5eed5eed5eed5eedULL

/* One ELF file, mapped read-only: its PT_LOAD segments and unwind table. */
struct ufile {
	char *path;
	uint64_t ino, dev; /* st_ino and st_dev of the file mapped */
	uint64_t stamp;    /* its st_mtim in ns: an inode freed and used again differs */
	const uint8_t *map;
	size_t size;
	struct { uint64_t vaddr, off, filesz; } load[MAX_LOADS];
	int nload;
	uint64_t lo, hi;              /* vaddr range of the PT_LOADs */
	uint64_t hdr, table, nfde;    /* .eh_frame_hdr vaddr, its table's, entries */
	uint64_t entry;               /* e_entry: where the program (or ld.so) starts */
	/* CPython's -X perf trampolines are copies, in anonymous memory, of
	 * its _Py_trampoline_func_start ("sub $N,%rsp; call *%rcx"), which
	 * has no CFI and keeps no frame pointer: when this file holds that
	 * template, a trampoline's return address lies at sp + TRAMP_RA (N)
	 * in its frame (0: no template; unwind_files.c) */
	uint32_t tramp_ra;
	bool borrowed; /* map is the vDSO's own image: not unmapped */
};

struct uproc {
	uint32_t pid;
	uint64_t image;
	unw_addr_space_t as;
};

struct sym_unwinder {
	struct sym_procs *procs;
	struct uproc procs_cache[UNWIND_PROCS];
	unsigned next_proc;
	struct ufile *files[UNWIND_FILES]; /* NULL: an empty slot */
	struct sym_lru_entry lru[UNWIND_FILES];
	uint64_t clock; /* file uses so far: LRU's time */
	/* sym_unwind_splice's repair per ip (per process layout, whose serial
	 * sym_procs_image never gives twice, direct-mapped):
	 * RA_SLOT 0 when the function keeps a frame pointer there (the first
	 * CFI step gave the chain's own next return address: no repair), else
	 * 1 + the stack slot (8 bytes from sp) of the one return address the
	 * chain lacks (a frameless leaf, a function's first instruction): the
	 * CFA rule of a pc is fixed, so that slot is the same every time */
	/* the repair of a sampled ip: none (RA_SLOT 0), or the return
	 * address at stack slot RA_SLOT - 1 put in after the chain's entry
	 * AFTER (0: after the ip itself; 1: after the chain's first return
	 * address, which must then be NEXT: a vDSO leaf under a C library
	 * function that keeps no frame pointer) */
	struct urepair { uint32_t pid, ra_slot; uint64_t image, ip, next; uint8_t after; } top[FP_CACHE];
	/* the kept repair the last sym_unwind_splice took, or NULL (any other
	 * splice or walk since: sym_unwind_spliced_by_rule) */
	const struct urepair *by_rule;
	/* sym_unwind's rules per ip (per process layout, direct-mapped; the
	 * key is ip * 2 + 1 for a return address, whose row libunwind takes at
	 * ip - 1): CFA = rsp or rbp + CFA_OFF, the return address at CFA +
	 * RA_OFF, rbp at CFA + BP_OFF or unchanged; END where the walk stops */
	struct urule { uint32_t pid; uint8_t kind; bool bp_saved; int32_t cfa_off, ra_off, bp_off;
		       uint64_t image, key; } rules[RULE_CACHE];
	/* the same rules by file (device, inode, modification time) and
	 * KEY's offset in it ((ip - bias) * 2 + 1 for a return address): a
	 * process new to the unwinder (each of a shell script's) takes its
	 * files' rules from the processes before it (unwind_rules.c); they
	 * outlive the file's mapping here, whose inode may then be freed and
	 * given to another file: the time tells them apart */
	struct frule { uint64_t dev, ino, stamp, off; uint8_t kind; bool bp_saved;
		       int32_t cfa_off, ra_off, bp_off; } file_rules[RULE_CACHE];
	uint64_t n_shared; /* rules a process took from its files' */
	bool no_rules;
	uint64_t leaf_seen[LEAF_SEEN]; /* sampled ips met once (unwind_leaf.c) */
	unw_addr_space_t probe_as; /* the probes' own, uncached: walks' caches untouched */
	uint64_t n_ruled, n_full; /* sym_unwind's walks by the rules, and full */
	uint64_t n_learnt;        /* rules learnt by learn_frame */
	uint64_t n_leaf;          /* sampled frames stepped by libunwind in walks by the rules */
	/* the frames of sym_unwind's last full walk: rip, rsp, rbp; RET is
	 * the last unw_step's answer */
	struct uframe { uint64_t ip, sp, bp; } fr[RULE_FRAMES + 1];
	uint32_t nfr;
	int last_ret;
	/* the walk in progress; REGS what access_reg gives (a probe's own, or
	 * FP_REGS: a frame a frame-pointer step reached, whose rip, rsp and
	 * rbp alone are known) */
	const struct sym_ustack *cur;
	const uint64_t *regs;
	uint64_t fp_regs[17];
	struct { uint64_t lo, hi, bias; struct ufile *f; } seen[WALK_FILES];
	unsigned nseen;
	bool cut;
	/* the probes that learn a rule (unwind_rules.c's learn_one): a stack
	 * word beyond the copy reads as SYM_UW_FILLER (FILLED set) rather
	 * than cutting the probe, so a frame met at the copy's end has its
	 * rule learnt once (its CFI gives where the words lie, not what they
	 * hold), not probed again at each sample that ends there */
	bool fill_beyond, filled;
	uint32_t uw_steps; /* the last sym_uw_walk's steps by libunwind or rbp */
	/* the stack words the last walk's rule steps read, as byte offsets
	 * from the sampled rsp (NREAD of them; more than READ_MAX: not all
	 * kept), and the rules it tried to learn: a walk by kept rules alone
	 * is a function of rip, the copy's size, the return addresses read
	 * and, less rsp, the rbp values a CFA was taken from (READ_NEED, a
	 * NEED_*; NEED_RBP: the sampled rbp; BP_SRC: where the frame's rbp
	 * came from, the sampled one BP_SAMPLED) (sym_unwind_walked_by_rules) */
	uint32_t read_off[READ_MAX];
	uint8_t read_need[READ_MAX];
	uint32_t nread, learn_tries, bp_src;
	bool need_rbp;
	uint64_t ruled_image; /* the last splice's walk's, by rules alone; else 0 */
	uint64_t n_rule_steps, n_uw_steps; /* sym_uw_walk's steps by a kept rule, and not */
	uint64_t n_again; /* sym_uw_walk's walks made again without rules */
	bool ended; /* the last sym_unwind reached the outermost frame */
	uint64_t anon_ip; /* the last walk's first frame in code in no file (JIT), or 0 */
	uint64_t *sps; /* sym_unwinder_sps's buffer: each frame's rsp (NULL: not kept) */
};

/* Frame I's rsp into the caller's buffer, when it keeps one. */
static inline void sym_uw_keep_sp(struct sym_unwinder *u, uint32_t i, uint64_t sp)
{
	if (u->sps)
		u->sps[i] = sp;
}

/* ---- the mapped files (unwind_files.c) ---- */

/* The file mapped at ADDR in the walk's process (u->cur), and its load
 * bias; NULL when no ELF file is mapped there or it cannot be read. The
 * walk remembers it (u->seen) while it lasts. */
struct ufile *sym_uw_file_at(struct sym_unwinder *u, uint64_t addr, uint64_t *bias);
/* sym_uw_file_at among the files this walk has met already (u->seen), with
 * no lookup in the process's maps: NULL when none holds ADDR. */
struct ufile *sym_uw_file_seen(const struct sym_unwinder *u, uint64_t addr, uint64_t *bias);
/* The LEN bytes of F at its vaddr V (in a PT_LOAD's file part), or NULL. */
const uint8_t *sym_uw_file_bytes(const struct ufile *f, uint64_t v, size_t len);
/* Unmaps and frees F (NULL: nothing). */
void sym_uw_file_free(struct ufile *f);
/* Whether IP (a caller's: its return address less one) is in a program's
 * or the dynamic loader's entry code, its first call: the outermost frame,
 * whether the file gives it CFI (glibc's _start marks its return address
 * undefined) or not (Debian's ld.so's _start has none). */
bool sym_uw_at_entry(struct sym_unwinder *u, uint64_t ip);

/* ---- the address spaces (unwind_space.c) ---- */

/* libunwind's callbacks: memory from the copy and the mapped files,
 * registers from u->regs */
extern unw_accessors_t sym_uw_accessors;
/* The address space of the walk's process (u->cur), its cache kept while
 * its layout stays; NULL when libunwind cannot make one. */
unw_addr_space_t sym_uw_proc_as(struct sym_unwinder *u);
/* sym_uw_proc_as for S's process, set as the walk in progress */
unw_addr_space_t sym_uw_proc_as_of(struct sym_unwinder *u, const struct sym_ustack *s);
/* Whether the code at IP (a caller's: its return address less one) has
 * CFI, asked of the files' tables: on x86-64 unw_get_proc_info answers 0
 * for a frame without any, so that is no test. */
bool sym_uw_has_cfi(struct sym_unwinder *u, unw_addr_space_t as, uint64_t ip);

/* ---- frame-pointer steps through code without CFI (unwind_fp.c) ---- */

/* The word at ADDR in S's copy into *W; false beyond it. */
bool sym_uw_copy_word(const struct sym_ustack *s, uint64_t addr, uint64_t *w);
/* Whether S's ip is just past glibc's clone or clone3 syscall, at its
 * "test %rax,%rax; jl error; je thread_start" (rax taken) */
bool sym_uw_past_clone(struct sym_unwinder *u, const struct sym_ustack *s);
/* One frame-pointer step from frame F (rip, rsp, rbp) of S, whose code
 * has no CFI: 1 with the caller's rip, rsp, rbp in F; -1 when the step is
 * not plausible (rbp below sp or far above it, the return address in no
 * executable mapping of the process, the saved rbp not above rbp while
 * the caller has no CFI either) or needs stack beyond the copy (then
 * u->cut). */
int sym_uw_fp_step(struct sym_unwinder *u, unw_addr_space_t as, const struct sym_ustack *s,
		   uint64_t f[3]);

/* ---- the full walk (unwind.c) ---- */

/* Where a walk met a frame-pointer chain: ips[K] == chain[J], and the
 * chain's entries after J follow (checked by one more CFI step where
 * the walk could make it). */
struct sym_uw_met {
	bool met;
	uint32_t k, j;
};
/* CFI steps from S's sampled registers into IPS (at most MAX), until CHAIN
 * (if any) is met (*MET); a frame whose rule is kept for layout IMAGE (0:
 * none taken) is stepped by it, without libunwind (u->uw_steps counts
 * libunwind's). Returns the count; *FAILED when not even the
 * first step could be made; *CFI when the ip's function has CFI (else
 * libunwind's first step followed rbp). Keeps the frames in u->fr for
 * the rules to learn from. */
uint32_t sym_uw_walk(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
		     const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max, bool *cut,
		     bool *failed, struct sym_uw_met *met, bool *cfi);

/* ---- the per-ip rules (unwind_rules.c) ---- */

/* Learns the rules of the last full walk's frames (u->fr) not known yet,
 * for S's process layout IMAGE (0: none). */
void sym_uw_learn(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image);
/* S unwound by the rules alone into IPS (at most MAX; the sampled frame
 * by one CFI step when its ip has no rule): the count, or 0 when an ip
 * above it has none (or not a simple one) or a word lies beyond the copy:
 * then a full walk. */
uint32_t sym_uw_rules_walk(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
			   uint64_t *ips, uint32_t max, bool *cut);
/* One step of frame F (rip, rsp, rbp; the walk's frame N - 1) of S by the
 * rule kept for it in layout IMAGE, or with LEARN one learnt from probes
 * there now: 1 with the caller in F, 0 at the stack's end, -1 when a word
 * lies beyond the copy, SYM_UW_NO_RULE when it has no rule (or the frame
 * is libunwind's or rbp's to step). */
#define SYM_UW_NO_RULE (-2)
int sym_uw_rule_step(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
		     uint64_t f[3], uint32_t n, bool learn);

/* ---- the sampled frame's rule (unwind_leaf.c) ---- */
/* After a walk by the rules stepped S's sampled frame with libunwind to
 * F (the caller's rip, rsp, rbp): true the second time that ip comes in
 * layout IMAGE, with the two frames in u->fr for sym_uw_learn, so later
 * samples there need no libunwind; false the first time. */
bool sym_uw_leaf_again(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
		       const uint64_t f[3]);
#endif
