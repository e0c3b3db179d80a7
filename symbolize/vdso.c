/* The vDSO: the little ELF image the kernel maps into each process as
 * "[vdso]" (clock_gettime, gettimeofday, getcpu, time, getrandom). It is
 * no file a path opens, so its frames were named "[[vdso]]", taken for
 * JIT code, and walked by frame pointers where its CFI was needed. The
 * kernel maps the same image into every 64-bit process, ftstack's own
 * included: its symbols and unwind tables are read from ftstack's copy,
 * found through the auxiliary vector (AT_SYSINFO_EHDR), as perf takes its
 * own to name the vDSO of the processes it records. The whole image is
 * mapped, its section headers last: its length is where they end. */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>
#include "symbolize/internal.h"

int sym_vdso_image(const uint8_t **img, size_t *len)
{
	const uint8_t *at = (const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr eh;
	if (!at)
		return -ENOENT;
	memcpy(&eh, at, sizeof(eh)); /* the first page is mapped, whatever follows */
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum)
		return -ENOENT;
	*img = at;
	*len = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	return 0;
}

bool sym_vdso_is(const char *path)
{
	return strcmp(path, "[vdso]") == 0;
}
