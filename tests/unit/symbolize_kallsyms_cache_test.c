/* sym_kernel_load_cached: the kernel's symbols saved and read back while
 * the boot, the kernel, the reader's view and the modules are the same;
 * made anew when any of them changes; code the kernel made since (a BPF
 * program) and the freed init code of a module named from the kernel's
 * own list; a file not the euid's, or not this build's, not read. A fake
 * root (ROOT/proc, ROOT/sys) stands for the system. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

static char root[64], kallsyms[128], cache[128];

static void put(const char *rel, const char *fmt, ...)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* The kernel's list: a per-CPU symbol (at 0, as on 6.1), _stext, 200 fillers (the head the stamp reads is
 * their first 4 KB), kmalloc and kfree, two modules, two freed init
 * functions of ext4 (outside its core), a BPF program named PROG made
 * where the first of them was, and its trampoline between two modules. */
static void put_kallsyms(const char *first, const char *prog)
{
	FILE *f = fopen(kallsyms, "w");
	fprintf(f, "0000000000000000 A fixed_percpu_data\n%s T _stext\n", first);
	for (int i = 0; i < 200; i++)
		fprintf(f, "ffffffff8110%04x t filler_%d\n", i * 16, i);
	fprintf(f, "ffffffff81200000 T __kmalloc_noprof\nffffffff81200400 W kfree\n"
		   "ffffffff81200800 T _etext\n"
		   "ffffffffc0001000 t ext4_fill_super\t[ext4]\n"
		   "ffffffffc0002000 t ext4_iget\t[ext4]\n"
		   "ffffffffc0006000 T xfs_mount\t[xfs]\n"
		   "ffffffffc0006100 t xfs_sync\t[xfs]\n"
		   "ffffffffc0009000 t ext4_init_fs\t[ext4]\n"
		   "ffffffffc0009800 t ext4_init_more\t[ext4]\n"
		   "ffffffffc0009080 t %s\t[bpf]\n"
		   "ffffffffc0005800 t %s_tramp\t[bpf]\n", prog, prog);
	fclose(f);
}

static void put_system(const char *boot, const char *ext4_at, const char *xfs_note)
{
	put("proc/sys/kernel/random/boot_id", "%s\n", boot);
	put("sys/kernel/notes", "GNU build-id of vmlinux");
	put("proc/modules", "ext4 16384 1 - Live %s\nxfs 8192 0 - Live 0xffffffffc0006000\n",
	    ext4_at);
	put("sys/module/ext4/notes/.note.gnu.build-id", "ext4-id");
	if (xfs_note)
		put("sys/module/xfs/notes/.note.gnu.build-id", "%s", xfs_note);
}

/* Loads through the cache; returns whence (-1: the load failed) and the
 * name of ADDR. */
static int load(uint64_t addr, const char **name, struct sym_kernel **k)
{
	enum sym_kernel_whence w;
	*k = NULL;
	int ret = sym_kernel_load_cached(kallsyms, cache, root, k, &w);
	*name = ret == 0 ? sym_kernel_lookup(*k, addr, NULL, NULL) : NULL;
	return ret == 0 ? (int)w : -1;
}

static int load_whence(void)
{
	const char *name;
	struct sym_kernel *k;
	int w = load(0, &name, &k);
	sym_kernel_free(k);
	return w;
}

static void test_saved(void)
{
	const char *name;
	struct sym_kernel *k;
	CHECK_EQ_U64(load(0xffffffff81200010, &name, &k), SYM_KERNEL_READ_SAVED,
		     "no copy yet: read and saved");
	CHECK_STR(name, "__kmalloc_noprof", "named as read");
	sym_kernel_free(k);
	struct stat st;
	CHECK(stat(cache, &st) == 0 && (st.st_mode & 0777) == 0600, "the copy is the euid's alone");
	CHECK_EQ_U64(load(0xffffffff81200010, &name, &k), SYM_KERNEL_SAVED, "read back");
	CHECK_STR(name, "__kmalloc_noprof", "named from the copy");
	CHECK(!sym_kernel_read_live(k), "the copy answered alone: the kernel's list not read");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffffc0001004, NULL, NULL), "ext4_fill_super",
		  "a module's function from the copy");
	CHECK(!sym_kernel_read_live(k), "again the copy alone");
	/* its last function ends where the kernel's list's next symbol starts
	 * (a BPF program may follow the module's text: on 6.4+ its other
	 * memory lies elsewhere, so /proc/modules' size does not bound it) */
	CHECK_STR(sym_kernel_lookup(k, 0xffffffffc0002004, NULL, NULL), "ext4_iget",
		  "a module's last function");
	CHECK(sym_kernel_read_live(k), "named from the kernel's list, read then");
	uint64_t a, b;
	CHECK(sym_kernel_range(k, "kfree", &a, &b) == 0 && a == 0xffffffff81200400 &&
	      b == 0xffffffff81200800, "a range by name from the copy");
	sym_kernel_free(k);

	/* the kernel's list changes past the head: a new BPF program */
	put_kallsyms("ffffffff81000000", "bpf_prog_new");
	CHECK_EQ_U64(load(0xffffffffc0009084, &name, &k), SYM_KERNEL_SAVED,
		     "a new BPF program leaves the stamp as it was");
	CHECK_STR(name, "bpf_prog_new", "its code named from the kernel's list, read then");
	CHECK(sym_kernel_read_live(k), "the kernel's list read: said");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffffc0005804, NULL, NULL), "bpf_prog_new_tramp",
		  "code between two modules named from the kernel's list");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffffc0009004, NULL, NULL), "ext4_init_fs",
		  "ext4's freed init code (outside its core) named from the kernel's list");
	sym_kernel_free(k);
	CHECK_EQ_U64(load(0xffffffff81200404, &name, &k), SYM_KERNEL_SAVED, "read back again");
	CHECK_STR(name, "kfree", "between two of vmlinux's symbols: the copy's name");
	CHECK(!sym_kernel_read_live(k), "and the kernel's list not read for it");
	sym_kernel_free(k);
}

static void test_stamp(void)
{
	put_system("boot-2", "0xffffffffc0001000", "xfs-id");
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "another boot: read and saved");
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_SAVED, "then read back");
	put_system("boot-2", "0xffffffffc0001000", "xfs-id-rebuilt");
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "a module rebuilt: read again");
	put_system("boot-2", "0xffffffffc0201000", "xfs-id-rebuilt");
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "a module moved: read again");
	put_system("boot-2", "0xffffffffc0201000", NULL);
	unlink(cache);
	char note[256];
	snprintf(note, sizeof(note), "%s/sys/module/xfs/notes/.note.gnu.build-id", root);
	unlink(note);
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ, "a module without a build-id: never saved");
	CHECK(access(cache, F_OK) < 0, "no copy written");
	put_system("boot-2", "0xffffffffc0001000", "xfs-id");
	put_kallsyms("ffffffff81400000", "bpf_prog_new");
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "another KASLR offset (the head): read");
	struct stat before, after;
	stat(cache, &before);
	FILE *f = fopen(kallsyms, "w");
	for (int i = 0; i < 300; i++)
		fprintf(f, "0000000000000000 t hidden_%d\n", i);
	fclose(f);
	enum sym_kernel_whence w;
	struct sym_kernel *k = NULL;
	CHECK_EQ_U64(sym_kernel_load_cached(kallsyms, cache, root, &k, &w), (uint64_t)-EPERM,
		     "addresses hidden (kptr_restrict): the load fails as without a copy");
	CHECK_EQ_U64(w, SYM_KERNEL_READ, "the copy not read back");
	CHECK(stat(cache, &after) == 0 && after.st_ino == before.st_ino, "nor saved");
	put_kallsyms("ffffffff81000000", "bpf_prog_new");
}

/* Byte OFF of the copy set to V. */
static void poke(off_t off, uint8_t v)
{
	int fd = open(cache, O_WRONLY);
	ssize_t w = pwrite(fd, &v, 1, off);
	(void)w;
	close(fd);
}

static void test_file(void)
{
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "back to the first system");
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_SAVED, "read back");
	chmod(cache, 0666);
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "a copy others may write: not read");
	poke(0, 'X');
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "not this build's (magic): not read");
	struct stat st;
	stat(cache, &st);
	/* the last symbol's name offset (8 bytes in), the names last */
	int fd = open(cache, O_RDONLY);
	uint8_t head[32];
	ssize_t got = read(fd, head, sizeof(head));
	close(fd);
	uint64_t names_len;
	uint32_t ksym_size;
	memcpy(&ksym_size, head + 8, 4);
	memcpy(&names_len, head + 24, 8);
	off_t last = st.st_size - (off_t)names_len - ksym_size + 8;
	CHECK(got == 32, "the copy's header read");
	poke(last + 3, 0x7f);
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "a name offset past the names: not read");
	truncate(cache, st.st_size - 1);
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_READ_SAVED, "a short copy: not read");
	CHECK_EQ_U64(load_whence(), SYM_KERNEL_SAVED, "then read back");
}

static void test_cache_file(void)
{
	char buf[256], dir[128];
	snprintf(dir, sizeof(dir), "%s/cache", root);
	setenv("FTSTACK_CACHE_DIR", "", 1);
	CHECK(sym_kernel_cache_file(buf, sizeof(buf)) == -ENOENT, "FTSTACK_CACHE_DIR empty: none");
	setenv("FTSTACK_CACHE_DIR", dir, 1);
	struct stat st;
	CHECK(sym_kernel_cache_file(buf, sizeof(buf)) == 0 && stat(dir, &st) == 0 &&
	      (st.st_mode & 0777) == 0700, "the directory made, the euid's alone");
	snprintf(cache, sizeof(cache), "%s/kallsyms", dir);
	CHECK_STR(buf, cache, "the file in it");
	chmod(dir, 0777);
	CHECK(sym_kernel_cache_file(buf, sizeof(buf)) == -EACCES, "a directory others may write: none");
	chmod(dir, 0700);
	unsetenv("FTSTACK_CACHE_DIR");
	char xdg[128], home[128], want[160];
	snprintf(xdg, sizeof(xdg), "%s/xdg", root);
	snprintf(home, sizeof(home), "%s/home", root);
	mkdir(xdg, 0700);
	mkdir(home, 0700);
	setenv("XDG_CACHE_HOME", xdg, 1);
	setenv("HOME", home, 1);
	snprintf(want, sizeof(want), "%s/ftstack/kallsyms", xdg);
	CHECK(sym_kernel_cache_file(buf, sizeof(buf)) == 0 && strcmp(buf, want) == 0,
	      "XDG_CACHE_HOME/ftstack: %s", buf);
	if (geteuid() == 0 && chown(xdg, 65534, 65534) == 0) {
		snprintf(want, sizeof(want), "%s/.cache/ftstack/kallsyms", home);
		CHECK(sym_kernel_cache_file(buf, sizeof(buf)) == 0 && strcmp(buf, want) == 0,
		      "another user's XDG_CACHE_HOME (sudo's): passed over for ~/.cache: %s", buf);
	} else {
		SKIP("not root", "another user's XDG_CACHE_HOME passed over");
	}
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/ftstack-ksymcache.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", root);
	test_cache_file();
	put_system("boot-1", "0xffffffffc0001000", "xfs-id");
	put_kallsyms("ffffffff81000000", "bpf_prog_old");
	test_saved();
	test_stamp();
	test_file();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0, "fake root removed");
	CHECK_DONE();
}
