/* Test workload: generated code, as a JIT makes it. A few bytes of machine
 * code copied to anonymous memory make a getppid call with a frame pointer
 * (push rbp; mov rbp,rsp; syscall; pop rbp; ret); /tmp/perf-PID.map names
 * it "jit_getppid", and main calls it N times through jit_caller. The map
 * is left behind, as JITs leave it, for the tracer to read after the exit;
 * its path goes to stderr for the test to remove it.
 *   jit_paths N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long (*jit_fn)(void);

__attribute__((noinline)) long jit_caller(jit_fn fn, long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += fn();
	return sum;
}

int main(int argc, char **argv)
{
	static const unsigned char code[] = {
		0x55,                                     /* push %rbp */
		0x48, 0x89, 0xe5,                         /* mov %rsp,%rbp */
		0xb8, SYS_getppid, 0x00, 0x00, 0x00,      /* mov $SYS_getppid,%eax */
		0x0f, 0x05,                               /* syscall */
		0x5d,                                     /* pop %rbp */
		0xc3,                                     /* ret */
	};
	if (argc != 2) {
		fprintf(stderr, "usage: jit_paths N\n");
		return 2;
	}
	long n = atol(argv[1]), page = sysconf(_SC_PAGESIZE);
	unsigned char *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem + 64, code, sizeof(code));
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC) < 0)
		return 1;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_getppid\n", (unsigned long)(mem + 64), sizeof(code));
	fclose(f);
	fprintf(stderr, "jit_paths: wrote %s\n", path);
	jit_caller((jit_fn)(void *)(mem + 64), n);
	return 0;
}
