/* `ftstack report` against FlameGraph's stackcollapse-perf.pl: every line of
 * tests/unit/fixtures/report/compat/MANIFEST runs the built ftstack on a
 * perf script fixture and compares its folded output (sorted) with
 * stackcollapse-perf.pl's (NAME.sc) or, where ftstack chooses otherwise,
 * with NAME.folded. Then every expected file goes back through `report -f`
 * unchanged (folded -> report -> folded), and the exit statuses of empty,
 * missing, binary and unknown input. Runs the binary: no root, no kernel. */
#include "tests/unit/check.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIR "tests/unit/fixtures/report/compat/"

static char bin[512];

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		if (f)
			fclose(f);
		return NULL;
	}
	int c;
	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	if (f)
		fclose(f);
	return f ? buf : (free(buf), NULL);
}

/* Runs CMD through sh; its stdout in *out (caller frees); returns the exit status. */
static int run(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	while (p && m && (c = fgetc(p)) != EOF)
		fputc(c, m);
	if (m)
		fclose(m);
	int st = p ? pclose(p) : -1;
	*out = buf;
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "--kernel --pid" -> ".kernelpid", as regen-sc.sh names the files. */
static void suffix(const char *opts, char *out, size_t cap)
{
	size_t o = 0;

	if (*opts && o + 1 < cap)
		out[o++] = '.';
	for (; *opts && o + 1 < cap; opts++)
		if (*opts != ' ' && *opts != '-')
			out[o++] = *opts;
	out[o] = '\0';
}

static void compare(const char *name, const char *ft, const char *sc, const char *why)
{
	char suf[64], want_path[512], cmd[2048];
	char *got = NULL, *want;

	suffix(sc, suf, sizeof(suf));
	snprintf(want_path, sizeof(want_path), DIR "%s%s.%s", name, suf, *why ? "folded" : "sc");
	want = slurp(want_path);
	snprintf(cmd, sizeof(cmd), "%s report %s " DIR "%s.txt 2>/dev/null | LC_ALL=C sort",
		 bin, ft, name);
	int st = run(cmd, &got);
	CHECK(want && got && strcmp(want, got) == 0, "report %s %s.txt == %s%s", ft, name,
	      want_path + strlen(DIR), *why ? " (differs from stackcollapse-perf.pl on purpose)" :
	      " (stackcollapse-perf.pl's output)");
	if (want && got && strcmp(want, got) != 0)
		printf("# want:\n%s# got:\n%s", want, got);
	CHECK(st == 0, "report %s %s.txt: exit 0 (got %d)", ft, name, st);
	/* folded -> report -> folded: the expected file reads back unchanged */
	if (want) {
		snprintf(cmd, sizeof(cmd), "%s report -f %s --input-format folded %s 2>/dev/null "
			 "| LC_ALL=C sort", bin, strstr(want, "_[k]") ? "-a" : "", want_path);
		free(got);
		st = run(cmd, &got);
		CHECK(st == 0 && got && strcmp(want, got) == 0, "round trip %s", want_path + strlen(DIR));
	}
	free(want);
	free(got);
}

static void test_manifest(void)
{
	FILE *f = fopen(DIR "MANIFEST", "r");
	char line[1024];
	int n = 0;

	CHECK(f != NULL, "MANIFEST readable");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		char *save = NULL, *name = strtok_r(line, "|", &save);
		char *ft = name ? strtok_r(NULL, "|", &save) : NULL;
		/* empty columns: strtok_r would skip them */
		char *sc = save, *bar = sc ? strchr(sc, '|') : NULL;
		if (!name || !ft || !bar) {
			CHECK(0, "MANIFEST line %d well formed", n);
			continue;
		}
		*bar = '\0';
		compare(name, ft, sc, bar + 1);
		n++;
	}
	if (f)
		fclose(f);
	CHECK(n >= 20, "MANIFEST has %d cases", n);
}

static void check_status(const char *args, int want, const char *what)
{
	char cmd[1024], *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s report %s 2>/dev/null", bin, args);
	int st = run(cmd, &out);
	CHECK(st == want, "%s: exit %d (got %d)", what, want, st);
	free(out);
}

static void check_out(const char *args, const char *want, const char *what)
{
	char cmd[1024], *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s report %s 2>&1 >/dev/null", bin, args);
	run(cmd, &out);
	CHECK(out && strstr(out, want), "%s: stderr says \"%s\"", what, want);
	if (out && !strstr(out, want))
		printf("# stderr:\n%s", out);
	free(out);
}

static void test_status_and_weight(void)
{
	char *out = NULL;

	check_status(DIR "edge_empty.txt", 0, "empty input");
	check_out(DIR "edge_empty.txt", "0 events in 0 distinct stacks", "empty input");
	check_status("-f < /dev/null -", 0, "empty standard input");
	check_status(DIR "no-such-file.txt", 2, "missing input");
	check_status("/", 2, "a directory as input");
	check_status(DIR "../perfev_getppid.bin", 2, "binary input");
	check_status(DIR "README", 2, "prose input");
	check_out(DIR "perf61_cpu_default.txt", "cpu-clock: 40 samples weighted by their period",
		  "period weighting said");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s report -f --weight samples " DIR "perf61_cpu_default.txt "
		 "2>/dev/null", bin);
	int st = run(cmd, &out);
	CHECK(st == 0 && out && strcmp(out, "work;__libc_start_call_main;hot_leaf 40\n") == 0,
	      "--weight samples counts samples");
	free(out);
	/* every sample of edge_headers shows a period: by default weighted */
	snprintf(cmd, sizeof(cmd), "%s report -f --weight samples " DIR "edge_headers.txt "
		 "2>/dev/null | LC_ALL=C sort", bin);
	st = run(cmd, &out);
	CHECK(st == 0 && out && strstr(out, "bar;bar_main 2\n") && strstr(out, "kworker/0:1;kthread;worker_thread 1\n"),
	      "--weight samples on edge_headers");
	free(out);
	check_status("--weight cycles " DIR "edge_empty.txt", 2, "--weight cycles refused");
	check_out(DIR "perf61_tp_default.txt", "tp_default.txt: perf, 60 stacks, 60 events",
		  "samples without periods counted");
}

int main(void)
{
	const char *b = getenv("FTSTACK_BUILD");

	snprintf(bin, sizeof(bin), "%s/ftstack", b && *b ? b : "build");
	CHECK(access(bin, X_OK) == 0, "%s is built", bin);
	test_manifest();
	test_status_and_weight();
	CHECK_DONE();
}
