/* symbolize: kallsyms parsing from a fixture, ELF lookups on this test's own
 * binary (PIE) and libc, and process histories through a fake /proc. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

__attribute__((noinline)) int symbolize_test_target(int x)
{
	return x * 3 + 1;
}

static void test_kallsyms(void)
{
	struct sym_kernel *k = NULL;
	uint64_t off = 0, s, e;
	const char *mod = NULL;
	CHECK(sym_kernel_load("tests/unit/fixtures/kallsyms.txt", &k) == 0, "kallsyms fixture loads");
	if (!k)
		return;
	CHECK_STR(sym_kernel_lookup(k, 0xffffffff81003010, &off, &mod), "__kmalloc_noprof", "lookup inside a symbol");
	CHECK_EQ_U64(off, 0x10, "offset into it");
	CHECK(mod == NULL, "vmlinux symbol has no module");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffff81001fff, &off, NULL), "helper_static", "static text symbol");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffffc0001004, &off, &mod), "ext4_fill_super", "module symbol");
	CHECK_STR(mod, "ext4", "module name");
	CHECK(sym_kernel_lookup(k, 0xffffffff80000000, &off, NULL) == NULL, "below every symbol: none");
	CHECK(sym_kernel_range(k, "kfree", &s, &e) == 0 && s == 0xffffffff81003400 &&
	      e == 0xffffffffc0001000, "range of kfree ends at the next symbol");
	CHECK(sym_kernel_extent(k, 0xffffffff81003001, &s, &e) == 0 && s == 0xffffffff81003000 &&
	      e == 0xffffffff81003400, "extent of the containing symbol");
	CHECK(sym_kernel_range(k, "some_data", &s, &e) == -ENOENT, "data symbols are not kept");
	sym_kernel_free(k);

	char tmp[] = "/tmp/ftstack-ksym-XXXXXX";
	int fd = mkstemp(tmp);
	const char zero[] = "0000000000000000 T a\n0000000000000000 T b\n";
	CHECK(fd >= 0 && write(fd, zero, sizeof(zero) - 1) == (ssize_t)sizeof(zero) - 1, "zero fixture");
	close(fd);
	CHECK(sym_kernel_load(tmp, &k) == -EPERM, "all-zero addresses (kptr_restrict): -EPERM");
	unlink(tmp);
	CHECK(sym_kernel_load("/nonexistent/kallsyms", &k) == -ENOENT, "missing file: -ENOENT");
}

/* The mapping of ADDR in this process: its file, start and file offset. */
static int self_mapping(uint64_t addr, char *file, size_t len, uint64_t *start, uint64_t *pgoff)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352];
	int ret = -1;
	while (f && ret && fgets(line, sizeof(line), f)) {
		uint64_t s, e, o;
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &s, &e, &o, &pos) < 3)
			continue;
		if (addr >= s && addr < e && pos) {
			snprintf(file, len, "%s", line + pos);
			file[strcspn(file, "\n")] = '\0';
			*start = s;
			*pgoff = o;
			ret = 0;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

static void test_elf(void)
{
	char file[4096];
	uint64_t start, pgoff, vaddr, off;
	uint64_t addr = (uint64_t)(uintptr_t)&symbolize_test_target + 4;
	CHECK(self_mapping(addr, file, sizeof(file), &start, &pgoff) == 0, "own mapping found");
	struct sym_elf *e = NULL;
	CHECK(sym_elf_open(file, "/usr/lib/debug", &e) == 0, "open own binary");
	if (!e)
		return;
	CHECK(sym_elf_is_dyn(e), "built as PIE");
	CHECK(sym_elf_offset_to_vaddr(e, addr - start + pgoff, &vaddr) == 0, "file offset to vaddr");
	CHECK_STR(sym_elf_lookup(e, vaddr, &off), "symbolize_test_target", "own function by address");
	CHECK_EQ_U64(off, 4, "offset into it");
	uint64_t file_off;
	CHECK(sym_file_vaddr_to_offset(file, vaddr, &file_off) == 0 && file_off == addr - start + pgoff,
	      "vaddr back to the same file offset");
	sym_elf_free(e);
	CHECK(sym_elf_open("tests/unit/fixtures/kallsyms.txt", NULL, &e) == -ENOEXEC, "not ELF: -ENOEXEC");
}

static void test_procs_self(void)
{
	struct sym_procs *p = NULL;
	struct sym_frame f;
	CHECK(sym_procs_create("/proc", "/usr/lib/debug", &p) == 0, "procs create");
	CHECK(sym_procs_snapshot(p, (uint32_t)getpid(), 100) == 0, "snapshot self");
	CHECK(sym_procs_known(p, (uint32_t)getpid()), "self known");
	uint64_t a = (uint64_t)(uintptr_t)&symbolize_test_target;
	CHECK(sym_procs_lookup(p, (uint32_t)getpid(), 200, a, &f) == 0, "lookup own function");
	CHECK_STR(f.name, "symbolize_test_target", "named through the maps");
	void *gp = dlsym(RTLD_DEFAULT, "getppid");
	CHECK(gp && sym_procs_lookup(p, (uint32_t)getpid(), 200, (uint64_t)(uintptr_t)gp, &f) == 0,
	      "lookup libc's getppid");
	CHECK(f.name && strstr(f.name, "getppid"), "libc function named (%s)", f.name ? f.name : "null");
	CHECK(f.dso && strstr(f.dso, "libc"), "dso is libc (%s)", f.dso ? f.dso : "null");
	CHECK(sym_procs_lookup(p, (uint32_t)getpid(), 200, 16, &f) == -ENOENT, "unmapped: -ENOENT");
	sym_procs_free(p);
}

/* A fake /proc where pid 42 runs this test binary: exec, fork and exit
 * histories are followed and exited processes still symbolize. */
static void test_procs_history(void)
{
	char root[] = "/tmp/ftstack-proc-XXXXXX", path[512], file[4096];
	uint64_t start, pgoff;
	uint64_t a = (uint64_t)(uintptr_t)&symbolize_test_target;
	CHECK(mkdtemp(root) != NULL, "fake proc root");
	CHECK(self_mapping(a, file, sizeof(file), &start, &pgoff) == 0, "own mapping");
	snprintf(path, sizeof(path), "%s/42", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/42/comm", root);
	FILE *f = fopen(path, "w");
	fprintf(f, "fakecomm\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/42/maps", root);
	f = fopen(path, "w");
	fprintf(f, "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " 00:00 0    %s\n", start,
		start + 0x100000, pgoff, file);
	fclose(f);
	struct sym_procs *p = NULL;
	struct sym_frame fr;
	sym_procs_create(root, NULL, &p);
	CHECK(sym_procs_snapshot(p, 42, 1000) == 0, "snapshot from fake proc");
	CHECK(sym_procs_snapshot(p, 43, 1000) == -ESRCH, "no such pid: -ESRCH");
	CHECK_STR(sym_procs_comm_at(p, 42, 1500), "fakecomm", "comm from the snapshot");
	sym_procs_fork(p, 50, 42, 2000);
	CHECK(sym_procs_lookup(p, 50, 2500, a, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "forked child inherits mappings");
	sym_procs_comm(p, 50, 3000, "newprog", true);
	CHECK(sym_procs_lookup(p, 50, 3500, a, &fr) == -ENOENT, "after exec: old mappings gone");
	CHECK(sym_procs_lookup(p, 50, 2500, a, &fr) == 0, "before exec: still named");
	CHECK_STR(sym_procs_comm_at(p, 50, 3500), "newprog", "comm after exec");
	CHECK_STR(sym_procs_comm_at(p, 50, 2500), "fakecomm", "comm before exec");
	sym_procs_mmap(p, 50, 4000, 0x10000000, 0x100000, pgoff, true, file);
	CHECK(sym_procs_lookup(p, 50, 4500, 0x10000000 + (a - start), &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "MMAP2 after exec names the new mapping");
	sym_procs_exit(p, 50, 5000);
	CHECK(sym_procs_lookup(p, 50, 4500, 0x10000000 + (a - start), &fr) == 0,
	      "exited process still symbolizes");
	sym_procs_free(p);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK(system(path) == 0, "fixture removed");
}

int main(void)
{
	test_kallsyms();
	test_elf();
	test_procs_self();
	test_procs_history();
	CHECK_DONE();
}
