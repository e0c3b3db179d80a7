/* symbolize/forget.c: a process (or thread) that exited is forgotten once
 * the rings were read past its exit and the grace, never before, and not
 * while a counted stack needs it; a late sample read before that still
 * names its frames. On a fake /proc where pid 42 runs this test binary. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

#define G SYM_EXIT_GRACE_NS

__attribute__((noinline)) int forget_test_target(int x)
{
	return x * 7 + 1;
}

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	char *sl = strrchr(path, '/');
	*sl = '\0';
	mkdir(path, 0755);
	*sl = '/';
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool keep_50(void *ctx, uint32_t id)
{
	(void)ctx;
	return id == 50;
}

static bool names(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr)
{
	struct sym_frame fr;
	return sym_procs_lookup(p, pid, time, addr, &fr) == 0 && fr.name &&
	       strcmp(fr.name, "forget_test_target") == 0;
}

static const char *dso(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr)
{
	struct sym_frame fr;
	return sym_procs_lookup(p, pid, time, addr, &fr) == 0 ? fr.dso : NULL;
}

int main(void)
{
	char root[] = "/tmp/ftstack-forget-XXXXXX", file[4096], maps[4400];
	uint64_t start = 0, pgoff = 0, a = (uint64_t)(uintptr_t)&forget_test_target;
	CHECK(mkdtemp(root) != NULL && test_self_mapping(a, file, sizeof(file), &start, &pgoff) == 0,
	      "a fake /proc and this binary's text mapping");
	snprintf(maps, sizeof(maps), "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " 00:00 0    %s\n",
		 start, start + 0x100000, pgoff, file);
	write_file(root, "42/maps", maps);
	write_file(root, "42/comm", "parent\n");
	write_file(root, "90/maps", ""); /* a zombie */
	write_file(root, "90/comm", "zombie\n");
	struct sym_procs *p = NULL;
	CHECK(sym_procs_alloc(root, "/nonexistent", &p) == 0 && sym_procs_snapshot(p, 42, 1000) == 0,
	      "pid 42 read from the fake /proc");
	const uint64_t a50 = 0x10000000 + (a - start);

	/* pid 50: forked, exec'd, mapped this binary and a file only it maps */
	sym_procs_fork(p, 50, 42, 42, 2000);
	sym_procs_comm(p, 50, 2100, "child", true);
	sym_procs_mmap(p, 50, 2200, 0x10000000, 0x100000, pgoff, true, file, NULL);
	sym_procs_mmap(p, 50, 2300, 0x30000000, 0x1000, 0, true, "/nonexistent/only50.so", NULL);
	sym_procs_mmap(p, 60, 2400, 0x40000000, 0x1000, 0, true, "/nonexistent/b.so", NULL);
	sym_procs_exit(p, 50, 50, 3000);
	CHECK_EQ_U64(sym_procs_exited(p), 1, "its EXIT record marks it");
	CHECK(names(p, 50, 2900, a50) && !strcmp(sym_procs_comm_at(p, 50, 2900), "child"),
	      "a late sample (stamped before the exit, read after it) still names its frames and comm");
	CHECK(sym_procs_sampled(p, 50, 3000 + 5) && sym_procs_exited(p) == 1,
	      "a sample just after the exit (its last switch) does not bring it back");
	CHECK_EQ_U64(sym_procs_forget(p, 3000 + G, NULL, NULL), 0, "within the grace after its exit: kept");
	CHECK(sym_procs_forget(p, 3000 + G + 1, keep_50, NULL) == 0 && names(p, 50, 2900, a50),
	      "kept while a counted stack needs it");
	CHECK_EQ_U64(sym_procs_forget(p, 3000 + G + 1, NULL, NULL), 1,
		     "forgotten once the rings were read past the exit and the grace");
	CHECK(sym_procs_lookup(p, 50, 2900, a50, &(struct sym_frame){ 0 }) == -ENOENT &&
	      !sym_procs_comm_at(p, 50, 2900) && !sym_procs_known(p, 50) && sym_procs_exited(p) == 0,
	      "its maps and comms are gone");
	CHECK(names(p, 42, 2900, a), "the parent, still running, still names (its file kept)");
	const char *b = dso(p, 60, 2500, 0x40000010);
	CHECK(b && !strcmp(b, "/nonexistent/b.so"), "another process's file, numbered anew (%s)",
	      b ? b : "none");
	sym_procs_mmap(p, 60, 2600, 0x50000000, 0x1000, 0, true, "/nonexistent/b.so", NULL);
	b = dso(p, 60, 2700, 0x50000010);
	CHECK(b && !strcmp(b, "/nonexistent/b.so"), "the rebuilt path hash finds it again");

	/* the pid taken by a new process: its fork record revives the entry */
	sym_procs_fork(p, 70, 42, 42, 3500);
	sym_procs_exit(p, 70, 70, 4000);
	sym_procs_fork(p, 70, 42, 42, 5000);
	CHECK(sym_procs_exited(p) == 0 && sym_procs_forget(p, 5000 + 10 * G, NULL, NULL) == 0 &&
	      names(p, 70, 5100, a), "a pid taken again after an exit is not forgotten");

	/* a process whose main thread exits first goes on with its threads */
	sym_procs_fork(p, 80, 42, 42, 5500);
	sym_procs_exit(p, 80, 80, 6000);
	CHECK(sym_procs_sampled(p, 80, 6000 + G + 10) && sym_procs_exited(p) == 0,
	      "a sample past the grace after its main thread's exit: it still runs");
	sym_procs_exit(p, 80, 81, 6000 + 2 * G);
	CHECK_EQ_U64(sym_procs_exited(p), 1, "then its last thread's exit ends it");
	CHECK(sym_procs_forget(p, 6000 + 4 * G, NULL, NULL) == 1 && !sym_procs_known(p, 80),
	      "and it is forgotten");

	/* a thread followed for its comm */
	sym_procs_thread(p, 42, 43, 42, 2000);
	sym_procs_comm(p, 43, 2100, "worker", false);
	sym_procs_thread_exit(p, 43, 3000);
	CHECK(sym_procs_forget(p, 3000 + G + 1, NULL, NULL) == 1 && !sym_procs_thread_known(p, 43) &&
	      !sym_procs_comm_at(p, 43, 2500), "a thread that exited: forgotten the same way");
	CHECK_STR(sym_procs_comm_at(p, 42, 2500), "parent", "its process keeps its comm");

	/* an exit read before the process was known: a late sample's snapshot
	 * (a zombie by then) goes with it */
	sym_procs_exit(p, 90, 90, 7000);
	CHECK(sym_procs_snapshot(p, 90, 6900) == 0 && sym_procs_exited(p) == 1,
	      "a snapshot for a sample stamped before the exit keeps the mark");
	CHECK(sym_procs_forget(p, 7000 + G + 1, NULL, NULL) == 1 && !sym_procs_known(p, 90),
	      "forgotten too");

	/* many: what is left works after the tables shrink */
	for (uint32_t pid = 1000; pid < 21000; pid++) {
		sym_procs_fork(p, pid, 42, 42, 8000);
		sym_procs_comm(p, pid, 8100, "short", true);
		sym_procs_mmap(p, pid, 8200, 0x10000000, 0x100000, pgoff, true, file, NULL);
		char lib[64];
		snprintf(lib, sizeof(lib), "/nonexistent/lib%u.so", pid);
		sym_procs_mmap(p, pid, 8300, 0x30000000, 0x1000, 0, true, lib, NULL);
		sym_procs_exit(p, pid, pid, 9000);
	}
	CHECK(sym_procs_exited(p) == 20000 && names(p, 20999, 8500, a50), "20000 short processes");
	CHECK_EQ_U64(sym_procs_forget(p, 9000 + G + 1, NULL, NULL), 20000, "all forgotten");
	CHECK(names(p, 42, 9500, a) && names(p, 70, 9500, a) && !sym_procs_known(p, 20999),
	      "the processes that run still name their frames");
	b = dso(p, 60, 9500, 0x40000010);
	CHECK(b && !strcmp(b, "/nonexistent/b.so"), "and their files");
	sym_procs_free(p);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0, "fixture removed");
	CHECK_DONE();
}
