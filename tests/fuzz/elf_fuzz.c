/* libFuzzer target of symbolize/elf.c: the bytes as an ELF file (seeded
 * with the binaries the tests build, so mutations give truncated files, bad
 * section and program headers, .gnu_debuglink and build-id notes pointing
 * anywhere, corrupt .gnu_debugdata xz streams). The debug root is a folder
 * holding a copy of the same bytes under the build-id and debuglink names
 * the file might ask for, so the separate-debuginfo paths run too. Every
 * symbol is looked up again by its address. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[96], dbg[96];

static int each(void *ctx, const char *name, uint64_t vaddr, uint64_t size)
{
	const struct sym_elf *e = ctx;
	uint64_t off;
	const char *n = sym_elf_lookup(e, vaddr, &off);
	volatile size_t sum = strlen(name) + size + (n ? strlen(n) + off : 0);
	(void)sum;
	return 0;
}

static void put(const char *p, const uint8_t *data, size_t size)
{
	FILE *f = fopen(p, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/dev/shm/ftstack-fuzz-elf.%d", (int)getpid());
		mkdir(dir, 0700);
		snprintf(path, sizeof(path), "%s/bin", dir);
		snprintf(dbg, sizeof(dbg), "%s/dbg", dir);
		mkdir(dbg, 0700);
	}
	put(path, data, size);
	/* "bin.debug" next to it: what a .gnu_debuglink usually names */
	char side[128];
	snprintf(side, sizeof(side), "%s/bin.debug", dir);
	put(side, data, size > 64 ? size - 64 : size);
	struct sym_elf *e;
	if (sym_elf_load(path, dbg, &e) == 0) {
		uint64_t v;
		sym_elf_foreach(e, each, e);
		for (uint64_t off = 0; off < 0x10000; off += 0x1000)
			if (sym_elf_offset_to_vaddr(e, off, &v) == 0)
				each(e, "", v, 0);
		(void)sym_elf_is_dyn(e);
		sym_elf_free(e);
	}
	uint64_t off;
	(void)sym_file_vaddr_to_offset(path, size, &off);
	unlink(side);
	return 0;
}
