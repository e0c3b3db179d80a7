/* The vDSO: the little ELF image the kernel maps into each process as
 * "[vdso]" (clock_gettime, gettimeofday, getcpu, time, getrandom). It is
 * no file a path opens, so its frames were named "[[vdso]]", taken for
 * JIT code, and walked by frame pointers where its CFI was needed. The
 * kernel maps the same image into every 64-bit process, ftstack's own
 * included: its symbols and unwind tables are read from ftstack's copy,
 * found through the auxiliary vector (AT_SYSINFO_EHDR) and as long as
 * /proc/self/maps says (the whole image is mapped, section headers too),
 * as perf takes its own to name the vDSO of the processes it records. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include "symbolize/internal.h"

static struct {
	pthread_once_t once;
	const uint8_t *img;
	size_t len;
} vdso = { .once = PTHREAD_ONCE_INIT };

static void find_vdso(void)
{
	uintptr_t at = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	FILE *f = at ? fopen("/proc/self/maps", "re") : NULL;
	char line[512];
	unsigned long lo, hi;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == at && hi > lo &&
		    strstr(line, "[vdso]")) {
			vdso.img = (const uint8_t *)at;
			vdso.len = hi - lo;
			break;
		}
	if (f)
		fclose(f);
}

int sym_vdso_image(const uint8_t **img, size_t *len)
{
	pthread_once(&vdso.once, find_vdso);
	*img = vdso.img;
	*len = vdso.len;
	return vdso.img ? 0 : -ENOENT;
}

bool sym_vdso_is(const char *path)
{
	return strcmp(path, "[vdso]") == 0;
}
