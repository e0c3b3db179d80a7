#!/usr/bin/env bash
# Whole user stacks by default (issue 14): a sample taken in a function that
# keeps no frame pointer shows that function's callers, in count, profile
# and offcpu, whichever frame-pointer walk the host's method uses (the
# default's, and fp and copy asked for by name).
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
before=$(tracefs_state)
EV=t:syscalls:sys_enter_getppid
# 5,000 samples x 2.5 KB (lib.sh's bound for a copied user stack; fp's are
# smaller) = 12.5 MB: they fit a 16 MB ring with the reader stopped
d=5000

for cg in "" "--call-graph fp" "--call-graph copy"; do
	name=${cg:-default}
	# count: getppid through libc's syscall() (frameless) from call_getppid
	run_ft $TMP/o $TMP/e -e $EV -f -U --buffer-size 16384 $cg -c "$BIN/syscall_paths $d"
	expect_eq "$name, count: main;call_getppid;syscall, every call" \
		"$(folded_count $TMP/o ';main;call_getppid;syscall [0-9]+$'):$(folded_count $TMP/o .)" "$d:$d"
	check "$name, count: no stack cut" bash -c "! grep -q 'may be cut' $TMP/e"
	# the same kernel stack and chain from one call site, call_a or
	# call_b only in the word at the top of the stack: a sample counted
	# as the last one again (repeat.c) must still go to its own caller
	run_ft $TMP/o $TMP/e -e $EV -f -U --debug --buffer-size 16384 $cg -c "$BIN/syscall_paths 6000 --alternate"
	expect_eq "$name, count: main;call_a;syscall 4000, main;call_b;syscall 2000, of 6000" \
		"$(folded_count $TMP/o ';main;call_a;syscall [0-9]+$'):$(folded_count $TMP/o ';main;call_b;syscall [0-9]+$'):$(folded_count $TMP/o .)" \
		"4000:2000:6000"
	again=$(sed -n 's/.*counted as the last one again.*: \([0-9]*\) of .*/\1/p' $TMP/e)
	check "$name, count: samples counted as the last one again (${again:-none} of 6000)" \
		test "${again:-0}" -gt 0
	# offcpu: nap_x and nap_y call libc's nanosleep (frameless)
	run_ft $TMP/o $TMP/e offcpu -f -U $cg -c "$BIN/libc_naps"
	x=$(folded_count $TMP/o ';main;nap_x;nanosleep;'); y=$(folded_count $TMP/o ';main;nap_y;nanosleep;')
	# a nap is off the CPU for its length and its wake-up's wait for a
	# CPU, which is the host's: -5% +20%, as in profile_test (a busy loop
	# on each CPU made nap_x 423 ms of 400)
	check "$name, offcpu: main;nap_x;nanosleep $x us, 400000 -5% +20%" \
		awk -v v=$x 'BEGIN { exit !(v >= 380000 && v <= 480000) }'
	check "$name, offcpu: main;nap_y;nanosleep $y us, 800000 -5% +20%" \
		awk -v v=$y 'BEGIN { exit !(v >= 760000 && v <= 960000) }'
	# profile: func_a and func_b (frame pointers) call a frameless leaf
	run_ft $TMP/o $TMP/e profile -F 499 -f -U $cg -c "$BIN/leaf_ab 2"
	fa=$(folded_count $TMP/o ';main;func_a;leaf [0-9]+$'); fb=$(folded_count $TMP/o ';main;func_b;leaf [0-9]+$')
	all=$(folded_count $TMP/o ';leaf [0-9]+$')
	check "$name, profile: leaf under func_b/func_a = 2 $(ratio_bound $fa $fb 2) ($fb/$fa)" \
		ratio_ok $fa $fb 2
	expect_eq "$name, profile: every leaf sample under func_a or func_b" "$((fa + fb))" "$all"
done
# a uprobe on the frameless leaf's entry: its caller from CFI
run_ft $TMP/o $TMP/e -e "u:$BIN/leaf_ab:leaf" -f -U -c "$BIN/leaf_ab 0.2"
a=$(folded_count $TMP/o ';main;func_a;leaf [0-9]+$'); b=$(folded_count $TMP/o ';main;func_b;leaf [0-9]+$')
check "uprobe on leaf: under func_a ($a) and func_b ($b), as often" \
	bash -c "[ $a -gt 0 ] && [ $a = $b ] && [ $((a + b)) = $(folded_count $TMP/o .) ]"
# records of all CPUs read in time order: late_map maps code on CPU 0 and
# runs it on CPU 1, whose ring's first records (its exec) are older; read
# ring after ring, its samples were walked before the mmap and lost run
# (2,000 samples of dwarf's 8 KB copies, 17 MB, fit 64 MB rings unread)
if taskset -c 1 true 2>/dev/null; then
	for cg in "" "--call-graph fp" "--call-graph dwarf"; do
		taskset -c 1 "$FTSTACK" -e $EV -f -U --buffer-size 65536 $cg -c "$BIN/late_map 2000" >$TMP/o 2>$TMP/e
		expect_eq "${cg:-default}: code mapped on another CPU: main;run;late_loop, every call" \
			"$(folded_count $TMP/o '^late_map;.*main;run;late_loop [0-9]+$'):$(folded_count $TMP/o .)" "2000:2000"
	done
else
	ok "code mapped on another CPU: 3 checks # SKIP one CPU (late_map needs CPUs 0 and 1)"
fi
# frames in the vDSO ([vdso], the kernel's image in every process; named
# and unwound from ftstack's own, symbolize/vdso.c): a clock_gettime the
# vDSO cannot answer enters the kernel from its code, under libc's
# clock_gettime, which keeps no frame pointer (so a frame-pointer chain
# skips clock_calls: the splice must check two frames, not one)
if [ -n "$(grep -F '[vdso]' /proc/self/maps)" ]; then
	CEV=t:syscalls:sys_enter_clock_gettime
	for cg in "" "--call-graph fp" "--call-graph copy" "--call-graph dwarf"; do
		run_ft $TMP/o $TMP/e -e $CEV -f -U --buffer-size 65536 $cg -c "$BIN/vdso_calls $d"
		expect_eq "${cg:-default}: vDSO leaf: main;clock_calls;clock_gettime;__vdso_clock_gettime, every call" \
			"$(folded_count $TMP/o ';main;clock_calls;clock_gettime;__vdso_clock_gettime [0-9]+$'):$(folded_count $TMP/o .)" "$d:$d"
		check "${cg:-default}: vDSO leaf: not taken for JIT code" bash -c "! grep -q 'JIT code' $TMP/e"
	done
	run_ft $TMP/o $TMP/e profile -F 499 -f -U -c "$BIN/vdso_calls --mono 1"
	v=$(folded_count $TMP/o ';__vdso_clock_gettime [0-9]+$')
	expect_eq "profile in the vDSO ($v samples): every one whole and named" \
		"$(folded_count $TMP/o '^vdso_calls;_start;__libc_start_main;__libc_start_call_main;main;mono_loop;clock_gettime;__vdso_clock_gettime [0-9]+$')" "$v"
	check "profile in the vDSO: some samples there ($v)" [ "$v" -gt 0 ]
else
	ok "vDSO frames: 10 checks # SKIP no [vdso] mapped (vdso=0?)"
fi
# ftstack check says which method it chose here, and why
"$FTSTACK" check >$TMP/o 2>$TMP/e
check "check: the user-stack method and why" \
	grep -Eq '^user-stack method +yes +(fp|copy) \(fp \(16-frame walk \+ 1024-byte copy\) ' $TMP/o
# and how profile's Python readers will run: SCHED_FIFO where this user may
if chrt -f 1 true 2>/dev/null; then
	check "check: Python's readers under SCHED_FIFO" grep -Eq '^python frames +yes .* by a reader on each CPU under SCHED_FIFO;' $TMP/o
else
	check "check: Python's readers with short slices" grep -Eq '^python frames +yes .* with short slices' $TMP/o
fi
# and who maps the perf rings at start-up: check times one process against
# a helper a CPU and saves the sooner way; a run takes it, and counts
# exactly either way (each forced below by the saved answer, then put back)
saved=/run/ftstack/ring-maps
if [ "$(nproc)" -gt 1 ]; then
	check "check: ring mapping timed both ways, the answer saved" grep -Eq \
		'^ring mapping +yes +[0-9]+ rings of 32 MB: one process [0-9.]+ ms, a helper a CPU [0-9.]+ ms \(medians of 9 rounds; one / helped per round [0-9.]+\): (one process sooner|helpers sooner or even); saved for this boot$' $TMP/o
	verdict=$(sed -n 's/^ring mapping .*: \(one process sooner\|helpers sooner or even\); saved.*/\1/p' $TMP/o)
	first=$(cut -d' ' -f1 $saved 2>/dev/null)
	check "check: the file says the line's way ($first: $verdict)" \
		[ "$first" = "$( [ "$verdict" = "one process sooner" ] && echo alone || echo helpers)" ]
	had=0
	[ -f $saved ] && cp $saved $TMP/ring-maps && had=1
	for way in alone helpers; do
		echo "$way (written by ustack_test)" >$saved
		"$FTSTACK" --debug -e $EV -f -c "$BIN/getppid_paths 4000" >$TMP/f 2>$TMP/e
		# made by one process alone, or by one a CPU (this one and helpers)
		procs=$(sed -n 's/^ftstack: debug: perf: .* their rings made by \([0-9]*\) process.*/\1/p' $TMP/e)
		expect_eq "rings made by $way: the processes that made them" "$procs" \
			"$( [ $way = alone ] && echo 1 || nproc)"
		expect_eq "rings made by $way: the 4000 getppid calls counted" \
			"$(folded_count $TMP/f '^getppid_paths;.*do_syscall_64')" 4000
	done
	if [ $had = 1 ]; then cp $TMP/ring-maps $saved; else rm -f $saved; fi
else
	ok "check: ring mapping: 6 checks # SKIP one CPU: one ring, no helper to time"
fi
expect_eq "kernel state as found" "$(tracefs_state)" "$before"
finish
