/* symbolize/symcache.c: the name cache. A user address names what its
 * process had mapped there: after an exec, another file mapped over a
 * mapping, or the pid taken again after it was forgotten, the same pid and
 * address name the new code, not what the cache held; the old stacks still
 * name the old. Files that are not ELF name frames "[BASENAME]". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

#define PID 4242u

/* DIR/NAME, a file with no symbols (not ELF), its path into PATH */
static void blob(const char *dir, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("not an ELF file, so nothing in it has a symbol\n", f);
		fclose(f);
	}
}

/* A user address in a known file without a symbol for it is "[BASENAME]"
 * (stackcollapse-perf's rule, as report names perf script's frames); one in
 * no known mapping is "[unknown]". */
static void test_unknown(const char *dir)
{
	struct sym_procs *p = NULL;
	struct sym_cache *c = NULL;
	struct sym_cache_style style = { .offsets = true };
	char path[300];
	blob(dir, "libblob.so.1", path, sizeof(path));
	CHECK(sym_procs_alloc(dir, NULL, &p) == 0, "symcache: procs");
	sym_procs_mmap(p, PID, 10, 0x400000, 0x1000, 0, true, path, NULL);
	CHECK(sym_cache_alloc(NULL, p, &style, &c) == 0, "symcache: create");
	CHECK_STR(sym_cache_name(c, PID, 20, 0x400010, true), "[libblob.so.1]",
		  "symcache: no symbol in a known file (no offset added with -s)");
	CHECK_STR(sym_cache_name(c, PID, 20, 0x900010, true), "[unknown]",
		  "symcache: an address in no mapping");
	sym_cache_free(c);
	sym_procs_free(p);
	unlink(path);
}

static void test_new_code(const char *dir)
{
	struct sym_procs *p = NULL;
	struct sym_cache *c = NULL;
	struct sym_cache_style style = { 0 };
	char a[300], b[300], d[300];
	blob(dir, "liba.so", a, sizeof(a));
	blob(dir, "libb.so", b, sizeof(b));
	blob(dir, "libd.so", d, sizeof(d));
	bool ok = sym_procs_alloc(dir, NULL, &p) == 0 && sym_cache_alloc(NULL, p, &style, &c) == 0;
	CHECK(ok, "symcache: procs and cache");
	if (!ok) {
		sym_procs_free(p);
		return;
	}
	sym_procs_mmap(p, PID, 10, 0x400000, 0x1000, 0, true, a, NULL);
	CHECK_STR(sym_cache_name(c, PID, 20, 0x400010, false), "[liba.so]", "before the exec");
	/* a fake exec: its COMM record, then the new image mapped where liba was */
	sym_procs_comm(p, PID, 30, "next", true);
	sym_procs_mmap(p, PID, 31, 0x400000, 0x1000, 0, true, b, NULL);
	CHECK_STR(sym_cache_name(c, PID, 40, 0x400010, false), "[libb.so]",
		  "after an exec, the same pid and address: the new image's name");
	CHECK_STR(sym_cache_name(c, PID, 20, 0x400010, false), "[liba.so]",
		  "a stack from before the exec: still the old name");
	/* libb unmapped (no record says it), libd mapped at its address */
	sym_procs_mmap(p, PID, 50, 0x400000, 0x1000, 0, true, d, NULL);
	CHECK_STR(sym_cache_name(c, PID, 60, 0x400010, false), "[libd.so]",
		  "another library mapped where one was: its name");
	/* the process exits and is forgotten (the collector clears the cache
	 * then too); the pid taken again, libb mapped at the address */
	sym_procs_exit(p, PID, PID, 100);
	sym_procs_forget(p, 100 + 2 * SYM_EXIT_GRACE_NS, NULL, NULL);
	uint64_t t = 100 + 3 * SYM_EXIT_GRACE_NS;
	sym_procs_mmap(p, PID, t, 0x400000, 0x1000, 0, true, b, NULL);
	CHECK_STR(sym_cache_name(c, PID, t + 10, 0x400010, false), "[libb.so]",
		  "the pid taken again after it was forgotten: the new process's name");
	sym_cache_free(c);
	sym_procs_free(p);
	unlink(a);
	unlink(b);
	unlink(d);
}

int main(void)
{
	char dir[] = "/tmp/ftstack-symcache.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "symcache: temp dir");
	test_unknown(dir);
	test_new_code(dir);
	rmdir(dir);
	CHECK_DONE();
}
