# Kernel functions through the function tracer (--mechanism function): the
# ftrace backend's private instance with set_ftrace_filter and
# func_stack_trace, each hit's ip mapped back to its function. The 6.1
# kernel has kprobes too, so the mechanism is asked for; on a kernel with
# the function tracer and no kprobes it is chosen by itself.
have_ftstack || { ok "function tracer cases # SKIP ftstack not built"; exit 0; }
W="$BIN/getppid_paths"
n=20000; a=$((n / 4)); b=$((n - n / 4))
fc() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
state() {
	cat $T/kprobe_events $T/set_ftrace_filter $T/set_ftrace_pid $T/current_tracer
	ls $T/instances; wc -l < $T/enabled_functions
}
before=$(state)

# 6.1 lists __x64_sys_getppid's address as __do_sys_getppid: the filter
# must hold that name. The traced command itself counts the call sites
# ftrace has patched while it runs: the two asked for, not every function
# of the kernel (an empty filter, which a refused name used to leave, traces
# them all).
$FTSTACK -e __x64_sys_getppid -e vfs_read --mechanism function -K -f \
	-c "sh -c 'wc -l < $T/enabled_functions > $TMP/patched'" >$TMP/o 2>$TMP/e
expect_eq "function: only the functions asked for are patched while tracing" \
	"$(cat $TMP/patched)" 2
check "function: the alias the tracer lists is said" \
	grep -q 'knows __x64_sys_getppid as __do_sys_getppid' $TMP/e

# 16 MB buffers: the 20,000 events fit even if ftstack, under TCG, never
# ran until the command ended (x 256 B, tests/live/lib.sh's bound for an
# ftrace event and its stack, = 5 MB; the perf -K ones x 128 B = 2.5 MB):
# exact counts, not a race
B="--buffer-size 16384"
$FTSTACK $B -e __x64_sys_getppid --mechanism function -K -f -c "$W $n" >$TMP/o 2>$TMP/e
expect_eq "function: exit status" $? 0
check "function: mechanism said" grep -q 'through: function tracer' $TMP/e
check "function: backend switch said" grep -q 'read through --backend ftrace' $TMP/e
expect_eq "function: every hit counted" "$(fc $TMP/o '__x64_sys_getppid [0-9]+$')" $n
check "function: leaf is the function, callers below it" grep -q 'do_syscall_64;__x64_sys_getppid [0-9]' $TMP/o
check "function: no trampoline or ftrace frames" sh -c "! grep -Eq '0x[0-9a-f]+|ftrace_|function_stack_trace' $TMP/o"
[ "$(fc $TMP/o '__x64_sys_getppid [0-9]+$')" = $n ] || info "function output: $(head -c 800 $TMP/o) / $(cat $TMP/e)"

# the same stacks as the kprobe PMU
$FTSTACK $B -e __x64_sys_getppid --mechanism kprobe-pmu -K -f -c "$W $n" >$TMP/o2 2>$TMP/e
expect_eq "function tracer and kprobe PMU agree (-K folded)" "$(cat $TMP/o)" "$(cat $TMP/o2)"

# two functions in one run never merge; user stacks are not available
$FTSTACK $B -e __x64_sys_getppid -e __x64_sys_getpid --mechanism function -f -c "$W $n" >$TMP/o 2>$TMP/e
expect_eq "two functions: exit status" $? 0
expect_eq "two functions: getppid hits" "$(fc $TMP/o ';__x64_sys_getppid [0-9]+$')" $n
check "two functions: user stacks said to be missing" grep -q 'records no user stacks' $TMP/e

# two aliases of one function are one filter line, not a mismatch
$FTSTACK -e __x64_sys_getppid -e __do_sys_getppid --mechanism function -K -f -c "$W 100" \
	>$TMP/o 2>$TMP/e
expect_eq "two aliases of one function: exit status" $? 0

# a function with no ftrace call site (noinstr) is refused, not traced
# through an empty filter
$FTSTACK -e do_syscall_64 --mechanism function -K -f 1 >$TMP/o 2>$TMP/e
expect_eq "untraceable function: exit status" $? 2
check "untraceable function: said" grep -q 'cannot trace do_syscall_64' $TMP/e

# a glob through the function tracer
$FTSTACK -e 'vfs_rea*' --mechanism function --max-probes 2 -K -f 1 >$TMP/o 2>$TMP/e
expect_eq "glob through the function tracer: exit status" $? 0
check "glob: the cap is said" grep -q "tracing the first 2" $TMP/e

expect_eq "kernel state as found" "$(state)" "$before"
