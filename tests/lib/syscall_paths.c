/* Test workload for whole user stacks in count mode: N getppid calls made
 * through libc's syscall(), which keeps no frame pointer, from
 * call_getppid, which does: a frame-pointer walk from the system call
 * skips call_getppid.   syscall_paths N */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) long call_getppid(void)
{
	long r = syscall(SYS_getppid);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
	for (long i = 0; i < n; i++)
		sum += call_getppid();
	return sum == 0;
}
