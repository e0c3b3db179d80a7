#!/usr/bin/env bash
# Kernel functions without kprobes (the tracepoint + --through fallback),
# uprobes and USDT on this kernel, with exact counts; nothing left behind.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
before=$(tracefs_state)
W="$BIN/getppid_paths" U="$BIN/usdt_paths"
# 10,000 calls: a uprobe sample with its user stack copied is ~2.2 KB (lib.sh),
# so the most a run takes (two probes, or two -c processes: 20,000 x 2.5 KB
# = 50 MB) fits a 64 MB ring ($RING) with the reader stopped throughout
n=10000; a=$((n / 4)); b=$((n - n / 4)) RING="--buffer-size 65536"

# the headline command: __kmalloc means __kmalloc_noprof on 6.10+
# python's start-up calls __kmalloc(_noprof) hundreds of times from a few paths
run_ft $TMP/o $TMP/e -e __kmalloc -m 10 -t 3 -c "python3 -c 'import json, ssl'"
expect_eq "__kmalloc: exit status" $? 0
if grep -q ' T __kmalloc_noprof$' /proc/kallsyms; then
	check "__kmalloc: rename said on stderr" grep -q '__kmalloc is called __kmalloc_noprof' $TMP/e
	leaf=__kmalloc_noprof
else
	ok "__kmalloc: rename said on stderr # SKIP this kernel has no __kmalloc_noprof"
	leaf=__kmalloc
fi
if [ ! -e /sys/bus/event_source/devices/kprobe ]; then
	check "__kmalloc: mechanism said on stderr" grep -q 'tracepoint + --through' $TMP/e
else
	ok "__kmalloc: mechanism said on stderr # SKIP this kernel has kprobes, so no fallback to say"
fi
blocks=$(awk 'BEGIN { first = 1 } /^$/ { first = 1; next } first { print; first = 0 }' $TMP/o)
check "__kmalloc: 1 to 3 stacks" test "$(grep -c '^        [0-9]' $TMP/o)" -ge 1 -a "$(grep -c '^        [0-9]' $TMP/o)" -le 3
expect_eq "__kmalloc: every stack's leaf is $leaf" "$(echo "$blocks" | sort -u)" "    $leaf"
check "__kmalloc: every count >= 10" awk '/^        [0-9]+$/ && $1 < 10 { exit 1 }' $TMP/o

# --through on a tracepoint: the kept stacks are exactly those through FUNC
run_ft $TMP/o $TMP/e -e t:kmem:kmalloc -K -f --through $leaf -c "$W 1000"
expect_eq "--through: exit status" $? 0
check "--through: every stack ends in $leaf" awk -v l=";$leaf" '{ sub(/ [0-9]+$/, ""); if (substr($0, length($0) - length(l) + 1) != l) exit 1 }' $TMP/o
# kmalloc's other callers (the exec of the command, its page tables) are
# left out, and the summary counts them under their own line
check "--through: summary counts what was left out" \
	grep -Eq "^ftstack: left out [1-9][0-9]* events whose kernel stack does not pass through $leaf$" $TMP/e
# a sample --through leaves out is not walked, and its cut not counted: a
# 64-byte copy cuts every getppid's user stack, none of which passes
# through $leaf (before, the summary said they may be cut, with 0 counted)
run_ft $TMP/o $TMP/e -e t:syscalls:sys_enter_getppid --call-graph copy,64 --through $leaf -f \
	-c "$W 1000"
expect_eq "--through, none through: exit status" $? 0
check "--through, none through: all 1000 left out" \
	grep -q "^ftstack: left out 1000 events whose kernel stack does not pass through $leaf$" $TMP/e
check "--through, none through: no stack said to be cut" bash -c "! grep -q 'may be cut' $TMP/e"
run_ft $TMP/o $TMP/e -e t:syscalls:sys_enter_getppid --call-graph copy,64 --through do_syscall_64 \
	-f -c "$W 1000"
check "--through, all through: 1000 counted" grep -q "^ftstack: 1000 events counted" $TMP/e
check "--through, all through: the 1000 kept are the 1000 cut" \
	grep -q "^ftstack: 1000 user stacks reached the end of the 64-byte stack copy" $TMP/e

# uprobes on a function of the workload, every spelling, exact per caller
for spec in "$W:do_getppid" "p:$W:do_getppid" "uprobe:$W:do_getppid"; do
	run_ft $TMP/o $TMP/e -e "$spec" -f -U $RING -c "$W $n"
	expect_eq "uprobe $spec: caller_a:caller_b" \
		"$(folded_count $TMP/o 'main;caller_a;do_getppid [0-9]+$'):$(folded_count $TMP/o 'main;caller_b;do_getppid [0-9]+$')" "$a:$b"
done
run_ft $TMP/o $TMP/e -l "$W" do_getppid -f -U $RING -c "$W $n"
expect_eq "uprobe -l LIB FUNC: total" "$(folded_count $TMP/o 'do_getppid [0-9]+$')" $n
run_ft $TMP/o $TMP/e -e "$W:caller_*" -f -U $RING -c "$W $n"
expect_eq "uprobe glob: caller_a + caller_b entries" "$(folded_count $TMP/o 'main;caller_a [0-9]+$'):$(folded_count $TMP/o 'main;caller_b [0-9]+$')" "1:1"

# a command that forks: its children inherit the probe (uprobe_events; a
# uprobe PMU event made every fork of the command fail with EFAULT)
run_ft $TMP/o $TMP/e -e "$W:do_getppid" -f -U $RING -c "sh -c '$W $n; $W $n'"
expect_eq "uprobe, -c that forks: exit status" $? 0
check "uprobe, -c that forks: fork worked" bash -c "! grep -qi 'fork' $TMP/e"
expect_eq "uprobe, -c that forks: caller_a:caller_b" \
	"$(folded_count $TMP/o 'main;caller_a;do_getppid [0-9]+$'):$(folded_count $TMP/o 'main;caller_b;do_getppid [0-9]+$')" "$((2 * a)):$((2 * b))"
# bcc's c:malloc: "c" is libc's ELF file, not the linker script libc.so
run_ft $TMP/o $TMP/e -e c:malloc -f -U -c "sh -c 'ls / >/dev/null'"
expect_eq "c:malloc: exit status" $? 0
check "c:malloc: ls's mallocs counted" awk '$0 ~ /^ls;.*;malloc [0-9]+$/ { n += $NF } END { exit !(n > 0) }' $TMP/o
# every process's frames named, though its records and samples are decoded
# from different CPUs' rings in any order (1 run in 100 lost ls's maps)
check "c:malloc: every stack's leaf is malloc" awk 'NF && $0 !~ /;malloc [0-9]+$/ { exit 1 }' $TMP/o

# -p: only that process's hits count
rm -f $TMP/go
"$W" $n --wait $TMP/go & p1=$!
"$W" $n --wait $TMP/go & p2=$!
: >$TMP/e; "$FTSTACK" -e "$W:do_getppid" -f -U $RING -p $p1 >$TMP/o 2>$TMP/e & fpid=$!
wait_for 60 started $fpid
touch $TMP/go; wait $p1 $p2
kill -INT $fpid; wait $fpid
expect_eq "uprobe -p: only the one process" "$(folded_count $TMP/o 'do_getppid [0-9]+$')" $n
# bcc's -l c malloc with -p: libc as that process maps it; the process's
# children are followed (ls, forked once tracing has started, however long
# that takes: the shell waits on a FIFO, forking nothing before)
mkfifo $TMP/go.fifo
sh -c "read x < $TMP/go.fifo; ls / >/dev/null" & sp=$!
: >$TMP/e; "$FTSTACK" -l c malloc -f -U -p $sp >$TMP/o 2>$TMP/e & fpid=$!
wait_for 60 started $fpid
echo go > $TMP/go.fifo
wait $sp; wait_for 30 gone $fpid
check "-l c malloc -p: ends when the process exits" gone $fpid
kill -INT $fpid 2>/dev/null; wait $fpid; st=$?
expect_eq "-l c malloc -p: exit status" $st 0
check "-l c malloc -p: the child's mallocs counted" awk '$0 ~ /^ls;.*;malloc [0-9]+$/ { n += $NF } END { exit !(n > 0) }' $TMP/o

# -p on a shell that polls with short-lived children (each inherits the
# events; one run was seen still going 20 minutes after such a shell
# exited): the run ends by itself, whichever backend and event
for args in "-l c malloc -U" "-e t:syscalls:sys_enter_getppid" \
	    "--backend ftrace -e t:syscalls:sys_enter_getppid"; do
	rm -f $TMP/go
	sh -c "while [ ! -e $TMP/go ]; do sleep 0.05; done; ls / >/dev/null" & sp=$!
	: >$TMP/e; "$FTSTACK" $args -f -p $sp >$TMP/o 2>$TMP/e & fpid=$!
	wait_for 60 started $fpid
	sleep 0.5; touch $TMP/go; wait $sp
	wait_for 15 gone $fpid
	check "$args -p, polling shell: ends once it exited" gone $fpid
	kill -INT $fpid 2>/dev/null; wait $fpid; st=$?
	expect_eq "$args -p, polling shell: exit status" $st 0
	check "$args -p, polling shell: says why it ended" grep -q 'the traced processes exited' $TMP/e
done

# bcc's t:sched:sched_fork (sched_process_fork in these kernels): one event
# per fork; the shell's three background jobs are three clone()s
run_ft $TMP/o $TMP/e -e t:sched:sched_fork -f -K -c "sh -c 'true & true & true & wait'"
expect_eq "t:sched:sched_fork: exit status" $? 0
check "t:sched:sched_fork: the alias said" grep -q 'sched:sched_process_fork in this kernel' $TMP/e
expect_eq "t:sched:sched_fork: the shell's three clone()s" "$(folded_count $TMP/o '^sh;.*__do_sys_clone;kernel_clone [0-9]+$')" 3

# USDT: probe, provider:probe, usdt: form, and the semaphore raised
run_ft $TMP/o $TMP/e -e "u:$U:tick" -f -U $RING -c "$U $n"
expect_eq "usdt u:PATH:tick: path_a:path_b" \
	"$(folded_count $TMP/o 'main;path_a;fire [0-9]+$'):$(folded_count $TMP/o 'main;path_b;fire [0-9]+$')" "$a:$b"
run_ft $TMP/o $TMP/e -e "usdt:$U:ftstack_test:gated" -f -U $RING -c "$U $n"
expect_eq "usdt semaphore: gated probe fired $n times" "$(folded_count $TMP/o 'fire [0-9]+$')" $n
run_ft $TMP/o $TMP/e -e "u:$U:ftstack_test:*" -f -U $RING -c "$U $n"
expect_eq "usdt glob: two probes, events kept apart" "$(folded_count $TMP/o 'fire;\[u:[^]]*:tick\] [0-9]+$'):$(folded_count $TMP/o 'fire;\[u:[^]]*:gated\] [0-9]+$')" "$n:$n"
run_ft $TMP/o $TMP/e -e "u:$U:path_a" -f -U $RING -c "$U $n"
check "u:PATH:func without such probe: said on stderr" grep -q 'has no USDT probe' $TMP/e
expect_eq "u:PATH:func: a uprobe on path_a" "$(folded_count $TMP/o 'main;path_a [0-9]+$')" 1

# bad input for probes exits 2
"$FTSTACK" -e no_such_function_xyz 1 >/dev/null 2>$TMP/e; expect_eq "unknown kernel function: exit 2" $? 2
"$FTSTACK" -e "$W:no_such_fn" 1 >/dev/null 2>$TMP/e; expect_eq "unknown user function: exit 2" $? 2
"$FTSTACK" -e "nosuchlib_xyz:malloc" 1 >/dev/null 2>$TMP/e; expect_eq "unknown library: exit 2" $? 2

expect_eq "tracefs left as found" "$(tracefs_state)" "$before"
finish
