/* A stack copied as the kernel copies it for a sample, for the unwind
 * tests (symbolize_unwind_test.c, symbolize_unwind_fp_test.c). */
#ifndef FTSTACK_TEST_STACK_COPY_H
#define FTSTACK_TEST_STACK_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

/* N bytes at SRC, redzones and all, into DST: through process_vm_readv on
 * this process, so neither ASan nor valgrind takes the bytes below sp for
 * a bad read or their content for undefined (the kernel's copy is
 * defined). The loop is the fallback where the call is refused; ASan must
 * not check its reads (the volatile source keeps it from becoming an
 * intercepted memcpy). */
__attribute__((no_sanitize("address"))) static inline void copy_raw(uint8_t *dst, uint64_t src,
								     size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)src, n };
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n)
		return;
	const volatile uint8_t *from = (const volatile uint8_t *)(uintptr_t)src;
	for (size_t i = 0; i < n; i++)
		dst[i] = from[i];
}

#endif
