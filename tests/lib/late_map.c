/* Test workload for the order of records across CPUs: N getppid system
 * calls made from code the process mapped on another CPU than the one its
 * calls run on.
 *   late_map N
 * It must start on CPU 1 (ftstack runs under `taskset -c 1`, its command
 * inherits that), so its exec and first mappings go to CPU 1's ring. On
 * CPU 0 it maps its own text a second time (an mmap record in CPU 0's
 * ring, newer than CPU 1's first records); back on CPU 1, main -> run
 * calls late_loop through that second mapping, N times round a frameless
 * loop. A frame-pointer walk from the system call skips run (late_loop
 * keeps no frame pointer); the CFI of the second mapping's file finds it,
 * if the mmap record was read before the samples. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

long late_loop(long n);
/* n getppid calls (x86-64: 110) in a frame of 24 bytes without rbp */
__asm__(".text\n"
	".globl late_loop\n"
	".type late_loop, @function\n"
	"late_loop:\n"
	".cfi_startproc\n"
	"	sub $24, %rsp\n"
	"	.cfi_adjust_cfa_offset 24\n"
	"1:	test %rdi, %rdi\n"
	"	jz 2f\n"
	"	mov $110, %eax\n"
	"	syscall\n"
	"	dec %rdi\n"
	"	jmp 1b\n"
	"2:	add $24, %rsp\n"
	"	.cfi_adjust_cfa_offset -24\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size late_loop, .-late_loop\n");

static int on_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The mapping holding ADDR in /proc/self/maps: its bounds and file offset. */
static int mapping_of(uintptr_t addr, uintptr_t *start, uintptr_t *end, uint64_t *pgoff)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = -1;
	while (f && found && fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		uint64_t off;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %" SCNx64, &lo, &hi, &off) == 3 &&
		    addr >= lo && addr < hi) {
			*start = lo;
			*end = hi;
			*pgoff = off;
			found = 0;
		}
	}
	if (f)
		fclose(f);
	return found;
}

__attribute__((noinline)) long run(long (*fn)(long), long n)
{
	return fn(n);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	uintptr_t start, end;
	uint64_t pgoff;
	if (sched_getcpu() != 1 || mapping_of((uintptr_t)late_loop, &start, &end, &pgoff) < 0) {
		fprintf(stderr, "late_map: must start on CPU 1 (taskset -c 1)\n");
		return 2;
	}
	int fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || on_cpu(0) < 0)
		return 1;
	uint8_t *again = mmap(NULL, end - start, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
			      (off_t)pgoff);
	if (again == MAP_FAILED || on_cpu(1) < 0)
		return 1;
	long (*fn)(long) = (long (*)(long))(void *)(again + ((uintptr_t)late_loop - start));
	return (int)run(fn, n);
}
