/* output: pprof's profile.proto, gzipped. The protobuf encoder is just what
 * profile.proto needs: varints, length-delimited fields, packed repeats. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "mem/mem.h"
#include "output/out_internal.h"

struct pb {
	uint8_t *p;
	size_t n, cap;
	int err;
};

static void pb_put(struct pb *b, const void *data, size_t len)
{
	if (b->err)
		return;
	if (MEM_GROW(b->p, b->cap, b->n + len, 256)) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	pb_put(b, tmp, n);
}

/* Field with wire type 0 (varint). Zero is the default: omitted. */
static void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

/* Field with wire type 2 (length-delimited). */
static void pb_bytes(struct pb *b, uint32_t field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, len);
	pb_put(b, data, len);
}

/* Appends SUB as embedded message FIELD and empties SUB for reuse. */
static void pb_msg(struct pb *b, uint32_t field, struct pb *sub)
{
	if (sub->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->p, sub->n);
	sub->n = 0;
}

struct pprof {
	const struct out_options *o;
	struct out_strtab str;   /* string_table; index 0 is "" */
	struct out_strtab funcs; /* distinct frame names: function/location id - 1 */
	struct pb prof, sub, sub2;
	bool type2; /* samples carry a second value */
	int err;
};

static int64_t pp_str(struct pprof *pp, const char *s)
{
	long i = out_strtab_intern(&pp->str, s);
	if (i < 0)
		pp->err = -ENOMEM;
	return i < 0 ? 0 : i;
}

static void pp_value_type(struct pprof *pp, uint32_t field, const char *type, const char *unit)
{
	pb_uint(&pp->sub, 1, (uint64_t)pp_str(pp, type));
	pb_uint(&pp->sub, 2, (uint64_t)pp_str(pp, unit));
	pb_msg(&pp->prof, field, &pp->sub);
}

/* The second sample type, or NULL in count mode. Events weighted by period
 * carry EVENT/period beside samples/count, as perf's converters write. */
static const char *pp_type2(const struct out_options *o, const char **unit)
{
	*unit = o->mode == OUT_MODE_PROFILE ? "nanoseconds" : "microseconds";
	if (o->mode == OUT_MODE_COUNT && out_any_weighted(o)) {
		*unit = "period";
		return o->weight_type ? o->weight_type : "event";
	}
	return o->mode == OUT_MODE_PROFILE ? "cpu" : o->mode == OUT_MODE_OFFCPU ? "offcpu" : NULL;
}

static void pp_header(struct pprof *pp)
{
	const char *unit, *type2 = pp_type2(pp->o, &unit);
	pp_str(pp, "");
	pp_value_type(pp, 1, "samples", "count");
	if (type2) {
		pp_value_type(pp, 1, type2, unit);
		pp_value_type(pp, 11, type2, unit);
		pb_uint(&pp->prof, 12, pp->o->mode == OUT_MODE_PROFILE ? pp->o->period_ns : 1);
		pb_uint(&pp->prof, 14, (uint64_t)pp_str(pp, type2));
		pp->type2 = true;
	} else {
		pp_value_type(pp, 11, "samples", "count");
		pb_uint(&pp->prof, 12, 1);
	}
}

static void pp_label(struct pprof *pp, const char *key, const char *str, uint64_t num)
{
	pb_uint(&pp->sub2, 1, (uint64_t)pp_str(pp, key));
	if (str)
		pb_uint(&pp->sub2, 2, (uint64_t)pp_str(pp, str));
	else
		pb_uint(&pp->sub2, 3, num);
	pb_msg(&pp->sub, 3, &pp->sub2);
}

static void pp_sample(struct pprof *pp, const struct agg_named_stack *s)
{
	const struct out_options *o = pp->o;
	struct out_path p;
	if (out_path_build(o, s, NULL, &p)) {
		pp->err = -ENOMEM;
		return;
	}
	/* Packed location ids, leaf first as profile.proto wants. A stack of
	 * no frames (a perf sample's header alone) is its comm's: pprof drops
	 * samples without locations. */
	for (size_t i = 0; i < (p.n ? p.n : 1); i++) {
		const char *name = p.n ? p.v[i].name : p.comm ? p.comm : OUT_UNKNOWN;
		long id = out_strtab_intern(&pp->funcs, name);
		if (id < 0)
			pp->err = -ENOMEM;
		pb_varint(&pp->sub2, (uint64_t)id + 1);
	}
	pb_msg(&pp->sub, 1, &pp->sub2);
	pb_varint(&pp->sub2, s->count);
	if (o->mode == OUT_MODE_PROFILE)
		pb_varint(&pp->sub2, o->period_ns ? s->count * o->period_ns : s->weight);
	else if (pp->type2)
		pb_varint(&pp->sub2, out_value(o, s));
	pb_msg(&pp->sub, 2, &pp->sub2);
	if (p.comm)
		pp_label(pp, "comm", p.comm, 0);
	if (s->pid)
		pp_label(pp, "pid", NULL, s->pid);
	if (p.cgroup)
		pp_label(pp, "cgroup", p.cgroup, 0);
	pb_msg(&pp->prof, 2, &pp->sub);
	out_path_free(&p);
}

/* One fake mapping that says every location is already symbolized, then a
 * function and a location per distinct name (same id for both). */
static void pp_tables(struct pprof *pp)
{
	pb_uint(&pp->sub, 1, 1);
	pb_uint(&pp->sub, 5, (uint64_t)pp_str(pp, "ftstack"));
	pb_uint(&pp->sub, 7, 1);
	pb_msg(&pp->prof, 3, &pp->sub);
	for (size_t i = 0; i < pp->funcs.n; i++) {
		pb_uint(&pp->sub2, 1, i + 1);
		pb_msg(&pp->sub, 4, &pp->sub2);
		pb_uint(&pp->sub, 1, i + 1);
		pb_uint(&pp->sub, 2, 1);
		pb_msg(&pp->prof, 4, &pp->sub);
	}
	for (size_t i = 0; i < pp->funcs.n; i++) {
		int64_t name = pp_str(pp, pp->funcs.str[i]);
		pb_uint(&pp->sub, 1, i + 1);
		pb_uint(&pp->sub, 2, (uint64_t)name);
		pb_uint(&pp->sub, 3, (uint64_t)name);
		pb_msg(&pp->prof, 5, &pp->sub);
	}
	/* Strings last: every index above is known by now. */
	for (size_t i = 0; i < pp->str.n; i++)
		pb_bytes(&pp->prof, 6, pp->str.str[i], strlen(pp->str.str[i]));
}

static int pp_gzip(FILE *f, const uint8_t *data, size_t len)
{
	z_stream z = { 0 };
	uint8_t out[16384];
	/* windowBits 15 + 16: a gzip header and trailer, as pprof expects. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	int zr;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		size_t have = sizeof(out) - z.avail_out;
		/* cppcheck-suppress uninitvar ; deflate wrote the first `have` bytes */
		if (have && fwrite(out, 1, have, f) != have)
			break;
	} while (zr == Z_OK);
	deflateEnd(&z);
	return zr == Z_STREAM_END || ferror(f) ? 0 : -EIO;
}

int out_write_pprof(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		    size_t n)
{
	struct pprof pp = { .o = o };
	pp_header(&pp);
	for (size_t i = 0; i < n && !pp.err; i++)
		pp_sample(&pp, &s[i]);
	pp_tables(&pp);
	int ret = pp.err ? pp.err : pp.prof.err ? pp.prof.err : pp.sub.err ? pp.sub.err : pp.sub2.err;
	/* uInt bounds one deflate call; profiles this large are not expected. */
	if (!ret && pp.prof.n > UINT32_MAX)
		ret = -EFBIG;
	if (!ret)
		ret = pp_gzip(f, pp.prof.p, pp.prof.n);
	out_strtab_free(&pp.str);
	out_strtab_free(&pp.funcs);
	free(pp.prof.p);
	free(pp.sub.p);
	free(pp.sub2.p);
	return ret ? ret : out_finish(f);
}
