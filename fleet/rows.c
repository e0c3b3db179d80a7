/* The sample rows in RowBinary (fleet/rowbinary.c), in fleet_columns'
 * order. Names go in and come back as the same bytes, with no escaping. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "fleet/fleet.h"

uint64_t fleet_rows_weight(const struct fleet_rows_meta *m, const struct agg_named_stack *s)
{
	return m->by_weight ? s->weight : s->count;
}

/* In fleet_columns' order. */
uint64_t fleet_rows_encode(struct fleet_buf *b, const struct fleet_rows_meta *m,
			   const struct agg_named_stack *s, size_t n, size_t *ends)
{
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t w = fleet_rows_weight(m, &s[i]);
		fleet_put_le(b, m->ts, 4);
		fleet_put_le(b, m->duration_ms, 4);
		fleet_put_str(b, m->host);
		fleet_put_str(b, m->mode);
		fleet_put_str(b, s[i].event < m->nevents ? m->events[s[i].event] : "");
		fleet_put_str(b, s[i].comm);
		fleet_put_le(b, s[i].pid, 4);
		fleet_put_le(b, fleet_stack_hash(&s[i]), 8);
		fleet_put_le(b, w, 8);
		fleet_put_le(b, m->run, 8);
		fleet_put_le(b, m->seq, 4);
		fleet_put_le(b, i, 4);
		fleet_put_str(b, s[i].cgroup ? s[i].cgroup : m->cgroup);
		if (ends)
			ends[i] = b->len;
		total += w;
	}
	return total;
}

/* ---- decoding ---- */

struct reader {
	const unsigned char *p, *end;
	char *strings;             /* NUL-terminated copies of one row's strings */
	size_t slen, scap;
	const char **arr;          /* the row's frame pointers */
	size_t alen, acap;
};

static int get_varint(struct reader *r, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return -EPROTO;
		unsigned char c = *r->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -EPROTO;
}

static int get_le(struct reader *r, size_t bytes, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < bytes)
		return -EPROTO;
	*v = 0;
	for (size_t i = 0; i < bytes; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += bytes;
	return 0;
}

/* Reads one string into r->strings; *off gets its offset there. */
static int get_str(struct reader *r, size_t *off)
{
	uint64_t n;
	int ret = get_varint(r, &n);
	if (ret < 0 || n > (uint64_t)(r->end - r->p) || memchr(r->p, 0, n))
		return ret < 0 ? ret : -EPROTO; /* a NUL byte would cut the name: refuse */
	if (MEM_GROW(r->strings, r->scap, r->slen + n + 1, 4096))
		return -ENOMEM;
	memcpy(r->strings + r->slen, r->p, n);
	r->strings[r->slen + n] = '\0';
	*off = r->slen;
	r->slen += n + 1;
	r->p += n;
	return 0;
}

/* An Array(String): offsets of its strings appended to r->arr (as offsets
 * for now: r->strings may still move). */
static int get_array(struct reader *r, uint32_t *count)
{
	uint64_t n;
	int ret = get_varint(r, &n);
	if (ret < 0 || n > AGG_MAX_DEPTH * 4u)
		return ret < 0 ? ret : -EPROTO;
	*count = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++) {
		size_t off;
		if ((ret = get_str(r, &off)) < 0)
			return ret;
		if (MEM_GROW(r->arr, r->acap, r->alen + 1, 256))
			return -ENOMEM;
		r->arr[r->alen++] = (const char *)(uintptr_t)off;
	}
	return 0;
}

static int get_row(struct reader *r, struct fleet_row *row)
{
	size_t ev = 0, comm = 0;
	uint64_t pid = 0, w = 0;
	r->slen = r->alen = 0;
	int ret = get_str(r, &ev);
	if (ret == 0)
		ret = get_str(r, &comm);
	if (ret == 0)
		ret = get_le(r, 4, &pid);
	if (ret == 0)
		ret = get_array(r, &row->nk);
	if (ret == 0)
		ret = get_array(r, &row->nu);
	if (ret == 0)
		ret = get_le(r, 8, &w);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < r->alen; i++)
		r->arr[i] = r->strings + (uintptr_t)r->arr[i];
	row->event = r->strings + ev;
	row->comm = r->strings + comm;
	row->pid = (uint32_t)pid;
	row->kernel = r->arr;
	row->user = r->arr + row->nk;
	row->weight = w;
	return 0;
}

long fleet_rows_decode(const char *data, size_t len, fleet_row_fn fn, void *ctx)
{
	struct reader r = { .p = (const unsigned char *)data, .end = (const unsigned char *)data + len };
	long rows = 0;
	int ret = 0;
	static const char *none[1];
	while (ret == 0 && r.p < r.end) {
		struct fleet_row row;
		if ((ret = get_row(&r, &row)) < 0)
			break;
		if (!r.arr)
			row.kernel = row.user = none;
		if ((ret = fn(ctx, &row)) == 0)
			rows++;
	}
	free(r.strings);
	free(r.arr);
	return ret < 0 ? ret : ret > 0 ? -ret : rows;
}
