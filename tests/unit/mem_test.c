/* mem/grow.c: MEM_GROW makes room for what is asked, from the first size,
 * doubling; keeps the items; refuses a capacity its type cannot hold and a
 * byte size that overflows, leaving the array and capacity as they were.
 * mem/arena.c: what the arena gives is 8-aligned (strings packed), never
 * moves, and a request larger than a chunk gets one of its own. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "tests/unit/check.h"

static void test_arena(void)
{
	struct mem_arena a = { .chunk = 64 };
	char *s1 = mem_arena_strdup(&a, "abc");
	char *s2 = mem_arena_strdup(&a, "de");
	CHECK(s1 && s2 && s2 == s1 + 4 && strcmp(s1, "abc") == 0 && strcmp(s2, "de") == 0,
	      "strings packed one after another");
	uint64_t *w = mem_arena_alloc(&a, 3 * sizeof(*w));
	CHECK(w && (uintptr_t)w % 8 == 0 && (char *)w == s1 + 8, "words 8-aligned after them");
	w[0] = 1, w[1] = 2, w[2] = 3;
	char *big = mem_arena_alloc(&a, 1000);
	char *next = mem_arena_alloc(&a, 8);
	CHECK(big && next && (next < big || next >= big + 1000), "a request past the chunk size: a chunk of its own");
	memset(big, 0x5a, 1000);
	for (int i = 0; i < 100; i++)
		mem_arena_alloc(&a, 40);
	CHECK(strcmp(s1, "abc") == 0 && strcmp(s2, "de") == 0 && w[0] == 1 && w[2] == 3,
	      "what was given stays where it was as chunks are added");
	mem_arena_free(&a);
	CHECK(a.head == NULL && a.chunk == 64, "freed: empty, chunk size kept");
}

int main(void)
{
	test_arena();
	int *a = NULL;
	size_t cap = 0;

	CHECK(MEM_GROW(a, cap, 0, 8) == 0 && a == NULL && cap == 0, "nothing needed: no allocation");
	CHECK(MEM_GROW(a, cap, 1, 8) == 0 && a && cap == 8, "first: FIRST items (cap %zu)", cap);
	for (int i = 0; i < 8; i++)
		a[i] = i;
	CHECK(MEM_GROW(a, cap, 8, 8) == 0 && cap == 8, "room enough: unchanged");
	CHECK(MEM_GROW(a, cap, 9, 8) == 0 && cap == 16, "one more: doubled (cap %zu)", cap);
	CHECK(MEM_GROW(a, cap, 100, 8) == 0 && cap == 128, "100: doubled to 128 (cap %zu)", cap);
	int kept = 1;
	for (int i = 0; i < 8; i++)
		kept &= a[i] == i;
	CHECK(kept, "items kept across growth");
	int *before = a;
	CHECK(MEM_GROW(a, cap, SIZE_MAX / 2, 8) == -ENOMEM && a == before && cap == 128,
	      "a byte size past SIZE_MAX: -ENOMEM, array and cap as they were");
	free(a);

	uint8_t *b = NULL;
	uint32_t cap32 = 0;
	CHECK(MEM_GROW(b, cap32, 3, 0) == 0 && b && cap32 == 1 << 2,
	      "uint32_t capacity, FIRST 0 taken as 1 (cap %u)", cap32);
	CHECK(MEM_GROW(b, cap32, (size_t)UINT32_MAX + 1, 0) == -ENOMEM && cap32 == 4,
	      "past UINT32_MAX: -ENOMEM, cap as it was");
	cap32 = 1u << 31; /* a capacity that cannot double in its type (b is not touched) */
	CHECK(MEM_GROW(b, cap32, (1ull << 31) + 1, 0) == -ENOMEM && cap32 == 1u << 31,
	      "doubling past UINT32_MAX refused");
	free(b);
	CHECK_DONE();
}
