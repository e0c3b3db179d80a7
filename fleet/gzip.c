/* Insert bodies gzip-compressed: RowBinary stacks repeat the same frame
 * names row after row, which deflate shrinks several times over, and
 * ClickHouse (18.16 included) reads a POST body sent with Content-Encoding:
 * gzip. zlib does the work. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "fleet/fleet.h"

int fleet_gzip(const void *in, size_t len, struct fleet_buf *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer around the deflate stream; level 1:
	 * most of the gain for a fraction of the CPU of the default */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	size_t start = out->len, need = start + deflateBound(&z, (uLong)len) + 1;
	if (need > out->cap) {   /* room for the whole stream: one deflate call */
		char *d = out->failed ? NULL : realloc(out->data, need);
		if (!d) {
			out->failed = true;
			deflateEnd(&z);
			return -ENOMEM;
		}
		out->data = d;
		out->cap = need;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->data + start;
	z.avail_out = (uInt)(out->cap - start - 1);
	int rc = deflate(&z, Z_FINISH);
	out->len = start + z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -ENOMEM;
}
