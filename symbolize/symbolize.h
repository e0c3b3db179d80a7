/* symbolize: names for addresses.
 *  - sym_kernel: /proc/kallsyms (+ module names), loaded once, binary search.
 *  - sym_procs: every traced process's history: comm changes, exec
 *    generations and the mappings of each, from /proc/PID/maps snapshots and
 *    the MMAP2/COMM/FORK/EXIT records that follow, so a process that exited
 *    before the output is printed still symbolizes.
 *  - sym_elf: ELF symbol tables (.symtab/.dynsym, build-id/debuglink
 *    debuginfo, MiniDebugInfo), cached per file, PT_LOAD aware.
 *  - sym_perfmap: JIT compilers' /tmp/perf-PID.map symbol files.
 * Nothing here prints. Readers of the system take their root as a parameter.
 */
#ifndef FTSTACK_SYMBOLIZE_H
#define FTSTACK_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- kernel ---- */
struct sym_kernel;

/* Loads a kallsyms-format file (path, e.g. "/proc/kallsyms"). Returns 0, or
 * -errno when it cannot be read, or -EPERM when every address is zero
 * (kptr_restrict): then lookups fail and callers show raw addresses. */
int sym_kernel_load(const char *kallsyms_path, struct sym_kernel **out);
void sym_kernel_free(struct sym_kernel *k);
/* Where sym_kernel_load_cached keeps the kernel's symbols between runs:
 * $FTSTACK_CACHE_DIR (empty: nowhere), else $XDG_CACHE_HOME/ftstack,
 * else ~/.cache/ftstack, the home $HOME or the euid's passwd entry's,
 * each only when the euid's (under sudo, root's, not the user's); the
 * directory is made (0700) and must be the euid's, written by nobody
 * else. Returns 0 and the file's path in BUF, or -errno (-ENOENT:
 * nowhere). */
int sym_kernel_cache_file(char *buf, size_t len);
enum sym_kernel_whence {
	SYM_KERNEL_READ,       /* from KALLSYMS only */
	SYM_KERNEL_READ_SAVED, /* from KALLSYMS, and saved in the file */
	SYM_KERNEL_SAVED,      /* from the file */
};
/* sym_kernel_load through a copy saved in FILE (NULL: none), read back
 * while this boot, kernel, reader's view of the addresses and modules are
 * the ones it was saved with (ROOT prefixes /proc and /sys: "" for this
 * system's), else made anew from KALLSYMS and saved. The copy has no
 * symbols the kernel makes as it runs (BPF programs, trampolines): what
 * it cannot name exactly is named from KALLSYMS, read then. Returns what
 * sym_kernel_load does (the file's troubles only make it read KALLSYMS);
 * *WHENCE says where the table came from. */
int sym_kernel_load_cached(const char *kallsyms, const char *file, const char *root,
			   struct sym_kernel **out, enum sym_kernel_whence *whence);
/* Returns true when a table read back from its copy sent a lookup to
 * KALLSYMS (an address the copy could not answer exactly), false when it
 * answered all, or was not read from a copy. */
bool sym_kernel_read_live(const struct sym_kernel *k);
/* Returns the name of the text symbol containing ADDR (NULL if none) and the
 * offset into it in *off; *module is the module name or NULL for vmlinux. */
const char *sym_kernel_lookup(const struct sym_kernel *k, uint64_t addr,
			      uint64_t *off, const char **module);
/* Returns 0 and the [start, end) range of text symbol NAME, or -ENOENT
 * (also when out of memory for the name index, made on the first call: the
 * one lookup that writes, so not to be made from two threads at once). */
int sym_kernel_range(const struct sym_kernel *k, const char *name,
		     uint64_t *start, uint64_t *end);
/* Returns 0 and the [start, end) range of the text symbol containing ADDR
 * (end = next symbol's address), or -ENOENT. */
int sym_kernel_extent(const struct sym_kernel *k, uint64_t addr, uint64_t *start,
		      uint64_t *end);
/* Every name the text symbol at exactly ADDR has (its aliases, e.g.
 * __x64_sys_getppid and __do_sys_getppid), up to MAX into NAMES, in file
 * order. Returns how many there are (may exceed MAX), 0 when none. */
int sym_kernel_aliases(const struct sym_kernel *k, uint64_t addr, const char **names, int max);
/* Calls fn for every text symbol name (for globs over kernel functions).
 * Stops and returns fn's value when it is non-zero; else returns 0. */
int sym_kernel_foreach(const struct sym_kernel *k,
		       int (*fn)(void *ctx, const char *name, uint64_t addr), void *ctx);

/* ---- ELF files ---- */
struct sym_elf;

/* Reads ELF file PATH's function symbols (from .symtab, .dynsym, separate
 * debuginfo found by build-id or debuglink under debug_root (normally
 * "/usr/lib/debug"), and .gnu_debugdata) into a new index (no fd is kept:
 * sym_elf_free frees it). Returns 0 or -errno (-ENOEXEC for a file that is
 * not ELF). */
int sym_elf_load(const char *path, const char *debug_root, struct sym_elf **out);
void sym_elf_free(struct sym_elf *e);
/* Translates a file offset to the ELF virtual address through the PT_LOAD
 * segment containing it. Returns 0 or -ENOENT. */
int sym_elf_offset_to_vaddr(const struct sym_elf *e, uint64_t off, uint64_t *vaddr);
/* Returns the function containing ELF virtual address VADDR (NULL if none),
 * with *off the offset into it. */
const char *sym_elf_lookup(const struct sym_elf *e, uint64_t vaddr, uint64_t *off);
/* Calls fn for every function symbol (name, vaddr, size). Stops early on a
 * non-zero return and returns it. */
int sym_elf_foreach(const struct sym_elf *e,
		    int (*fn)(void *ctx, const char *name, uint64_t vaddr, uint64_t size),
		    void *ctx);
/* True when the file is a shared object or PIE (ET_DYN). */
bool sym_elf_is_dyn(const struct sym_elf *e);
/* The file's GNU build-id (*N bytes), or NULL (*N 0) when it has none. */
const uint8_t *sym_elf_build_id(const struct sym_elf *e, size_t *n);
/* True when it has symbols beyond .dynsym (a .symtab of its own, of a debug
 * file, of MiniDebugInfo): false is a stripped file debuginfod may name. */
bool sym_elf_named(const struct sym_elf *e);
/* Adds the .symtab of debug file DEBUG_PATH (one fetched by build-id).
 * Returns 0, -ENOENT when it has none, or -errno. */
int sym_elf_add_debug(struct sym_elf *e, const char *debug_path);
/* Writes DEBUG_ROOT/.build-id/xx/rest.debug for build-id ID (N bytes) into
 * BUF. Returns 0, -ENOENT for an id too short, -ENAMETOOLONG. */
int sym_build_id_path(const char *debug_root, const uint8_t *id, size_t n, char *buf, size_t len);

/* ---- demangling (demangle.c) ---- */

/* Returns NAME demangled (C++, Rust legacy: "ns::Class::method(int)",
 * a Rust name without its hash) in a string to free(), or NULL when NAME
 * is not a mangled name, or libstdc++ (loaded at the first) is missing. */
char *sym_demangle(const char *name);
/* Why libstdc++'s demangler could not be loaded, once a mangled name asked
 * for it; NULL when it was, or no name asked. */
const char *sym_demangle_load_error(void);

/* ---- JIT symbol maps (perfmap.c) ---- */
struct sym_perfmap;

/* Loads a perf map file (/tmp/perf-PID.map: "START SIZE name" lines, hex,
 * written by JIT compilers for profilers). Lines that are not entries are
 * skipped. Returns 0, -errno when the file cannot be read, or -ENOMEM. */
int sym_perfmap_load(const char *path, struct sym_perfmap **out);
void sym_perfmap_free(struct sym_perfmap *m);
/* Returns the name of the entry containing ADDR (NULL if none; of entries
 * starting at one address, the one written last), *off the offset into it. */
const char *sym_perfmap_lookup(const struct sym_perfmap *m, uint64_t addr, uint64_t *off);

/* ---- processes ---- */
struct sym_procs;
struct sym_debuginfod;

/* Creates an empty process history. proc_root is "/proc" (or a fixture
 * directory laid out like it). Returns 0 or -ENOMEM. */
int sym_procs_alloc(const char *proc_root, const char *debug_root, struct sym_procs **out);
void sym_procs_free(struct sym_procs *p);
/* Fetches debug files through D (borrowed; NULL: none) for the stripped
 * files sym_procs_lookup names, once each, at the first name asked. */
void sym_procs_set_debuginfod(struct sym_procs *p, struct sym_debuginfod *d);
/* Where perf maps are looked for (default "/tmp", as perf and bcc do). */
void sym_procs_set_perfmap_dir(struct sym_procs *p, const char *dir);
/* Records PID as it is now: its comm and its /proc/PID/maps (executable
 * mappings only), valid from TIME on. Returns 0, -ESRCH when it is gone. */
int sym_procs_snapshot(struct sym_procs *p, uint32_t pid, uint64_t time);
/* True when PID's history already starts at or before TIME (snapshot, fork
 * or exec seen), so no snapshot is needed. */
bool sym_procs_known(const struct sym_procs *p, uint32_t pid);
/* What a mapping says its file is: the device and inode (0: not told). */
struct sym_file_id {
	uint64_t dev, ino;
};
/* Side-band records, in any order across CPUs (each carries its time).
 * ID may be NULL. */
void sym_procs_mmap(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t start,
		    uint64_t len, uint64_t pgoff, bool exec, const char *filename,
		    const struct sym_file_id *id);
/* Task TID's comm from TIME on (a process's main thread: TID is the pid).
 * exec true for the COMM record an exec produces: a new address space. */
void sym_procs_comm(struct sym_procs *p, uint32_t tid, uint64_t time,
		    const char *comm, bool exec);
/* A new process PID forked by thread PTID of PPID at TIME inherits PPID's
 * mappings and PTID's comm. */
void sym_procs_fork(struct sym_procs *p, uint32_t pid, uint32_t ppid, uint32_t ptid,
		    uint64_t time);
/* Thread TID of process PID, created by thread PTID at TIME, starts with
 * PTID's comm. Nothing for TID == PID. */
void sym_procs_thread(struct sym_procs *p, uint32_t pid, uint32_t tid, uint32_t ptid,
		      uint64_t time);
/* Records thread TID of PID's comm as it is now (/proc/PID/task/TID/comm),
 * from TIME on. Returns 0, -ESRCH when it is gone (not tried again). */
int sym_procs_thread_snapshot(struct sym_procs *p, uint32_t pid, uint32_t tid, uint64_t time);
/* True when TID was seen as a thread (created, or its comm read). */
bool sym_procs_thread_known(const struct sym_procs *p, uint32_t tid);
/* Returns task TID's comm at TIME (a pid: the process's main thread's;
 * "[unknown]"-free: falls back to the newest, then NULL when nothing is
 * known). Owned by p. */
const char *sym_procs_comm_at(const struct sym_procs *p, uint32_t tid, uint64_t time);

struct sym_frame {
	const char *name;     /* function, or NULL when unknown (owned by p) */
	uint64_t offset;      /* into the function */
	const char *dso;      /* mapped file path, or NULL (owned by p) */
	uint64_t dso_offset;  /* file offset of the address in dso */
	const uint8_t *build_id; /* dso's build-id (NULL: none, or not ELF), owned by p */
	size_t build_id_len;
	uint64_t vaddr;       /* the address in dso's ELF addresses (valid with build_id) */
};
/* Names user address ADDR of PID as its address space was at TIME: from
 * the ELF file mapped there, else (JIT code: no ELF file read there) from
 * PID's perf map,
 * PERFMAP_DIR/perf-PID.map, read at the first such lookup and used when
 * owned by root, by this process's user or by PID's. Returns 0 (name may
 * still be NULL when nothing names it), -ENOENT when neither a mapping nor
 * the perf map covers ADDR. */
int sym_procs_lookup(struct sym_procs *p, uint32_t pid, uint64_t time,
		     uint64_t addr, struct sym_frame *out);
/* Whether PID has a perf map sym_procs_lookup may use (read now if it was
 * not yet, or again when its file changed size). */
bool sym_procs_has_perfmap(struct sym_procs *p, uint32_t pid);

/* Which layout PID's address space had at TIME: a serial no other layout
 * of any process had, new at an exec, a fork, a mapping over another's code
 * (a library unmapped, another mapped there), a record replacing what a
 * /proc snapshot said (layout.c). Per-address caches key by it. 0 for an
 * unknown pid. */
uint64_t sym_procs_image(const struct sym_procs *p, uint32_t pid, uint64_t time);
/* sym_procs_image, and into *MAPPINGS how many executable mappings PID's
 * address space at TIME has had recorded so far: it grows with each of its
 * MMAP2 records (a library loaded where nothing was), which the image does
 * not follow. A judgment made from what a process mapped then is checked
 * again when this has grown. */
uint64_t sym_procs_image_mappings(const struct sym_procs *p, uint32_t pid, uint64_t time,
				  size_t *mappings);

/* The ELF file mapped at user address ADDR of PID at TIME, and its load
 * bias (ADDR minus the ELF virtual address it holds). Returns 0 (*PATH owned
 * by p), -ENOENT when no readable ELF file is mapped there. */
int sym_procs_module(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
		     const char **path, uint64_t *bias);
/* As sym_procs_module, with *PATH where ftstack read the file: the path in
 * the process's mount namespace reached through /proc/PID/root when that is
 * not ftstack's own (to open it again), or /proc/self/fd/N for a file no
 * path reaches (unlinked, a memfd), held open; *INO (INO may be NULL) is
 * then its inode, else 0: once that file is forgotten, another may be held
 * at the same N, and a copy kept by the path alone would be the wrong one. */
int sym_procs_module_read_path(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
			       const char **path, uint64_t *bias, uint64_t *ino);
/* Whether user address ADDR of PID at TIME is in anonymous code: a mapping
 * of no file ("//anon", a named one), or of a memfd no ELF file is read
 * from (a JIT's double mapping) */
bool sym_procs_jit_at(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr);
/* Whether user address ADDR of PID at TIME is in an executable mapping
 * (a file's, or anonymous memory: JIT code, perf map regions). */
bool sym_procs_exec_at(const struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr);
/* The program PID ran at TIME: the file of its lowest executable mapping
 * (the kernel maps a program below its libraries and the loader). Returns
 * 0 (*PATH owned by p), -ENOENT when no file is mapped. */
int sym_procs_program(struct sym_procs *p, uint32_t pid, uint64_t time, const char **path);

/* ---- forgetting what exited (forget.c): the history bounded by what runs ---- */

/* Records of a task stamped up to this long after its EXIT record belong to
 * its death (do_task_dead's last switch, a tick in do_exit's tail), not to
 * a task that took its id afterwards. */
#define SYM_EXIT_GRACE_NS 1000000000ull

/* Task TID of process PID exited at TIME (a PERF_RECORD_EXIT). The main
 * thread's exit (TID == PID) ends the process; should a record or a sample
 * of it come later than the grace after, it went on without its main thread
 * and the exit of any other thread of it ends it again. An unknown PID is
 * noted as exited too: a late sample's snapshot then goes with it. */
void sym_procs_exit(struct sym_procs *p, uint32_t pid, uint32_t tid, uint64_t time);
/* Thread TID (followed with its comm, sym_procs_thread) exited at TIME. */
void sym_procs_thread_exit(struct sym_procs *p, uint32_t tid, uint64_t time);
/* A sample of PID at TIME: returns sym_procs_known(). A process marked
 * exited lives on when TIME is past the grace after its exit. */
bool sym_procs_sampled(struct sym_procs *p, uint32_t pid, uint64_t time);
/* How many tasks are marked exited and not yet forgotten. */
size_t sym_procs_exited(const struct sym_procs *p);
/* Forgets the tasks (processes and threads) whose exit is more than the
 * grace older than HORIZON, a time every ring has been read up to, unless
 * KEEP (when not NULL) returns true for their id: their comms, address
 * spaces and perf maps; then the ELF files no mapping left refers to.
 * Returns how many were forgotten (0 also when out of memory). */
size_t sym_procs_forget(struct sym_procs *p, uint64_t horizon,
			bool (*keep)(void *ctx, uint32_t id), void *ctx);

/* ---- DWARF unwinding of copied user stacks (unwind.c) ---- */

struct sym_unwinder;
/* An unwinder for the processes PROCS follows (borrowed, must outlive it).
 * Returns 0 or -ENOMEM. */
int sym_unwinder_alloc(struct sym_procs *procs, struct sym_unwinder **out);
void sym_unwinder_free(struct sym_unwinder *u);

/* The user stack of one sample, as copied by the kernel. */
struct sym_ustack {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t regs[17];    /* DWARF numbering (x86-64: rax..r15, then rip) */
	uint32_t regs_known;  /* bit i: regs[i] was taken (0: all were) */
	const uint8_t *stack; /* SIZE bytes from regs[7] (rsp) */
	uint64_t size;
};
/* Unwinds S with the DWARF call-frame information (.eh_frame, .debug_frame)
 * of the files mapped in S->pid at S->time: IPS[0] is the ip, then one
 * return address per frame, at most MAX. *CUT is set when the walk needed
 * stack beyond the copy. Returns the number of addresses (0 without MAX). */
uint32_t sym_unwind(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
		    uint32_t max, bool *cut);
/* sym_unwind learns each ip's CFA rule from its first full walk (when it is
 * one of the simple forms: CFA = rsp or rbp + N, the return address and rbp
 * at fixed offsets from it, or rbp unchanged) and later walks apply the
 * rules with loads from the copy, the same frames as the full walk; an ip
 * without a simple rule gives its sample a full walk. ON false: full walks
 * only (tests and benchmarks compare the two). On by default. */
void sym_unwinder_rules(struct sym_unwinder *u, bool on);
/* True when the last sym_unwind reached the outermost frame (the CFI says
 * it has no caller, as _start's does, or its return address is 0): the
 * stack is whole. False when it stopped short for any reason: the copy's
 * end (its *CUT), code without CFI, MAX frames. */
bool sym_unwind_ended(const struct sym_unwinder *u);
/* The first address of the last sym_unwind or sym_unwind_splice in code
 * in no file (anonymous memory: JIT code), or 0 when the walk met none:
 * the summary asks whether a perf map names it. */
uint64_t sym_unwind_anon(const struct sym_unwinder *u);
/* SPS (NULL: none) receives, from each later sym_unwind and
 * sym_unwind_splice, the rsp of each frame it returns: SPS[i] is frame i's
 * (SPS[0] the sampled rsp, SPS[i] for i > 0 frame i-1's CFA), 0 where not
 * known (a frame taken from a frame-pointer chain). Room for MAX of the
 * walk. Python's frames are found from them (python/). */
void sym_unwinder_sps(struct sym_unwinder *u, uint64_t *sps);
/* How many of sym_unwind's walks applied the rules alone (the sampled
 * frame by one CFI step from its registers, each return address above it
 * by its rule, learnt from probes there when new), and were full. */
void sym_unwinder_counts(const struct sym_unwinder *u, uint64_t *ruled, uint64_t *full);
/* How many frames sym_unwind_splice's walks stepped by a rule kept for
 * their ip (or learnt there), and by libunwind (or rbp, where there is no
 * CFI; sym_unwind's full walks too); AGAIN: the walks made again without
 * rules, stopped at a frame with CFI and no rule after steps by rules;
 * SHARED: the rules (sym_unwind's too) a process took from another's, of
 * the same file, instead of learning them. */
void sym_unwinder_steps(const struct sym_unwinder *u, uint64_t *by_rule, uint64_t *by_libunwind,
			uint64_t *again, uint64_t *shared);
/* How many rules those walks learnt (each return address's once per
 * process layout). */
uint64_t sym_unwinder_learnt(const struct sym_unwinder *u);
/* How many walks by the rules stepped the sampled frame with libunwind
 * (its ip had no rule yet: learnt at its second sight, unwind_leaf.c). */
uint64_t sym_unwinder_leaf_steps(const struct sym_unwinder *u);
/* The default's whole stacks: CHAIN (NCHAIN addresses: the ip, then the
 * return addresses a frame-pointer walk found, by the kernel or in the copy)
 * lacks the callers of the functions at the top of the stack that keep no
 * frame pointer (frameless leaves, libc's syscall wrappers, a function's
 * first instructions). Unwinds S with CFI until a return address is one of
 * CHAIN's first four, then goes on with CHAIN from there; where they never
 * meet, the CFI walk alone. The chain as it is (and *CUT) when the copy
 * ends before the CFI walk meets it and the chain is the longer; also when
 * the ip has no CFI, and
 * at an ip whose first CFI step once gave CHAIN[1] (its function keeps a
 * frame pointer there: remembered per process image, no CFI again).
 * Writes at most MAX addresses to IPS; *CUT when the CFI walk needed stack
 * beyond the copy. Returns the count. */
uint32_t sym_unwind_splice(struct sym_unwinder *u, const struct sym_ustack *s,
			   const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max,
			   bool *cut);
/* Whether the last sym_unwind_splice took a repair kept for its ip (no
 * walk): then its frames were a function of CHAIN, the process layout
 * *IMAGE (sym_procs_image's) and, when *RA_SLOT > 0, the copy's word at
 * stack slot *RA_SLOT - 1 alone. False after any other splice or walk. */
bool sym_unwind_spliced_by_rule(const struct sym_unwinder *u, uint64_t *image, uint32_t *ra_slot);
/* Whether the last sym_unwind_splice walked its copy by rules kept per ip
 * alone (no libunwind step, no rule learnt or tried, no repair kept, no
 * JIT code): then its frames were a function of CHAIN, the process layout
 * *IMAGE, the sampled rip, the copy's size (which also picks whether a
 * repair kept for the ip is taken), its words at the *N byte offsets from
 * rsp written to OFFS (room for MAX) and, when *RBP, the sampled rbp
 * alone, the rbp and the words LESS_SP[i] marks less rsp (a CFA taken from
 * rbp: the walk of a copy moved up or down the stack gives the same
 * frames). False after any other splice or walk, or when MAX is too few. */
bool sym_unwind_walked_by_rules(const struct sym_unwinder *u, uint64_t *image, uint32_t *offs,
				bool *less_sp, uint32_t max, uint32_t *n, bool *rbp);

/* ---- frame pointers (fp_elf.c) ---- */

/* The share, per mille, of the functions of ELF file PATH (those its
 * .eh_frame_hdr lists, at most 512 of them evenly spread) that set up a frame
 * pointer (push %rbp; mov %rsp,%rbp at their start): near 1000 for code
 * built with -fno-omit-frame-pointer, near 0 for Debian's binaries. Returns
 * it, -ENOENT without such a table, or -errno. */
int sym_elf_fp_share(const char *path);

/* ---- user probes (probes.c) ---- */

/* Translates ELF virtual address VADDR of file PATH to its file offset
 * (uprobes are placed by offset). Returns 0, -ENOENT (no PT_LOAD holds it)
 * or -errno. */
int sym_file_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *off);

/* One USDT probe from .note.stapsdt, addresses already as file offsets. */
struct sym_usdt {
	char provider[64];
	char name[128];
	char args[256];
	uint64_t offset;      /* file offset of the probe's nop */
	uint64_t sem_offset;  /* file offset of its semaphore, 0 = none */
};
/* Lists PATH's USDT probes. Returns the count (>= 0) and a malloc'd array
 * in *out (caller frees), or -errno (-ENOEXEC for a file that is not ELF). */
int sym_usdt_list(const char *path, struct sym_usdt **out);

/* ---- the name cache (symcache.c): address -> frame name, each distinct
 * address (a user one: of a pid and layout) resolved once; names live as
 * long as the cache ---- */
struct sym_cache;

/* How names are written: -s, -v, and user names demangled unless
 * --no-demangle; BUILD_IDS (--build-ids, --sink): a frame in a file with a
 * build-id but no symbol there also has its deferred text
 * (sym_deferred_format), which sym_cache_use_deferred hands out instead
 * of "[file]". */
struct sym_cache_style {
	bool offsets, addresses, demangle, build_ids;
};

/* Returns 0 and a cache naming kernel addresses through K and user addresses
 * through PROCS (either may be NULL: names are then "[unknown]"), or -ENOMEM. */
int sym_cache_alloc(const struct sym_kernel *k, struct sym_procs *procs,
		       const struct sym_cache_style *style, struct sym_cache **out);
void sym_cache_free(struct sym_cache *c);
/* Names kernel addresses through K from now on (the kernel's symbols are
 * loaded when first needed, after the cache was made). */
void sym_cache_set_kernel(struct sym_cache *c, const struct sym_kernel *k);
/* Returns the frame name of ADDR: a kernel address when PID is 0, else a user
 * address of PID at TIME (LEAF: the sampled instruction itself, not a return
 * address). Never NULL; owned by the cache. */
const char *sym_cache_name(struct sym_cache *c, uint32_t pid, uint64_t time, uint64_t addr,
			     bool leaf);
/* ON: sym_cache_name returns the deferred text of the frames that have
 * one (style.build_ids), else "[file]" (the default). The sink's rows take
 * the one, a run's output the other, from one cache. */
void sym_cache_use_deferred(struct sym_cache *c, bool on);
/* Forgets every name (a -i interval's end: the next names what it counts
 * afresh, so the cache holds no more than one interval's addresses).
 * Names handed out before are freed. */
void sym_cache_clear(struct sym_cache *c);
/* Returns how many distinct addresses were resolved. */
uint64_t sym_cache_resolved(const struct sym_cache *c);

/* ---- debuginfod (debuginfod.c): debug files fetched by build-id ---- */
struct sym_debuginfod;

/* Who fetches: under sudo the invoking user (DROP), with that user's
 * groups and environment (HOME: the cache is theirs). All borrowed. */
struct sym_debuginfod_user {
	bool drop;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	int ngroups;
	char **envp;
};
/* Told while a debug file downloads: DONE of TOTAL bytes (TOTAL <= 0:
 * unknown) of FILE's (the mapped file the fetch is for). */
typedef void (*sym_debuginfod_progress_fn)(void *ctx, const char *file, long done, long total);

struct sym_debuginfod_stats {
	unsigned fetched;  /* debug files found (downloaded or in the cache) */
	unsigned missing;  /* build-ids no server knew */
	unsigned failed;   /* fetches that failed otherwise (the first ends fetching) */
	int last_error;    /* -errno of the last failure */
	double seconds;    /* spent fetching */
};

/* DEBUGINFOD_URLS when it names a server, else NULL. */
const char *sym_debuginfod_urls(void);
/* Why libdebuginfod.so.1 could not be loaded, or NULL. */
const char *sym_debuginfod_load_error(void);
/* A client fetching as USER (NULL: as this process), telling FN (may be
 * NULL) of progress. Loads libdebuginfod.so.1 at the first call. Returns
 * 0, -ENOMEM, or -ENOENT when the library cannot be loaded
 * (sym_debuginfod_load_error says why). */
int sym_debuginfod_alloc(const struct sym_debuginfod_user *user, sym_debuginfod_progress_fn fn,
			 void *ctx, struct sym_debuginfod **out);
void sym_debuginfod_free(struct sym_debuginfod *d);
/* Fetches the debug file of build-id ID (N bytes) for mapped file FILE
 * into the client cache. Returns 0 with *PATH (to free) the cached file,
 * -ENOENT when no server has it, -ECANCELED once a fetch failed otherwise
 * (a server down or slow is waited for once), or the failure's -errno. */
int sym_debuginfod_fetch(struct sym_debuginfod *d, const uint8_t *id, size_t n, const char *file,
			 char **path);
/* What the fetches did so far (zeros for NULL). */
void sym_debuginfod_stats(const struct sym_debuginfod *d, struct sym_debuginfod_stats *out);

/* ---- deferred names (deferred.c): frames named where the debug files are ---- */

/* A deferred frame, "[FILE+0xVADDR@BUILDID]", parsed. */
struct sym_deferred {
	char file[256];    /* the mapped file's base name, for the reader */
	uint64_t vaddr;    /* the ELF address looked up (a return address's call) */
	uint8_t id[64];    /* the file's build-id */
	size_t id_len;
};
/* FILE's frame at ELF address VADDR, build-id ID (N bytes), as deferred
 * text in a string to free(); NULL without memory or a usable id. */
char *sym_deferred_format(const char *file, uint64_t vaddr, const uint8_t *id, size_t n);
/* Where FRAME's identity starts when it is a deferred frame ("+0x...@...]",
 * what a stack's fleet hash covers), else NULL. */
const char *sym_deferred_identity(const char *frame);
/* Parses deferred FRAME into *OUT. Returns 0, or -EINVAL when it is none. */
int sym_deferred_parse(const char *frame, struct sym_deferred *out);

struct sym_namer;
/* A namer of deferred frames through the debug files under DEBUG_ROOT (by
 * build-id), then through D (borrowed; NULL: local files only). Returns 0
 * or -ENOMEM. */
int sym_namer_alloc(const char *debug_root, struct sym_debuginfod *d, struct sym_namer **out);
void sym_namer_free(struct sym_namer *m);
/* The function deferred FRAME is in (demangled when DEMANGLE), owned by
 * the namer; NULL when FRAME is not deferred or nothing names it. Each
 * build-id's debug file is looked for once. */
const char *sym_namer_name(struct sym_namer *m, const char *frame, bool demangle);
/* How many deferred frames it named and left unnamed (zeros for NULL). */
void sym_namer_counts(const struct sym_namer *m, uint64_t *named, uint64_t *unnamed);

#endif
