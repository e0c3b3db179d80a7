/* Shared inside symbolize/. */
#ifndef FTSTACK_SYMBOLIZE_INTERNAL_H
#define FTSTACK_SYMBOLIZE_INTERNAL_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* Opens PATH as an ELF file for reading (libelf initialised). Returns 0 with
 * *fd and *elf to release with elf_end() and close(), or -errno (-ENOEXEC:
 * not ELF). */
int sym_open_elf(const char *path, int *fd, Elf **elf);

/* For an array BASE of N entries of SIZE bytes, each starting with a
 * uint64_t address and sorted by it: returns how many have an address at
 * or below KEY (the entry containing KEY, if any, is the one before). */
static inline size_t sym_addr_upper_bound(const void *base, size_t n, size_t size, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (*(const uint64_t *)(const void *)((const char *)base + mid * size) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
