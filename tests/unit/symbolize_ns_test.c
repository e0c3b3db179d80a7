/* symbolize/procs_files.c: which path a process's mapped file is read by.
 * On a fake /proc: pid 10 shares ftstack's mount namespace (its ns/mnt is
 * self's), pid 20 has its own with another file at this binary's path under
 * 20/root (stripped), pids 30 and 40 have namespaces of their own and no root left
 * (gone), pid 22 forked from 20 and left no /proc entry. Pids 50 and 70
 * map files no path reaches (unlinked, a memfd), which are read through
 * their mappings in /proc/PID/map_files, pid 80 through its exe alone. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

__attribute__((noinline)) int ns_test_target(int x)
{
	return x * 5 + 3;
}

/* Where PID's file at ADDR was read from ("" for none). */
static const char *read_path(struct sym_procs *p, uint32_t pid, uint64_t addr)
{
	const char *path;
	uint64_t bias;
	return sym_procs_module_read_path(p, pid, 100, addr, &path, &bias, NULL) == 0 ? path : "";
}

static bool named(struct sym_procs *p, uint32_t pid, uint64_t addr)
{
	struct sym_frame fr;
	return sym_procs_lookup(p, pid, 100, addr, &fr) == 0 && fr.name &&
	       strcmp(fr.name, "ns_test_target") == 0;
}

/* Builds the fake /proc at ROOT; FILE is this binary, put stripped (the
 * same layout, no symbol of its own) at its path under 20/root. */
static int make_proc(const char *root, const char *file)
{
	char cmd[9000];
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; mkdir -p self/ns 10/ns 20/ns 30/ns 40/ns 20/root$(dirname %s);"
		 " echo own > self/ns/mnt; ln self/ns/mnt 10/ns/mnt; echo b > 20/ns/mnt;"
		 " echo c > 30/ns/mnt; echo d > 40/ns/mnt; strip -o 20/root%s %s",
		 root, file, file, file);
	return system(cmd);
}

/* Files no path reaches: read through /proc/PID/map_files/START-END (a
 * copy of this binary there, for pids 50 and 70), held open, and only
 * when the mapping's inode is the one found there. */
static void test_unreachable(struct sym_procs *p, const char *root, const char *file,
			     uint64_t start, uint64_t pgoff, uint64_t a)
{
	char deleted[4200], mf[4500], cmd[13600];
	struct stat st;
	const char *path;
	uint64_t bias, ino = 0, end = start + 0x100000;
	snprintf(deleted, sizeof(deleted), "%s (deleted)", file);
	snprintf(mf, sizeof(mf), "%" PRIx64 "-%" PRIx64, start, end);
	snprintf(cmd, sizeof(cmd), "set -e; cd %s; for p in 50 70; do mkdir -p $p/map_files;"
		 " cp %s $p/map_files/%s; done; mkdir 80; cp %s 80/exe; : > decoy", root, file, mf,
		 file);
	char at50[4600];
	/* "Another inode" is the decoy's: it lives to the end, so no copy here
	 * can have it (an inode number made up could be the next file's). */
	snprintf(at50, sizeof(at50), "%s/decoy", root);
	CHECK(system(cmd) == 0 && stat(at50, &st) == 0, "a decoy's inode");
	const struct sym_file_id other = { st.st_dev, st.st_ino };
	snprintf(at50, sizeof(at50), "%s/50/map_files/%" PRIx64 "-%" PRIx64, root, start, end);
	CHECK(stat(at50, &st) == 0, "map_files of pids 50 and 70");
	const struct sym_file_id id = { st.st_dev, st.st_ino };
	sym_procs_comm(p, 50, 50, "prog", true);
	sym_procs_mmap(p, 50, 60, start, 0x100000, pgoff, true, deleted, &id);
	sym_procs_comm(p, 60, 50, "prog", true);
	sym_procs_mmap(p, 60, 60, start, 0x100000, pgoff, true, deleted, &other);
	sym_procs_comm(p, 70, 50, "prog", true);
	sym_procs_mmap(p, 70, 60, start, 0x100000, pgoff, true, "/memfd:prog (deleted)", &other);
	sym_procs_mmap(p, 70, 60, 0x60000000, 0x1000, 0, true, "//anon", NULL);
	sym_procs_mmap(p, 70, 60, 0x61000000, 0x1000, 0, true, "/memfd:jit (deleted)", NULL);
	CHECK(sym_procs_module_read_path(p, 50, 100, a, &path, &bias, &ino) == 0 &&
	      strncmp(path, "/proc/self/fd/", 14) == 0 && ino == (uint64_t)st.st_ino,
	      "unlinked: read through its mapping, held open at %s", path);
	CHECK(named(p, 50, a), "and named");
	CHECK_STR(read_path(p, 60, a), "", "the same path, another inode: its own entry, "
		  "not read (no map_files)");
	CHECK(named(p, 50, a), "the first one still named");
	CHECK_STR(read_path(p, 70, a), "", "a memfd whose mapping holds another inode now: never read");
	CHECK(!sym_procs_jit_at(p, 50, 100, a), "a file's code is not JIT code");
	CHECK(!sym_procs_jit_at(p, 50, 100, 0x60000010), "nor an address not mapped");
	CHECK(sym_procs_jit_at(p, 70, 100, 0x60000010), "anonymous code is");
	CHECK(sym_procs_jit_at(p, 70, 100, 0x61000010), "and a memfd's no ELF file is read from");
	CHECK(!sym_procs_jit_at(p, 60, 100, a), "an unlinked file's unread is not");
	snprintf(at50, sizeof(at50), "%s/80/exe", root);
	CHECK(stat(at50, &st) == 0, "pid 80's exe");
	const struct sym_file_id exe = { st.st_dev, st.st_ino };
	sym_procs_comm(p, 80, 50, "prog", true);
	sym_procs_mmap(p, 80, 60, start, 0x100000, pgoff, true, "/memfd:prog (deleted)", &exe);
	CHECK(strncmp(read_path(p, 80, a), "/proc/self/fd/", 14) == 0 && named(p, 80, a),
	      "no map_files (not root): the program's file through /proc/PID/exe");
}

int main(void)
{
	char root[] = "/tmp/ftstack-ns-XXXXXX", file[4096], inside[4400];
	uint64_t start = 0, pgoff = 0, a = (uint64_t)(uintptr_t)&ns_test_target;
	struct stat st;
	CHECK(mkdtemp(root) != NULL && test_self_mapping(a, file, sizeof(file), &start, &pgoff) == 0 &&
	      stat(file, &st) == 0 && make_proc(root, file) == 0,
	      "a fake /proc: pids in two mount namespaces");
	struct sym_procs *p = NULL;
	CHECK(sym_procs_alloc(root, "/nonexistent", &p) == 0, "history on the fake /proc");
	const struct sym_file_id same = { st.st_dev, st.st_ino }, other = { st.st_dev, st.st_ino + 1 };
	for (uint32_t pid = 10; pid <= 40; pid += 10) {
		sym_procs_comm(p, pid, 50, "prog", true);
		sym_procs_mmap(p, pid, 60, start, 0x100000, pgoff, true, file,
			       pid == 40 ? &other : &same);
	}
	snprintf(inside, sizeof(inside), "%s/20/root%s", root, file);
	CHECK_STR(read_path(p, 10, a), file, "ftstack's own namespace: the file by its path");
	CHECK(named(p, 10, a), "and named");
	CHECK_STR(read_path(p, 20, a), inside, "another namespace: through /proc/PID/root");
	CHECK(!named(p, 20, a), "one path, two namespaces: two files (the other has no such symbol)");
	CHECK_STR(read_path(p, 30, a), file, "root gone: by its path, the mapping's device and inode");
	CHECK(named(p, 30, a), "and named");
	CHECK_STR(read_path(p, 40, a), "", "root gone, another inode at the path: never read");
	sym_procs_fork(p, 22, 20, 20, 70);
	sym_procs_comm(p, 22, 80, "child", true);
	sym_procs_mmap(p, 22, 90, start, 0x100000, pgoff, true, file, NULL);
	sym_procs_mmap(p, 22, 90, 0x50000000, 0x100000, 0, true, "/bin/true", NULL);
	sym_procs_mmap(p, 10, 90, 0x50000000, 0x100000, 0, true, "/bin/true", NULL);
	CHECK_STR(read_path(p, 22, a), inside, "a child gone keeps its parent's namespace and files");
	CHECK_STR(read_path(p, 10, 0x50001100), "/bin/true", "/bin/true readable in ours");
	CHECK_STR(read_path(p, 22, 0x50001100), "",
		  "in the child's: its root gone, inode untold: never by the path");
	test_unreachable(p, root, file, start, pgoff, a);
	sym_procs_free(p);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0, "fixture removed");
	CHECK_DONE();
}
