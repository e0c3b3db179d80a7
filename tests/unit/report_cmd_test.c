/* ftstack report and report --diff, end to end on files: parsing, -K/-U,
 * --through, -x, -m, -t, the result writer's folded output, and the diff
 * built on the aggregate's merge (not on printed text). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/report_cmd.h"
#include "tests/unit/check.h"

static char dir[64];

static const char *path(const char *name)
{
	static char p[4][128];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(path(name), "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const char *slurp(const char *name)
{
	static char buf[8192];
	FILE *f = fopen(path(name), "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static void opts(struct ft_options *o, const char *a, const char *b)
{
	memset(o, 0, sizeof(*o));
	o->cmd = FT_REPORT;
	o->state = -1;
	o->format = OUT_FOLDED;
	o->output = path("out");
	o->report_files[o->nreport_files++] = a;
	if (b)
		o->report_files[o->nreport_files++] = b;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ftstack-report.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	struct ft_options o;
	put("a", "x;a;b 3\nx;a;b 4\nx;a;c 1\nx;d 2\n");
	opts(&o, path("a"), NULL);
	CHECK(ft_cmd_report(&o) == 0, "report of a folded file: exit 0");
	CHECK_STR(slurp("out"), "x;a;c 1\nx;d 2\nx;a;b 7\n", "duplicates summed, least frequent first");
	opts(&o, path("a"), NULL);
	o.min_count = 2;
	o.top = 1;
	CHECK(ft_cmd_report(&o) == 0 && strcmp(slurp("out"), "x;a;b 7\n") == 0, "-m 2 -t 1");
	opts(&o, path("a"), NULL);
	o.excludes[o.nexcludes++] = "d";
	CHECK(ft_cmd_report(&o) == 0 && strcmp(slurp("out"), "x;a;c 1\nx;a;b 7\n") == 0,
	      "-x d drops the stack through d");
	opts(&o, path("no-such-file"), NULL);
	CHECK(ft_cmd_report(&o) == 2, "a missing file: exit 2");

	/* perf script text: kernel and user halves, --through, -U */
	opts(&o, "tests/unit/fixtures/report/perf_kmalloc.txt", NULL);
	o.kernel_only = true;
	o.through = "do_syscall_64";
	CHECK(ft_cmd_report(&o) == 0, "perf script of kmalloc, -K --through do_syscall_64");
	CHECK_STR(slurp("out"), "getppid;entry_SYSCALL_64_after_hwframe;do_syscall_64 3\n",
		  "every stack cut at do_syscall_64, kernel frames only");
	opts(&o, "tests/unit/fixtures/report/perf_kmalloc.txt", NULL);
	o.user_only = true;
	CHECK(ft_cmd_report(&o) == 0 && strcmp(slurp("out"), "getppid;[unknown] 3\n") == 0,
	      "-U: the user half only");

	/* --diff: A's and B's counts per stack, every stack, sorted by stack */
	put("A", "x;a;b 3\nx;a;c 1\nx;a;b 1\n");
	put("B", "x;a;b 5\nx;d 2\n");
	opts(&o, path("A"), path("B"));
	o.diff = true;
	FILE *out = fopen(path("diff"), "w");
	CHECK(out && ft_cmd_report_diff(&o, out) == 0, "report --diff A B: exit 0");
	if (out)
		fclose(out);
	CHECK_STR(slurp("diff"), "x;a;b 4 5\nx;a;c 1 0\nx;d 0 2\n",
		  "each stack with its count in A and in B (0 where missing)");
	opts(&o, path("A"), path("B"));
	o.diff = true;
	o.top = 1;
	o.min_count = 10;
	o.excludes[o.nexcludes++] = "c";
	out = fopen(path("diff"), "w");
	CHECK(out && ft_cmd_report_diff(&o, out) == 0, "report --diff -x c -t 1 -m 10");
	if (out)
		fclose(out);
	CHECK_STR(slurp("diff"), "x;a;b 4 5\nx;d 0 2\n", "-x applies; -t and -m do not (a diff keeps all)");
	opts(&o, path("A"), path("no-such-file"));
	o.diff = true;
	out = fopen(path("diff"), "w");
	CHECK(out && ft_cmd_report_diff(&o, out) == 2, "report --diff with a missing side: exit 2");
	if (out)
		fclose(out);
	const char *files[] = { "a", "out", "A", "B", "diff" };
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
		unlink(path(files[i]));
	rmdir(dir);
	CHECK_DONE();
}
