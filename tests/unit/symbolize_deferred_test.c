/* Deferred frames (symbolize/deferred.c): the text, its parse, the part a
 * fleet hash covers, and the namer on a real debug root: this test binary
 * (built -g, with a .symtab) linked in as its own build-id's debug file,
 * so a deferred frame at one of its functions is named by that function. */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/symbolize.h"
#include "fleet/fleet.h"
#include "report/report.h"
#include "tests/unit/check.h"

__attribute__((noinline)) int deferred_target(int x)
{
	return x * 3 + 1;
}

static int find_target(void *ctx, const char *name, uint64_t vaddr, uint64_t size)
{
	(void)size;
	if (strcmp(name, "deferred_target") != 0)
		return 0;
	*(uint64_t *)ctx = vaddr;
	return 1;
}

static void text_checks(void)
{
	const uint8_t id[] = { 0xc5, 0x61, 0xf3, 0xaa, 0x01 };
	char *s = sym_deferred_format("python3.11", 0x1a2b3c, id, sizeof(id));
	CHECK_STR(s, "[python3.11+0x1a2b3c@c561f3aa01]", "format");
	struct sym_deferred d;
	CHECK(s && sym_deferred_parse(s, &d) == 0 && strcmp(d.file, "python3.11") == 0 &&
	      d.vaddr == 0x1a2b3c && d.id_len == 5 && memcmp(d.id, id, 5) == 0,
	      "parse gives back file, address and build-id");
	CHECK_STR(s ? sym_deferred_identity(s) : NULL, "+0x1a2b3c@c561f3aa01]",
		  "identity: the address and build-id, not the file name");
	free(s);
	/* a file name holding '+' and '@' still parses from the right */
	CHECK(sym_deferred_parse("[a+b@c (deleted)+0x10@abcd]", &d) == 0 &&
	      strcmp(d.file, "a+b@c (deleted)") == 0 && d.vaddr == 0x10 && d.id_len == 2,
	      "a file name with + and @ in it");
	const char *not_deferred[] = { "[libc.so.6]", "[unknown]", "main", "[x+0x10@abc]",
				       "[x+0x@abcd]", "[x+10@abcd]", "[x+0x10@ABCD]", "[+0x10@abcd",
				       "[x+0x12345678901234567@abcd]", "" };
	for (size_t i = 0; i < sizeof(not_deferred) / sizeof(*not_deferred); i++)
		CHECK(!sym_deferred_identity(not_deferred[i]) &&
		      sym_deferred_parse(not_deferred[i], &d) == -EINVAL,
		      "not a deferred frame: \"%s\"", not_deferred[i]);
	CHECK(sym_deferred_format("x", 1, id, 1) == NULL, "a 1-byte build-id is no build-id");
}

/* Two stacks, the same code under two file names: one hash. */
static void hash_checks(void)
{
	const char *a[] = { "do_syscall_64", "[cpu_ab+0x11be@aed1be9e]", "main" };
	const char *b[] = { "do_syscall_64", "[cpu_ab (deleted)+0x11be@aed1be9e]", "main" };
	const char *c[] = { "do_syscall_64", "[cpu_ab+0x11bf@aed1be9e]", "main" };
	struct agg_named_stack sa = { .frames = a, .nkframes = 1, .nuframes = 2 };
	struct agg_named_stack sb = { .frames = b, .nkframes = 1, .nuframes = 2 };
	struct agg_named_stack sc = { .frames = c, .nkframes = 1, .nuframes = 2 };
	CHECK(fleet_stack_hash(&sa) == fleet_stack_hash(&sb),
	      "fleet hash: a deferred frame counts by build-id and address, not file name");
	CHECK(fleet_stack_hash(&sa) != fleet_stack_hash(&sc), "fleet hash: another address, another stack");
	/* a kernel frame that looks deferred is hashed whole */
	const char *k1[] = { "[m+0x10@abcd]" }, *k2[] = { "[n+0x10@abcd]" };
	struct agg_named_stack s1 = { .frames = k1, .nkframes = 1 };
	struct agg_named_stack s2 = { .frames = k2, .nkframes = 1 };
	CHECK(fleet_stack_hash(&s1) != fleet_stack_hash(&s2), "fleet hash: kernel frames whole");
}

/* DIR/.build-id/xx/rest.debug -> this binary, whose build-id it is. */
static int link_self(const char *dir, const uint8_t *id, size_t n)
{
	char path[512], sub[600], self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0 || sym_build_id_path(dir, id, n, path, sizeof(path)) < 0)
		return -1;
	self[len] = '\0';
	snprintf(sub, sizeof(sub), "%s/.build-id", dir);
	mkdir(sub, 0755);
	snprintf(sub, sizeof(sub), "%s/.build-id/%02x", dir, id[0]);
	mkdir(sub, 0755);
	return symlink(self, path);
}

static void namer_checks(void)
{
	struct sym_elf *self = NULL;
	uint64_t vaddr = 0;
	size_t n = 0;
	const uint8_t *id = NULL;
	char dir[] = "/tmp/ftstack-deferred.XXXXXX";
	if (sym_elf_load("/proc/self/exe", "/nonexistent", &self) == 0)
		id = sym_elf_build_id(self, &n);
	if (!id || !sym_elf_named(self) || sym_elf_foreach(self, find_target, &vaddr) != 1 ||
	    !mkdtemp(dir)) {
		SKIP("this test binary has no build-id or no .symtab", "namer");
		sym_elf_free(self);
		return;
	}
	char *frame = sym_deferred_format("renamed_test", vaddr + 2, id, n);
	struct sym_namer *m = NULL, *empty = NULL;
	CHECK(sym_namer_alloc("/nonexistent", NULL, &empty) == 0 &&
	      !sym_namer_name(empty, frame, true), "no debug file: the frame stays unnamed");
	CHECK(link_self(dir, id, n) == 0, "debug root made");
	CHECK(sym_namer_alloc(dir, NULL, &m) == 0, "namer");
	CHECK_STR(sym_namer_name(m, frame, true), "deferred_target",
		  "a deferred frame named by its build-id's debug file");
	CHECK(!sym_namer_name(m, "[libc.so.6]", true), "a frame that is not deferred: NULL");
	uint64_t named, unnamed, en, eu;
	sym_namer_counts(m, &named, &unnamed);
	sym_namer_counts(empty, &en, &eu);
	CHECK(named == 1 && unnamed == 0 && en == 0 && eu == 1, "counts: %" PRIu64 "/%" PRIu64
	      ", %" PRIu64 "/%" PRIu64, named, unnamed, en, eu);
	CHECK(deferred_target(1) == 4, "the target runs");
	char path[600];
	sym_build_id_path(dir, id, n, path, sizeof(path));
	unlink(path);
	snprintf(path, sizeof(path), "%s/.build-id/%02x", dir, id[0]);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/.build-id", dir);
	rmdir(path);
	rmdir(dir);
	free(frame);
	sym_namer_free(m);
	sym_namer_free(empty);
	sym_elf_free(self);
}

static int user_frames(void *ctx, const struct report_stack *s)
{
	char *out = ctx;
	for (uint32_t i = 0; i < s->nu; i++)
		snprintf(out + strlen(out), 512 - strlen(out), "%s%s", i ? "," : "", s->uframes[i]);
	strncat(out, "|", 511 - strlen(out));
	return 0;
}

/* perf script --show-mmap-events of a perf record --buildid-mmap: the
 * file's [unknown] frames deferred (a return address's call: ADDR - 1),
 * the side-band lines no samples; a file without a build-id stays [file]. */
static void perf_script_checks(void)
{
	const char *text =
		"cpu_ab 19290 PERF_RECORD_MMAP2 19290/19290: [0x5600e3cad000(0x1000) @ 0x1000 "
		"<aed1be9ec45a1679b92f538a8ca72a62711a70b4>]: r-xp /tmp/x/cpu_ab\n"
		"cpu_ab 19290 PERF_RECORD_MMAP2 19290/19290: [0x7f026baca000(0x2000) @ 0 00:00 0 0]: "
		"r-xp [vdso]\n"
		"cpu_ab 19290 PERF_RECORD_COMM exec: cpu_ab:19290/19290\n"
		"\n"
		"cpu_ab 19290\n"
		"\t            11be [unknown] (/tmp/x/cpu_ab)\n"
		"\t            1200 [unknown] (/tmp/x/cpu_ab)\n"
		"\t            4000 [unknown] (/tmp/x/other)\n"
		"\t           2724a __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
		"\n";
	char out[512] = "";
	struct report_stats st;
	int ret = report_parse(text, strlen(text), REPORT_PERF_SCRIPT, user_frames, out, &st);
	CHECK(ret == 0 && st.stacks == 1, "perf script with MMAP2 lines: one sample (%d, %" PRIu64 ")",
	      ret, st.stacks);
	CHECK_STR(out, "[cpu_ab+0x11be@aed1be9ec45a1679b92f538a8ca72a62711a70b4],"
		  "[cpu_ab+0x11ff@aed1be9ec45a1679b92f538a8ca72a62711a70b4],[other],"
		  "__libc_start_call_main|", "perf script: [unknown] frames of a file with a build-id deferred");
}

int main(void)
{
	perf_script_checks();
	text_checks();
	hash_checks();
	namer_checks();
	CHECK_DONE();
}
