/* mem: grow-by-doubling (mem.h). */
#include "mem/mem.h"

#include <errno.h>
#include <stdlib.h>

/* mem_grow with the capacity's largest value MAX. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first, size_t max)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : (first ? first : 1);
	while (ncap < need) {
		if (ncap > max / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > max || (elem && ncap > SIZE_MAX / elem))
		return -ENOMEM;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

int mem_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	return grow(arr, cap, need, elem, first, SIZE_MAX);
}

int mem_grow_u32(void **arr, uint32_t *cap, size_t need, size_t elem, size_t first)
{
	size_t c = *cap;
	int ret = grow(arr, &c, need, elem, first, UINT32_MAX);

	*cap = (uint32_t)c;
	return ret;
}
