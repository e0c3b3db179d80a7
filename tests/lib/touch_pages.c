/* Test workload for perf's page-fault event: touch() writes one byte in
 * each of N fresh anonymous pages, with transparent huge pages off for the
 * region, so it takes exactly N page faults, all with touch() as the leaf
 * of the user stack (the fault is taken at its store).
 *   touch_pages N */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) void touch(volatile char *p, long n, long page)
{
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, (size_t)(n * page), MADV_NOHUGEPAGE);
	touch(p, n, page);
	return 0;
}
