/* symbolize/vdso.c: the vDSO's frames named and unwound from ftstack's own
 * image: the image found, its symbols read (its own names over their weak
 * aliases), and a process's "[vdso]" mapping named through it. The
 * symbol's address is found in .dynsym, apart from the symbol table under
 * test. */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

/* NAME's value in the image's .dynsym (libelf's, not the loader under
 * test), 0 when none */
static uint64_t dynsym(const uint8_t *img, size_t len, const char *name)
{
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)img, len);
	uint64_t v = 0;
	if (e && sym_elf_dynsym(e, name, &v) < 0)
		v = 0;
	elf_end(e);
	return v;
}

int main(void)
{
	const uint8_t *img;
	size_t len;
	if (sym_vdso_image(&img, &len) < 0) {
		SKIP("this process has no vDSO (valgrind maps none; or vdso=0 on the kernel's command line)", "vdso checks");
		CHECK_DONE();
	}
	CHECK(img == (const uint8_t *)getauxval(AT_SYSINFO_EHDR), "the image the auxiliary vector names");
	/* the kernel's mapping, as /proc/self/maps says: the image lies within
	 * it and fills all but its last page */
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo = 0, hi = 0;
	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	if (maps)
		fclose(maps);
	CHECK(lo == (uintptr_t)img && len <= hi - lo && len > hi - lo - 4096,
	      "%zu bytes, in its mapping of %lu", len, hi - lo);
	CHECK(sym_vdso_is("[vdso]") && !sym_vdso_is("[vsyscall]") && !sym_vdso_is("/lib/[vdso]"),
	      "the vDSO's mapping by its name");

	uint64_t cg = dynsym(img, len, "__vdso_clock_gettime");
	CHECK(cg != 0 && cg == dynsym(img, len, "clock_gettime"),
	      "__vdso_clock_gettime and its weak alias clock_gettime at 0x%" PRIx64, cg);
	struct sym_elf *e = NULL;
	uint64_t off = 0;
	CHECK(sym_elf_load_image(img, len, &e) == 0, "the image's symbols read");
	CHECK_STR(sym_elf_lookup(e, cg + 4, &off), "__vdso_clock_gettime",
		  "a frame in it named as perf names it, not by its alias");
	CHECK_EQ_U64(off, 4, "its offset");
	size_t idn = 0;
	CHECK(sym_elf_build_id(e, &idn) && idn == 20, "its build-id (%zu bytes)", idn);
	sym_elf_free(e);
	static const uint8_t junk[64] = { 0x7f, 'X' };
	CHECK(sym_elf_load_image(junk, sizeof(junk), &e) == -ENOEXEC, "not ELF: -ENOEXEC");

	/* this process's own maps: [vdso] named through the image */
	struct sym_procs *p = NULL;
	struct sym_frame f;
	uint32_t me = (uint32_t)getpid();
	uint64_t at = (uint64_t)(uintptr_t)img + cg + 4;
	CHECK(sym_procs_alloc("/proc", "/usr/lib/debug", &p) == 0 && sym_procs_snapshot(p, me, 100) == 0,
	      "this process's maps");
	CHECK(sym_procs_lookup(p, me, 200, at, &f) == 0, "an address in [vdso] found");
	CHECK_STR(f.name, "__vdso_clock_gettime", "named");
	CHECK_STR(f.dso, "[vdso]", "its file");
	const char *path = NULL;
	uint64_t bias = 0;
	CHECK(sym_procs_module_read_path(p, me, 200, at, &path, &bias, NULL) == 0 && path &&
	      strcmp(path, "[vdso]") == 0 && bias == (uint64_t)(uintptr_t)img,
	      "the unwinder's file: [vdso], biased by its address");
	sym_procs_free(p);
	CHECK_DONE();
}
