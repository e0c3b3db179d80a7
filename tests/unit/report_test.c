/* Unit tests of report/: every fixture parsed to exact stacks and counts,
 * machinery dropped, detection, garbage / truncated / binary input. */
#include "report/report.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>

#define FIX "tests/unit/fixtures/report/"
#define MAXS 64

/* Each delivered stack rendered as "comm|pid|event|count|k1,k2|u1,u2". */
struct got {
	int n;
	char s[MAXS][2048];
	uint64_t period[MAXS];
};

static void join(char *out, size_t cap, const char *const *f, uint32_t n)
{
	size_t used = strlen(out);

	for (uint32_t i = 0; i < n && used < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? "," : "", f[i]);
}

static int collect(void *ctx, const struct report_stack *s)
{
	struct got *g = ctx;

	if (g->n >= MAXS)
		return 0;
	g->period[g->n] = s->period;
	char *o = g->s[g->n++];
	snprintf(o, 2048, "%s|%u|%s|%" PRIu64 "|", s->comm, s->pid, s->event, s->count);
	join(o, 2048, s->kframes, s->nk);
	strncat(o, "|", 2047 - strlen(o));
	join(o, 2048, s->uframes, s->nu);
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long sz = ftell(f);
		rewind(f);
		buf = sz >= 0 ? malloc((size_t)sz + 1) : NULL;
		if (buf)
			*len = fread(buf, 1, (size_t)sz, f);
	}
	fclose(f);
	return buf;
}

static int parse_file(const char *name, enum report_format fmt, struct got *g,
		      struct report_stats *st)
{
	size_t len;
	char path[256];

	snprintf(path, sizeof(path), FIX "%s", name);
	char *buf = slurp(path, &len);
	memset(g, 0, sizeof(*g));
	CHECK(buf != NULL, "read %s", path);
	if (!buf)
		return -ENOENT;
	int ret = report_parse(buf, len, fmt, collect, g, st);
	free(buf);
	return ret;
}

static int count_str(const struct got *g, const char *s)
{
	int n = 0;

	for (int i = 0; i < g->n; i++)
		n += strcmp(g->s[i], s) == 0;
	return n;
}

static void test_kprobe(void)
{
	struct got g;
	struct report_stats st;

	CHECK_EQ_U64(parse_file("linux61_kprobe_stacktrace.txt", REPORT_AUTO, &g, &st), 0, "kprobe: parse");
	CHECK_EQ_U64(st.format, REPORT_FTRACE, "kprobe: detected ftrace");
	CHECK_EQ_U64(st.stacks, 9, "kprobe: 9 stacks");
	CHECK_EQ_U64(st.machinery, 36, "kprobe: 4 machinery frames per stack dropped");
	CHECK_EQ_U64(st.malformed + st.truncated, 0, "kprobe: nothing malformed");
	int first_ok = 0;
	for (int i = 0; i < g.n; i++)
		first_ok += strstr(g.s[i], "|kmalloc_probe|1|__kmalloc,") != NULL;
	CHECK_EQ_U64(first_ok, 9, "kprobe: every stack starts at the probed function");
	CHECK_EQ_U64(count_str(&g, "init|1|kmalloc_probe|1|__kmalloc,security_prepare_creds,"
			       "prepare_creds,copy_creds,copy_process,kernel_clone,__do_sys_clone,"
			       "do_syscall_64,entry_SYSCALL_64_after_hwframe|"), 2,
		     "kprobe: init's prepare_creds stack twice");
	CHECK_EQ_U64(count_str(&g, "cat|93|kmalloc_probe|1|__kmalloc,alloc_pipe_info,"
			       "splice_direct_to_actor,do_splice_direct,do_sendfile,"
			       "__x64_sys_sendfile64,do_syscall_64,entry_SYSCALL_64_after_hwframe|"), 1,
		     "kprobe: cat's sendfile stack");
}

static void test_function(void)
{
	struct got g;
	struct report_stats st;

	CHECK_EQ_U64(parse_file("linux61_function_stacktrace.txt", REPORT_AUTO, &g, &st), 0, "function: parse");
	CHECK_EQ_U64(st.stacks, 12, "function: 12 stacks");
	CHECK_EQ_U64(st.machinery, 12, "function: trampoline address dropped");
	CHECK_EQ_U64(count_str(&g, "ls|100|__kmalloc|1|__kmalloc,load_elf_phdrs,load_elf_binary,"
			       "bprm_execve,do_execveat_common.isra.0,__x64_sys_execve,do_syscall_64,"
			       "entry_SYSCALL_64_after_hwframe|"), 1, "function: ls load_elf_phdrs");
	CHECK_EQ_U64(count_str(&g, "init|1|__kmalloc|1|__kmalloc,security_task_alloc,copy_process,"
			       "kernel_clone,__do_sys_clone,do_syscall_64,entry_SYSCALL_64_after_hwframe|"),
		     2, "function: init security_task_alloc twice");
}

static void test_hist(void)
{
	struct got g;
	struct report_stats st;

	CHECK_EQ_U64(parse_file("linux61_hist_kmalloc.txt", REPORT_AUTO, &g, &st), 0, "hist: parse");
	CHECK_EQ_U64(st.format, REPORT_HIST, "hist: detected");
	CHECK_EQ_U64(st.stacks, 23, "hist: 23 stacks");
	CHECK_EQ_U64(st.events, 99, "hist: 99 hits summed");
	CHECK_EQ_U64(st.hist_hits, 99, "hist: Totals Hits");
	CHECK_STR(g.s[22], "|0||68|tracing_map_sort_entries,hist_show,seq_read_iter,seq_read,"
		  "vfs_read,ksys_read,do_syscall_64,entry_SYSCALL_64_after_hwframe|", "hist: last entry");
	CHECK_STR(g.s[0], "|0||1|alloc_pipe_info,splice_direct_to_actor,do_splice_direct,do_sendfile,"
		  "__x64_sys_sendfile64,do_syscall_64,entry_SYSCALL_64_after_hwframe|", "hist: first entry");

	CHECK_EQ_U64(parse_file("hist_keys.txt", REPORT_AUTO, &g, &st), 0, "hist keys: parse");
	CHECK_EQ_U64(st.stacks, 2, "hist keys: 2 stacks (the stackless entry skipped)");
	CHECK_EQ_U64(st.hist_hits, 23, "hist keys: Hits");
	CHECK_STR(g.s[0], "sh|101||4|__kmalloc,load_elf_phdrs,[unknown],bprm_execve|", "hist keys: execname key, module, address");
	CHECK_STR(g.s[1], "cat|93||17|__kmalloc,bprm_execve|", "hist keys: second");
}

static void test_ftrace_variants(void)
{
	static const char kstack[] = "syscall_trace_enter,do_syscall_64,entry_SYSCALL_64_after_hwframe";
	struct got g;
	struct report_stats st;
	char want[512];

	CHECK_EQ_U64(parse_file("ftrace_syscall_user.txt", REPORT_AUTO, &g, &st), 0, "syscall: parse");
	snprintf(want, sizeof(want), "getppid|4769|sys_getppid|1|%s|[unknown],[unknown],[unknown],[unknown]", kstack);
	CHECK_EQ_U64(st.stacks, 3, "syscall: 3 stacks");
	CHECK_EQ_U64(count_str(&g, want), 3, "syscall: user block before kernel block paired");
	CHECK_EQ_U64(st.machinery, 3, "syscall: ftrace_syscall_enter dropped");

	static const char uobj[] = "/usr/lib/x86_64-linux-gnu/libc.so.6[+0xaf4f7],/tmp/cap/getppid[+0x18d],"
				   "/tmp/cap/getppid[+0x1ce],/usr/lib/x86_64-linux-gnu/libc.so.6[+0x124a]";
	CHECK_EQ_U64(parse_file("ftrace_userobj_symaddr.txt", REPORT_AUTO, &g, &st), 0, "userobj: parse");
	snprintf(want, sizeof(want), "getppid|4860|sys_getppid|1|%s|%s", kstack, uobj);
	CHECK_EQ_U64(count_str(&g, want), 3, "userobj+sym-offset+sym-addr: names stripped");

	CHECK_EQ_U64(parse_file("ftrace_noirqinfo.txt", REPORT_AUTO, &g, &st), 0, "noirqinfo: parse");
	snprintf(want, sizeof(want), "getppid|4854|sys_getppid|1|%s|%s", kstack, uobj);
	CHECK_EQ_U64(count_str(&g, want), 3, "irq-info off");

	CHECK_EQ_U64(parse_file("ftrace_tgid.txt", REPORT_AUTO, &g, &st), 0, "tgid: parse");
	snprintf(want, sizeof(want), "getppid|4872|sys_getppid|1|%s|%s", kstack, uobj);
	CHECK_EQ_U64(count_str(&g, want), 3, "record-tgid");

	CHECK_EQ_U64(parse_file("ftrace_nocontext.txt", REPORT_AUTO, &g, &st), 0, "nocontext: parse");
	snprintf(want, sizeof(want), "|0|sys_getppid|1|%s|[unknown],[unknown],[unknown],[unknown]", kstack);
	CHECK_EQ_U64(count_str(&g, want), 3, "context-info off");

	CHECK_EQ_U64(parse_file("ftrace_kmalloc_trigger.txt", REPORT_AUTO, &g, &st), 0, "kmalloc trigger: parse");
	CHECK_EQ_U64(st.stacks, 3, "kmalloc trigger: events without stacks not counted");
	CHECK_STR(g.s[0], "cap2.sh|5015|kmalloc|1|__kmalloc_noprof,lsm_blob_alloc,security_prepare_creds,"
		  "prepare_creds,copy_creds,copy_process,kernel_clone,__do_sys_clone,do_syscall_64,"
		  "entry_SYSCALL_64_after_hwframe|", "kmalloc trigger: trace_event_raw_event_kmalloc dropped");

	CHECK_EQ_U64(parse_file("ftrace_mixed.txt", REPORT_AUTO, &g, &st), 0, "mixed: parse");
	CHECK_EQ_U64(st.stacks, 2, "mixed: 2 stacks");
	CHECK_STR(g.s[0], "bash|200|__kmalloc|1|__kmalloc,xfs_alloc,[unknown],do_syscall_64|[unknown],[unknown]",
		  "mixed: trampoline marker dropped, module/offset/addr stripped");
	CHECK_STR(g.s[1], "<...>|300|sys_getppid|1|syscall_exit_work,do_syscall_64|", "mixed: exit syscall");

	CHECK_EQ_U64(parse_file("ftrace_truncated.txt", REPORT_AUTO, &g, &st), 0, "truncated: partial result");
	CHECK_EQ_U64(st.truncated, 1, "truncated: flagged");
	CHECK_STR(g.s[0], "bash|200|foo|1|do_sys_open|", "truncated: cut frame dropped");
}

static void test_perf(void)
{
	struct got g;
	struct report_stats st;
	static const char k[] = "__kmalloc_cache_noprof,perf_event_mmap,__mmap_region,do_mmap,vm_mmap_pgoff,"
				"elf_load,load_elf_binary,bprm_execve,do_execveat_common.isra.0,"
				"__x64_sys_execve,do_syscall_64,entry_SYSCALL_64_after_hwframe";
	char want[1024];

	CHECK_EQ_U64(parse_file("perf_kmalloc.txt", REPORT_AUTO, &g, &st), 0, "perf: parse");
	CHECK_EQ_U64(st.format, REPORT_PERF_SCRIPT, "perf: detected");
	CHECK_EQ_U64(st.stacks, 3, "perf: 3 samples");
	snprintf(want, sizeof(want), "getppid|5129|kmem:kmalloc|1|%s|[unknown]", k);
	CHECK_STR(g.s[0], want, "perf: default fields");

	CHECK_EQ_U64(parse_file("perf_kmalloc_F.txt", REPORT_AUTO, &g, &st), 0, "perf -F: parse");
	CHECK_EQ_U64(st.format, REPORT_PERF_SCRIPT, "perf -F: detected");
	snprintf(want, sizeof(want), "getppid|5129||1|%s|[unknown]", k);
	CHECK_STR(g.s[2], want, "perf -F comm,pid,tid,ip,sym,dso");

	CHECK_EQ_U64(parse_file("perf_getppid_user.txt", REPORT_PERF_SCRIPT, &g, &st), 0, "perf user: parse");
	CHECK_EQ_U64(st.stacks, 2, "perf user: 2 samples");
	CHECK_STR(g.s[0], "getppid|5047|syscalls:sys_enter_getppid|1||__GI___getppid,mid,main,"
		  "__libc_start_call_main", "perf user: small addresses are user frames");
}

/* Parses TEXT as FMT into g; returns report_parse's value. */
static int parse_str(const char *text, enum report_format fmt, struct got *g,
		     struct report_stats *st)
{
	memset(g, 0, sizeof(*g));
	return report_parse(text, strlen(text), fmt, collect, g, st);
}

/* Issue 15's header shapes and frame rules, one sample each. */
static void test_perf_shapes(void)
{
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "V8 WorkerThread 24636/25607 [000] 94564.109216:        100 cycles:\n\t55d0 run (/x)\n",
		  "V8 WorkerThread|24636|cycles|1||run", "comm with a blank, pid/tid, cpu, time, period" },
		{ "perf 123 cycles:\n\t55d0 run (/x)\n", "perf|123|cycles|1||run", "no time" },
		{ "perf 123 [001] 7 cycles:ppp:\n\t55d0 run (/x)\n", "perf|123|cycles|1||run",
		  "cpu without time, modifiers dropped" },
		{ "123/124 1.000001: cycles:\n\t55d0 run (/x)\n", "|123|cycles|1||run", "no comm" },
		{ "perf 123 1.000001: cycles:\n55d0 run (/x)\n7f00 main (/lib/libc.so.6)\n",
		  "perf|123|cycles|1||run,main", "unindented frames" },
		{ "perf 123 1.0: cycles:\n\t7f1e2215d058  (/lib/x86_64-linux-gnu/libc.so.6)\n"
		  "\t7f00 [unknown] (/usr/lib/libfoo.so.1)\n\t7f01 [unknown] ([unknown])\n",
		  "perf|123|cycles|1||[libc.so.6],[libfoo.so.1],[unknown]", "unknown symbols" },
		{ "p 1 1.0: cycles:\n\t8c3453 tcp_sendmsg (/lib/modules/6.1/build/vmlinux)\n"
		  "\tffffffff81000100 _text ([kernel.kallsyms]_text)\n\t7d8 nf_x+0x7f8f ([nf_conntrack])\n"
		  "\t55d0 main (/x)\n\tffffffffffffffff [unknown] ([unknown])\n",
		  "p|1|cycles|1|tcp_sendmsg,_text,nf_x|main,[unknown]", "kernel files; end marker at the root" },
		{ "idle 0 1.0: cycles:\n\tffffffffc0a01e93 bpf_prog_01ab_xdp+0xb80 (bpf_prog_01ab_xdp)\n"
		  "\tffffffffb8f03eaa net_rx_action+0x13a (/usr/lib/debug/boot/vmlinux-5.4.14-x)\n"
		  "\tffffffffb88000d4 [unknown] (/usr/lib/debug/boot/vmlinux-5.4.14-x)\n",
		  "idle|0|cycles|1|bpf_prog_01ab_xdp,net_rx_action,[vmlinux-5.4.14-x]|",
		  "kernel addresses: kernel frames whatever the file (versioned vmlinux, bpf_prog)" },
		{ "p 1 1.0: cycles:\n\tffffffffff600000 [unknown] ([vsyscall])\n\t55d0 main (/x)\n",
		  "p|1|cycles|1||[[vsyscall]],main", "[vsyscall]: a kernel-half address run in user mode" },
		{ "p 1 1.0: cycles:\n\t55d0 leaf->mid->outer+0x7 (/x)\n",
		  "p|1|cycles|1||outer_[i],mid_[i],leaf", "inline chain" },
		{ "p 1 1.0:    9 cycles:  55d0 run+0x1f (/x)\np 1 1.1:    9 cycles:  55d0 run+0x2f (/x)\n",
		  "p|1|cycles|1||run", "no -g: one frame on the header" },
		{ "p 1 1.0: 3 cycles:\n\np 2 1.0: 4 cycles:\n\t55d0 run (/x)\n", "p|1|cycles|1||",
		  "a header alone: its comm" },
	};
	struct got g;
	struct report_stats st;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int ret = parse_str(cases[i].in, REPORT_PERF_SCRIPT, &g, &st);
		CHECK(ret == 0 && g.n >= 1, "perf %s: parsed", cases[i].what);
		CHECK_STR(g.s[0], cases[i].want, cases[i].what);
		CHECK_EQ_U64(report_detect(cases[i].in, strlen(cases[i].in)), REPORT_PERF_SCRIPT,
			     "perf: detected");
	}
	CHECK_EQ_U64(parse_str("p 1 1.0: 3 cycles:\n\t55d0 a (/x)\n\n\t55d1 b (/x)\n", REPORT_AUTO,
			       &g, &st), 0, "orphans: parsed");
	CHECK_EQ_U64(st.orphans, 1, "frame after a blank line: an orphan");
	CHECK_EQ_U64(g.n, 1, "orphans: one stack");
	/* the period reaches the callback */
	static const char per[] = "p 1 1.0:    250 page-faults:\n\t55d0 a (/x)\n";
	CHECK_EQ_U64(parse_str(per, REPORT_AUTO, &g, &st), 0, "period: parsed");
	CHECK_EQ_U64(g.period[0], 250, "period delivered");
	CHECK_EQ_U64(parse_str("p 1 1.0: page-faults:\n\t55d0 a (/x)\n", REPORT_AUTO, &g, &st), 0,
		     "no period: parsed");
	CHECK_EQ_U64(g.period[0], 0, "no period: 0");
	/* folded: _[k] frames between user frames keep their place */
	CHECK_EQ_U64(parse_str("p;main_[k];user_leaf 1\np;u;k1_[k];k2_[k] 2\n", REPORT_AUTO, &g, &st),
		     0, "folded _[k]: parsed");
	CHECK_STR(g.s[0], "|0||1||user_leaf,main_[k],p", "folded: interleaved _[k] kept in order");
	CHECK_STR(g.s[1], "|0||2|k2,k1|u,p", "folded: leaf-side _[k] run split off");
}

static void test_folded(void)
{
	struct got g;
	struct report_stats st;

	CHECK_EQ_U64(parse_file("folded_mixed.txt", REPORT_AUTO, &g, &st), 0, "folded: parse");
	CHECK_EQ_U64(st.format, REPORT_FOLDED, "folded: detected");
	CHECK_EQ_U64(st.stacks, 4, "folded: 4 lines");
	CHECK_EQ_U64(st.events, 17, "folded: counts summed");
	CHECK_EQ_U64(st.malformed, 1, "folded: line without count");
	CHECK_STR(g.s[0], "|0||3||leaf,mid,main", "folded: unmarked frames: user, leaf first");
	CHECK_STR(g.s[2], "|0||7|ksys_read,do_syscall_64,entry_SYSCALL_64_after_hwframe|read,main,bash",
		  "folded: '-' splits user / kernel");
	CHECK_STR(g.s[3], "|0||5|ksys_read,do_syscall_64|read,main", "folded: _[k] frames");
	/* stackcollapse cuts "std::function<int (int)>" at '(': the blank is the name's */
	CHECK_EQ_U64(parse_str("p;main;std::function<int ;f<int  2\n", REPORT_FOLDED, &g, &st), 0,
		     "folded trailing blanks: parsed");
	CHECK_STR(g.s[0], "|0||2||f<int ,std::function<int ,main,p",
		  "folded: a frame's trailing blank kept, the one before COUNT dropped");
	CHECK_EQ_U64(parse_str("p;a_[k] ;b 1\n", REPORT_FOLDED, &g, &st), 0, "folded '_[k] ': parsed");
	CHECK_STR(g.s[0], "|0||1||b,a_[k] ,p", "folded: '_[k] ' is a name, not a kernel mark");
}

static void test_detect_and_names(void)
{
	enum report_format f = REPORT_AUTO;

	CHECK(report_format_parse("perf-script", &f) == 0 && f == REPORT_PERF_SCRIPT, "name perf-script");
	CHECK(report_format_parse("ftrace", &f) == 0 && f == REPORT_FTRACE, "name ftrace");
	CHECK(report_format_parse("folded", &f) == 0 && f == REPORT_FOLDED, "name folded");
	CHECK(report_format_parse("hist", &f) == 0 && f == REPORT_HIST, "name hist");
	CHECK_EQ_U64(report_format_parse("xml", &f), (uint64_t)-EINVAL, "unknown name");
	CHECK_STR(report_format_name(REPORT_PERF_SCRIPT), "perf", "format name");
	CHECK_EQ_U64(report_detect("a;b;c 3\n", 8), REPORT_FOLDED, "detect folded");
	CHECK_EQ_U64(report_detect("", 0), REPORT_AUTO, "detect empty");
	CHECK_EQ_U64(report_detect("hello world\n", 12), REPORT_AUTO, "detect prose");

	CHECK(report_is_machinery("kprobe_dispatcher"), "machinery kprobe_dispatcher");
	CHECK(report_is_machinery("trace_event_raw_event_sched_switch"), "machinery prefix");
	CHECK(report_is_machinery("0xffffffffc0358083"), "machinery bare address");
	CHECK(!report_is_machinery("__kmalloc"), "not machinery __kmalloc");
	CHECK(!report_is_machinery("tracing_map_sort_entries"), "not machinery tracing_map_*");
	/* the table's first and last names, one of each first byte's ends, and
	 * near misses: the search of the sorted names finds exactly the table */
	static const char *const in[] = { "kprobe_trace_func", "arch_stack_walk", "[FTRACE TRAMPOLINE]",
					   "__kretprobe_trampoline", "uprobe_dispatcher", "ftrace_stub",
					   "perf_swevent_hrtimer", "trace_call_bpf", "do_int3" };
	static const char *const out[] = { "kprobe_trace_fun", "kprobe_trace_funcs", "arch_stack_walk_",
					   "[FTRACE TRAMPOLINE", "", "0x", "0xfffg", "ftrace_stubs" };
	int found = 0, missed = 0;
	for (size_t i = 0; i < sizeof(in) / sizeof(*in); i++)
		found += report_is_machinery(in[i]);
	for (size_t i = 0; i < sizeof(out) / sizeof(*out); i++)
		missed += !report_is_machinery(out[i]);
	CHECK_EQ_U64(found, 9, "machinery: table names found");
	CHECK_EQ_U64(missed, 8, "machinery: near misses not");
}

static void test_garbage(void)
{
	struct got g = { 0 };
	struct report_stats st;
	static const char bin[] = "\x7f" "ELF\0\0\x01\x02 => foo\0\n\0\n{ stacktrace:\n\0";
	static const char junk[] = "just some text\nwith lines\n";
	static const char fmts[] = { REPORT_AUTO, REPORT_FTRACE, REPORT_PERF_SCRIPT, REPORT_HIST, REPORT_FOLDED };

	for (size_t i = 0; i < sizeof(fmts); i++) {
		int ret = report_parse(bin, sizeof(bin) - 1, (enum report_format)fmts[i], collect, &g, &st);
		CHECK_EQ_U64(ret, (uint64_t)-EINVAL, "binary input rejected");
		ret = report_parse(junk, sizeof(junk) - 1, (enum report_format)fmts[i], collect, &g, &st);
		CHECK_EQ_U64(ret, (uint64_t)-EINVAL, "prose rejected");
	}
	/* random bytes can hold a line "<junk> 6": binary input is no format */
	static const char rnd[] = "\355\373\370\275rZ\347\"\225:\365?4S 6\n\001\002\003\004\005\006\n";
	CHECK(report_is_binary(rnd, sizeof(rnd) - 1), "random bytes: binary");
	CHECK_EQ_U64(report_detect(rnd, sizeof(rnd) - 1), REPORT_AUTO, "binary: no format detected");
	CHECK_EQ_U64(report_parse(rnd, sizeof(rnd) - 1, REPORT_AUTO, collect, &g, &st),
		     (uint64_t)-EINVAL, "binary: rejected");
	memset(&g, 0, sizeof(g));
	CHECK_EQ_U64(report_parse(rnd, sizeof(rnd) - 1, REPORT_FOLDED, collect, &g, &st), 0,
		     "binary, --input-format folded: parsed as asked");
	CHECK_EQ_U64(report_parse("", 0, REPORT_FOLDED, collect, &g, &st), 0, "empty input: no error");
	CHECK_EQ_U64(st.stacks, 0, "empty input: no stacks");
	CHECK_EQ_U64(report_parse("# c\n\n", 4, REPORT_AUTO, collect, &g, &st), 0,
		     "comments only: no error");
	CHECK_EQ_U64(report_parse(NULL, 0, REPORT_FOLDED, collect, &g, &st), (uint64_t)-EINVAL, "NULL input");

	/* A hist entry cut before its closing brace. */
	static const char cut[] = "{ stacktrace:\n  a+0x1/0x2\n} hitcount: 2\n{ stacktrace:\n  b+0x1/0x2\n";
	memset(&g, 0, sizeof(g));
	CHECK_EQ_U64(report_parse(cut, sizeof(cut) - 1, REPORT_HIST, collect, &g, &st), 0, "cut hist: partial");
	CHECK_EQ_U64(st.truncated, 1, "cut hist: truncated flagged");
	CHECK_EQ_U64(st.stacks, 1, "cut hist: complete entry kept");

	/* NUL inside a frame line: that line is dropped, the rest kept. */
	static const char nul[] = "a-1 [000] ..... 1.0: ev: x\na-1 [000] ..... 1.0: <stack trace>\n => f\0oo\n => g\n";
	memset(&g, 0, sizeof(g));
	CHECK_EQ_U64(report_parse(nul, sizeof(nul) - 1, REPORT_AUTO, collect, &g, &st), 0, "NUL line: parse");
	CHECK_EQ_U64(st.stacks, 1, "NUL line: one stack");
	CHECK_EQ_U64(st.malformed, 1, "NUL line counted");
	CHECK_STR(g.s[0], "a|1|ev|1|g|", "NUL line: other frames kept");

	/* A huge stack is bounded. */
	size_t n = 2000;
	char *big = malloc(n * 16 + 64);
	size_t used = (size_t)sprintf(big, "x-1 [000] ..... 1.0: <stack trace>\n");
	for (size_t i = 0; i < n; i++)
		used += (size_t)sprintf(big + used, " => f%zu\n", i % 1000);
	memset(&g, 0, sizeof(g));
	CHECK_EQ_U64(report_parse(big, used, REPORT_FTRACE, collect, &g, &st), 0, "big stack parsed");
	CHECK_EQ_U64(st.frames_cut, n - REPORT_MAX_FRAMES, "big stack: frames beyond the cap counted");
	free(big);
}

static int stop_cb(void *ctx, const struct report_stack *s)
{
	(void)s;
	++*(int *)ctx;
	return 42;
}

static void test_callback_stop(void)
{
	int calls = 0;

	CHECK_EQ_U64(report_parse("a;b 1\nc 2\n", 10, REPORT_FOLDED, stop_cb, &calls, NULL), 42,
		     "callback return stops the parse");
	CHECK_EQ_U64(calls, 1, "one call before stopping");
}

int main(void)
{
	test_kprobe();
	test_function();
	test_hist();
	test_ftrace_variants();
	test_perf();
	test_folded();
	test_perf_shapes();
	test_detect_and_names();
	test_garbage();
	test_callback_stop();
	CHECK_DONE();
}
