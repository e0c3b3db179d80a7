/* output: the structure of pprof (gunzipped, its protobuf fields walked),
 * speedscope and svg, and --per-cgroup's cgroup in every format. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "output/output.h"
#include "tests/unit/check.h"
#include "tests/unit/output_fixture.h"

/* ---- pprof: gunzip, then walk the protobuf fields ---- */

static size_t gunzip(const char *in, size_t len, unsigned char *out, size_t cap)
{
	z_stream z = { 0 };
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return 0;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int r = inflate(&z, Z_FINISH);
	size_t n = cap - z.avail_out;
	inflateEnd(&z);
	return r == Z_STREAM_END ? n : 0;
}

static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

struct pbfield {
	uint32_t num, wire;
	uint64_t v;
	const unsigned char *data;
	size_t len;
};

/* Next field of a message in [*p, end); -1 at a malformed one, 1 at end. */
static int next_field(const unsigned char **p, const unsigned char *end, struct pbfield *f)
{
	uint64_t key;
	if (*p == end)
		return 1;
	if (get_varint(p, end, &key))
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wire = key & 7;
	if (f->wire == 0)
		return get_varint(p, end, &f->v);
	if (f->wire != 2 || get_varint(p, end, &f->v) || f->v > (uint64_t)(end - *p))
		return -1;
	f->data = *p;
	f->len = (size_t)f->v;
	*p += f->len;
	return 0;
}

/* Checks a message is well formed throughout and counts top-level fields. */
static int walk(const unsigned char *p, size_t len, size_t counts[16])
{
	const unsigned char *end = p + len;
	struct pbfield f;
	int r;
	while ((r = next_field(&p, end, &f)) == 0)
		if (f.num < 16)
			counts[f.num]++;
	return r == 1 ? 0 : -1;
}

/* The packed varints of field NUM inside the Nth (0-based) field TOP. */
static size_t packed(const unsigned char *buf, size_t len, uint32_t top, size_t nth,
		     uint32_t num, uint64_t *out, size_t cap)
{
	const unsigned char *p = buf, *end = buf + len;
	struct pbfield f, g;
	while (next_field(&p, end, &f) == 0) {
		if (f.num != top || f.wire != 2 || nth--)
			continue;
		const unsigned char *q = f.data, *qe = f.data + f.len;
		while (next_field(&q, qe, &g) == 0) {
			if (g.num != num || g.wire != 2)
				continue;
			size_t n = 0;
			const unsigned char *r = g.data;
			while (r < g.data + g.len && n < cap && get_varint(&r, g.data + g.len, &out[n]) == 0)
				n++;
			return n;
		}
	}
	return 0;
}

/* string_table entries joined with '|' into buf. */
static void strings(const unsigned char *p, size_t len, char *buf, size_t cap)
{
	const unsigned char *end = p + len;
	struct pbfield f;
	size_t n = 0;
	buf[0] = '\0';
	while (next_field(&p, end, &f) == 0) {
		if (f.num != 6 || f.wire != 2 || n + f.len + 2 > cap)
			continue;
		memcpy(buf + n, f.data, f.len);
		n += f.len;
		buf[n++] = '|';
		buf[n] = '\0';
	}
}

static void test_pprof(void)
{
	struct out_options o = { .format = OUT_PPROF, .event_frame = true, .event_names = ev_names,
				 .nevents = 2, .event_in_stack = ev_in };
	int ret = -1;
	size_t len = 0;
	char *gz = run(&o, stacks, 2, NULL, &ret, &len);
	CHECK_EQ_U64(ret, 0, "pprof ret");
	CHECK(gz && len > 18 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b,
	      "pprof is gzip");
	static unsigned char pb[1 << 16];
	size_t n = gz ? gunzip(gz, len, pb, sizeof(pb)) : 0;
	CHECK(n > 0, "pprof gunzips (%zu bytes)", n);
	size_t c[16] = { 0 };
	CHECK(walk(pb, n, c) == 0, "pprof protobuf well formed");
	CHECK_EQ_U64(c[1], 1, "count mode: one sample_type");
	CHECK_EQ_U64(c[2], 2, "two samples");
	CHECK_EQ_U64(c[3], 1, "one mapping");
	CHECK_EQ_U64(c[4], 8, "a location per distinct name (7 frames + event)");
	CHECK_EQ_U64(c[5], 8, "a function per distinct name");
	CHECK_EQ_U64(c[11], 1, "period_type");
	char st[1024];
	strings(pb, n, st, sizeof(st));
	CHECK_STR(st, "|samples|count|comm|bash|pid|ftstack|__kmalloc|do_sys_open|"
		  "entry_SYSCALL_64|[t:syscalls:sys_enter_read]|kfree|sys_close|main|"
		  "__libc_start_main|", "pprof string table, \"\" first");
	uint64_t v[8];
	size_t nv = packed(pb, n, 2, 1, 1, v, 8);
	CHECK(nv == 5 && v[0] == 4 && v[1] == 5 && v[2] == 6 && v[3] == 7 && v[4] == 8,
	      "sample 2 locations leaf first, event first");
	nv = packed(pb, n, 2, 0, 1, v, 8);
	CHECK(nv == 3 && v[0] == 1 && v[1] == 2 && v[2] == 3, "sample 1 locations");
	nv = packed(pb, n, 2, 1, 2, v, 8);
	CHECK(nv == 1 && v[0] == 7, "sample 2 value = count");
	free(gz);

	o.mode = OUT_MODE_PROFILE;
	o.period_ns = 1000;
	gz = run(&o, stacks, 2, NULL, &ret, &len);
	n = gz ? gunzip(gz, len, pb, sizeof(pb)) : 0;
	memset(c, 0, sizeof(c));
	CHECK(n > 0 && walk(pb, n, c) == 0, "profile pprof well formed");
	CHECK_EQ_U64(c[1], 2, "profile: samples and cpu sample types");
	nv = packed(pb, n, 2, 1, 2, v, 8);
	CHECK(nv == 2 && v[0] == 7 && v[1] == 7000, "profile values count, count*period");
	strings(pb, n, st, sizeof(st));
	CHECK(strstr(st, "|cpu|nanoseconds|") != NULL, "cpu/nanoseconds present");
	free(gz);

	o.mode = OUT_MODE_OFFCPU;
	gz = run(&o, stacks, 2, NULL, &ret, &len);
	n = gz ? gunzip(gz, len, pb, sizeof(pb)) : 0;
	nv = packed(pb, n, 2, 1, 2, v, 8);
	CHECK(nv == 2 && v[0] == 7 && v[1] == 70, "offcpu values count, weight");
	strings(pb, n, st, sizeof(st));
	CHECK(strstr(st, "|offcpu|microseconds|") != NULL, "offcpu/microseconds present");
	free(gz);
}

static void test_speedscope(void)
{
	struct out_options o = { .format = OUT_SPEEDSCOPE, .title = "t\"1" };
	const char *fr[] = { "b", "a\\x", "a\\x" };
	struct agg_named_stack s[] = {
		{ .frames = fr, .nkframes = 1, .nuframes = 1, .count = 2, .weight = 5 },
		{ .frames = fr + 1, .nuframes = 2, .count = 3, .weight = 6 },
	};
	check_out(&o, s, 2, NULL,
		  "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		  "\"shared\":{\"frames\":[{\"name\":\"a\\\\x\"},{\"name\":\"b\"}]},"
		  "\"profiles\":[{\"type\":\"sampled\",\"name\":\"t\\\"1\",\"unit\":\"none\","
		  "\"startValue\":0,\"endValue\":5,\"samples\":[[0,1],[0,0]],\"weights\":[2,3]}],"
		  "\"name\":\"t\\\"1\",\"activeProfileIndex\":0,\"exporter\":\"ftstack\"}\n",
		  "speedscope exact");
	o.mode = OUT_MODE_OFFCPU;
	o.title = NULL;
	check_out(&o, s, 1, NULL,
		  "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		  "\"shared\":{\"frames\":[{\"name\":\"a\\\\x\"},{\"name\":\"b\"}]},"
		  "\"profiles\":[{\"type\":\"sampled\",\"name\":\"ftstack\",\"unit\":\"microseconds\","
		  "\"startValue\":0,\"endValue\":5,\"samples\":[[0,1]],\"weights\":[5]}],"
		  "\"name\":\"ftstack\",\"activeProfileIndex\":0,\"exporter\":\"ftstack\"}\n",
		  "speedscope offcpu");
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_svg(void)
{
	struct out_options o = { .format = OUT_SVG, .show_comm = true, .title = "T<&>" };
	const char *lt[] = { "a<b>&c", "main" };
	struct agg_named_stack s[] = {
		stacks[0], stacks[1],
		{ .comm = "bash", .pid = 185, .frames = lt, .nuframes = 2, .count = 1 },
	};
	s[1].frames = ku;
	int ret = -1;
	char *svg = run(&o, s, 3, NULL, &ret, NULL);
	CHECK_EQ_U64(ret, 0, "svg ret");
	CHECK(svg && strncmp(svg, "<?xml", 5) == 0, "svg starts with xml declaration");
	if (!svg)
		return;
	CHECK_EQ_U64(count_of(svg, "<svg "), 1, "one <svg>");
	CHECK_EQ_U64(count_of(svg, "</svg>"), 1, "one </svg>");
	CHECK(strstr(svg, "</svg>\n") && strcmp(strstr(svg, "</svg>\n"), "</svg>\n") == 0,
	      "</svg> last");
	CHECK_EQ_U64(count_of(svg, "<script"), 1, "script element");
	CHECK_EQ_U64(count_of(svg, "]]></script>"), 1, "script closed once");
	CHECK_EQ_U64(count_of(svg, "<g class=\"f"), count_of(svg, "</g>"), "balanced <g>");
	/* all, bash, [unknown], 3 kernel, main (x2: different parents), libc, 2 kernel, a<b>&c */
	CHECK_EQ_U64(count_of(svg, "<g class=\"f"), 12, "12 frames");
	CHECK_EQ_U64(count_of(svg, "<g class=\"f k\""), 5, "5 kernel frames");
	CHECK(strstr(svg, "data-n=\"a&lt;b&gt;&amp;c\"") != NULL, "name escaped");
	CHECK(strstr(svg, ">T&lt;&amp;&gt;</text>") != NULL, "title escaped");
	CHECK(strstr(svg, "data-n=\"__kmalloc\" data-x=\"0\" data-w=\"2\" data-d=\"4\"") != NULL,
	      "__kmalloc under [unknown] at offset 0");
	CHECK(strstr(svg, "data-n=\"all\" data-x=\"0\" data-w=\"10\" data-d=\"0\"") != NULL,
	      "root value 10");
	CHECK(strstr(svg, "TOTAL = 10;") != NULL, "script total");
	CHECK(strstr(svg, "http") == strstr(svg, "http://www.w3.org/2000/svg\""),
	      "no external resource");
	free(svg);
	svg = run(&o, s, 0, NULL, &ret, NULL);
	CHECK(ret == 0 && svg && count_of(svg, "</svg>") == 1 && !strstr(svg, "<g class"),
	      "empty svg is well formed");
	free(svg);
}

static void test_rich(void)
{
	test_pprof();
	test_speedscope();
	test_svg();
}

/* --per-cgroup: the cgroup path is folded's first frame, a text line, a
 * pprof label and the name of one speedscope profile a cgroup */
static void test_cgroup(void)
{
	struct agg_named_stack cg[] = {
		{ .pid = 5, .comm = "bash", .cgroup = "/a", .frames = ku, .nkframes = 2,
		  .nuframes = 2, .count = 3, .weight = 3 },
		{ .pid = 6, .comm = "bash", .cgroup = "/b;x", .frames = ku, .nkframes = 2,
		  .nuframes = 2, .count = 7, .weight = 7 },
	};
	struct out_options o = { .format = OUT_FOLDED, .show_comm = true };
	check_out(&o, cg, 2, NULL,
		  "/a;bash;__libc_start_main;main;sys_close;kfree 3\n"
		  "/b_x;bash;__libc_start_main;main;sys_close;kfree 7\n", "cgroup: folded first frame");
	o = (struct out_options){ .format = OUT_TEXT, .per_process = true };
	check_out(&o, cg, 1, NULL,
		  "    kfree\n    sys_close\n    main\n    __libc_start_main\n"
		  "    -                bash (5)\n    -                cgroup /a\n        3\n\n",
		  "cgroup: text line");
	o.per_process = false;
	check_out(&o, cg + 1, 1, NULL,
		  "    kfree\n    sys_close\n    main\n    __libc_start_main\n"
		  "    -                cgroup /b;x\n        7\n\n", "cgroup: text line without comm");
	o = (struct out_options){ .format = OUT_SPEEDSCOPE, .title = "T" };
	check_out(&o, cg, 2, NULL,
		  "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		  "\"shared\":{\"frames\":[{\"name\":\"__libc_start_main\"},{\"name\":\"main\"},"
		  "{\"name\":\"sys_close\"},{\"name\":\"kfree\"}]},\"profiles\":["
		  "{\"type\":\"sampled\",\"name\":\"/a\",\"unit\":\"none\",\"startValue\":0,"
		  "\"endValue\":3,\"samples\":[[0,1,2,3]],\"weights\":[3]},"
		  "{\"type\":\"sampled\",\"name\":\"/b;x\",\"unit\":\"none\",\"startValue\":0,"
		  "\"endValue\":7,\"samples\":[[0,1,2,3]],\"weights\":[7]}],"
		  "\"name\":\"T\",\"activeProfileIndex\":0,\"exporter\":\"ftstack\"}\n",
		  "cgroup: a speedscope profile a cgroup, named by its path");
	o = (struct out_options){ .format = OUT_PPROF };
	int ret = -1;
	size_t len = 0;
	char *gz = run(&o, cg, 2, NULL, &ret, &len);
	static unsigned char pb[1 << 16];
	size_t n = gz && ret == 0 ? gunzip(gz, len, pb, sizeof(pb)) : 0;
	char st[1024];
	strings(pb, n, st, sizeof(st));
	CHECK(n > 0 && strstr(st, "|cgroup|/a|") && strstr(st, "|/b;x|"),
	      "cgroup: pprof labels cgroup=/a, cgroup=/b;x (%s)", st);
	free(gz);
}

int main(void)
{
	test_cgroup();
	test_rich();
	CHECK_DONE();
}
