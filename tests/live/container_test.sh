#!/usr/bin/env bash
# ftstack as a container sees the host (issue 25, DESIGN.md section 7): a new
# mount namespace with tracefs and debugfs unmounted and /sys read-only, as
# nobody, with no capability or with CAP_PERFMON (capsh, ambient):
#  (a)  no capabilities, perf_event_paranoid 2: profile -c has user frames
#       only, func_b/func_a 2.0 (within lib.sh's ratio_ok); offcpu -c, a
#       system-wide run and -p
#       of another user's process each refused in one line, exit 2
#  (a') no capabilities, paranoid 1 (set here, restored by the trap):
#       offcpu -c through the context-switch event, the naps 400/800 ms +-5%
#  (b)  CAP_PERFMON: profile -a; offcpu -c as in (a'); page faults counted
#       exactly; context switches agree with offcpu, each with its kernel
#       stack (named with CAP_SYSLOG too); a kernel function
#       through the kprobe PMU or a one-line refusal; a tracepoint refused
#       in one line, exit 2
#  (c)  ftstack check's matrix in each, row by row
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
if ! command -v capsh >/dev/null || ! command -v unshare >/dev/null || ! id nobody >/dev/null 2>&1; then
	ok "container tests # SKIP needs capsh, unshare and a nobody user"; finish
fi
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$FTSTACK"; then
	ok "container tests # SKIP nobody cannot run $FTSTACK (a folder on its path is not searchable)"; finish
fi
chmod 755 $TMP
PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
trap 'echo $PARANOID > /proc/sys/kernel/perf_event_paranoid; rm -rf "$TMP"' EXIT
echo 2 > /proc/sys/kernel/perf_event_paranoid

# incontainer CAPS CMD: CMD as nobody with CAPS (comma-separated, "" for
# none) in a mount namespace without tracefs or debugfs, /sys read-only.
# Outputs are redirected by the caller, outside (files root opened).
incontainer() {
	local caps=$1; shift
	unshare -m --propagation private bash -c '
		umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null
		mount -o remount,ro,bind /sys || exit 99
		if [ -n "$0" ]; then
			exec capsh --caps="$0,cap_setuid,cap_setgid,cap_setpcap+eip" --keep=1 \
				--user=nobody --addamb="$0" -- -c "$1"
		fi
		exec setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all bash -c "$1"' \
		"$caps" "$*"
}

incontainer "" 'grep CapEff /proc/self/status; test -e /sys/kernel/tracing/events && echo tracefs; touch /sys/x 2>/dev/null && echo rw; id -u' >$TMP/o 2>&1
expect_eq "container: nobody, no capabilities, no tracefs, /sys read-only" "$(tr '\n' ' ' < $TMP/o)" "CapEff:	0000000000000000 65534 "
incontainer cap_perfmon 'grep CapEff /proc/self/status' >$TMP/o 2>&1
expect_eq "container: CAP_PERFMON alone" "$(cat $TMP/o)" "CapEff:	0000004000000000"
expect_eq "the host's tracefs is still mounted" "$(test -d $T/events && echo yes)" yes

HW=no; for d in /sys/bus/event_source/devices/cpu /sys/bus/event_source/devices/cpu_core; do [ -e $d ] && HW=yes; done
KP=no; [ -e /sys/bus/event_source/devices/kprobe/type ] && KP=yes
# matrix CASE CAPS 'row=yes|no ...': ftstack check's rows, one by one
matrix() {
	local name=$1 caps=$2 want=$3 row yn got
	incontainer "$caps" "$FTSTACK check" >$TMP/m 2>&1
	for w in $want; do
		row=${w%=*}; yn=${w##*=}; row=${row//_/ }
		got=$(awk -v r="$row" 'NF == 0 { exit } index($0, "  " r " ") == 1 { sub("^  " r " +", ""); print $1; exit }' $TMP/m)
		expect_eq "$name: check's matrix: $row" "$got" "$yn"
	done
}
NAPS='x=$(folded_count $TMP/o ";nap_x;"); y=$(folded_count $TMP/o ";nap_y;")'
naps_ok() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= 380000 && x <= 420000 && y >= 760000 && y <= 840000) }'; }
one_line_2() { # NAME STATUS GREP...: exit 2, one line on stderr, saying each GREP
	local name=$1 st=$2; shift 2
	expect_eq "$name: exit 2, one line" "$st:$(wc -l < $TMP/e)" "2:1"
	for g in "$@"; do check "$name: says '$g'" grep -q -- "$g" $TMP/e; done
}

# (a) no capabilities, paranoid 2
incontainer "" "$FTSTACK profile -F 499 -f -c '$BIN/leaf_ab 2'" >$TMP/o 2>$TMP/e; st=$?
expect_eq "(a) profile -c: exit status" $st 0
check "(a) profile: first line names the mechanism and leaves kernel stacks out, once" \
	bash -c "head -1 $TMP/e | grep -q 'profile through perf.s cpu-clock; kernel stacks are left out: kernel.perf_event_paranoid is 2' && [ \$(grep -c 'kernel stacks are left out' $TMP/e) = 1 ]"
fa=$(folded_count $TMP/o ';main;func_a;leaf [0-9]+$'); fb=$(folded_count $TMP/o ';main;func_b;leaf [0-9]+$')
check "(a) profile: leaf under func_a:func_b = 1:2 $(ratio_bound $fa $fb 2) ($fa:$fb)" ratio_ok $fa $fb 2
check "(a) profile: user frames only (no [unknown], no kernel frame)" \
	bash -c "! grep -Eq '_\\[k\\]|unknown|entry_SYSCALL|asm_sysvec' $TMP/o"
incontainer "" "$FTSTACK offcpu -f -c '$BIN/naps'" >$TMP/o 2>$TMP/e; st=$?
one_line_2 "(a) offcpu -c refused" $st "perf_event_paranoid 2" CAP_PERFMON
incontainer "" "$FTSTACK profile -F 49 1" >$TMP/o 2>$TMP/e; st=$?
one_line_2 "(a) system-wide profile refused" $st "perf_event_paranoid <= 0 (it is 2)" CAP_PERFMON
incontainer "" "$FTSTACK profile -F 49 -p 1 1" >$TMP/o 2>$TMP/e; st=$?
one_line_2 "(a) profile -p 1 (root's) refused" $st "another user's process" CAP_SYS_PTRACE
matrix "(a)" "" "tracepoints=no kernel_functions=no user_functions=no USDT=no profile=yes offcpu=no
	software_events=yes hardware_events=$HW kernel_stacks=no user_stacks=yes other_users'_processes=no system-wide=no"
check "(a) check: profile with user stacks only" grep -q '^  profile .*yes  perf.s cpu-clock, user stacks only' $TMP/m
check "(a) check: offcpu says the sysctl's value" grep -q '^  offcpu .*no   kernel-mode samples: kernel.perf_event_paranoid is 2' $TMP/m
check "(a) check: tracepoints say tracefs is not mounted" grep -q '^  tracepoints .*no   tracefs is not mounted' $TMP/m

# (a') no capabilities, paranoid 1
echo 1 > /proc/sys/kernel/perf_event_paranoid
incontainer "" "$FTSTACK offcpu -f -c '$BIN/naps'" >$TMP/o 2>$TMP/e; st=$?
expect_eq "(a') offcpu -c: exit status" $st 0
check "(a') offcpu: first line names the context-switch event" \
	bash -c "head -1 $TMP/e | grep -q 'offcpu through perf.s context-switch event'"
eval "$NAPS"
check "(a') offcpu: nap_x $x us, nap_y $y us, 400000/800000 +-5%" naps_ok $x $y
check "(a') offcpu: whole user stacks (main;nap_x;sleep_ms;nanosleep)" grep -q '^naps;.*main;nap_x;sleep_ms;nanosleep' $TMP/o
matrix "(a')" "" "tracepoints=no profile=yes offcpu=yes kernel_stacks=yes user_stacks=yes system-wide=no"
echo 2 > /proc/sys/kernel/perf_event_paranoid

# (b) CAP_PERFMON, paranoid 2
# (a busy loop runs meanwhile: idle CPUs give no samples, and a quiet
# host may have no other work in that second)
sh -c 'while :; do :; done' & hog=$!
incontainer cap_perfmon "$FTSTACK profile -F 99 -f -a 1" >$TMP/o 2>$TMP/e; st=$?
kill $hog; wait $hog 2>/dev/null
expect_eq "(b) profile system-wide: exit status" $st 0
check "(b) profile system-wide: samples" test "$(folded_count $TMP/o .)" -gt 0
incontainer cap_perfmon "$FTSTACK offcpu -f -c '$BIN/naps'" >$TMP/o 2>$TMP/e; st=$?
expect_eq "(b) offcpu -c: exit status" $st 0
eval "$NAPS"
check "(b) offcpu: nap_x $x us, nap_y $y us, 400000/800000 +-5%" naps_ok $x $y
# the naps' switches: offcpu's intervals of 50 ms or more (start-up's
# few short switches vary from run to run)
incontainer cap_perfmon "$FTSTACK offcpu -f --min-block 50000 -c '$BIN/naps'" >$TMP/o 2>$TMP/e
offcpu_n=$(grep -o '[0-9]* events counted' $TMP/e | cut -d' ' -f1)
# 1000 samples of ~2.3 KB (a 2 KB stack copy) fit nobody's 4 MB ring
incontainer cap_perfmon "$FTSTACK -e software:page-faults:1 -f -c '$BIN/touch_pages 1000'" >$TMP/o 2>$TMP/e; st=$?
expect_eq "(b) page-faults: exit status" $st 0
expect_eq "(b) page-faults: touch() takes exactly the 1000 pages it touches" \
	"$(folded_count $TMP/o '^touch_pages;.*main;touch [0-9]+$')" 1000
check "(b) page-faults: the rest are start-up's few (< 200)" \
	test $(( $(folded_count $TMP/o .) - 1000 )) -lt 200
incontainer cap_perfmon "$FTSTACK -e software:context-switches:1 -f -c '$BIN/naps'" >$TMP/o 2>$TMP/e; st=$?
expect_eq "(b) context-switches: exit status" $st 0
# each nap is one switch out of nanosleep; a busy host may also preempt
# the sleeper inside a nap (woken, on its way back to user space), which
# is a switch too: seen once in a make check (4:5). Those are told apart
# only by the kernel frames' names: the CAP_SYSLOG run below counts the
# naps' own switches exactly
x=$(folded_count $TMP/o ';nap_x;') y=$(folded_count $TMP/o ';nap_y;')
check "(b) context-switches: 4 in nap_x, 4 in nap_y, and any more preemptions ($x:$y)" \
	test $x -ge 4 -a $y -ge 4 -a $((x + y)) -le 12
# a context switch is sampled in the kernel (schedule), so each carries a
# kernel callchain: CAP_PERFMON lets a non-root opener have it at paranoid
# 2 (without it the event is refused kernel mode: 0 counted)
cs_n=$(folded_count $TMP/o ';nap_[xy];')
expect_eq "(b) context-switches: every nap's stack carries kernel frames (addresses: no CAP_SYSLOG)" \
	"$(folded_count $TMP/o ';nap_[xy];sleep_ms;.*;\[unknown\] [0-9]+$')" "$cs_n"
check "(b) context-switches in the naps ($cs_n) >= offcpu's naps (--min-block 50 ms: ${offcpu_n:-none})" \
	test "$cs_n" -ge "${offcpu_n:-999}"
incontainer cap_perfmon,cap_syslog "$FTSTACK -e software:context-switches:1 -f -c '$BIN/naps'" >$TMP/o 2>$TMP/e; st=$?
expect_eq "(b) + CAP_SYSLOG: the 8 naps' kernel stacks named, nanosleep's syscall down to schedule" \
	"$st:$(folded_count $TMP/o ';nap_[xy];sleep_ms;.*;entry_SYSCALL_64[a-z_]*;.*;do_nanosleep;schedule [0-9]+$')" "0:8"
incontainer cap_perfmon "$FTSTACK -e page-faults -f -c '$BIN/touch_pages 1000'" >$TMP/o 2>$TMP/e; st=$?
expect_eq "(b) perf's bare name page-faults: every fault, 1000 in touch()" \
	"$st:$(folded_count $TMP/o '^touch_pages;.*main;touch [0-9]+$')" "0:1000"
incontainer cap_perfmon "$FTSTACK -e hardware:cycles:100000 -f -c true" >$TMP/o 2>$TMP/e; st=$?
if [ $HW = no ]; then
	one_line_2 "(b) hardware:cycles, no PMU here: refused" $st "hardware PMU" "software events"
else
	expect_eq "(b) hardware:cycles: exit status" $st 0
fi
incontainer cap_perfmon "$FTSTACK -e vfs_read -f -c true" >$TMP/o 2>$TMP/e; st=$?
if [ $KP = yes ]; then
	expect_eq "(b) kernel function through the kprobe PMU: exit status" $st 0
else
	one_line_2 "(b) kernel function, no kprobes here: refused" $st "no kprobe PMU" "tracefs is not mounted"
fi
incontainer cap_perfmon "$FTSTACK -e t:sched:sched_switch -c true" >$TMP/o 2>$TMP/e; st=$?
one_line_2 "(b) tracepoint refused" $st "tracepoints need tracefs: tracefs is not mounted" "here profile, offcpu, software events"
matrix "(b)" cap_perfmon "tracepoints=no kernel_functions=$KP user_functions=no USDT=no profile=yes offcpu=yes
	software_events=yes hardware_events=$HW kernel_stacks=yes user_stacks=yes other_users'_processes=no system-wide=yes"
check "(b) check: kernel stacks unnamed without CAP_SYSLOG" grep -q '^  kernel stacks .*yes  addresses only' $TMP/m
check "(b) check: user functions need CAP_SYS_ADMIN" grep -q '^  user functions .*uprobe PMU needs CAP_SYS_ADMIN' $TMP/m
expect_eq "perf_event_paranoid still 2 here (restored to $PARANOID at exit)" "$(cat /proc/sys/kernel/perf_event_paranoid)" 2
finish
