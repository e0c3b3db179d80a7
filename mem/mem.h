/* mem: the one way an array grows, for every folder.
 *
 * An array that grows by doubling keeps its capacity beside it; MEM_GROW
 * makes room for NEED items, from FIRST items the first time, doubling
 * after, and takes the capacity as a size_t or a uint32_t. Nothing else
 * lives here: this folder is below every other, and calls none of them. */
#ifndef FTSTACK_MEM_H
#define FTSTACK_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Makes *ARR hold at least NEED items of ELEM bytes: when *CAP is smaller,
 * it becomes FIRST (when 0) doubled until it holds NEED, and *ARR is
 * reallocated. Returns 0, or -ENOMEM (the capacity or its size in bytes
 * would overflow, or realloc failed), leaving *ARR and *CAP as they were. */
int mem_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first);
/* mem_grow for a uint32_t capacity: -ENOMEM also when it would pass UINT32_MAX. */
int mem_grow_u32(void **arr, uint32_t *cap, size_t need, size_t elem, size_t first);

#define MEM_GROW(arr, cap, need, first)                                              \
	_Generic((cap), uint32_t: mem_grow_u32, size_t: mem_grow)((void **)&(arr), &(cap), \
								   (need), sizeof(*(arr)), (first))

#endif
