#!/bin/sh
# Tests run inside the VM (busybox sh; no bash features). Prints TAP-style
# "ok - ..." / "not ok - ..." lines ("ok - ... # SKIP why" for a check that
# cannot run) and at the end "N passed, M failed, K skipped"; tests/vm/run
# passes only when M is 0.
#
# Cases: every tests/vm/cases/*.sh runs in its own shell, with these helpers
# loaded, with $FTSTACK (binary under test, may be absent: see have_ftstack),
# $BIN (test workloads), $T (tracefs) and $TMP (scratch dir) set, and a time
# limit of $CASE_TIMEOUT seconds; a case that exits with a non-zero status
# counts as a failure. Counting is done on the output lines, so a
# case only has to print through ok / not_ok / check / expect_eq.
#
# "tests.sh --lib" only defines the helpers (used to start each case).

T=/sys/kernel/tracing
FTSTACK=${FTSTACK:-/ftstack/build/ftstack}
BIN=${BIN:-/ftstack/build/tests}
HERE=${HERE:-/ftstack/tests/vm}
CASE_TIMEOUT=${CASE_TIMEOUT:-180}
export T FTSTACK BIN HERE CASE_TIMEOUT

ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
info()   { echo "# $*"; }
# check DESCRIPTION CMD...: ok when CMD succeeds
check()  { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# expect_eq DESCRIPTION GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1: got '$2', want '$3'"; fi
}
# expect_match DESCRIPTION TEXT REGEX (grep -E)
expect_match() {
	if echo "$2" | grep -qE -- "$3"; then ok "$1"; else not_ok "$1: '$3' not in '$2'"; fi
}
have_ftstack() { [ -x "$FTSTACK" ]; }
# wsys FILE TEXT: appends TEXT to a tracefs/sysfs FILE, quietly; returns status
# (appending: truncating kprobe_events would drop every other probe)
wsys() { echo "$2" >> "$1" 2>/dev/null; }
# all_libs_found ELF: the loader resolves every library ELF needs
all_libs_found() {
	out=$(/lib64/ld-linux-x86-64.so.2 --list "$1" 2>&1) || return 1
	! echo "$out" | grep -q 'not found'
}

[ "${1:-}" = --lib ] && return 0 2>/dev/null

# --- checks of the kernel itself: what the tests of ftstack rely on --------

kernel_checks() {
	info "kernel $(uname -r), $(nproc) CPUs"
	check "tracefs mounted at $T" [ -f $T/trace ]
	check "kprobe PMU (/sys/bus/event_source/devices/kprobe/type)" \
		grep -qE '^[0-9]+$' /sys/bus/event_source/devices/kprobe/type
	check "kprobe_events exists" [ -f $T/kprobe_events ]
	check "available_tracers includes function" grep -qw function $T/available_tracers
	check "hist triggers (sched_switch/hist exists)" [ -f $T/events/sched/sched_switch/hist ]
	info "PMUs: $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
	info "uprobe PMU: $(cat /sys/bus/event_source/devices/uprobe/type 2>/dev/null || echo absent)," \
		"uprobe_events: $([ -f $T/uprobe_events ] && echo yes || echo no)," \
		"perf_event_max_stack: $(cat /proc/sys/kernel/perf_event_max_stack 2>/dev/null || echo absent)," \
		"perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
}

# a kprobe event in a tracefs instance fires, records a stack through the
# stacktrace trigger, and is removed again without a trace
kprobe_roundtrip() {
	inst=$T/instances/ftstack_vm
	ev=$inst/events/ftstack_vm/openat
	mkdir $inst || { not_ok "create tracefs instance"; return; }
	if ! wsys $T/kprobe_events 'p:ftstack_vm/openat do_sys_openat2 dfd=%di'; then
		not_ok "add kprobe on do_sys_openat2"; rmdir $inst; return
	fi
	ok "add kprobe on do_sys_openat2"
	wsys $ev/trigger stacktrace
	check "enable kprobe event in an instance" wsys $ev/enable 1
	i=0; while [ $i -lt 20 ]; do cat /proc/version /proc/cmdline >/dev/null; i=$((i + 1)); done
	wsys $ev/enable 0
	n=$(grep -c 'openat: (do_sys_openat2' $inst/trace)
	check "kprobe hits recorded ($n)" [ "$n" -ge 20 ]
	check "stacktrace trigger recorded a kernel stack" grep -q '=> do_sys_openat2\|=> __x64_sys_openat' $inst/trace
	wsys $ev/trigger '!stacktrace'
	rmdir $inst
	check "remove kprobe" wsys $T/kprobe_events '-:ftstack_vm/openat'
	expect_eq "kprobe_events empty afterwards" "$(cat $T/kprobe_events)" ""
}

# the function tracer runs (filtered to one function, in an instance)
function_tracer() {
	inst=$T/instances/ftstack_vm_fn
	mkdir $inst || { not_ok "create tracefs instance for function tracer"; return; }
	wsys $inst/set_ftrace_filter do_sys_openat2
	if wsys $inst/current_tracer function; then
		ok "function tracer accepted"
		cat /proc/version >/dev/null
		wsys $inst/tracing_on 0
		check "function tracer saw do_sys_openat2" grep -q 'do_sys_openat2' $inst/trace
		wsys $inst/current_tracer nop
	else
		not_ok "function tracer accepted"
	fi
	rmdir $inst
}

ftstack_checks() {
	if ! have_ftstack; then
		ok "ftstack checks # SKIP ftstack not built"
		return
	fi
	check "ftstack: every shared library is in the image" all_libs_found "$FTSTACK"
	out=$("$FTSTACK" check 2>&1)
	st=$?
	echo "$out" | sed 's/^/# ftstack check: /'
	# any status is fine (a feature may be missing); not found or a signal is not
	check "ftstack check runs (status $st)" [ $st -ne 126 -a $st -ne 127 -a $st -lt 128 ]
	# prefer the PMU line, if the output names one
	kl=$(echo "$out" | grep -i kprobe | grep -i pmu)
	[ -n "$kl" ] || kl=$(echo "$out" | grep -i kprobe)
	check "ftstack check reports kprobes (PMU) yes" eval 'echo "$kl" | grep -qiw yes'
}

helper_checks() {
	n=0
	for h in "$BIN"/*; do
		[ -x "$h" ] || continue
		n=$((n + 1))
		head -c 4 "$h" | grep -q ELF || continue
		all_libs_found "$h" || not_ok "workload ${h##*/}: missing libraries"
	done
	info "$n test workloads in $BIN"
}

# selected_cases: the case files FTSTACK_VM_CASES names (all when unset,
# but repro_*: reproducers of the emulator's faults, run only when named),
# FTSTACK_VM_REPEAT times over
selected_cases() {
	r=0
	while [ $r -lt "${FTSTACK_VM_REPEAT:-1}" ]; do
		for c in "$HERE"/cases/*.sh; do
			n=${c##*/}; n=${n%.sh}
			[ -z "${FTSTACK_VM_CASES:-}" ] && [ "${n#repro_}" != "$n" ] && continue
			case " ${FTSTACK_VM_CASES:-$n} " in *" $n "*) echo "$c" ;; esac
		done
		r=$((r + 1))
	done
}

run_cases() {
	for c in $(selected_cases); do
		[ -f "$c" ] || continue
		info "case ${c##*/}"
		TMP=$(mktemp -d /tmp/case.XXXXXX)
		export TMP
		# own session, so the watchdog and the clean-up reach every process
		# the case started (a left-over child would hold the output pipe open);
		# falling off the end of a case is fine whatever its last status was
		setsid sh -c '. "$HERE/tests.sh" --lib; . "$1"; exit 0' case "$c" &
		pid=$!
		( sleep "$CASE_TIMEOUT"; touch "$TMP.timeout"; kill -TERM -$pid ) >/dev/null 2>&1 &
		wd=$!
		wait $pid
		st=$?
		kill $wd 2>/dev/null
		kill -KILL -$pid 2>/dev/null
		if [ -e "$TMP.timeout" ]; then
			not_ok "case ${c##*/} timed out after ${CASE_TIMEOUT}s"
		elif [ $st != 0 ]; then
			not_ok "case ${c##*/} exited with status $st"
		fi
		rm -f "$TMP.timeout"
		rm -rf "$TMP"
	done
}

# lockdown=confidentiality on the kernel command line (FTSTACK_VM_APPEND):
# tracefs and kprobes are closed by design, so the checks of the kernel's
# tracing machinery and of ftstack check's kprobe line would fail; such a
# boot runs the cases alone (cases/lockdown.sh checks the lockdown itself)
locked_down() {
	grep -q '\[integrity\]\|\[confidentiality\]' /sys/kernel/security/lockdown 2>/dev/null
}

body() {
	if locked_down; then
		info "kernel $(uname -r) locked down: $(cat /sys/kernel/security/lockdown)"
		run_cases
		echo "# tests.sh: all done"
		return
	fi
	kernel_checks
	kprobe_roundtrip
	function_tracer
	ftstack_checks
	helper_checks
	run_cases
	echo "# tests.sh: all done"
}

start=$(cut -d' ' -f1 /proc/uptime)
# count on the output lines, so cases may print through any helper; a body
# that stops early (exit in a case would only end that case) is a failure
body 2>&1 | awk -v start="$start" '
	{ print; fflush() }
	/^ok - .*# SKIP/ { k++; next } /^ok - / { p++ } /^not ok - / { f++ }
	/^# tests.sh: all done$/ { done = 1 }
	END {
		if (!done) { print "not ok - tests.sh stopped before the end"; f++ }
		getline up < "/proc/uptime"; split(up, u, " ")
		printf "# tests took %.1f s\n", u[1] - start
		printf "%d passed, %d failed, %d skipped\n", p, f, k
		exit f > 0
	}'
