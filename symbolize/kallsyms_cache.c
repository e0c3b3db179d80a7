/* The kernel's symbols saved between runs. Reading /proc/kallsyms costs
 * the kernel ~35 ms of formatting on every run (most of a short run's
 * CPU: doc/PERFORMANCE.md), for a list that changes only when the kernel
 * boots or a module comes or goes. The table is saved once, with what
 * identifies those (the stamp), and read back while the stamp is the same:
 * this boot (its id), this kernel (the build-id in its notes), the first
 * lines of /proc/kallsyms as this reader sees them now (the addresses it
 * may see, KASLR's offset), and each module: its name, size, state,
 * address and build-id (a module without one is never saved: a rebuilt
 * one could come back at the same address and size).
 *
 * The symbols the kernel makes and drops as it runs (BPF programs,
 * trampolines, probes' instruction pages: the pseudo-modules "bpf" and
 * "__builtin__*", not in /proc/modules) are left out of the copy, and so
 * are a module's symbols outside its core (/proc/modules' address and
 * size): its init code, freed, whose addresses other code may take. An
 * address not between two symbols of vmlinux or of one module is named
 * from /proc/kallsyms, read then (kallsyms.c: containing). The file is the euid's, in a directory
 * of its own that nobody else may write; anything else is not read. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mem/mem.h"
#include "symbolize/kallsyms_int.h"

#define SAVED_MAGIC "FTKSYMS3"
#define HEAD_BYTES 4096 /* /proc/kallsyms' first ~100 lines: cheap to format */

struct saved_head {
	char magic[8];
	uint32_t ksym_size, stamp_len;
	uint64_t n, names_len;
};

struct bytes {
	char *p;
	size_t n, cap;
};

static int put(struct bytes *b, const void *p, size_t n)
{
	if (MEM_GROW(b->p, b->cap, b->n + n, 4096) < 0)
		return -ENOMEM;
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

/* Appends a label and up to MAX bytes of file PATH, with their count.
 * Returns 0, or -errno when it cannot be read. */
static int put_file(struct bytes *b, const char *label, const char *path, size_t max)
{
	char buf[HEAD_BYTES];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	ssize_t got = 1;
	while (n < max && n < sizeof(buf) && (got = read(fd, buf + n, sizeof(buf) - n)) > 0)
		n += (size_t)got;
	int ret = got < 0 ? -errno : 0;
	close(fd);
	if (n > max)
		n = max;
	uint64_t len = n;
	if (ret == 0)
		ret = put(b, label, strlen(label) + 1);
	if (ret == 0)
		ret = put(b, &len, sizeof(len));
	return ret ? ret : put(b, buf, n);
}

/* Where a module's core is: its symbols outside it are those of init
 * code the kernel has freed (ftrace keeps their names). */
struct module_span {
	char name[64];
	uint64_t base, size;
};

struct modules {
	struct module_span *m;
	size_t n, cap;
};

static int add_span(struct modules *ms, const char *name, const char *size, const char *addr)
{
	if (MEM_GROW(ms->m, ms->cap, ms->n + 1, 64) < 0)
		return -ENOMEM;
	struct module_span *m = &ms->m[ms->n++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->size = strtoull(size, NULL, 10);
	m->base = strtoull(addr, NULL, 16);
	return 0;
}

/* Each module's "name size state address" and build-id note (none when
 * the kernel has no modules), and where each is in MS. */
static int put_modules(struct bytes *b, const char *root, struct modules *ms)
{
	char path[512], line[1024];
	snprintf(path, sizeof(path), "%s/proc/modules", root);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? put(b, "no modules", 11) : -errno;
	int ret = 0;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		char name[256], size[32], state[32], addr[32], row[400];
		/* name size refcount users state address */
		if (sscanf(line, "%255s %31s %*s %*s %31s %31s", name, size, state, addr) != 4) {
			ret = -EINVAL;
			break;
		}
		int n = snprintf(row, sizeof(row), "%s %s %s %s", name, size, state, addr);
		ret = put(b, row, (size_t)n + 1);
		if (ret == 0)
			ret = add_span(ms, name, size, addr);
		snprintf(path, sizeof(path), "%s/sys/module/%s/notes/.note.gnu.build-id", root, name);
		if (ret == 0)
			ret = put_file(b, "build-id", path, 256);
	}
	fclose(f);
	return ret;
}

/* Whether a line of the N bytes at P (kallsyms' first lines) shows an
 * address that is not zero (the first may be a per-CPU symbol's, 0). */
static bool any_address(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == ' ') { /* the rest of the line: its type and name */
			while (i + 1 < n && p[i + 1] != '\n')
				i++;
		} else if (p[i] != '0' && p[i] != '\n') {
			return true; /* a digit of an address that is not 0 */
		}
	}
	return false;
}

/* The stamp of the table KALLSYMS would give now (see the top). Returns 0,
 * -EPERM when this reader sees no addresses, or another -errno. */
static int make_stamp(struct bytes *b, const char *kallsyms, const char *root,
		      struct modules *ms)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/random/boot_id", root);
	int ret = put_file(b, "boot", path, 64);
	snprintf(path, sizeof(path), "%s/sys/kernel/notes", root);
	if (ret == 0)
		ret = put_file(b, "notes", path, HEAD_BYTES);
	size_t head = b->n + sizeof("head") + sizeof(uint64_t); /* the first line */
	if (ret == 0)
		ret = put_file(b, "head", kallsyms, HEAD_BYTES);
	if (ret == 0 && !any_address(b->p + head, b->n - head))
		ret = -EPERM; /* kptr_restrict: no table to save, or to give */
	return ret ? ret : put_modules(b, root, ms);
}

/* The euid's own, and written by nobody else: a directory (DIR) or file. */
static bool owned(const struct stat *st, bool dir)
{
	return st->st_uid == geteuid() && !(st->st_mode & 022) &&
	       (dir ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode));
}

/* Whether directory PATH is the euid's: root's cache is never made in a
 * user's home (sudo may keep the user's HOME and XDG_CACHE_HOME). */
static bool own_dir(const char *path)
{
	struct stat st;
	return path && *path == '/' && stat(path, &st) == 0 && owned(&st, true);
}

int sym_kernel_cache_file(char *buf, size_t len)
{
	const char *set = getenv("FTSTACK_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	bool in_xdg = false;
	struct stat st;
	int n = -1;
	if (set) {
		n = *set ? snprintf(buf, len, "%s", set) : -1;
	} else if ((in_xdg = own_dir(xdg))) {
		n = snprintf(buf, len, "%s/ftstack", xdg);
	} else {
		if (!own_dir(home)) { /* sudo's HOME is the user's: the euid's own */
			const struct passwd *pw = getpwuid(geteuid());
			home = pw ? pw->pw_dir : NULL;
		}
		if (own_dir(home))
			n = snprintf(buf, len, "%s/.cache/ftstack", home);
	}
	if (n < 0 || (size_t)n + 16 >= len)
		return -ENOENT;
	if (!set && !in_xdg) { /* ~/.cache made as the XDG spec says */
		char *slash = strrchr(buf, '/');
		*slash = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(buf, &st) < 0 || !owned(&st, true))
		return -EACCES;
	strcat(buf, "/kallsyms");
	return 0;
}

/* Every offset within the names, each name ended, addresses in order. */
static bool saved_sane(const struct sym_kernel *k, size_t names_len)
{
	if (names_len == 0 || k->buf[names_len - 1] != '\0')
		return false;
	for (size_t i = 0; i < k->n; i++)
		if (k->syms[i].name >= names_len || k->syms[i].module >= names_len ||
		    (i && k->syms[i].addr < k->syms[i - 1].addr))
			return false;
	return true;
}

/* Where the symbols start: after the header and the stamp, 8-aligned. */
static size_t syms_at(uint64_t stamp_len)
{
	return (sizeof(struct saved_head) + stamp_len + 7) & ~(size_t)7;
}

/* The table saved in FD under STAMP into K: the file mapped, not copied
 * (its pages are the page cache's: a copy cost a run ~10 ms more of
 * zeroing and copying 6 MB). Only the euid replaces the file, by rename:
 * the mapping keeps the old one whole. Returns 0, or -errno (-ESTALE:
 * another stamp, -EINVAL: not a table this build wrote). */
static int read_saved(int fd, const struct bytes *stamp, struct sym_kernel *k)
{
	struct saved_head h;
	struct stat st;
	int ret = fstat(fd, &st) < 0 ? -errno : owned(&st, false) ? 0 : -EACCES;
	if (ret == 0 && pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		ret = -EINVAL; /* a regular file gives its first bytes whole */
	if (ret < 0)
		return ret;
	if (memcmp(h.magic, SAVED_MAGIC, 8) != 0 || h.ksym_size != sizeof(struct ksym) ||
	    h.n == 0 || h.n >= UINT32_MAX || h.names_len >= UINT32_MAX || h.stamp_len >= (1u << 30) ||
	    (uint64_t)st.st_size != syms_at(h.stamp_len) + h.n * sizeof(struct ksym) + h.names_len)
		return -EINVAL;
	if (h.stamp_len != stamp->n)
		return -ESTALE;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	k->rbuf = (struct sym_region){ .p = p, .cap = (size_t)st.st_size };
	if (memcmp((char *)p + sizeof(h), stamp->p, stamp->n) != 0)
		return -ESTALE;
	k->syms = (struct ksym *)(void *)((char *)p + syms_at(h.stamp_len));
	k->buf = (char *)(k->syms + h.n);
	k->n = h.n;
	if (saved_sane(k, h.names_len))
		return 0;
	k->n = 0;
	return -EINVAL;
}

/* Module M's core, or NULL: the pseudo-modules of the symbols the kernel
 * makes as it runs ("bpf", "__builtin__*") are not in /proc/modules. */
static const struct module_span *core_of(const struct modules *ms, const char *m)
{
	for (size_t i = 0; i < ms->n; i++)
		if (strcmp(ms->m[i].name, m) == 0)
			return &ms->m[i];
	return NULL;
}

/* K's symbols of vmlinux and of the modules' cores (MS), their names
 * packed in NAMES. Returns how many, or -ENOMEM. */
static long pack(const struct sym_kernel *k, const struct modules *ms, struct ksym *out,
		 struct bytes *names)
{
	size_t n = 0;
	const char *mod_was = NULL; /* the module of the symbols before (by address) */
	const struct module_span *core = NULL;
	uint32_t mod_at = 0; /* its name's offset in NAMES, once one is kept */
	if (put(names, "", 1) < 0) /* offset 0: vmlinux's module */
		return -ENOMEM;
	for (size_t i = 0; i < k->n; i++) {
		const struct ksym *s = &k->syms[i];
		const char *mod = s->module ? k->buf + s->module : NULL;
		if (mod && (!mod_was || strcmp(mod, mod_was) != 0)) { /* another module */
			mod_was = mod;
			core = core_of(ms, mod);
			mod_at = 0;
		}
		if (mod && (!core || s->addr < core->base || s->addr - core->base >= core->size))
			continue;
		if (mod && !mod_at) {
			mod_at = (uint32_t)names->n;
			if (put(names, mod, strlen(mod) + 1) < 0)
				return -ENOMEM;
		}
		out[n] = *s;
		out[n].module = mod ? mod_at : 0;
		out[n].name = (uint32_t)names->n;
		const char *name = k->buf + s->name;
		if (put(names, name, strlen(name) + 1) < 0 || names->n >= UINT32_MAX)
			return -ENOMEM;
		n++;
	}
	return (long)n;
}

/* Saves K under STAMP as FILE: written aside, then renamed over it (a
 * reader of the old one keeps it whole). Returns 0 or -errno. */
static int save(const struct sym_kernel *k, const struct bytes *stamp, const struct modules *ms,
		const char *file)
{
	static const char pad[8];
	char tmp[4096];
	struct bytes names = { 0 };
	struct ksym *syms = malloc(k->n * sizeof(*syms));
	long n = syms ? pack(k, ms, syms, &names) : -ENOMEM;
	int ret = n > 0 ? 0 : n == 0 ? -ENOENT : (int)n, fd = -1;
	if (ret == 0 && snprintf(tmp, sizeof(tmp), "%s.%d", file, (int)getpid()) >= (int)sizeof(tmp))
		ret = -ENAMETOOLONG;
	if (ret == 0 && (fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		ret = -errno;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (ret == 0 && !f) {
		ret = -errno;
		close(fd);
	}
	struct saved_head h = { .ksym_size = sizeof(struct ksym), .stamp_len = (uint32_t)stamp->n,
				.n = (uint64_t)n, .names_len = names.n };
	memcpy(h.magic, SAVED_MAGIC, 8);
	if (f) {
		fwrite(&h, sizeof(h), 1, f);
		fwrite(stamp->p, 1, stamp->n, f);
		fwrite(pad, 1, syms_at(stamp->n) - sizeof(h) - stamp->n, f);
		fwrite(syms, sizeof(*syms), (size_t)n, f);
		fwrite(names.p, 1, names.n, f);
		int bad = ferror(f);
		if (fclose(f) != 0 || bad) /* fclose writes what was buffered */
			ret = -EIO;
	}
	if (ret == 0 && rename(tmp, file) < 0)
		ret = -errno;
	if (ret < 0 && fd >= 0)
		unlink(tmp);
	free(syms);
	free(names.p);
	return ret;
}

int sym_kernel_load_cached(const char *kallsyms, const char *file, const char *root,
			   struct sym_kernel **out, enum sym_kernel_whence *whence)
{
	struct bytes stamp = { 0 };
	struct modules ms = { 0 };
	*whence = SYM_KERNEL_READ;
	int ret = file ? make_stamp(&stamp, kallsyms, root, &ms) : -ENOENT;
	bool stamped = ret == 0;
	int fd = stamped ? open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	struct sym_kernel *k = fd >= 0 ? sym_kernel_alloc() : NULL;
	if (k && read_saved(fd, &stamp, k) == 0 && (k->live_path = strdup(kallsyms)) != NULL) {
		*whence = SYM_KERNEL_SAVED;
		*out = k;
		k = NULL;
	} else if ((ret = sym_kernel_load(kallsyms, out)) == 0 && stamped &&
		   save(*out, &stamp, &ms, file) == 0) {
		*whence = SYM_KERNEL_READ_SAVED;
	}
	sym_kernel_free(k);
	if (fd >= 0)
		close(fd);
	free(stamp.p);
	free(ms.m);
	return *whence == SYM_KERNEL_SAVED ? 0 : ret;
}
