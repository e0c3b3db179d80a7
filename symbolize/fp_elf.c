/* Whether a binary keeps frame pointers, for the summary's advice on cut
 * user stacks: `--call-graph fp` walks a deep stack whole only through
 * functions that keep one (Debian's python3, perl and cc1 keep none: there
 * fp gives a fraction of the stacks, and only a bigger copy for CFI helps).
 * Judged from the code itself: the functions the .eh_frame_hdr table lists
 * (every function with CFI, sorted by start) are sampled evenly, and a
 * function keeps a frame pointer when it starts with push %rbp;
 * mov %rsp,%rbp (after an endbr64). gcc and clang write that prologue in
 * every function under -fno-omit-frame-pointer (leaves too, unless
 * -momit-leaf-frame-pointer), and in almost none otherwise (a function
 * with a variable-sized frame). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

#define FP_SAMPLE 512 /* functions looked at, evenly spread over the table */

/* The file bytes at vaddr V (LEN of them), or NULL. */
static const uint8_t *at_vaddr(Elf *e, const uint8_t *map, size_t size, uint64_t v, size_t len)
{
	size_t nph;
	if (elf_getphdrnum(e, &nph) < 0)
		return NULL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || v < ph.p_vaddr ||
		    v - ph.p_vaddr > ph.p_filesz || ph.p_filesz - (v - ph.p_vaddr) < len ||
		    ph.p_offset > size || size - ph.p_offset < ph.p_filesz)
			continue;
		return map + ph.p_offset + (v - ph.p_vaddr);
	}
	return NULL;
}

/* True when the code at P starts a frame: [endbr64] push %rbp; mov %rsp,%rbp. */
static bool fp_prologue(const uint8_t *p)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	if (memcmp(p, endbr64, 4) == 0)
		p += 4;
	return p[0] == 0x55 && p[1] == 0x48 &&
	       ((p[2] == 0x89 && p[3] == 0xe5) || (p[2] == 0x8b && p[3] == 0xec));
}

/* The share (per mille) of sampled functions of E keeping a frame pointer. */
static int judge(Elf *e, const uint8_t *map, size_t size)
{
	size_t nph;
	GElf_Phdr eh = { 0 };
	if (elf_getphdrnum(e, &nph) < 0)
		return -EINVAL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			eh = ph;
	}
	if (eh.p_type != PT_GNU_EH_FRAME || eh.p_offset > size || eh.p_filesz > size - eh.p_offset)
		return -ENOENT;
	const uint8_t *h = map + eh.p_offset;
	long n = sym_eh_frame_hdr_count(h, eh.p_filesz);
	if (n < 0)
		return -ENOENT;
	uint32_t step = n > FP_SAMPLE ? (uint32_t)n / FP_SAMPLE : 1, seen = 0, fp = 0;
	for (uint32_t i = 0; i < (uint32_t)n; i += step) {
		int32_t loc; /* the function's start, from the header */
		memcpy(&loc, h + SYM_EH_TABLE_OFF + (size_t)i * 8, sizeof(loc));
		const uint8_t *code = at_vaddr(e, map, size, eh.p_vaddr + (int64_t)loc, 8);
		if (!code)
			continue;
		seen++;
		fp += fp_prologue(code);
	}
	return seen ? (int)((uint64_t)fp * 1000 / seen) : -ENOENT;
}

int sym_elf_fp_share(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -ENOENT;
	struct stat st;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -EINVAL;
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	elf_version(EV_CURRENT);
	Elf *e = elf_memory(map, (size_t)st.st_size);
	if (e)
		ret = judge(e, map, (size_t)st.st_size);
	elf_end(e);
	munmap(map, (size_t)st.st_size);
	return ret;
}
