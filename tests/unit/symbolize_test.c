/* symbolize: kallsyms parsing from a fixture, ELF lookups on this test's own
 * binary (PIE) and libc, process histories through a fake /proc, and the
 * frame-pointer verdict's reading of .eh_frame_hdr (the unwinder's tests:
 * symbolize_unwind_test.c). */
#include <dlfcn.h>
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

__attribute__((noinline)) int symbolize_test_target(int x)
{
	return x * 3 + 1;
}

/* Static: only in .symtab, so stripped copies need debuginfo to name it. */
__attribute__((noinline)) static int symbolize_static_target(int x)
{
	return x * 5 + symbolize_test_target(x);
}

static int count_ksym(void *ctx, const char *name, uint64_t addr)
{
	(void)addr;
	if (strcmp(name, "some_data") == 0 || strcmp(name, "xfs_bss") == 0)
		return -1; /* data symbols must not be listed */
	(*(int *)ctx)++;
	return 0;
}

static int stop_at_kfree(void *ctx, const char *name, uint64_t addr)
{
	*(uint64_t *)ctx = addr;
	return strcmp(name, "kfree") == 0 ? 7 : 0;
}

static void test_kallsyms(void)
{
	struct sym_kernel *k = NULL;
	uint64_t off = 0, s = 0, e = 0;
	const char *mod = NULL;
	struct sym_kernel *ka = NULL;
	CHECK(sym_kernel_load("tests/unit/fixtures/kallsyms_alias.txt", &ka) == 0, "alias fixture loads");
	CHECK_STR(ka ? sym_kernel_lookup(ka, 0xffffffff81003804, &off, NULL) : NULL, "__x64_sys_getppid",
		  "a global alias names its address before an inlined static one (the name kprobes use)");
	const char *al[2] = { NULL, NULL };
	CHECK_EQ_U64(ka ? sym_kernel_aliases(ka, 0xffffffff81003800, al, 2) : 0, 2,
		     "both names of the aliased address");
	CHECK(al[0] && al[1] && strcmp(al[0], "__do_sys_getppid") == 0 &&
	      strcmp(al[1], "__x64_sys_getppid") == 0, "aliases in file order");
	CHECK_EQ_U64(ka ? sym_kernel_aliases(ka, 0xffffffff81003800, al, 1) : 0, 2,
		     "the count even when MAX is smaller");
	CHECK_EQ_U64(ka ? sym_kernel_aliases(ka, 0xffffffff81003804, al, 2) : 9, 0,
		     "inside a symbol, not at its start: none");
	CHECK_EQ_U64(ka ? sym_kernel_aliases(ka, 0xffffffff81003900, al, 2) : 0, 1, "one name");
	sym_kernel_free(ka);
	CHECK(sym_kernel_load("tests/unit/fixtures/kallsyms.txt", &k) == 0, "kallsyms fixture loads");
	if (!k)
		return;
	CHECK_STR(sym_kernel_lookup(k, 0xffffffff81003010, &off, &mod), "__kmalloc_noprof", "lookup inside a symbol");
	CHECK_EQ_U64(off, 0x10, "offset into it");
	CHECK(mod == NULL, "vmlinux symbol has no module");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffff81000000, &off, NULL), "startup_64", "alias with fewest underscores");
	CHECK_EQ_U64(off, 0, "exact start: offset 0");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffff81002800, &off, NULL), "helper_static", "static text symbol spans the data symbol");
	CHECK_EQ_U64(off, 0x1800, "offset past the dropped data symbol");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffff81003500, &off, NULL), "kfree", "weak symbol kept");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffffc0001004, &off, &mod), "ext4_fill_super", "module symbol (unsorted input)");
	CHECK_EQ_U64(off, 4, "module offset");
	CHECK_STR(mod, "ext4", "module name");
	CHECK_STR(sym_kernel_lookup(k, 0xffffffffc0003000 + 0xfffff, &off, &mod), "xfs_mount", "last symbol within 1 MiB");
	CHECK_STR(mod, "xfs", "second module");
	CHECK(sym_kernel_lookup(k, 0xffffffffc0003000 + 0x100000, &off, NULL) == NULL, "beyond the last symbol + 1 MiB: none");
	CHECK(sym_kernel_lookup(k, 0xffffffff80000000, &off, NULL) == NULL, "below every symbol: none");
	CHECK(sym_kernel_lookup(k, 0xffffffff90000000, &off, NULL) == NULL, "between vmlinux and modules: none");
	CHECK(sym_kernel_range(k, "kfree", &s, &e) == 0, "range of kfree");
	CHECK_EQ_U64(s, 0xffffffff81003400, "kfree start");
	CHECK_EQ_U64(e, 0xffffffff81003400 + 0x100000, "kfree, last of vmlinux, ends 1 MiB on");
	CHECK(sym_kernel_range(k, "helper_static", &s, &e) == 0 && s == 0xffffffff81001000 &&
	      e == 0xffffffff81003000, "range ends at the next text symbol");
	CHECK(sym_kernel_range(k, "ext4_iget", &s, &e) == 0 && s == 0xffffffffc0002000 &&
	      e == 0xffffffffc0003000, "module range ends at a nearby module's symbol");
	CHECK(sym_kernel_extent(k, 0xffffffff81003001, &s, &e) == 0 && s == 0xffffffff81003000 &&
	      e == 0xffffffff81003400, "extent of the containing symbol");
	CHECK(sym_kernel_extent(k, 0xffffffff80000000, &s, &e) == -ENOENT, "no extent below all");
	CHECK(sym_kernel_range(k, "some_data", &s, &e) == -ENOENT, "data symbols are not kept");
	CHECK(sym_kernel_range(k, "xfs_bss", &s, &e) == -ENOENT, "module bss not kept");
	int n = 0;
	CHECK(sym_kernel_foreach(k, count_ksym, &n) == 0, "foreach lists text only");
	CHECK_EQ_U64(n, 8, "text symbols");
	CHECK(sym_kernel_foreach(k, stop_at_kfree, &s) == 7 && s == 0xffffffff81003400,
	      "foreach stops with fn's value");
	sym_kernel_free(k);

	char tmp[] = "/tmp/ftstack-ksym-XXXXXX";
	int fd = mkstemp(tmp);
	const char zero[] = "0000000000000000 T a\n0000000000000000 t b\t[m]\n";
	CHECK(fd >= 0 && write(fd, zero, sizeof(zero) - 1) == (ssize_t)sizeof(zero) - 1, "zero fixture");
	close(fd);
	CHECK(sym_kernel_load(tmp, &k) == -EPERM, "all-zero addresses (kptr_restrict): -EPERM");
	unlink(tmp);
	CHECK(sym_kernel_load("/nonexistent/kallsyms", &k) == -ENOENT, "missing file: -ENOENT");
}

struct fn_scan {
	const char *want;
	int seen;
	uint64_t gap; /* first address past a sized function before the next */
	uint64_t prev_end, prev_addr;
};

static int scan_fn(void *ctx, const char *name, uint64_t vaddr, uint64_t size)
{
	struct fn_scan *sc = ctx;
	if (strcmp(name, sc->want) == 0)
		sc->seen++;
	if (!sc->gap && sc->prev_end && vaddr > sc->prev_end && vaddr != sc->prev_addr)
		sc->gap = sc->prev_end;
	if (vaddr != sc->prev_addr)
		sc->prev_end = size ? vaddr + size : 0;
	sc->prev_addr = vaddr;
	return 0;
}

/* vaddr of this process's ADDR in its file FILE (through the maps). */
static int own_vaddr(uint64_t addr, char *file, size_t len, uint64_t *vaddr)
{
	uint64_t start, pgoff;
	struct sym_elf *e = NULL;
	if (test_self_mapping(addr, file, len, &start, &pgoff) < 0 || sym_elf_load(file, NULL, &e) < 0)
		return -1;
	int ret = sym_elf_offset_to_vaddr(e, addr - start + pgoff, vaddr);
	sym_elf_free(e);
	return ret;
}

static void test_elf(void)
{
	char file[4096];
	uint64_t start, pgoff, vaddr, off;
	uint64_t addr = (uint64_t)(uintptr_t)&symbolize_test_target + 4;
	CHECK(test_self_mapping(addr, file, sizeof(file), &start, &pgoff) == 0, "own mapping found");
	struct sym_elf *e = NULL;
	CHECK(sym_elf_load(file, "/usr/lib/debug", &e) == 0, "open own binary");
	if (!e)
		return;
	CHECK(sym_elf_is_dyn(e), "built as PIE");
	CHECK(sym_elf_offset_to_vaddr(e, addr - start + pgoff, &vaddr) == 0, "file offset to vaddr");
	CHECK_STR(sym_elf_lookup(e, vaddr, &off), "symbolize_test_target", "own function by address");
	CHECK_EQ_U64(off, 4, "offset into it");
	uint64_t file_off;
	CHECK(sym_file_vaddr_to_offset(file, vaddr, &file_off) == 0 && file_off == addr - start + pgoff,
	      "vaddr back to the same file offset");
	uint64_t sa = (uint64_t)(uintptr_t)&symbolize_static_target;
	CHECK(test_self_mapping(sa, file, sizeof(file), &start, &pgoff) == 0 &&
	      sym_elf_offset_to_vaddr(e, sa - start + pgoff, &vaddr) == 0, "static function's vaddr");
	CHECK_STR(sym_elf_lookup(e, vaddr, &off), "symbolize_static_target", "static function from .symtab");
	CHECK_EQ_U64(off, 0, "at its start");
	CHECK(sym_elf_offset_to_vaddr(e, UINT64_MAX - 8, &vaddr) == -ENOENT, "offset outside PT_LOADs");
	struct fn_scan sc = { .want = "symbolize_test_target" };
	CHECK(sym_elf_foreach(e, scan_fn, &sc) == 0, "foreach");
	CHECK_EQ_U64(sc.seen, 1, "each function listed once");
	CHECK(sc.gap != 0, "a padding gap after a sized function exists");
	CHECK(sym_elf_lookup(e, sc.gap, &off) == NULL, "size-aware: padding after a function is unnamed");
	sym_elf_free(e);
	CHECK(sym_elf_load("tests/unit/fixtures/kallsyms.txt", NULL, &e) == -ENOEXEC, "not ELF: -ENOEXEC");
	CHECK(sym_elf_load("/nonexistent/file", NULL, &e) == -ENOENT, "missing: -ENOENT");
}

/* Looks VADDR up in PATH opened with DEBUG_ROOT. */
static const char *name_in(const char *path, const char *debug_root, uint64_t vaddr,
			   char *buf, size_t len)
{
	struct sym_elf *e = NULL;
	const char *name = NULL;
	if (sym_elf_load(path, debug_root, &e) == 0)
		name = sym_elf_lookup(e, vaddr, NULL);
	snprintf(buf, len, "%s", name ? name : "(none)");
	sym_elf_free(e);
	return buf;
}

/* PATH's ELF entry point, as readelf says: 0 when it cannot be read */
static uint64_t entry_of(const char *path)
{
	char cmd[4400], line[64] = "";
	snprintf(cmd, sizeof(cmd), "readelf -h '%s' | awk '/Entry point/ { print $4 }'", path);
	FILE *p = popen(cmd, "r");
	if (p && !fgets(line, sizeof(line), p))
		line[0] = 0;
	if (p)
		pclose(p);
	return strtoull(line, NULL, 16);
}

static int sh(const char *fmt, const char *dir, const char *arg)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), fmt, dir, arg, dir, dir, dir);
	return system(cmd);
}

/* Stripped copies of this binary: the static function is named only
 * through build-id debuginfo, a .gnu_debuglink or MiniDebugInfo. */
static void test_debuginfo(void)
{
	char dir[] = "/tmp/ftstack-dbg-XXXXXX", file[4096], path[4200], dbg[4200], nm[256];
	uint64_t vaddr;
	CHECK(mkdtemp(dir) != NULL, "debuginfo dir");
	CHECK(own_vaddr((uint64_t)(uintptr_t)&symbolize_static_target, file, sizeof(file), &vaddr) == 0,
	      "static function's vaddr");
	CHECK(sh("cp '%2$s' %1$s/bin && objcopy --only-keep-debug %3$s/bin %4$s/bin.debug && "
		 "objcopy --strip-all %5$s/bin %5$s/stripped", dir, file) == 0, "objcopy strip");
	snprintf(path, sizeof(path), "%s/stripped", dir);
	CHECK_STR(name_in(path, "/nonexistent", vaddr, nm, sizeof(nm)), "(none)", "stripped: unnamed");
	/* the entry code: _start by its own symbol, or named so when stripped,
	 * as far as the unwinder takes it for the outermost frame */
	uint64_t entry = entry_of(path);
	CHECK(entry != 0, "the program has an entry point");
	snprintf(dbg, sizeof(dbg), "%s/bin", dir);
	CHECK_STR(name_in(dbg, "/nonexistent", entry, nm, sizeof(nm)), "_start", "entry: its own _start");
	CHECK_STR(name_in(path, "/nonexistent", entry, nm, sizeof(nm)), "_start",
		  "stripped: the entry point named _start");
	CHECK_STR(name_in(path, "/nonexistent", entry + 0x21, nm, sizeof(nm)), "_start",
		  "stripped: _start's call of __libc_start_main named _start");
	CHECK(strcmp(name_in(path, "/nonexistent", entry + SYM_ENTRY_SPAN, nm, sizeof(nm)), "_start") != 0,
	      "stripped: beyond the entry code, not _start (%s)", nm);
	CHECK(sh("id=$(readelf -n %1$s/bin | awk '/Build ID/ {print $3}') && [ -n \"$id\" ] && "
		 "mkdir -p %3$s/debug/.build-id/$(echo $id | cut -c1-2) && cp %4$s/bin.debug "
		 "%5$s/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug%2$s",
		 dir, "") == 0, "build-id debuginfo tree");
	snprintf(dbg, sizeof(dbg), "%s/debug", dir);
	CHECK_STR(name_in(path, dbg, vaddr, nm, sizeof(nm)), "symbolize_static_target", "named by build-id");
	CHECK(sh("cd %1$s && objcopy --add-gnu-debuglink=bin.debug stripped linked%2$s", dir, "") == 0,
	      "debuglink added");
	snprintf(path, sizeof(path), "%s/linked", dir);
	CHECK_STR(name_in(path, "/nonexistent", vaddr, nm, sizeof(nm)), "symbolize_static_target",
		  "named by .gnu_debuglink beside the file");
	CHECK(sh("cd %1$s && mkdir .debug && mv bin.debug .debug/%2$s", dir, "") == 0, "into .debug/");
	CHECK_STR(name_in(path, "/nonexistent", vaddr, nm, sizeof(nm)), "symbolize_static_target",
		  "named by .gnu_debuglink in .debug/");
	CHECK(sh("cd %1$s && objcopy --only-keep-debug bin mini && xz mini && "
		 "objcopy --add-section .gnu_debugdata=mini.xz stripped minidebug%2$s", dir, "") == 0,
	      "MiniDebugInfo built");
	snprintf(path, sizeof(path), "%s/minidebug", dir);
	CHECK_STR(name_in(path, "/nonexistent", vaddr, nm, sizeof(nm)), "symbolize_static_target",
		  "named by .gnu_debugdata");
	CHECK(sh("rm -rf %1$s%2$s", dir, "") == 0, "debuginfo dir removed");
}

static void test_procs_self(void)
{
	struct sym_procs *p = NULL;
	struct sym_frame f;
	CHECK(sym_procs_alloc("/proc", "/usr/lib/debug", &p) == 0, "procs create");
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

/* Writes TEXT to ROOT/REL, making its directories. */
static void fake_file(const char *root, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *sl = strchr(path + strlen(root) + 1, '/'); sl; sl = strchr(sl + 1, '/')) {
		*sl = '\0';
		mkdir(path, 0755);
		*sl = '/';
	}
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A fake /proc where pid 42 runs this test binary: exec, fork and exit
 * histories are followed and exited processes still symbolize. */
static void test_procs_history(void)
{
	char root[] = "/tmp/ftstack-proc-XXXXXX", path[512], file[4096];
	uint64_t start, pgoff;
	uint64_t a = (uint64_t)(uintptr_t)&symbolize_test_target;
	CHECK(mkdtemp(root) != NULL, "fake proc root");
	CHECK(test_self_mapping(a, file, sizeof(file), &start, &pgoff) == 0, "own mapping");
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
	fprintf(f, "7f0000000000-7f0000100000 rw-p 00000000 00:00 0    %s\n", file);
	fprintf(f, "7fff00000000-7fff00002000 r-xp 00000000 00:00 0                          [vdso]\n");
	fclose(f);
	struct sym_procs *p = NULL;
	struct sym_frame fr;
	sym_procs_alloc(root, NULL, &p);
	CHECK(sym_procs_snapshot(p, 42, 1000) == 0, "snapshot from fake proc");
	CHECK(sym_procs_snapshot(p, 43, 1000) == -ESRCH, "no such pid: -ESRCH");
	CHECK_STR(sym_procs_comm_at(p, 42, 1500), "fakecomm", "comm from the snapshot");
	CHECK(sym_procs_known(p, 42) && !sym_procs_known(p, 50), "known after snapshot only");
	CHECK(sym_procs_lookup(p, 42, 500, a, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "sample stamped before the snapshot");
	CHECK(fr.dso && strcmp(fr.dso, file) == 0, "dso is the mapped path");
	CHECK_EQ_U64(fr.dso_offset, a - start + pgoff, "dso offset");
	CHECK(sym_procs_lookup(p, 42, 1500, 0x7f0000000010, &fr) == -ENOENT, "non-exec mapping skipped");
	/* pid 44: a [vdso] lowest, the program, then a library above it */
	fake_file(root, "44/maps", "1000-2000 r-xp 00000000 00:00 0 [vdso]\n"
		  "7f2000000000-7f2000100000 r-xp 00000000 00:00 0 /lib/libfake.so\n"
		  "555555554000-555555654000 r-xp 00000000 00:00 0 /usr/bin/fakeprog\n");
	fake_file(root, "44/comm", "fakeprog\n");
	const char *prog = NULL;
	CHECK(sym_procs_snapshot(p, 44, 1000) == 0 && sym_procs_program(p, 44, 1500, &prog) == 0 &&
	      prog && strcmp(prog, "/usr/bin/fakeprog") == 0,
	      "the program: the lowest file mapped, not [vdso] nor a library (%s)", prog ? prog : "null");
	CHECK(sym_procs_program(p, 50, 1500, &prog) == -ENOENT, "no program of an unknown pid");
	CHECK(sym_procs_lookup(p, 42, 1500, 0x7fff00000010, &fr) == 0 && fr.name == NULL &&
	      fr.dso && strcmp(fr.dso, "[vdso]") == 0, "[vdso] kept, unnamed");
	sym_procs_fork(p, 42, 42, 42, 1800); /* a thread: nothing changes */
	CHECK(sym_procs_lookup(p, 42, 1900, a, &fr) == 0 && fr.name, "thread creation keeps maps");
	sym_procs_fork(p, 60, 61, 61, 1800);
	CHECK(!sym_procs_known(p, 60), "fork of an unknown parent: still needs a snapshot");
	sym_procs_comm(p, 42, 1900, "renamed", false);
	CHECK_STR(sym_procs_comm_at(p, 42, 1850), "fakecomm", "comm before a rename");
	CHECK_STR(sym_procs_comm_at(p, 42, 1950), "renamed", "comm after a rename");
	CHECK(sym_procs_comm_at(p, 99, 1950) == NULL, "unknown pid: no comm");
	sym_procs_fork(p, 50, 42, 42, 2000);
	CHECK(sym_procs_known(p, 50), "forked child known");
	CHECK_STR(sym_procs_comm_at(p, 50, 2000), "renamed", "child inherits the comm");
	CHECK(sym_procs_lookup(p, 50, 2500, a, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "forked child inherits mappings");
	sym_procs_comm(p, 50, 3000, "newprog", true);
	CHECK(sym_procs_lookup(p, 50, 3500, a, &fr) == -ENOENT, "after exec: old mappings gone");
	CHECK(sym_procs_lookup(p, 50, 2500, a, &fr) == 0, "before exec: still named");
	CHECK_STR(sym_procs_comm_at(p, 50, 3500), "newprog", "comm after exec");
	CHECK_STR(sym_procs_comm_at(p, 50, 2500), "renamed", "comm before exec");
	sym_procs_mmap(p, 50, 3900, 0x20000000, 0x100000, pgoff, false, file, NULL);
	CHECK(sym_procs_lookup(p, 50, 4500, 0x20000000 + (a - start), &fr) == -ENOENT,
	      "non-exec MMAP2 ignored");
	sym_procs_mmap(p, 50, 4000, 0x10000000, 0x100000, pgoff, true, file, NULL);
	CHECK(sym_procs_lookup(p, 42, 4500, 0x10000000 + (a - start), &fr) == -ENOENT,
	      "the child's mapping is not the parent's");
	CHECK(sym_procs_lookup(p, 50, 4500, 0x10000000 + (a - start), &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "MMAP2 after exec names the new mapping");
	/* the history names it at any later time (an exited process too) */
	CHECK(sym_procs_lookup(p, 50, 6000, 0x10000000 + (a - start), &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "a time after the last record");
	CHECK(sym_procs_lookup(p, 50, 2500, a, &fr) == 0 && fr.name, "and its first generation too");
	/* a mapping replaced at the same address: the one in effect at TIME */
	sym_procs_mmap(p, 70, 100, 0x30000000, 0x1000, 0, true, "/nonexistent/old.so", NULL);
	sym_procs_mmap(p, 70, 200, 0x30000000, 0x1000, 0, true, "/nonexistent/new.so", NULL);
	CHECK(!sym_procs_known(p, 70), "MMAP2 alone does not make a history complete");
	CHECK(sym_procs_lookup(p, 70, 150, 0x30000010, &fr) == 0 && fr.dso &&
	      strcmp(fr.dso, "/nonexistent/old.so") == 0 && !fr.name, "older mapping at its time");
	CHECK(sym_procs_lookup(p, 70, 250, 0x30000010, &fr) == 0 && fr.dso &&
	      strcmp(fr.dso, "/nonexistent/new.so") == 0, "newer mapping after");
	CHECK(sym_procs_lookup(p, 70, 50, 0x30000010, &fr) == 0 && fr.dso &&
	      strcmp(fr.dso, "/nonexistent/old.so") == 0, "before both: the earliest");
	/* a child's samples decoded before its fork record (another CPU's
	 * ring), snapshot while a zombie: its records still name its frames */
	fake_file(root, "80/comm", "zombie\n");
	fake_file(root, "80/maps", "");
	CHECK(sym_procs_snapshot(p, 80, 3000) == 0 && sym_procs_known(p, 80), "zombie snapshot");
	sym_procs_fork(p, 80, 42, 42, 2000);
	sym_procs_comm(p, 80, 2100, "child", true);
	sym_procs_mmap(p, 80, 2200, 0x10000000, 0x100000, pgoff, true, file, NULL);
	CHECK(sym_procs_lookup(p, 80, 3500, 0x10000000 + (a - start), &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "records override a later snapshot");
	CHECK_STR(sym_procs_comm_at(p, 80, 3500), "child", "comm from the exec, not the snapshot");
	CHECK_STR(sym_procs_comm_at(p, 80, 2050), "renamed", "the parent's comm until the exec");
	/* a child's MMAP2 record decoded before its fork and exec records */
	sym_procs_mmap(p, 90, 2300, 0x10000000, 0x100000, pgoff, true, file, NULL);
	sym_procs_fork(p, 90, 42, 42, 2000);
	sym_procs_comm(p, 90, 2100, "child", true);
	CHECK(sym_procs_lookup(p, 90, 2500, 0x10000000 + (a - start), &fr) == 0 && fr.name &&
	      strcmp(fr.name, "symbolize_test_target") == 0, "mmap before its exec record: named");
	CHECK(sym_procs_lookup(p, 90, 2050, a, &fr) == 0 && fr.name, "the fork's maps before the exec");
	/* both races at once: a sample snapshots a zombie, then its records */
	fake_file(root, "81/maps", "");
	CHECK(sym_procs_snapshot(p, 81, 2250) == 0, "zombie snapshot");
	sym_procs_mmap(p, 81, 2300, 0x10000000, 0x100000, pgoff, true, file, NULL);
	sym_procs_comm(p, 81, 2100, "child", true);
	CHECK(sym_procs_lookup(p, 81, 2500, 0x10000000 + (a - start), &fr) == 0 && fr.name,
	      "a dropped snapshot keeps the mmap records it held");
	/* threads: each its own comm; a new one starts with its creator's */
	sym_procs_thread(p, 42, 43, 42, 2000);
	CHECK(sym_procs_thread_known(p, 43), "created thread known");
	CHECK_STR(sym_procs_comm_at(p, 43, 2050), "renamed", "a new thread: its creator's comm");
	sym_procs_comm(p, 43, 2100, "worker", false);
	CHECK_STR(sym_procs_comm_at(p, 43, 2200), "worker", "a thread renamed");
	CHECK_STR(sym_procs_comm_at(p, 42, 2200), "renamed", "its process keeps its comm");
	sym_procs_fork(p, 44, 42, 43, 2300);
	CHECK_STR(sym_procs_comm_at(p, 44, 2400), "worker", "a process forked by a thread: its comm");
	fake_file(root, "42/task/45/comm", "late-name\n");
	CHECK(!sym_procs_thread_known(p, 45) && sym_procs_thread_snapshot(p, 42, 45, 2600) == 0,
	      "thread snapshot");
	CHECK_STR(sym_procs_comm_at(p, 45, 2600), "late-name", "comm read from /proc");
	sym_procs_thread(p, 42, 45, 42, 2500); /* its creation decoded after its samples */
	CHECK_STR(sym_procs_comm_at(p, 45, 2600), "renamed", "the creation record wins");
	CHECK(sym_procs_thread_snapshot(p, 42, 46, 2600) == -ESRCH && sym_procs_thread_known(p, 46),
	      "a thread gone: tried once");
	/* a snapshot older than an exec stays valid until that exec */
	sym_procs_comm(p, 42, 5000, "exec42", true);
	CHECK(sym_procs_lookup(p, 42, 4000, a, &fr) == 0 && fr.name, "snapshot before an exec kept");
	CHECK(sym_procs_lookup(p, 42, 5500, a, &fr) == -ENOENT, "not after it");
	sym_procs_free(p);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK(system(path) == 0, "fixture removed");
}

/* JIT code named by /tmp/perf-PID.map, in a process history too. */
static void test_perfmap(void)
{
	char root[] = "/tmp/ftstack-perfmap-XXXXXX", path[512];
	CHECK(mkdtemp(root) != NULL, "perf map dir");
	fake_file(root, "perf-77.map",
		  "7f0000001000 100 LazyCompile:~hot /app/a.js:10\n"
		  "not an entry\n"
		  "7f0000002000 zz bad size\n"
		  "0x7f0000003000 40 with_0x\n"
		  "7f0000001000 80 Function:~hot /app/a.js:10\n" /* the code replaced */
		  "7f0000004000 0 empty\n");
	struct sym_perfmap *m = NULL;
	uint64_t off = 0;
	snprintf(path, sizeof(path), "%s/perf-77.map", root);
	CHECK(sym_perfmap_load(path, &m) == 0, "perf map loads");
	CHECK_STR(sym_perfmap_lookup(m, 0x7f0000001010, &off), "Function:~hot /app/a.js:10",
		  "newest entry at one start, name with spaces");
	CHECK(off == 0x10, "offset into the entry");
	CHECK(sym_perfmap_lookup(m, 0x7f0000001090, &off) == NULL, "past the newest entry's size");
	CHECK_STR(sym_perfmap_lookup(m, 0x7f000000303f, &off), "with_0x", "0x prefix read");
	CHECK(sym_perfmap_lookup(m, 0x7f0000002000, &off) == NULL, "bad lines skipped");
	CHECK(sym_perfmap_lookup(m, 0x7f0000004000, &off) == NULL, "size 0 skipped");
	CHECK(sym_perfmap_lookup(m, 0x1000, &off) == NULL, "below every entry");
	sym_perfmap_free(m);
	snprintf(path, sizeof(path), "%s/none.map", root);
	CHECK(sym_perfmap_load(path, &m) == -ENOENT, "no file: -ENOENT");

	struct sym_procs *p = NULL;
	struct sym_frame fr;
	sym_procs_alloc(root, NULL, &p);
	sym_procs_set_perfmap_dir(p, root);
	sym_procs_mmap(p, 77, 100, 0x7f0000000000, 0x10000, 0, true, "//anon", NULL);
	CHECK(sym_procs_lookup(p, 77, 200, 0x7f0000003008, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "with_0x") == 0 && fr.offset == 8, "anonymous code named by the perf map");
	CHECK(sym_procs_lookup(p, 78, 200, 0x7f0000003008, &fr) == -ENOENT, "another pid: its own map");
	/* the runtime compiles more and appends: a map read before is read again */
	const char *early = sym_procs_lookup(p, 77, 200, 0x7f0000003008, &fr) == 0 ? fr.name : NULL;
	snprintf(path, sizeof(path), "%s/perf-77.map", root);
	FILE *more = fopen(path, "a");
	if (more) {
		fputs("7f0000006000 20 compiled_later\n", more);
		fclose(more);
	}
	CHECK(sym_procs_lookup(p, 77, 200, 0x7f0000006010, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "compiled_later") == 0 && early && strcmp(early, "with_0x") == 0,
	      "code compiled after the map was read: named once the file grew, the earlier name kept");
	/* a map written only after the first miss (a JVM writes it as it exits) */
	sym_procs_mmap(p, 79, 100, 0x7f0000000000, 0x10000, 0, true, "//anon", NULL);
	CHECK(sym_procs_lookup(p, 79, 200, 0x7f0000007000, &fr) == 0 && !fr.name,
	      "no map yet: unnamed");
	fake_file(root, "perf-79.map", "7f0000007000 10 written_at_exit\n");
	CHECK(sym_procs_lookup(p, 79, 200, 0x7f0000007004, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "written_at_exit") == 0, "the map written since: named");
	CHECK(sym_procs_has_perfmap(p, 77) && sym_procs_has_perfmap(p, 79) &&
	      !sym_procs_has_perfmap(p, 78) && !sym_procs_has_perfmap(p, 4242),
	      "has a perf map: 77 and 79, not 78 (no map) nor 4242 (unknown)");
	/* an address of an ELF file the process maps (a stripped one, named by
	 * .dynsym alone: /bin/true's code) is not the perf map's, as perf asks
	 * the map only of anonymous memory: bash's frames stat'ed the map's
	 * path at every lookup */
	fake_file(root, "perf-80.map", "7f0000001000 1000 not_the_maps\n");
	sym_procs_mmap(p, 80, 100, 0x7f0000000000, 0x10000, 0, true, "/bin/true", NULL);
	CHECK(sym_procs_lookup(p, 80, 200, 0x7f0000001010, &fr) == 0 &&
	      (!fr.name || strcmp(fr.name, "not_the_maps") != 0) && fr.dso &&
	      strcmp(fr.dso, "/bin/true") == 0,
	      "an address of a mapped ELF file: not named by the perf map (%s)",
	      fr.name ? fr.name : "unnamed");
	/* a process in a container: its own /tmp, its own pid there */
	fake_file(root, "55/status", "Name:\tnode\nNSpid:\t55\t7\n");
	fake_file(root, "55/root/tmp/perf-7.map", "7f0000005000 10 ns_jit\n");
	sym_procs_mmap(p, 55, 100, 0x7f0000000000, 0x10000, 0, true, "//anon", NULL);
	CHECK(sym_procs_lookup(p, 55, 200, 0x7f0000005004, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "ns_jit") == 0, "container: /proc/PID/root/tmp/perf-NSPID.map");
	fake_file(root, "55/root/tmp/perf-7.map",
		  "7f0000005000 10 ns_jit\n7f0000008000 10 ns_compiled_later\n");
	/* its status read once: what it says now is not read */
	fake_file(root, "55/status", "Name:\tnode\nNSpid:\t55\t9\n");
	CHECK(sym_procs_lookup(p, 55, 200, 0x7f0000008004, &fr) == 0 && fr.name &&
	      strcmp(fr.name, "ns_compiled_later") == 0,
	      "container: its map read again once it grew (the same path as first read, its "
	      "NSpid read once)");
	sym_procs_free(p);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK(system(path) == 0, "perf map dir removed");
}

static void test_demangle(void)
{
	CHECK(sym_demangle_load_error() == NULL, "no demangler asked for yet: nothing to say");
	char *d = sym_demangle("_ZN2ns6workerEl");
	CHECK_STR(d, "ns::worker(long)", "C++ demangled");
	free(d);
	d = sym_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	CHECK_STR(d, "core::fmt::write", "Rust legacy: no hash");
	free(d);
	d = sym_demangle("_ZN3foo3barEv.cold");
	CHECK_STR(d, "foo::bar() [clone .cold]", "a clone suffix");
	free(d);
	CHECK(sym_demangle("main") == NULL, "plain C: NULL");
	CHECK(sym_demangle("_Z") == NULL && sym_demangle("_Zgarbage") == NULL, "not mangled: NULL");
	CHECK(sym_demangle(NULL) == NULL, "NULL: NULL");
	CHECK(sym_demangle_load_error() == NULL, "libstdc++ loaded: nothing to say");
}

/* The frame-pointer verdict reads the .eh_frame_hdr table by the
 * unwinder's rules (sym_eh_frame_hdr_count, symbolize_unwind_test.c): a
 * copy of this test whose header breaks one of them is judged not at all. */
static void test_fp_share_header(void)
{
	uint8_t *exe = NULL;
	size_t size = 0, at = 0;
	FILE *f = fopen("/proc/self/exe", "rb");
	char tmp[] = "/tmp/ftstack-fp-XXXXXX";
	int fd = mkstemp(tmp);
	if (f && fseek(f, 0, SEEK_END) == 0 && (size = (size_t)ftell(f)) > sizeof(Elf64_Ehdr) &&
	    (exe = malloc(size)) && fseek(f, 0, SEEK_SET) == 0 && fread(exe, 1, size, f) == size) {
		Elf64_Ehdr eh;
		memcpy(&eh, exe, sizeof(eh));
		for (size_t i = 0; i < eh.e_phnum && eh.e_phoff + (i + 1) * sizeof(Elf64_Phdr) <= size; i++) {
			Elf64_Phdr ph;
			memcpy(&ph, exe + eh.e_phoff + i * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_GNU_EH_FRAME && ph.p_offset + 12 <= size)
				at = ph.p_offset;
		}
	}
	if (f)
		fclose(f);
	int as_built = -1, sdata8 = 0, none = 0;
	if (at && fd >= 0 && pwrite(fd, exe, size, 0) == (ssize_t)size) {
		as_built = sym_elf_fp_share(tmp);
		uint8_t v = DW_EH_PE_pcrel | DW_EH_PE_sdata8, zero[4] = { 0 };
		if (pwrite(fd, &v, 1, (off_t)at + 1) == 1)
			sdata8 = sym_elf_fp_share(tmp);
		if (pwrite(fd, exe + at + 1, 1, (off_t)at + 1) == 1 && pwrite(fd, zero, 4, (off_t)at + 8) == 4)
			none = sym_elf_fp_share(tmp);
	}
	CHECK(as_built >= 0 && as_built <= 1000, "a copy of this test: judged (%d per mille)", as_built);
	CHECK(sdata8 == -ENOENT && none == -ENOENT,
	      "its header with an 8-byte eh_frame_ptr (%d), or no pair (%d): not judged", sdata8, none);
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(exe);
}

int main(void)
{
	test_kallsyms();
	test_elf();
	test_debuginfo();
	test_procs_self();
	test_procs_history();
	test_perfmap();
	test_demangle();
	test_fp_share_header();
	CHECK_DONE();
}
