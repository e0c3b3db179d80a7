#!/usr/bin/env bash
# Count mode on a tracepoint, exact: getppid_paths N makes N/4 getppid calls
# through caller_a and 3N/4 through caller_b; every format and option must
# give exactly those counts, with zero lost and nothing left in tracefs.
# Exact at any reader speed: each run's samples fit one CPU's ring with the
# reader stopped throughout (lib.sh's bounds); the rate ftstack holds with
# 0 lost is bench/run's, and ring_test.sh checks that a loss is counted.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
# 20,000 copied samples x 2.5 KB = 50 MB <= the 64 MB of --buffer-size 65536
N=${N:-20000} RING="--buffer-size 65536"
[ $((N * RING_COPY_B)) -le $((65536 * 1024)) ] || { not_ok "N=$N does not fit a 64 MB ring"; finish; }
A=$((N / 4)) B=$((N - N / 4))
W="$BIN/getppid_paths"
EV=t:syscalls:sys_enter_getppid
before=$(tracefs_state)

# folded, the headline check
run_ft $TMP/f $TMP/e -e $EV -f $RING -c "$W $N"; expect_eq "folded: exit status" $? 0
expect_eq "folded: two stacks" "$(wc -l < $TMP/f)" 2
expect_eq "folded: caller_a path" "$(folded_count $TMP/f '^getppid_paths;.*main;caller_a;do_getppid;.*do_syscall_64')" $A
expect_eq "folded: caller_b path" "$(folded_count $TMP/f '^getppid_paths;.*main;caller_b;do_getppid;.*do_syscall_64')" $B
check "folded: kernel frames end at the syscall entry, no tracing machinery" \
	grep -q 'do_getppid;entry_SYSCALL_64[a-z_]*;do_syscall_64;[a-z_0-9]* [0-9]*$' $TMP/f
check "folded: no perf/ftrace frames" bash -c "! grep -Eq 'perf_|trace_event_raw|ftrace_' $TMP/f"
check "summary: zero lost" grep -q ' 0 lost' $TMP/e
check "summary: events counted" grep -q "^ftstack: $N events counted" $TMP/e

# text (bcc style): the count follows each stack
run_ft $TMP/t $TMP/e -e $EV $RING -c "$W $N"; expect_eq "text: exit status" $? 0
textcount() { awk -v re="$1" '/^    [^ ]/ && $0 ~ re { hit = 1 } /^        [0-9]+$/ { if (hit) n += $1; hit = 0 } END { print n + 0 }' "$2"; }
expect_eq "text: caller_a" "$(textcount '^    caller_a$' $TMP/t)" $A
expect_eq "text: caller_b" "$(textcount '^    caller_b$' $TMP/t)" $B
check "text: least frequent first" bash -c "grep -n caller_ $TMP/t | head -1 | grep -q caller_a"
check "text: kernel leaf first" bash -c "head -1 $TMP/t | grep -q '^    [a-z_]'"

# top (kmalloc-top style)
run_ft $TMP/p $TMP/e -e $EV --format top $RING -c "$W $N"; expect_eq "top: exit status" $? 0
check "top: caller_b path seen $B times" grep -q "^This path seen $B times:" $TMP/p
check "top: caller_a path seen $A times" grep -q "^This path seen $A times:" $TMP/p
check "top: totals" grep -q "^Total sys_enter_getppids (after filtering): $N" $TMP/p

# options against the same exact counts: 20,000 samples again, in 64 MB
# rings ($RING); -K's, and two events' 40,000, x 128 B fit them easily
n=${N_TWO:-20000}; a=$((n / 4)); b=$((n - n / 4))
[ $((n * RING_COPY_B)) -le $((65536 * 1024)) ] || { not_ok "N_TWO=$n does not fit a 64 MB ring"; finish; }
run_ft $TMP/o $TMP/e -e $EV -f -m $((a + 1)) $RING -c "$W $n"
expect_eq "-m: only the frequent path" "$(wc -l < $TMP/o):$(folded_count $TMP/o caller_b)" "1:$b"
run_ft $TMP/o $TMP/e -e $EV -f -t 1 $RING -c "$W $n"
expect_eq "-t 1: the top path" "$(wc -l < $TMP/o):$(folded_count $TMP/o caller_b)" "1:$b"
run_ft $TMP/o $TMP/e -e $EV -f -x 'caller_b,nothing*' $RING -c "$W $n"
expect_eq "-x: caller_b excluded" "$(wc -l < $TMP/o):$(folded_count $TMP/o caller_a)" "1:$a"
run_ft $TMP/o $TMP/e -e $EV -f -U $RING -c "$W $n"
expect_eq "-U: both paths, no kernel frames" \
	"$(folded_count $TMP/o 'caller_a;do_getppid [0-9]+$'):$(folded_count $TMP/o 'caller_b;do_getppid [0-9]+$')" "$a:$b"
run_ft $TMP/o $TMP/e -e $EV -f -K $RING -c "$W $n"
expect_eq "-K: one kernel stack" "$(wc -l < $TMP/o):$(folded_count $TMP/o '^getppid_paths;entry_SYSCALL_64.*do_syscall_64')" "1:$n"
check "-K: no user frames" bash -c "! grep -q main $TMP/o"
run_ft $TMP/o $TMP/e -e $EV -f -d $RING -c "$W $n"
expect_eq "-d: delimiter between user and kernel" "$(folded_count $TMP/o 'do_getppid;-;entry_SYSCALL')" $n
run_ft $TMP/o $TMP/e -e $EV -f -a $RING -c "$W $n"
expect_eq "-a: kernel frames annotated" "$(folded_count $TMP/o 'do_getppid;entry_SYSCALL_64[a-z_]*_\[k\];do_syscall_64_\[k\]')" $n
run_ft $TMP/o $TMP/e -e $EV -d $RING -c "$W $n"
check "-d text: -- line" grep -q '^    --$' $TMP/o
run_ft $TMP/o $TMP/e -e $EV -P $RING -c "$W $n"
check "-P text: comm (pid) line" grep -Eq '^    -                getppid_paths \([0-9]+\)$' $TMP/o
# --call-graph copy: each sample carries a copy of the user stack and ftstack
# follows its frame pointers; the stacks are the kernel's walk's, exactly.
# A sample is then ~2.3 KB: 5000 of them fit in one CPU's 16 MB ring even
# if the reader (slow under ASan) were never scheduled, so none is lost
d=5000
run_ft $TMP/fp $TMP/e -e $EV -f -c "$W $d"
run_ft $TMP/o $TMP/e -e $EV -f --call-graph copy --buffer-size 16384 -c "$W $d"
expect_eq "copy: exit status" $? 0
expect_eq "--call-graph copy: the same folded stacks as fp" "$(sort $TMP/o)" "$(sort $TMP/fp)"
expect_eq "--call-graph copy: caller_a, caller_b" \
	"$(folded_count $TMP/o 'main;caller_a;do_getppid;'):$(folded_count $TMP/o 'main;caller_b;do_getppid;')" \
	"$((d / 4)):$((d - d / 4))"
check "--call-graph copy: no stack cut at the copy's end" bash -c "! grep -q 'may be cut' $TMP/e"
run_ft $TMP/o $TMP/e -e $EV -f --call-graph copy,64 --buffer-size 16384 -c "$W $d"
check "--call-graph copy,64: the walk is cut, and the summary says so" \
	grep -q "^ftstack: $d user stacks reached the end of the 64-byte stack copy" $TMP/e
check "--call-graph copy,64: the summary names --call-graph fp, which walks them whole" \
	grep -q "user stacks: copy; --call-graph copy,SIZE copies more; --call-graph fp walks them whole)" $TMP/e
# nofp_paths calls getppid through main -> nofp_a -> nofp_b, built without
# frame pointers: a frame-pointer walk loses nofp_a and main; by default
# the CFI finds them (the walk never meets a frame pointer, so CFI goes on
# through libc's start-up code). --call-graph dwarf: the copy unwound with
# CFI alone. 5000 samples again, for the same reason
run_ft $TMP/o $TMP/e -e $EV -f --buffer-size 16384 -c "$BIN/nofp_paths $d"
expect_eq "default on code without frame pointers: main;nofp_a;nofp_b, every call" \
	"$(folded_count $TMP/o 'main;nofp_a;nofp_b;'):$(folded_count $TMP/o '.')" "$d:$d"
# the same walked by kept rules is counted as the last one again
# (repeat.c) when its inputs are: via_x and via_y differ in one return
# address in the middle of the stack, which it must see; rec 8 or 9 deep
# are two stacks, whose tops (nofp_c, pad: a CFA from the rbp nofp_c
# saved, rec) are the same moved by a frame: a 128-byte copy of them is
# counted again, and cut each time. User stacks alone: none is counted
# again while the kernel's symbols load
again() { sed -n 's/.*counted as the last one again.*: \([0-9]*\) of .*/\1/p' $TMP/e; }
run_ft $TMP/o $TMP/e -e $EV -f -U --debug --buffer-size 16384 -c "$BIN/nofp_paths 6000 --alternate"
expect_eq "default, no frame pointers: main;nofp_alt;via_x;nofp_b 4000, via_y 2000, of 6000" \
	"$(folded_count $TMP/o ';main;nofp_alt;via_x;nofp_b [0-9]+$'):$(folded_count $TMP/o ';main;nofp_alt;via_y;nofp_b [0-9]+$'):$(folded_count $TMP/o .)" \
	"4000:2000:6000"
check "default, no frame pointers, via_x/via_y: counted as the last one again ($(again) of 6000, want >= 1000)" \
	test "$(again)" -ge 1000
run_ft $TMP/o $TMP/e -e $EV -f -U --debug --buffer-size 16384 -c "$BIN/nofp_paths 6000 --depths"
top='^nofp_paths;_start;__libc_start_main;__libc_start_call_main;main;nofp_depths;'
r9=$(printf 'rec;%.0s' 1 2 3 4 5 6 7 8 9) # (awk here may lack {9})
expect_eq "default, no frame pointers: _start .. nofp_depths;rec x9;pad;nofp_c 3000, x10 3000" \
	"$(folded_count $TMP/o "${top}${r9}pad;nofp_c [0-9]+\$"):$(folded_count $TMP/o "${top}rec;${r9}pad;nofp_c [0-9]+\$"):$(folded_count $TMP/o .)" \
	"3000:3000:6000"
run_ft $TMP/o $TMP/e -e $EV -f -U --debug --call-graph copy,128 --buffer-size 16384 -c "$BIN/nofp_paths 6000 --depths"
expect_eq "--call-graph copy,128, two depths: one stack rec;pad;nofp_c, every call, each counted cut" \
	"$(folded_count $TMP/o '^nofp_paths;rec;pad;nofp_c [0-9]+$'):$(folded_count $TMP/o .):$(sed -n 's/^ftstack: \([0-9]*\) user stacks reached the end of the 128-byte.*/\1/p' $TMP/e)" \
	"6000:6000:6000"
check "--call-graph copy,128, two depths: counted as the last one again ($(again) of 6000, want >= 5400)" \
	test "$(again)" -ge 5400
run_ft $TMP/o $TMP/e -e $EV -f --call-graph dwarf,2048 --buffer-size 16384 -c "$BIN/nofp_paths $d"
expect_eq "--call-graph dwarf: _start .. main;nofp_a;nofp_b, every call" \
	"$(folded_count $TMP/o '^nofp_paths;_start;__libc_start_main;__libc_start_call_main;main;nofp_a;nofp_b;entry_SYSCALL')" $d
check "--call-graph dwarf: zero lost" grep -q ' 0 lost' $TMP/e
run_ft $TMP/o $TMP/e -e $EV -f --call-graph dwarf,2048 --buffer-size 16384 -c "$W $d"
expect_eq "--call-graph dwarf on getppid_paths: caller_a, caller_b" \
	"$(folded_count $TMP/o '__libc_start_call_main;main;caller_a;do_getppid;'):$(folded_count $TMP/o '__libc_start_call_main;main;caller_b;do_getppid;')" \
	"$((d / 4)):$((d - d / 4))"
# each thread under its own comm (as bcc, perf script and ftrace show it),
# both backends, folded and -P text (4,000 samples: x 128 B in a 4 MB perf
# ring, x 256 B in a 4 MB instance)
for be in perf ftrace; do
	run_ft $TMP/o $TMP/e -e $EV -f -K --backend $be --buffer-size 4096 -c "$BIN/thread_names 1000 3000"
	expect_eq "thread comm, $be: main:worker" \
		"$(folded_count $TMP/o '^thread_names;'):$(folded_count $TMP/o '^ftstack_worker;')" "1000:3000"
done
run_ft $TMP/o $TMP/e -e $EV -P -K --buffer-size 4096 -c "$BIN/thread_names 1000 3000"
expect_eq "thread comm, -P text: one process, two comms" \
	"$(grep -Eo '^    -  +[a-z_]+ \([0-9]+\)$' $TMP/o | awk '{ print $2; p[$3] = 1 } END { print length(p) }' | sort | tr '\n' ' ')" \
	"1 ftstack_worker thread_names "

# JIT code: anonymous memory named by /tmp/perf-PID.map, read after the
# process exited (1,000 copied samples x 2.5 KB fit 4 MB rings, as below)
run_ft $TMP/o $TMP/e -e $EV -U -f --buffer-size 4096 -c "$BIN/jit_paths 1000"
rm -f $(sed -n 's/^jit_paths: wrote //p' $TMP/e)
expect_eq "JIT frame named by the perf map" "$(folded_count $TMP/o ';main;jit_caller;jit_getppid [0-9]+$')" 1000

# C++ names demangled, as perf and bcc print them; --no-demangle keeps them
run_ft $TMP/o $TMP/e -e $EV -U -f --buffer-size 4096 -c "$BIN/mangled_names 1000"
expect_eq "C++ frame demangled" "$(folded_count $TMP/o ';main;ns::worker[(]long[)] [0-9]+$')" 1000
run_ft $TMP/o $TMP/e -e $EV -U -f --no-demangle --buffer-size 4096 -c "$BIN/mangled_names 1000"
expect_eq "--no-demangle: the symbol as it is" "$(folded_count $TMP/o ';main;_ZN2ns6workerEl [0-9]+$')" 1000

# -p: attach to a running process; the run ends by itself once it exits
p_until_exit "-p" $n -e $EV -f $RING
expect_eq "-p: caller_a:caller_b" "$(folded_count $TMP/o caller_a):$(folded_count $TMP/o caller_b)" "$a:$b"
# -p follows its process, not its number: once it exits, a new process
# given the same pid (through ns_last_pid) must not keep the run going.
# User stacks only (-U): a kernel stack starts ftstack's kallsyms thread
# at its first sample, around the exit, and a thread takes the next pid
# as a process does (it took the pid meant for the new process in 2 of 5
# runs, all five tries each, on 2026-11-26)
reused=0
for try in 1 2 3 4 5; do
	rm -f $TMP/go
	"$BIN/getppid_paths" 1000 --wait $TMP/go & wpid=$!
	: >$TMP/e; "$FTSTACK" -e $EV -f -U -p $wpid >$TMP/o 2>$TMP/e & fpid=$!
	wait_for 60 started $fpid
	touch $TMP/go; wait $wpid
	echo $((wpid - 1)) >/proc/sys/kernel/ns_last_pid; sleep 60 & spid=$!
	[ $spid -eq $wpid ] && reused=1
	wait_for 90 gone $fpid; st=gone; gone $fpid || st=running
	kill -INT $fpid 2>/dev/null; wait $fpid; kill $spid; wait $spid 2>/dev/null
	[ $reused -eq 1 ] && break
done
expect_eq "-p: the pid given to a new process, the run still ends (reused:state)" "$reused:$st" "1:gone"
# ... and ends with SIGINT while it still runs, printing and exiting 0
sleep 30 & spid=$!
: >$TMP/e; "$FTSTACK" -e $EV -f -p $spid >$TMP/o 2>$TMP/e & fpid=$!
wait_for 60 started $fpid
kill -INT $fpid; wait $fpid; expect_eq "-p: SIGINT exits 0" $? 0
check "-p: SIGINT prints the summary" grep -q '^ftstack: 0 events counted' $TMP/e
kill $spid; wait $spid 2>/dev/null

# several events never merge: each stack ends in its event's name
run_ft $TMP/o $TMP/e -e $EV -e t:syscalls:sys_exit_getppid -f -K $RING -c "$W $n"
expect_eq "two events: enter stacks" "$(folded_count $TMP/o ';\[t:syscalls:sys_enter_getppid\] ')" $n
expect_eq "two events: exit stacks" "$(folded_count $TMP/o ';\[t:syscalls:sys_exit_getppid\] ')" $n

# SIGPIPE on the output ends quietly
"$FTSTACK" -e $EV -c "$W 1000" 2>$TMP/e | head -c 1 >/dev/null; st=${PIPESTATUS[0]}
check "SIGPIPE: exits without a crash ($st)" test "$st" -lt 128

after=$(tracefs_state)
expect_eq "tracefs left as found" "$after" "$before"
finish
