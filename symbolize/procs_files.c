/* The files processes map, one entry per path and mount namespace, which
 * mappings refer to by index: the hash index (aggregate/index.c) finds an
 * entry, and its ELF file is opened at the first lookup and kept, a failure
 * too ("[vdso]", "//anon", a deleted file). A process in another mount
 * namespace (a container, or the host seen from one) has its files read
 * through /proc/PID/root, as perf does. Apart from the histories
 * (procs_history.c) because files are shared by every process and
 * forgotten on their own (forget.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "aggregate/aggregate.h"
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

/* The inode of the mount namespace at PROC_ROOT/WHO/ns/mnt, 0 if unreadable. */
static uint64_t mntns_at(const char *proc_root, const char *who)
{
	char path[320];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s/ns/mnt", proc_root, who);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

uint64_t sym_proc_mntns(struct sym_procs *p, struct proc *pr)
{
	char pid[16];
	if (!p->self_mntns_read) {
		p->self_mntns_read = true;
		p->self_mntns = mntns_at(p->proc_root, "self");
	}
	if (!pr->mntns_read) {
		pr->mntns_read = true;
		snprintf(pid, sizeof(pid), "%" PRIu32, pr->pid);
		uint64_t ns = mntns_at(p->proc_root, pid);
		if (ns) /* gone: a forked process keeps its parent's */
			pr->mntns = ns == p->self_mntns || !p->self_mntns ? 0 : ns;
	}
	return pr->mntns;
}

static uint64_t file_hash(const char *path, uint64_t mntns)
{
	return agg_hash_str(path) ^ (mntns * 0x9e3779b97f4a7c15ull);
}

int sym_files_reindex(struct sym_procs *p)
{
	int ret = agg_index_reset(&p->fidx, (uint32_t)p->nfiles);
	for (size_t i = 0; ret == 0 && i < p->nfiles; i++)
		agg_index_add(&p->fidx, file_hash(p->files[i].path, p->files[i].mntns),
			      (uint32_t)i + 1);
	return ret;
}

static bool memfd(const char *path)
{
	return strncmp(path, "/memfd:", 7) == 0;
}

/* Whether PATH names a file no path reaches: a memfd's, or one unlinked
 * by the time the kernel named it (it then adds " (deleted)"), as a
 * program replaced under a running service, or the program of a process
 * run from a memfd, is */
static bool unreachable(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path), d = sizeof(deleted) - 1;
	return memfd(path) || (n > d && strcmp(path + n - d, deleted) == 0);
}

/* Whether entry F is the file at PATH with ID: its path names one file at
 * a time, unless no path reaches it (two versions of a program replaced
 * under two services both end in " (deleted)") */
static bool same_entry(const struct file *f, const char *path, const struct sym_file_id *id)
{
	return strcmp(f->path, path) == 0 &&
	       (!unreachable(path) || !id || !f->ino || (f->ino == id->ino && f->dev == id->dev));
}

long sym_file_index(struct sym_procs *p, struct proc *pr, const char *path,
		    const struct sym_file_id *id, uint64_t start, uint64_t end)
{
	struct agg_probe probe;
	uint64_t ns = sym_proc_mntns(p, pr);
	uint64_t h = file_hash(path, ns);
	if (agg_index_reserve(&p->fidx) < 0)
		return -ENOMEM;
	for (uint32_t it = agg_index_first(&p->fidx, h, &probe); it;
	     it = agg_index_next(&p->fidx, &probe))
		if (p->files[it - 1].mntns == ns && same_entry(&p->files[it - 1], path, id))
			return it - 1;
	char *copy = strdup(path);
	if (!copy || p->nfiles >= UINT32_MAX - 1 ||
	    MEM_GROW(p->files, p->capfiles, p->nfiles + 1, 64) < 0) {
		free(copy);
		return -ENOMEM;
	}
	p->files[p->nfiles] = (struct file){ .path = copy, .mntns = ns, .pid = pr->pid,
					     .dev = id ? id->dev : 0, .ino = id ? id->ino : 0,
					     .map_start = start, .map_end = end, .held = -1 };
	agg_index_put(&p->fidx, &probe, (uint32_t)p->nfiles + 1);
	return (long)p->nfiles++;
}

void sym_file_release(struct file *f)
{
	if (f->held >= 0)
		close(f->held);
	free(f->path);
	free(f->read_path);
	sym_elf_free(f->elf);
}

/* Whether the file at PATH in ftstack's namespace is the one F's mapping
 * named (its device and inode): a process gone, its files are read by
 * their path only when that holds. */
static bool same_file(const struct file *f, const char *path)
{
	struct stat st;
	return f->ino && stat(path, &st) == 0 && (uint64_t)st.st_dev == f->dev &&
	       (uint64_t)st.st_ino == f->ino;
}

/* Loads F's ELF file from PATH, which is where it was read; 0 or -errno. */
static int load_from(struct sym_procs *p, struct file *f, const char *path)
{
	char *copy = strdup(path);
	int ret = copy ? sym_elf_load(path, p->debug_root, &f->elf) : -ENOMEM;
	if (ret < 0) {
		f->elf = NULL;
		free(copy);
		return ret;
	}
	f->read_path = copy;
	return 0;
}

/* Loads F, a file no path reaches, while its first process lives: through
 * the mapping that process made of it, /proc/PID/map_files/START-END (the
 * kernel asks for CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), else, when it
 * is the program, /proc/PID/exe (the process's own user may). It is held
 * open and read again through /proc/self/fd/N (the unwinder maps it) after
 * the process is gone. Either may lead to another file by now (a range
 * mapped again, an exec): only the mapping's own inode is taken. 0 or
 * -errno. */
static int load_unreachable(struct sym_procs *p, struct file *f)
{
	char path[352];
	struct stat st;
	if (!f->map_end)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, p->proc_root,
		 f->pid, f->map_start, f->map_end);
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -errno;
	if (fd < 0 && f->ino) {
		snprintf(path, sizeof(path), "%s/%" PRIu32 "/exe", p->proc_root, f->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC), ret = -errno;
	}
	if (fd < 0)
		return ret;
	if (fstat(fd, &st) < 0 ||
	    (f->ino && ((uint64_t)st.st_ino != f->ino || (uint64_t)st.st_dev != f->dev))) {
		close(fd);
		return -ESTALE;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((ret = load_from(p, f, path)) < 0) {
		close(fd);
		return ret;
	}
	f->held = fd;
	if (!f->ino) /* told by neither record nor maps: the unwinder's check */
		f->dev = (uint64_t)st.st_dev, f->ino = (uint64_t)st.st_ino;
	return 0;
}

/* F, the vDSO: its ELF from ftstack's own image (vdso.c), read_path its
 * name, by which the unwinder finds that image too. */
static void load_vdso(struct file *f)
{
	const uint8_t *img;
	size_t len;
	if (sym_vdso_image(&img, &len) < 0 || sym_elf_load_image(img, len, &f->elf) < 0) {
		f->elf = NULL;
	} else if (!(f->read_path = strdup(f->path))) {
		sym_elf_free(f->elf);
		f->elf = NULL;
	}
}

struct sym_elf *sym_file_elf(struct sym_procs *p, struct file *f)
{
	char inside[4352];
	if (f->tried)
		return f->elf;
	f->tried = true;
	if (sym_vdso_is(f->path)) {
		load_vdso(f);
		return f->elf;
	}
	if (unreachable(f->path)) {
		load_unreachable(p, f);
		return f->elf;
	}
	if (f->path[0] != '/') /* "[anon:x]", "[heap]": no file */
		return NULL;
	if (!f->mntns) {
		load_from(p, f, f->path);
		return f->elf;
	}
	int n = snprintf(inside, sizeof(inside), "%s/%" PRIu32 "/root%s", p->proc_root, f->pid,
			 f->path);
	if ((n < 0 || (size_t)n >= sizeof(inside) || load_from(p, f, inside) < 0) &&
	    same_file(f, f->path))
		load_from(p, f, f->path);
	return f->elf;
}

bool sym_file_is_code_only(struct sym_procs *p, struct file *f)
{
	if (memfd(f->path))
		return !sym_file_elf(p, f);
	return strcmp(f->path, "//anon") == 0 || strncmp(f->path, "[anon:", 6) == 0;
}

void sym_procs_set_debuginfod(struct sym_procs *p, struct sym_debuginfod *d)
{
	p->debuginfod = d;
}

struct sym_elf *sym_file_named(struct sym_procs *p, struct file *f)
{
	struct sym_elf *e = sym_file_elf(p, f);
	size_t n;
	const uint8_t *id = sym_elf_build_id(e, &n);
	char *debug = NULL;
	if (!e || f->fetched || !p->debuginfod || sym_elf_named(e) || !id)
		return e;
	f->fetched = true;
	const char *base = strrchr(f->path, '/');
	if (sym_debuginfod_fetch(p->debuginfod, id, n, base ? base + 1 : f->path, &debug) == 0)
		sym_elf_add_debug(e, debug); /* a file without a .symtab: names stay as they were */
	free(debug);
	return e;
}
