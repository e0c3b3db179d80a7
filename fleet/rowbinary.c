/* RowBinary, ClickHouse's binary row format: strings are a LEB128 length
 * and the bytes, arrays a LEB128 count and the elements, numbers little
 * endian. The values' encoders, under the sample rows (rows.c) and the
 * stack dictionary's (stacks.c). */
#include <string.h>
#include "fleet/fleet.h"

void fleet_put_varint(struct fleet_buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	fleet_buf_put(b, tmp, n);
}

void fleet_put_le(struct fleet_buf *b, uint64_t v, size_t bytes)
{
	unsigned char tmp[8];
	for (size_t i = 0; i < bytes; i++)
		tmp[i] = (unsigned char)(v >> (8 * i));
	fleet_buf_put(b, tmp, bytes);
}

void fleet_put_str(struct fleet_buf *b, const char *s)
{
	if (!s)
		s = ""; /* memcpy from NULL, even of 0 bytes, is undefined */
	size_t n = strlen(s);
	fleet_put_varint(b, n);
	fleet_buf_put(b, s, n);
}
