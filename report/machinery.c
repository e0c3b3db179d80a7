/* report: the one table of tracing-machinery frames. A stack taken from
 * inside a tracer (a stacktrace trigger, the function tracer's
 * func_stack_trace, a kprobe handler) starts with the tracer's own
 * functions; these names say which leading frames to drop. Shared with the
 * live collector through report_is_machinery(). */
#include "report/internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Exact names. */
static const char *const machinery_names[] = {
	/* kprobes: ftrace-based, int3-based and optimized dispatch */
	"kprobe_trace_func", "kprobe_perf_func", "kprobe_dispatcher",
	"kretprobe_trace_func", "kretprobe_perf_func", "kretprobe_dispatcher",
	"kprobe_ftrace_handler", "aggr_pre_handler", "aggr_post_handler",
	"kprobe_int3_handler", "kprobe_handler", "do_int3", "exc_int3", "asm_exc_int3",
	"optimized_callback", "opt_pre_handler", "__kprobes_text_start",
	"__kretprobe_trampoline_handler", "kretprobe_trampoline_handler",
	"__kretprobe_trampoline", "kretprobe_trampoline", "trampoline_handler",
	"kretprobe_rethook_handler", "rethook_trampoline_handler",
	"arch_rethook_trampoline", "arch_rethook_trampoline_callback",
	"fprobe_handler", "fprobe_exit_handler", "fprobe_entry",
	"uprobe_dispatcher", "uretprobe_dispatcher", "uprobe_trace_func",
	"uprobe_perf_func", "__uprobe_perf_func", "handler_chain",
	/* ftrace callers and trampolines */
	"ftrace_call", "ftrace_caller", "ftrace_regs_call", "ftrace_regs_caller",
	"ftrace_graph_call", "ftrace_stub", "ftrace_ops_list_func",
	"arch_ftrace_ops_list_func", "ftrace_ops_assist_func",
	"function_trace_call", "function_stack_trace_call",
	"function_no_repeats_trace_call", "function_stack_no_repeats_trace_call",
	"[FTRACE TRAMPOLINE]",
	/* syscall tracepoints */
	"ftrace_syscall_enter", "ftrace_syscall_exit",
	"perf_syscall_enter", "perf_syscall_exit",
	/* triggers, stack capture, ring buffer */
	"event_triggers_call", "event_triggers_post_call", "stacktrace_trigger",
	"stacktrace_count_trigger", "__ftrace_trace_stack", "ftrace_trace_stack",
	"__trace_stack", "trace_dump_stack", "trace_function",
	"trace_event_buffer_commit", "trace_event_buffer_reserve",
	"trace_event_buffer_lock_reserve", "trace_buffer_unlock_commit_regs",
	"trace_buffer_unlock_commit_nostack", "__buffer_unlock_commit",
	"trace_call_bpf", "perf_tp_event", "perf_trace_run_bpf_submit",
	"perf_prepare_sample", "perf_event_output", "__perf_event_overflow",
	"perf_swevent_event", "perf_swevent_overflow", "perf_swevent_hrtimer",
	"perf_trace_buf_submit", "perf_callchain", "get_perf_callchain",
	"event_hist_trigger", "hist_trigger_elt_update",
	"stack_trace_save", "stack_trace_save_regs", "arch_stack_walk",
};

/* Prefixes: generated per-event functions. */
static const char *const machinery_prefixes[] = {
	"trace_event_raw_event_", /* TRACE_EVENT probe that records the event */
	"perf_trace_",            /* the perf side of the same */
	"__bpf_trace_",           /* raw tracepoint BPF glue */
	"bpf_trace_run",
	"__traceiter_",           /* tracepoint iterator calling the probes */
	"trace_event_buffer_",
	"ftrace_trampoline",
};

bool report_is_hexaddr(const char *p, size_t n)
{
	if (n < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return false;
	for (size_t i = 2; i < n; i++)
		if (!isxdigit((unsigned char)p[i]))
			return false;
	return true;
}

#define NNAMES (sizeof(machinery_names) / sizeof(*machinery_names))
static const char *sorted_names[NNAMES];
/* Each exact name's length (up to KEY_LEN) and last character, as bits: the
 * live collector asks about every kallsyms name (~120,000), and most fail
 * this test before any compare (a search of the sorted names for each
 * was 6 ms of a count run's start-up). */
#define KEY_LEN 63
static uint64_t name_keys[KEY_LEN + 1][2];
/* each prefix's first 8 bytes (all are longer), compared as one word */
static uint64_t prefix_heads[sizeof(machinery_prefixes) / sizeof(*machinery_prefixes)];
static pthread_once_t sorted_once = PTHREAD_ONCE_INIT;

static bool key_bit(size_t len, unsigned char last, bool set)
{
	uint64_t *w = &name_keys[len < KEY_LEN ? len : KEY_LEN][(last >> 6) & 1];
	if (set)
		*w |= 1ull << (last & 63);
	return last < 128 && (*w >> (last & 63) & 1);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void sort_names(void)
{
	memcpy(sorted_names, machinery_names, sizeof(sorted_names));
	qsort(sorted_names, NNAMES, sizeof(*sorted_names), name_cmp);
	for (size_t i = 0; i < NNAMES; i++) {
		size_t n = strlen(machinery_names[i]);
		key_bit(n, (unsigned char)machinery_names[i][n - 1], true);
	}
	for (size_t i = 0; i < sizeof(prefix_heads) / sizeof(*prefix_heads); i++)
		memcpy(&prefix_heads[i], machinery_prefixes[i], sizeof(*prefix_heads));
}

bool report_is_machinery(const char *name)
{
	if (!name || !name[0])
		return false;
	size_t n = strlen(name);
	if (name[0] == '0' && report_is_hexaddr(name, n))
		return true;
	pthread_once(&sorted_once, sort_names);
	if (key_bit(n, (unsigned char)name[n - 1], false) &&
	    bsearch(&name, sorted_names, NNAMES, sizeof(*sorted_names), name_cmp))
		return true;
	uint64_t head;
	if (n < sizeof(head))
		return false; /* every prefix is longer */
	memcpy(&head, name, sizeof(head));
	for (size_t i = 0; i < sizeof(machinery_prefixes) / sizeof(*machinery_prefixes); i++)
		if (head == prefix_heads[i] &&
		    strncmp(name, machinery_prefixes[i], strlen(machinery_prefixes[i])) == 0)
			return true;
	return false;
}
