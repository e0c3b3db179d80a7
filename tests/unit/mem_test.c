/* mem/grow.c: MEM_GROW makes room for what is asked, from the first size,
 * doubling; keeps the items; refuses a capacity its type cannot hold and a
 * byte size that overflows, leaving the array and capacity as they were. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "mem/mem.h"
#include "tests/unit/check.h"

int main(void)
{
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
