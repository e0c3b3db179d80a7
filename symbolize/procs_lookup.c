/* What an address of a process was at a time: the mapping in effect then
 * (the generation's newest at or before it), the file and its load bias
 * (for the unwinder), the ELF symbol, or for JIT code the name in the
 * process's perf map (perf-PID.map, or the container's own through
 * /proc/PID/root, when its owner may name the process's frames). Apart
 * from the histories (procs_history.c) because it only reads them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

/* The mapping of ADDR at TIME: the newest added at or before TIME, else
 * (added after the sample's stamp, records race) the earliest. */
static const struct map *map_at(const struct gen *g, uint64_t time, uint64_t addr)
{
	const struct map *best = NULL, *late = NULL;
	for (size_t i = 0; g && i < g->n; i++) {
		const struct map *m = &g->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		if (m->time <= time && (!best || m->time >= best->time))
			best = m;
		if (m->time > time && (!late || m->time < late->time))
			late = m;
	}
	return best ? best : late;
}

/* PR's id in its own pid namespace (NSpid's last field) when that is
 * another one than ours (a container), else 0. Read once a process: each
 * frame without a symbol looks for a perf map (perfmap_refresh), and
 * reading the status file each time was 5,300 opens in one count of a
 * shell script's processes. */
static uint32_t nspid_of(const struct sym_procs *p, struct proc *pr)
{
	char path[320], line[256], *save = NULL;
	if (pr->nspid_read)
		return pr->nspid;
	pr->nspid_read = true;
	pr->nspid = 0;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/status", p->proc_root, pr->pid);
	FILE *f = fopen(path, "re");
	int n = 0;
	uint32_t last = 0;
	while (f && n == 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		for (char *tok = strtok_r(line + 6, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save), n++)
			last = (uint32_t)strtoul(tok, NULL, 10);
	}
	if (f)
		fclose(f);
	if (n > 1)
		pr->nspid = last;
	return pr->nspid;
}

/* Whether the file of ST at PATH may name PR's frames: its owner is root,
 * this process's user or PR's (while /proc still shows it); a map anyone
 * could write would let them rename another user's frames. */
static bool owner_ok(const struct sym_procs *p, const struct proc *pr, const struct stat *st)
{
	struct stat proc_st;
	char proc_path[320];
	snprintf(proc_path, sizeof(proc_path), "%s/%" PRIu32, p->proc_root, pr->pid);
	return st->st_uid == 0 || st->st_uid == geteuid() ||
	       (stat(proc_path, &proc_st) == 0 && proc_st.st_uid == st->st_uid);
}

/* Where PR's perf map is, as perf looks for them: perf-PID.map in the perf
 * map directory, else, for a process in a container, its own
 * /tmp/perf-NSPID.map through /proc/PID/root (only while it runs); one
 * whose owner may name PR's frames. Returns 0 with PATH and *ST, or -ENOENT. */
static int perfmap_path(const struct sym_procs *p, struct proc *pr, char *path,
			size_t len, struct stat *st)
{
	snprintf(path, len, "%s/perf-%" PRIu32 ".map", p->perfmap_dir, pr->pid);
	if (stat(path, st) == 0 && owner_ok(p, pr, st))
		return 0;
	uint32_t nspid = nspid_of(p, pr);
	if (!nspid)
		return -ENOENT;
	snprintf(path, len, "%s/%" PRIu32 "/root/tmp/perf-%" PRIu32 ".map", p->proc_root, pr->pid,
		 nspid);
	return stat(path, st) == 0 && owner_ok(p, pr, st) ? 0 : -ENOENT;
}

/* Reads PR's perf map from PATH, the file of ST, and keeps its size then. */
static void perfmap_load(struct proc *pr, const char *path, const struct stat *st)
{
	if (sym_perfmap_load(path, &pr->perfmap) < 0)
		pr->perfmap = NULL;
	pr->perfmap_size = pr->perfmap ? (int64_t)st->st_size : -1;
}

/* PR's perf map, read once (perfmap_path). */
static const struct sym_perfmap *perfmap_of(const struct sym_procs *p, struct proc *pr)
{
	char path[400];
	struct stat st;
	if (pr->perfmap_tried)
		return pr->perfmap;
	pr->perfmap_tried = true;
	pr->perfmap_size = -1;
	if (perfmap_path(p, pr, path, sizeof(path), &st) == 0)
		perfmap_load(pr, path, &st);
	return pr->perfmap;
}

/* A runtime appends to its map as it compiles (or writes it as it exits):
 * a map read during the run (an address named early) misses code compiled
 * since, which perf, reading it after the run, names. On a miss, PR's map
 * is read again when its file has appeared or changed size; the old one is
 * kept, for the names handed out from it. */
static void perfmap_refresh(const struct sym_procs *p, struct proc *pr)
{
	char path[400];
	struct stat st;
	if (!pr->perfmap_tried || perfmap_path(p, pr, path, sizeof(path), &st) < 0 ||
	    (int64_t)st.st_size == pr->perfmap_size ||
	    (pr->perfmap &&
	     MEM_GROW(pr->perfmap_old, pr->capperfmap_old, pr->nperfmap_old + 1, 4) < 0))
		return;
	if (pr->perfmap)
		pr->perfmap_old[pr->nperfmap_old++] = pr->perfmap;
	pr->perfmap = NULL;
	perfmap_load(pr, path, &st); /* where perfmap_path just found it */
}

bool sym_procs_has_perfmap(struct sym_procs *p, uint32_t pid)
{
	struct proc *pr = sym_proc_find(p, pid);
	if (!pr)
		return false;
	perfmap_of(p, pr);
	perfmap_refresh(p, pr);
	return pr->perfmap != NULL;
}

uint64_t sym_procs_image(const struct sym_procs *p, uint32_t pid, uint64_t time)
{
	return sym_layout_at(sym_proc_find(p, pid), time);
}

uint64_t sym_procs_image_mappings(const struct sym_procs *p, uint32_t pid, uint64_t time,
				  size_t *mappings)
{
	const struct proc *pr = sym_proc_find(p, pid);
	const struct gen *g = sym_gen_at(pr, time);
	*mappings = g ? g->n : 0;
	return sym_layout_at(pr, time);
}

/* The readable file mapped at ADDR of PID at TIME and its load bias. */
static const struct file *module_at(struct sym_procs *p, uint32_t pid, uint64_t time,
				    uint64_t addr, uint64_t *bias)
{
	const struct map *m = map_at(sym_gen_at(sym_proc_find(p, pid), time), time, addr);
	uint64_t vaddr;
	if (!m)
		return NULL;
	struct file *f = &p->files[m->file];
	struct sym_elf *e = sym_file_elf(p, f);
	if (!e || sym_elf_offset_to_vaddr(e, addr - m->start + m->pgoff, &vaddr) < 0)
		return NULL;
	*bias = addr - vaddr;
	return f;
}

int sym_procs_module(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
		     const char **path, uint64_t *bias)
{
	const struct file *f = module_at(p, pid, time, addr, bias);
	if (!f)
		return -ENOENT;
	*path = f->path;
	return 0;
}

int sym_procs_module_read_path(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
			       const char **path, uint64_t *bias, uint64_t *ino)
{
	const struct file *f = module_at(p, pid, time, addr, bias);
	if (!f)
		return -ENOENT;
	*path = f->read_path;
	if (ino)
		*ino = f->held >= 0 ? f->ino : 0;
	return 0;
}

bool sym_procs_jit_at(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr)
{
	const struct map *m = map_at(sym_gen_at(sym_proc_find(p, pid), time), time, addr);
	if (!m)
		return false; /* not mapped: the sample's ip of a program exec replaced */
	return sym_file_is_code_only(p, &p->files[m->file]);
}

bool sym_procs_exec_at(const struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr)
{
	return map_at(sym_gen_at(sym_proc_find(p, pid), time), time, addr) != NULL;
}

int sym_procs_program(struct sym_procs *p, uint32_t pid, uint64_t time, const char **path)
{
	const struct gen *g = sym_gen_at(sym_proc_find(p, pid), time);
	const struct map *low = NULL;
	for (size_t i = 0; g && i < g->n; i++) {
		const struct map *m = &g->maps[i];
		const char *fp = p->files[m->file].path;
		if (fp[0] == '/' && fp[1] != '/' && (!low || m->start < low->start))
			low = m;
	}
	if (!low)
		return -ENOENT;
	*path = p->files[low->file].path;
	return 0;
}

int sym_procs_lookup(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
		     struct sym_frame *out)
{
	struct proc *pr = sym_proc_find(p, pid);
	const struct map *m = map_at(sym_gen_at(pr, time), time, addr);
	uint64_t vaddr;
	bool in_elf = false;
	memset(out, 0, sizeof(*out));
	if (m) {
		struct file *f = &p->files[m->file];
		out->dso = f->path;
		out->dso_offset = addr - m->start + m->pgoff;
		struct sym_elf *e = sym_file_named(p, f);
		if (e && sym_elf_offset_to_vaddr(e, out->dso_offset, &vaddr) == 0) {
			in_elf = true;
			out->name = sym_elf_lookup(e, vaddr, &out->offset);
			out->build_id = sym_elf_build_id(e, &out->build_id_len);
			out->vaddr = vaddr;
		}
	}
	/* JIT code (anonymous memory, a memfd: no ELF file read there) may be
	 * named by the perf map, as perf names only such mappings from it. An
	 * address of a stripped ELF file is not: each of Debian's bash
	 * processes, unnamed but by .dynsym, asked the map's path again at
	 * every such frame (3,957 stat calls in bench/count_nofp's shim) */
	const char *jit = !in_elf && pr ? sym_perfmap_lookup(perfmap_of(p, pr), addr,
							     &out->offset) : NULL;
	if (!in_elf && pr && !jit) {
		perfmap_refresh(p, pr);
		jit = sym_perfmap_lookup(pr->perfmap, addr, &out->offset);
	}
	if (jit)
		out->name = jit;
	return m || jit ? 0 : -ENOENT;
}
