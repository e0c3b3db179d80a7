#!/usr/bin/env bash
# profile and offcpu against workloads with known CPU and sleep times.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
before=$(tracefs_state)

# profile: func_b gets twice func_a's CPU, 3 s of CPU time (not wall time:
# the counts do not depend on how busy the host is); at 499 Hz
st0=$(uncounted_ms)
run_ft $TMP/o $TMP/e profile -F 499 -f -U -c "$BIN/cpu_ab 3"; expect_eq "profile: exit status" $? 0
st=$(($(uncounted_ms) - st0))
fa=$(folded_count $TMP/o ';func_a;'); fb=$(folded_count $TMP/o ';func_b;')
fa=${fa:-0}; fb=${fb:-0}
[ "$fa" -gt 0 ] || fa=$(folded_count $TMP/o 'func_a[; ]'); [ "$fb" -gt 0 ] || fb=$(folded_count $TMP/o 'func_b[; ]')
total=$(folded_count $TMP/o '.')
check "profile: func_b/func_a = 2.0 $(ratio_bound $fa $fb 2) ($fb/$fa)" ratio_ok $fa $fb 2
check "profile: total $total within 20% of 3 x 499 (+$st ms stolen or in interrupts)" samples_ok $total 3 499 $st
check "profile: header on stderr" grep -q '^Sampling at 499 Hertz of the command by user stack' $TMP/e
check "profile: comm is the root frame" grep -q '^cpu_ab;' $TMP/o

# system-wide for 1 s: no idle stacks unless -I
run_ft $TMP/o $TMP/e profile -F 199 -f -K 1
check "profile: no swapper stacks without -I" bash -c "! grep -q '^swapper' $TMP/o"
# ... which need idle time: on a host whose CPUs other jobs keep busy
# there may be none in a second, so up to 5 tries; without idle stacks the
# check fails when the CPUs were idle for half a second in all (measured
# around each run, so a little more than the second sampled)
idle_ms() { awk '/^cpu / { print $5 * 10 }' /proc/stat; }  # USER_HZ is 100
idle=0
for try in 1 2 3 4 5; do
	i0=$(idle_ms)
	run_ft $TMP/o $TMP/e profile -F 199 -f -K -I 1
	idle=$((idle + $(idle_ms) - i0))
	grep -q '^swapper' $TMP/o && break
done
if grep -q '^swapper' $TMP/o || [ $idle -ge 500 ]; then
	check "profile -I: idle stacks kept (try $try, the CPUs idle for $idle ms)" grep -q '^swapper' $TMP/o
else
	ok "profile -I: idle stacks kept # SKIP the CPUs were idle for only $idle ms in 5 tries of 1 s"
fi
run_ft $TMP/o $TMP/e profile -F 99 -c "$BIN/cpu_ab 0.5"
check "profile text: comm (pid) lines" grep -Eq '^    -                cpu_ab \([0-9]+\)$' $TMP/o

# offcpu: nap_x 4 x 100 ms, nap_y 4 x 200 ms. A nap is off the CPU for at
# least its length, and longer by its wake-up's wait for a CPU, which is
# the host's: 5% below (no nap lost) to 20% above (a nap counted twice
# would be 25%), so the check is of every nap counted once
NX='v >= 380000 && v <= 480000' NY='v >= 760000 && v <= 960000'
naps_ok() { awk -v x="$1" -v y="$2" "BEGIN { v = x; if (!($NX)) exit 1; v = y; exit !($NY) }"; }
run_ft $TMP/o $TMP/e offcpu -f -U -c "$BIN/naps"; expect_eq "offcpu: exit status" $? 0
x=$(folded_count $TMP/o ';nap_x;'); y=$(folded_count $TMP/o ';nap_y;')
check "offcpu: nap_x total $x us, 400000 -5% +20%" awk -v v=$x "BEGIN { exit !($NX) }"
check "offcpu: nap_y total $y us, 800000 -5% +20%" awk -v v=$y "BEGIN { exit !($NY) }"
# ... the same when every nap begins on one CPU and ends on the other (the
# switch-out and its switch-in in different rings, read in either order)
for st in "" "--state 1"; do
	run_ft $TMP/o $TMP/e offcpu -f -U $st -c "$BIN/naps --hop"
	x=$(folded_count $TMP/o ';nap_x;'); y=$(folded_count $TMP/o ';nap_y;')
	check "offcpu $st, naps moved between CPUs: $x, $y us, 400000, 800000 -5% +20%" naps_ok $x $y
done
# ... and in a child the command forks (its samples may be read before
# the fork record: they count all the same)
run_ft $TMP/o $TMP/e offcpu -f -U -c "sh -c '$BIN/naps --hop; true'"
x=$(folded_count $TMP/o '^naps;.*;nap_x;'); y=$(folded_count $TMP/o '^naps;.*;nap_y;')
check "offcpu, naps a child of the command: $x, $y us, 400000, 800000 -5% +20%" naps_ok $x $y
# ... and with the user stacks walked in copies of the stack: the same
# totals; dwarf's go on through libc's start-up code (no frame pointers,
# which fp and copy stop at), and a copy too small to hold main's frame
# is cut at every switch-out
for cg in "copy ^naps;__libc_start_call_main;main" "dwarf ^naps;_start;__libc_start_main;__libc_start_call_main;main"; do
	set -- $cg
	run_ft $TMP/o $TMP/e offcpu -f --call-graph $1 -c "$BIN/naps"
	x=$(folded_count $TMP/o "$2;nap_x;.*;schedule;"); y=$(folded_count $TMP/o "$2;nap_y;.*;schedule;")
	check "offcpu --call-graph $1: $x, $y us, 400000, 800000 -5% +20%" naps_ok $x $y
done
run_ft $TMP/o $TMP/e offcpu -f --call-graph copy,64 -c "$BIN/naps"
cut=$(sed -n 's/^ftstack: \([0-9]*\) user stacks reached the end of the 64-byte stack copy.*/\1/p' $TMP/e)
check "offcpu --call-graph copy,64: ${cut:-no} stacks cut, at least the 8 naps'" test "${cut:-0}" -ge 8
run_ft $TMP/o $TMP/e offcpu -f -U -m 150000 -c "$BIN/naps"
x=$(folded_count $TMP/o ';nap_x;'); y=$(folded_count $TMP/o ';nap_y;')
check "offcpu -m 150000: only nap_y ($x, $y)" awk -v x=$x -v v=$y "BEGIN { exit !(x == 0 && $NY) }"
# --state: the naps sleep interruptibly (1); none of them is uninterruptible (2)
run_ft $TMP/o $TMP/e offcpu -f -U --state 1 -c "$BIN/naps"
y=$(folded_count $TMP/o ';nap_y;')
check "offcpu --state 1: nap_y $y us, 800000 -5% +20%" awk -v v=$y "BEGIN { exit !($NY) }"
run_ft $TMP/o $TMP/e offcpu -f -U --state 2 -c "$BIN/naps"
expect_eq "offcpu --state 2: no nap counted" "$(folded_count $TMP/o ';nap_[xy];')" 0
# ... because they were seen and left out, not missed: at least the 8 naps
f=$(sed -n 's/^ftstack: \([0-9]*\) off-CPU intervals filtered out.*/\1/p' $TMP/e)
check "offcpu --state 2: the naps were filtered out (${f:-none})" test "${f:-0}" -ge 8
# -u keeps the naps (a user thread), -k leaves them out
run_ft $TMP/o $TMP/e offcpu -f -U -u -c "$BIN/naps"
y=$(folded_count $TMP/o ';nap_y;')
check "offcpu -u: nap_y $y us, 800000 -5% +20%" awk -v v=$y "BEGIN { exit !($NY) }"
run_ft $TMP/o $TMP/e offcpu -f -K -k -c "$BIN/naps"
f=$(sed -n 's/^ftstack: \([0-9]*\) off-CPU intervals filtered out.*/\1/p' $TMP/e)
check "offcpu -k: no user thread counted, the naps left out (${f:-none})" \
	bash -c "[ ! -s $TMP/o ] && [ ${f:-0} -ge 8 ]"
run_ft $TMP/o $TMP/e offcpu -c "$BIN/naps"
check "offcpu text: stack with nap_y and schedule" bash -c "grep -q '^    nap_y$' $TMP/o && grep -q '^    schedule$' $TMP/o"

# offcpu's copy hint: pingpong's 2 x 3000 switch-outs in read() (ping's and
# pong's), each copied up to its stack's top, which lies within 16 KB: the
# summary names a smaller copy that would have held every stack whole, and
# with it both come out whole again (to _start), none cut (ftstack's own
# child, before its exec, has a deeper stack: no smaller copy is named for
# stacks not seen)
PING="pingpong;_start;__libc_start_main;__libc_start_call_main;main;ping;read;"
PONG="pingpong;_start;__libc_start_main;__libc_start_call_main;main;pong;read;"
# where stacks are not placed at random (randomize_va_space 0, or a
# personality with ADDR_NO_RANDOMIZE, 0x0040000), a main thread's stack
# ends at the top of user space: the kernel ends the copy there, no fault
personality=$(cat /proc/self/personality 2>/dev/null || echo 0)
if [ "$(cat /proc/sys/kernel/randomize_va_space)" = 0 ] || (( 0x$personality & 0x0040000 )); then
	run_ft $TMP/o $TMP/e offcpu -f -c "taskset -c 0 $BIN/pingpong 3000"
	check "offcpu: ping's and pong's stacks whole" bash -c "grep -q '^$PING' $TMP/o && grep -q '^$PONG' $TMP/o"
	for w in "a copy short of the stack's top named" "the named copy: stacks whole again" \
		 "the named copy: none cut"; do
		ok "offcpu: $w # SKIP stacks are not placed at random here: copies end at the top of user space without a fault"
	done
else
	# (a random gap lies below the stack's top: a run whose gap is nearly 0
	# may leave less than the hint's room above pingpong's outermost frame, and
	# no hint is right then; up to 3 tries)
	for try in 1 2 3; do
		run_ft $TMP/o $TMP/e offcpu -f -c "taskset -c 0 $BIN/pingpong 3000"
		hint=$(sed -n "s/.* user stacks were copied up to their stack's top.*--call-graph dwarf,\([0-9]*\) would.*/\1/p" $TMP/e)
		[ -z "$hint" ] || break
	done
	# pingpong's stacks in read() lie within 1.3 KB of its stack pointer,
	# but the hint covers the deepest stack of the run: a few switch-outs
	# elsewhere (one in the loader's lazy binding, whose register save
	# area AVX-512 makes ~2.5 KB) named 1024-5120 bytes in 20 runs here
	# (2026-11-28; a bound of 2048 failed a make check). The summary names
	# a copy only when the copies ran to the stack's top, and then as the
	# farthest outermost frame + 256, short of that top by construction:
	# what is checked is that one is named, below the default, and that
	# it holds the stacks whole (below)
	check "offcpu: a copy short of the stack's top named (${hint:-none} bytes, below 16384; try $try)" \
		test "${hint:-16384}" -lt 16384
	check "offcpu: ping's and pong's stacks whole" bash -c "grep -q '^$PING' $TMP/o && grep -q '^$PONG' $TMP/o"
	run_ft $TMP/o $TMP/e offcpu -f --call-graph dwarf,${hint:-16384} -c "taskset -c 0 $BIN/pingpong 3000"
	check "offcpu --call-graph dwarf,${hint:-16384}: ping's and pong's stacks whole again" \
		bash -c "grep -q '^$PING' $TMP/o && grep -q '^$PONG' $TMP/o"
	check "offcpu --call-graph dwarf,${hint:-16384}: no stack of ping's or pong's read() cut" \
		bash -c "! grep -E '^pingpong;.*;read;' $TMP/o | grep -v '^pingpong;_start;'"
fi

# bad input
bad() { local w=$1; shift; "$FTSTACK" "$@" >/dev/null 2>$TMP/e; expect_eq "$w: exit 2" $? 2; }
bad "profile -F 0" profile -F 0 1
bad "profile -F above the limit" profile -F 100000000 1
check "profile -F above the limit: says the limit" grep -q perf_event_max_sample_rate $TMP/e
bad "offcpu -u -k" offcpu -u -k 1
bad "offcpu -U -k" offcpu -U -k 1
check "offcpu -U -k: bcc's words" grep -q "Displaying user stacks for kernel threads doesn't make sense." $TMP/e
bad "offcpu unknown state" offcpu --state zombie 1
expect_eq "tracefs left as found" "$(tracefs_state)" "$before"
finish
