/* collector/ustack.c: the per-host rule that picks the default's user-stack
 * method, what --call-graph asks for, and the summary's line for stacks cut
 * at the copy's end. Pure: nothing is timed here (the measurement itself:
 * perfev_cost_test). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector/result.h"
#include "collector/session.h"
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"

static void test_rule(void)
{
	char why[160];
	/* the verdict is perfev_ustack_judge's (perfev_cost_test tests it); the
	 * rule follows it and says the figures, never a negative one */
	struct perfev_ustack_cost slow = { .fp_ns = 1370, .copy_ns = 550, .fp_measured = true,
					   .copy_measured = true, .verdict = PERFEV_USTACK_COPY,
					   .frames = 16, .fp_bytes = 1024, .copy_bytes = 2048 };
	CHECK(ft_ustack_rule(&slow, why, sizeof(why)) == FT_USTACK_COPY &&
	      strcmp(why, "fp (16-frame walk + 1024-byte copy) 1.37 us, 2048-byte copy 0.55 us: "
		     "copy measurably cheaper") == 0,
	      "slow reads of user memory: copy (%s)", why);
	struct perfev_ustack_cost fast = { .fp_ns = 150, .copy_ns = 400, .fp_measured = true,
					   .copy_measured = true, .verdict = PERFEV_USTACK_FP,
					   .frames = 16, .fp_bytes = 1024, .copy_bytes = 2048 };
	CHECK(ft_ustack_rule(&fast, why, sizeof(why)) == FT_USTACK_FP &&
	      strstr(why, ": fp measurably cheaper"), "a cheap walk: fp (%s)", why);
	/* too small to tell: copy, the cheaper-or-equal one whose cut stacks
	 * are counted (the old rule took fp here) */
	struct perfev_ustack_cost same = { .verdict = PERFEV_USTACK_TOO_SMALL, .frames = 16,
					   .fp_bytes = 1024, .copy_bytes = 2048 };
	CHECK(ft_ustack_rule(&same, why, sizeof(why)) == FT_USTACK_COPY &&
	      strcmp(why, "fp (16-frame walk + 1024-byte copy) too small to measure here, 2048-byte "
		     "copy too small to measure here: within the noise: copy (its cut stacks are "
		     "counted)") == 0,
	      "both within the noise: copy (%s)", why);
	/* ftstack check's line ("copy (WHY); saved for this boot") holds the
	 * longest reason whole (ft_ustack_check itself writes /run: not here) */
	struct tfs_check_item it;
	CHECK(strlen("copy (); saved for this boot") + strlen(why) < sizeof(it.detail),
	      "check's line holds the reason whole (%zu bytes of %zu)", strlen(why) + 28,
	      sizeof(it.detail));
	CHECK_STR(ft_ustack_name(FT_USTACK_FP), "fp", "name of fp");
	CHECK_STR(ft_ustack_name(FT_USTACK_COPY), "copy", "name of copy");
	CHECK_STR(ft_ustack_name(FT_USTACK_DWARF), "dwarf", "name of dwarf");
}

/* --call-graph given: no timing, the method and copy size asked for */
static void test_asked(void)
{
	static const struct { const char *arg; bool copy, dwarf; uint32_t size;
			      enum ft_ustack_method m; uint32_t want; } cases[] = {
		{ "fp", false, false, 0, FT_USTACK_FP, FT_FIX_SIZE_DEFAULT },
		{ "copy,4096", true, false, 4096, FT_USTACK_COPY, 4096 },
		{ "dwarf", true, true, FT_DWARF_SIZE_DEFAULT, FT_USTACK_DWARF, FT_DWARF_SIZE_DEFAULT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ft_options o = { .call_graph_set = true, .call_graph_copy = cases[i].copy,
					.call_graph_dwarf = cases[i].dwarf, .copy_size = cases[i].size };
		struct ft_ustacks u = { 0 };
		ft_ustack_choose(&u, &o);
		CHECK(u.method == cases[i].m && u.copy_size == cases[i].want &&
		      strncmp(u.why, "--call-graph ", 13) == 0,
		      "--call-graph %s: %s, %u bytes copied (%s)", cases[i].arg,
		      ft_ustack_name(u.method), u.copy_size, u.why);
		/* the frame walks take bp, sp, ip, r10, r11; CFI for every frame
		 * all 17 (x86-64 perf register numbers) */
		CHECK(u.regs_mask == (cases[i].dwarf ? 0xff01ffULL : 0xc01c0ULL),
		      "--call-graph %s: the user registers taken (%#llx)", cases[i].arg,
		      (unsigned long long)u.regs_mask);
	}
}

/* The summary's line for SM's cut stacks or JIT code without a map (stderr
 * captured), or "". */
static const char *cut_line(const struct ft_summary *sm)
{
	static char buf[1024];
	struct agg_named_stats st;
	memset(&st, 0, sizeof(st));
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	buf[0] = '\0';
	if (!f || saved < 0)
		return buf;
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	ft_result_summary(sm, &st);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	char line[512];
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "user stacks reached") || strstr(line, "user stacks may be cut") ||
		    strstr(line, "no perf map names"))
			snprintf(buf, sizeof(buf), "%s", line);
	fclose(f);
	return buf;
}

/* stacks cut at the copy's end are counted, and the hint names what keeps
 * them whole: copy's stacks, --call-graph fp (the kernel walks them) */
static void test_cut_summary(void)
{
	struct ft_summary sm = { .live = true, .counted = 10, .stack_cut = 7, .copy_size = 2048,
				 .ustack = "copy", .full_cpu = -1 };
	CHECK_STR(cut_line(&sm), "ftstack: 7 user stacks reached the end of the 2048-byte stack "
		  "copy and may be cut (user stacks: copy; --call-graph copy,SIZE copies more; "
		  "--call-graph fp walks them whole)\n", "copy: cut stacks counted, --call-graph fp named");
	/* the binary where most were cut keeps frame pointers: fp named */
	sm.cut_file = "getppid_paths", sm.cut_fp = 555;
	CHECK(strstr(cut_line(&sm), "--call-graph fp walks them whole"), "copy, a binary with "
	      "frame pointers: --call-graph fp named");
	/* Debian's cc1 keeps none: fp would cut them worse, never named */
	sm.cut_file = "cc1", sm.cut_fp = 5;
	CHECK_STR(cut_line(&sm), "ftstack: 7 user stacks reached the end of the 2048-byte stack "
		  "copy and may be cut (user stacks: copy; cc1 keeps no frame pointers, so "
		  "--call-graph fp would not help; --call-graph dwarf,65528 copies the most and "
		  "walks it all with CFI)\n", "copy, cc1: dwarf,65528 named, not fp");
	sm.ustack = "dwarf", sm.copy_size = 8192;
	CHECK(strstr(cut_line(&sm), "7 user stacks reached the end of the 8192-byte") &&
	      strstr(cut_line(&sm), "--call-graph dwarf,65528 copies the most") &&
	      !strstr(cut_line(&sm), "--call-graph fp walks"), "dwarf,8192, cc1: the largest copy named");
	sm.copy_size = FT_COPY_SIZE_MAX;
	CHECK(strstr(cut_line(&sm), "deeper than the kernel copies; cc1 keeps no frame pointers: "
		     "--call-graph fp would not help"), "dwarf,65528, cc1: nothing helps, said so");
	sm.cut_file = "leaf_ab", sm.cut_fp = 142;
	CHECK(strstr(cut_line(&sm), "leaf_ab keeps frame pointers: --call-graph fp walks them whole"),
	      "dwarf,65528, a binary with frame pointers: fp named");
	/* the kernel copied them whole (each copy shorter than asked): a walk
	 * that read beyond went astray, whatever the copy's size; never
	 * "deeper than the kernel copies" (until 2026-11-26 every thread's
	 * stack was told so, cut at start_thread) */
	sm.stack_cut_top = 7, sm.cut_file = "libc.so.6", sm.cut_fp = 15;
	CHECK_STR(cut_line(&sm), "ftstack: 7 user stacks reached the end of the 65528-byte stack "
		  "copy and may be cut (user stacks: dwarf; the kernel copied less than it had room for, "
		  "up to the stack's top or a page it could not read then: a step in libc.so.6 read "
		  "beyond it, no larger copy helps)\n",
		  "copied whole: a bad read named, not a deep stack");
	sm.stack_cut_top = 6;
	CHECK(strstr(cut_line(&sm), "deeper than the kernel copies"), "some not copied whole: deep");
	sm.stack_cut_top = 0;
	sm.stack_cut = 0;
	CHECK_STR(cut_line(&sm), "", "none cut: no line");
	/* JIT code no perf map names: the runtime's flag named */
	sm.jit_unnamed = 5, sm.jit_runtime = "node", sm.jit_needs = "--perf-basic-prof";
	CHECK_STR(cut_line(&sm), "ftstack: 5 user stacks went through JIT code no perf map names: "
		  "run node with --perf-basic-prof\n", "JIT code without a map: the flag named");
	sm.jit_runtime = NULL;
	CHECK(strstr(cut_line(&sm), "5 user stacks went through JIT code no perf map names (a JIT "
		     "names its code in /tmp/perf-PID.map"), "an unknown runtime's: the map named");
	sm.jit_unnamed = 0;
	/* dwarf stacks that stop short of their start otherwise: counted too */
	sm.stack_stopped = 3, sm.stop_file = "python3.11", sm.stop_fp = 0;
	CHECK_STR(cut_line(&sm), "ftstack: 3 user stacks may be cut: their walk stopped short of "
		  "the process's start, most in python3.11 (user stacks: dwarf; no CFI there to go "
		  "on with)\n", "dwarf: stacks stopped short counted, fp not named");
}

/* The default's choice from the mode: profile and offcpu copy the most and
 * take CFI for every frame; count keeps the host's method and small copy */
static void test_default(void)
{
	/* profile's copy: a second of samples fits the 64 MB default ring */
	static const struct {
		enum ft_cmd cmd; enum ft_ustack_method host, m; uint64_t rate; uint32_t size;
	} cases[] = {
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 49, 65528 },
		{ FT_PROFILE, FT_USTACK_FP, FT_USTACK_DWARF, 999, 65528 },
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 1024, 65528 },
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 1025, 32768 },
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 2048, 32768 },
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 2049, 16384 },
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 4096, 16384 },
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 10000, 8192 },
		{ FT_PROFILE, FT_USTACK_COPY, FT_USTACK_DWARF, 100000, 8192 },
		{ FT_OFFCPU, FT_USTACK_COPY, FT_USTACK_DWARF, 0, 16384 },
		{ FT_COUNT, FT_USTACK_COPY, FT_USTACK_COPY, 0, 2048 },
		{ FT_COUNT, FT_USTACK_FP, FT_USTACK_FP, 0, 1024 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t size = 0;
		enum ft_ustack_method m = ft_ustack_default(cases[i].cmd, cases[i].host, cases[i].rate,
							    &size);
		CHECK(m == cases[i].m && size == cases[i].size, "default, case %zu (rate %llu): %s, "
		      "%u bytes", i, (unsigned long long)cases[i].rate, ft_ustack_name(m), size);
	}
	/* the rate from the options: -F, a second over --period, -F 49 unset */
	struct ft_options r = { .cmd = FT_PROFILE, .freq = 10000 };
	CHECK_EQ_U64(ft_profile_rate(&r), 10000, "rate: -F 10000");
	r = (struct ft_options){ .cmd = FT_PROFILE, .period_ns = 250000 };
	CHECK_EQ_U64(ft_profile_rate(&r), 4000, "rate: --period 250 us");
	r = (struct ft_options){ .cmd = FT_COUNT, .freq = 10000 };
	CHECK_EQ_U64(ft_profile_rate(&r), 0, "rate: count has none");
	/* through ft_ustack_choose: profile's whatever the host's answer */
	struct ft_options o = { .cmd = FT_PROFILE };
	struct ft_ustacks u = { 0 };
	ft_ustack_choose(&u, &o);
	CHECK(u.method == FT_USTACK_DWARF && u.copy_size == 65528 && u.regs_mask == 0xff01ffULL &&
	      strstr(u.why, "profile's default"), "profile: dwarf, 65528 bytes, 17 registers (%s)",
	      u.why);
	o.freq = 10000;
	ft_ustack_choose(&u, &o);
	CHECK(u.method == FT_USTACK_DWARF && u.copy_size == 8192 && strstr(u.why, "8192-byte"),
	      "profile -F 10000: dwarf, 8192 bytes (%s)", u.why);
	o.cmd = FT_COUNT;
	ft_ustack_choose(&u, &o);
	CHECK(u.method != FT_USTACK_DWARF && u.copy_size <= 2048, "count: the host's method, "
	      "%u bytes (%s)", u.copy_size, u.why);
}

/* The frame-pointer verdict the advice rests on, on this build's workloads:
 * getppid_paths is built with frame pointers, nofp_paths without */
static void test_fp_verdict(void)
{
	char dir[4096], path[4200];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	dir[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/getppid_paths", dir);
	int fp = sym_elf_fp_share(path);
	snprintf(path, sizeof(path), "%s/nofp_paths", dir);
	int nofp = sym_elf_fp_share(path);
	CHECK(fp >= FT_KEEPS_FP && nofp >= 0 && nofp < FT_KEEPS_FP,
	      "frame pointers: getppid_paths %d per mille (keeps them), nofp_paths %d (does not)", fp,
	      nofp);
	CHECK(sym_elf_fp_share("/nonexistent") == -ENOENT, "no file: -ENOENT");

	/* the summary's verdict for a walk stopped in a file that keeps frame
	 * pointers: fp is named only if the program it ran in keeps them too */
	struct ft_ustacks u = { .method = FT_USTACK_DWARF, .copy_size = FT_COPY_SIZE_MAX,
				.stopped = 3 };
	struct ft_summary sm = { .live = true, .counted = 10, .full_cpu = -1 };
	snprintf(u.cut_files[0].path, sizeof(u.cut_files[0].path), "%s/getppid_paths", dir);
	snprintf(u.cut_files[0].prog, sizeof(u.cut_files[0].prog), "%s", path); /* nofp_paths */
	u.cut_files[0].stopped = 3;
	ft_ustack_summary(&u, &sm);
	CHECK(sm.stop_fp == nofp && strstr(cut_line(&sm), "getppid_paths (user stacks: dwarf; "
					   "no CFI there to go on with)"),
	      "stopped in a file with frame pointers, in a program without: fp not named (%d)",
	      sm.stop_fp);
	snprintf(u.cut_files[0].prog, sizeof(u.cut_files[0].prog), "%s", u.cut_files[0].path);
	ft_ustack_summary(&u, &sm);
	CHECK(sm.stop_fp == fp && strstr(cut_line(&sm), "--call-graph fp follows them"),
	      "stopped in the program itself, which keeps frame pointers: fp named (%d)", sm.stop_fp);
}

/* The runtimes' table: each told by its program or a library, up to a dot */
static void test_runtimes(void)
{
	const struct ft_runtime *r;
	CHECK((r = ft_runtime_of("/usr/bin/node")) && strcmp(r->name, "node") == 0, "node");
	CHECK((r = ft_runtime_of("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so")) &&
	      strcmp(r->name, "java") == 0 && strstr(r->needs, "-XX:+DumpPerfMapAtExit") &&
	      strstr(r->needs, "jcmd PID Compiler.perfmap"), "java: libjvm.so, its flags");
	CHECK((r = ft_runtime_of("/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0")) &&
	      strstr(r->needs, "-X perf"), "python 3.12: libpython3.12.so.1.0, -X perf");
	CHECK((r = ft_runtime_of("/usr/bin/python3.13")) && strstr(r->needs, "-X perf"), "python3.13");
	CHECK(!ft_runtime_of("/usr/bin/python3.11") && !ft_runtime_of("/usr/bin/nodejs-x") &&
	      !ft_runtime_of("/usr/lib/libpython3.1.so") && !ft_runtime_of("/bin/bash"),
	      "python3.11 (no -X perf), a name that only starts like one, bash: none");
	size_t n;
	ft_runtime_table(&n);
	struct tfs_check_item it[8];
	CHECK(ft_runtimes_check(it, 8) == (int)n && n >= 3 && it[0].ok &&
	      strstr(it[0].detail, "--perf-basic-prof") && ft_runtimes_check(it, 1) == 1,
	      "ftstack check: a line a runtime (%zu)", n);
}

/* A JVM's first JIT sample may hold JIT frames alone: the runtime is told
 * by a later one (jit_test under ASan once gave the generic advice). */
static void test_jit_runtime(void)
{
	struct sym_procs *p = NULL;
	struct ft_jit_notes j = { 0 };
	struct ft_summary sm = { 0 };
	if (sym_procs_alloc("/nonexistent", NULL, &p) < 0)
		return;
	sym_procs_set_perfmap_dir(p, "/nonexistent");
	sym_procs_mmap(p, 42, 1, 0x400000, 0x1000, 0, true,
		       "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", NULL); /* the program: the launcher */
	sym_procs_mmap(p, 42, 1, 0x7f0000000000, 0x100000, 0, true,
		       "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", NULL);
	struct perfev_sample smp = { .pid = 42, .tid = 42, .time = 10 };
	uint64_t jit_only[] = { 0x10000, 0x10010 }, with_jvm[] = { 0x10000, 0x7f0000000100 };
	ft_jit_note(&j, p, &smp, 0x10000, jit_only, 2);
	ft_jit_note(&j, p, &smp, 0x10000, with_jvm, 2);
	ft_jit_summary(&j, &sm);
	CHECK(sm.jit_unnamed == 2 && sm.jit_runtime && strcmp(sm.jit_runtime, "java") == 0,
	      "JIT frames alone first, libjvm.so's next: 2 unnamed, java (%s)",
	      sm.jit_runtime ? sm.jit_runtime : "none");
	sym_procs_free(p);
}

int main(void)
{
	test_runtimes();
	test_jit_runtime();
	test_cut_summary();
	test_default();
	test_fp_verdict();
	test_rule();
	test_asked();
	CHECK_DONE();
}
