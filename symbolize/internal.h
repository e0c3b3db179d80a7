/* Shared inside symbolize/. */
#ifndef FTSTACK_SYMBOLIZE_INTERNAL_H
#define FTSTACK_SYMBOLIZE_INTERNAL_H

/* The bytes from a file's entry point within which its first call is made
 * (_start's call of __libc_start_main, ~37 bytes in; ld.so's of _dl_start,
 * ~43): the unwinder takes a frame there as the outermost, and a file with
 * no symbol there (a stripped program; Debian's ld.so) has them named
 * _start, so a stack the unwinder calls whole has a named root. */
#define SYM_ENTRY_SPAN 64

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "aggregate/aggregate.h"
#include "symbolize/symbolize.h"

/* Opens PATH as an ELF file for reading (libelf initialised). Returns 0 with
 * *fd and *elf to release with elf_end() and close(), or -errno (-ENOEXEC:
 * not ELF). */
int sym_open_elf(const char *path, int *fd, Elf **elf);

/* ftstack's own vDSO image (vdso.c), the one the kernel maps as "[vdso]"
 * into every 64-bit process: 0 and its bytes (*IMG, *LEN, mapped for
 * ftstack's life), or -ENOENT (no auxiliary vector entry or mapping). */
int sym_vdso_image(const uint8_t **img, size_t *len);
/* True when a mapping's PATH is the vDSO's ("[vdso]"). */
bool sym_vdso_is(const char *path);
/* The value of ELF's .dynsym symbol NAME: 0 and *VALUE, or -ENOENT. */
int sym_elf_dynsym(Elf *e, const char *name, uint64_t *value);
/* sym_elf_load of the ELF image of LEN bytes at IMG (the vDSO): its
 * symbols, segments and build-id; no debuginfo is looked for. */
int sym_elf_load_image(const uint8_t *img, size_t len, struct sym_elf **out);

/* The sorted table of a .eh_frame_hdr section (LEN bytes at H, as
 * PT_GNU_EH_FRAME maps it), read by the unwinder (unwind_files.c) and the
 * frame-pointer verdict (fp_elf.c): pairs of 4-byte offsets from the
 * header (function start, its FDE) at H + SYM_EH_TABLE_OFF. Only the
 * encodings every linker writes are read. Returns the number of pairs
 * (> 0), or -ENOENT: another version or encoding, no pair, or a table
 * longer than LEN. */
#define SYM_EH_TABLE_OFF 12
long sym_eh_frame_hdr_count(const uint8_t *h, size_t len);

/* For an array BASE of N entries of SIZE bytes, each starting with a
 * uint64_t address and sorted by it: returns how many have an address at
 * or below KEY (the entry containing KEY, if any, is the one before). */
static inline size_t sym_addr_upper_bound(const void *base, size_t n, size_t size, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (*(const uint64_t *)(const void *)((const char *)base + mid * size) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- a cache bounded by count and bytes, least recently used out (lru.c) ---- */

/* One slot of a cache: USED the time of its last use (0: the slot is
 * empty), BYTES what it holds, PINNED when it may not go now. */
struct sym_lru_entry {
	uint64_t used, bytes;
	bool pinned;
};

struct sym_lru_bound {
	size_t max_entries;
	uint64_t max_bytes;
};

/* Which of the N slots E to empty before an entry of ADD bytes is added
 * within bound B: the least recently used slot not pinned, or -1 when the
 * new entry fits (or nothing can go: then it is let in over the bound, as
 * is a single entry larger than max_bytes). Called until it returns -1. */
long sym_lru_victim(const struct sym_lru_entry *e, size_t n, const struct sym_lru_bound *b,
		    uint64_t add);

/* ---- the process history (procs.c, procs_history.c, procs_files.c,
 * procs_lookup.c, forget.c) ---- */

struct map {
	uint64_t start, end, pgoff, time;
	uint32_t file; /* index into files */
	bool snapshot; /* read from /proc, not from an MMAP2 record */
};

/* snapshot: read from /proc when a record of the process was decoded, so
 * stamped with that record's time although read later; the process's own
 * fork, exec and mmap records, when they come, are the truth (rings are
 * decoded one after another, so a child's first samples can be decoded
 * before its fork record, when it may be a zombie with no maps left). */
struct gen {
	uint64_t time;
	struct map *maps;
	size_t n, cap;
	bool snapshot;
};

/* A layout of a process's address space from TIME on (layout.c) */
struct layout {
	uint64_t time, serial;
};

struct comm {
	uint64_t time;
	char name[16];
	bool snapshot;
};

struct proc {
	uint32_t pid;
	bool based;  /* snapshot, fork or exec seen: its mappings are complete */
	bool thread_seen; /* as a thread: created, or its comm read from /proc */
	bool perfmap_tried;
	bool mntns_read;  /* its /proc/PID/ns/mnt read (or found gone) since its last exec */
	bool nspid_read;  /* NSPID read from /proc/PID/status (or found gone) since its fork */
	bool exited;      /* its EXIT record seen, at exit_time (forget.c) */
	bool leader_gone; /* a process whose main thread exited: its last thread's exit ends it */
	uint64_t exit_time;
	uint64_t mntns; /* its mount namespace (the inode of ns/mnt); 0: ftstack's own */
	uint32_t nspid; /* its id in its own pid namespace; 0: that is ftstack's */
	struct sym_perfmap *perfmap; /* JIT code's names, read at the first need */
	int64_t perfmap_size;        /* its file's size then: larger now, it is read again */
	struct sym_perfmap **perfmap_old; /* maps read before, kept: names point into them */
	size_t nperfmap_old, capperfmap_old;
	struct gen *gens; /* by time */
	size_t n, cap;
	struct comm *comms; /* by time */
	size_t ncomm, capcomm;
	struct layout *layouts; /* by time */
	size_t nlayout, caplayout;
};

/* A mapped file: its path in a mount namespace (two namespaces may hold
 * different files at one path), read through /proc/PID/root of a process
 * in it when that is not ftstack's own, as perf does (its nsinfo). */
struct file {
	char *path;        /* as the process saw it */
	char *read_path;   /* where ftstack read it (PATH, /proc/PID/root/PATH); NULL: not read */
	uint64_t mntns;    /* as struct proc's */
	uint64_t dev, ino; /* what the first mapping said it was (0: not told) */
	uint32_t pid;      /* the first process of MNTNS that mapped it */
	uint64_t map_start, map_end; /* where PID mapped it first (0, 0: not told) */
	int held;          /* a file no path reaches, held open (read_path
			    * /proc/self/fd/HELD); -1: none */
	struct sym_elf *elf; /* NULL: not (yet) readable as ELF */
	bool tried;
	bool fetched; /* debuginfod asked (procs_files.c's sym_file_named) */
};

struct sym_procs {
	char proc_root[256];
	char debug_root[256];
	char perfmap_dir[256];
	uint64_t self_mntns; /* ftstack's mount namespace (0: unknown) */
	bool self_mntns_read;
	struct sym_debuginfod *debuginfod; /* borrowed, may be NULL */
	struct proc *procs; /* in no order; found by pid through pids */
	size_t cap, n;
	struct agg_index pids; /* pid -> index into procs + 1 */
	size_t *hint;       /* the index sym_proc_find found last (checked before use) */
	struct file *files;
	size_t nfiles, capfiles;
	struct agg_index fidx; /* path -> index into files + 1 */
	size_t nexited;  /* entries marked exited, not yet forgotten */
	uint64_t serial; /* the last layout's serial */
};

/* procs.c's table, for forget.c. The entry of PID, or NULL. */
struct proc *sym_proc_find(const struct sym_procs *p, uint32_t pid);
/* Finds or adds PID (NULL: out of memory). Pointers from before are stale. */
struct proc *sym_proc_get(struct sym_procs *p, uint32_t pid);
/* Frees what entry PR holds (it stays in the table: the caller drops it). */
void sym_proc_release(struct proc *pr);
/* Releases and drops the entries DROP says to (KEPT: how many it keeps),
 * packs the rest and indexes them anew; the array shrinks after many
 * exits. Pointers from before are stale. Returns 0 or -ENOMEM (then
 * nothing changed). */
int sym_procs_compact(struct sym_procs *p, size_t kept,
		      bool (*drop)(struct sym_procs *p, const struct proc *pr, void *ctx), void *ctx);
/* Indexes the files anew by path, after some were dropped and the rest
 * renumbered. Returns 0; never fails when fewer files than before. */
int sym_files_reindex(struct sym_procs *p);
/* procs_files.c: PR's mount namespace, read from /proc/PID/ns/mnt at the
 * first call since its exec (kept when the process is gone: a forked one
 * has its parent's). Returns 0 for ftstack's own, else the namespace. */
uint64_t sym_proc_mntns(struct sym_procs *p, struct proc *pr);
/* procs_files.c: the index of the entry for the file PR maps at PATH from
 * START to END, one per path and mount namespace (and inode, for a file no
 * path reaches: unlinked, or a memfd), added when new (ID: what the mapping
 * says the file is, may be NULL); -ENOMEM. */
long sym_file_index(struct sym_procs *p, struct proc *pr, const char *path,
		    const struct sym_file_id *id, uint64_t start, uint64_t end);
/* procs_files.c: frees what F holds. */
void sym_file_release(struct file *f);
/* procs_files.c: F's ELF file, opened at the first call (NULL: not
 * readable as ELF, tried once): by its path in ftstack's namespace, else
 * through /proc/PID/root, else by its path again when the device and inode
 * there are the mapping's (never another file at the same path); a file no
 * path reaches through its mapping, /proc/PID/map_files/START-END. */
struct sym_elf *sym_file_elf(struct sym_procs *p, struct file *f);
/* procs_files.c: whether F is anonymous code, no file's: a mapping of no
 * file ("//anon", a named one), or a memfd no ELF file is read from (a
 * JIT's double mapping) */
bool sym_file_is_code_only(struct sym_procs *p, struct file *f);
/* procs_files.c: F's ELF file as sym_file_elf opens it, with the symbols
 * of its debug file from debuginfod added at the first call when it has
 * none beyond .dynsym (naming only: never on the sampling path). */
struct sym_elf *sym_file_named(struct sym_procs *p, struct file *f);
/* procs_history.c: PR's generation in effect at TIME (the earliest when
 * TIME precedes all: a snapshot is taken a little after the first
 * samples); NULL for no entry or none. */
struct gen *sym_gen_at(const struct proc *pr, uint64_t time);
/* A record (not a sample) of task ID at TIME, after its EXIT record: the
 * id was taken by a new task (forget.c). */
void sym_proc_revive(struct sym_procs *p, struct proc *pr, uint64_t time);

/* ---- layouts (layout.c): what sym_procs_image returns ---- */

/* A new layout of PR from TIME on: a generation begins, or a mapping
 * replaced another's code (without memory, the layout in effect at TIME is
 * renumbered instead). */
void sym_layout_add(struct sym_procs *p, struct proc *pr, uint64_t time);
/* New serials for PR's layouts from TIME on (what snapshots said from then
 * on was dropped: the addresses may hold other code than they said). */
void sym_layout_renew_from(struct sym_procs *p, struct proc *pr, uint64_t time);
/* Whether mapping M, added to G, overlaps one of G's with other code there
 * (another file, or the same at another offset). */
bool sym_layout_replaces(const struct gen *g, const struct map *m);
/* The serial of PR's layout at TIME (the first before all), 0 for none. */
uint64_t sym_layout_at(const struct proc *pr, uint64_t time);

#endif
