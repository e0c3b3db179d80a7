/* mem: the one way an array grows, and the one chunked arena, for every
 * folder.
 *
 * An array that grows by doubling keeps its capacity beside it; MEM_GROW
 * makes room for NEED items, from FIRST items the first time, doubling
 * after, and takes the capacity as a size_t or a uint32_t (grow.c).
 * Memory that must never move (interned stacks, names) comes from a
 * mem_arena (arena.c). Nothing else lives here: this folder is below every
 * other, and calls none of them. */
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

/* A chunked bump allocator: what it gives never moves (pointers into it
 * stay valid) and is freed all at once. Zeroed is empty, with chunks of
 * MEM_ARENA_CHUNK bytes; a larger request gets a chunk of its own size. */
struct mem_chunk;
struct mem_arena {
	struct mem_chunk *head; /* the newest chunk, the one taken from */
	size_t chunk;           /* bytes a chunk holds; 0: MEM_ARENA_CHUNK */
};
#define MEM_ARENA_CHUNK ((size_t)64 << 10)
/* Returns SIZE bytes, 8-aligned (rounded up to 8), or NULL without memory. */
void *mem_arena_alloc(struct mem_arena *a, size_t size);
/* Returns a copy of string S, packed (not aligned), or NULL without memory. */
char *mem_arena_strdup(struct mem_arena *a, const char *s);
/* Frees every chunk: A is empty again (its chunk size kept). */
void mem_arena_free(struct mem_arena *a);

#endif
