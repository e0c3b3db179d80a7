# Shared by the live tests: TAP-style lines that tests/run counts, and helpers.
# FTSTACK is the binary under test; BIN the folder with the test workloads.
: "${FTSTACK_BUILD:=build}"
FTSTACK=${FTSTACK:-$PWD/$FTSTACK_BUILD/ftstack}
BIN=${BIN:-$PWD/build/tests}
T=/sys/kernel/tracing
TMP=$(mktemp -d /tmp/ftstack-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0

ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
# check DESCRIPTION CMD...: ok when CMD succeeds
check()  { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# expect_eq DESCRIPTION GOT WANT
# (a value of several lines is not echoed on success: failures stay readable)
expect_eq() {
	if [ "$2" != "$3" ]; then not_ok "$1: got '$2', want '$3'"
	elif [ "${2//[^$'\n']/}" ]; then ok "$1"
	else ok "$1 ($2)"; fi
}
# folded_count FILE REGEX: the summed count of folded lines matching REGEX
folded_count() { awk -v re="$2" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"; }
# ratio_ok A B R: B/A is R within four standard errors of sampled counts
# (R x 4 x sqrt(1/A + 1/B)), and never tighter than R x 0.4: timer samples
# of a 1:R workload on a busy host stray further than a fixed +-15%, and a
# VM's host adds noise of its own beyond the samples' statistics (leaf_ab's
# 1:2 at 2 s came out 1.43 and 2.68 on a fresh clone's run, 1000 samples).
# The workloads draw each round's length anew: a timer's period near a
# round's (python3.13's jit_work.py took 1.85 ms a round here, -F 499 is
# 2.004 ms) puts every sample at one phase of the round, and the split was
# the phase's (3.53 at -F 550, and 1581:342 once in an ASan run at 499;
# commit 7a69cf7).
# So wide a band tells a whole stack from a swapped (1/R) or merged (1) one
# only with enough samples: ratio_ok refuses fewer than ratio_min's (at R=2,
# 257: below that a merge's 1:1 is inside the band; a swap's below 129).
RATIO_TOL_AWK='function tol(a, b, r, t) { t = 4 * r * sqrt(1 / a + 1 / b)
	if (t < 0.4 * r) t = 0.4 * r; return t }'
ratio_tol() { awk -v a="$1" -v b="$2" -v r="$3" "$RATIO_TOL_AWK"' BEGIN { printf "%.2f", tol(a, b, r) }'; }
# ratio_min R: the fewest samples A + B at which ratio_tol's band around R
# leaves out both a swapped split (B/A = 1/R) and a merged one (B/A = 1);
# 0 when no count does (R too near 1 for the 0.4 R floor)
ratio_min() { awk -v r="$1" "$RATIO_TOL_AWK"' BEGIN {
	m = r - 1; if (m < 0) m = -m; s = r - 1 / r; if (s < 0) s = -s
	for (n = 2; n <= 1000000; n++)
		if (tol(n / 2, n / 2, r) < m && tol(n * r / (1 + r), n / (1 + r), r) < s) { print n; exit }
	print 0 }'; }
ratio_ok() { [ "$1" -gt 0 ] 2>/dev/null && [ "$2" -gt 0 ] 2>/dev/null || return 1
	local min; min=$(ratio_min "$3")
	[ "$min" -gt 0 ] && [ $(($1 + $2)) -ge "$min" ] || return 1
	awk -v a="$1" -v b="$2" -v r="$3" "$RATIO_TOL_AWK"' BEGIN {
	d = b / a - r; if (d < 0) d = -d; exit !(d <= tol(a, b, r)) }'; }
# ratio_bound A B R: the band ratio_ok allows, for a check's name
ratio_bound() { local min; min=$(ratio_min "$3")
	if ! [ "$1" -gt 0 ] 2>/dev/null || ! [ "$2" -gt 0 ] 2>/dev/null; then echo "(no samples)"
	elif [ $(($1 + $2)) -lt "$min" ]; then echo "(only $(($1 + $2)) samples, want >= $min)"
	else echo "+-$(ratio_tol "$1" "$2" "$3")"; fi; }
# uncounted_ms: the time all CPUs spent stolen by the hypervisor or in
# interrupts since boot, in ms (/proc/stat's irq, softirq and steal columns;
# USER_HZ is 100): time a task's CPU clock leaves out
uncounted_ms() { awk '/^cpu / { print ($7 + $8 + $9) * 10 }' /proc/stat; }
# samples_ok N SECS HZ UNCOUNTED: N timer samples of a task that ran SECS of
# its own CPU time are within 20% of SECS x HZ. A timer sample counts the wall
# time on a CPU, the task's CPU clock leaves out what the hypervisor stole
# and what interrupts took while it ran, so the top is raised by UNCOUNTED ms
# (uncounted_ms around the run) at HZ: on a CI host, 1 s of cpu_ab's CPU time
# drew 604 samples at 499 Hz
samples_ok() { awk -v n="$1" -v s="$2" -v hz="$3" -v st="$4" 'BEGIN {
	want = s * hz; exit !(n >= want * 0.8 - 0.5 && n <= want * 1.2 + st / 1000 * hz + 0.5) }'; }
# tracefs_state: everything ftstack could change, for before/after comparisons
tracefs_state() {
	( cd $T && cat kprobe_events uprobe_events dynamic_events set_event trace_options current_tracer 2>/dev/null
	  ls instances
	  grep -H -v '^#' events/*/*/trigger
	  grep -l '^1' events/*/*/enable ) 2>/dev/null
}
# Ring bounds (issue 24). An exact count holds however slow the reader is
# only when every sample of the run fits one CPU's ring (the workload may
# stay on one CPU) with the reader stopped for the whole run. Bytes per
# sample of getppid_paths, measured with ftstack stopped (SIGSTOP) while the
# workload ran pinned to one CPU, and the bounds the exact checks assume
# (tests/live/ring_test.sh runs the same measurement each time and fails
# when a bound no longer holds):
#   user stacks copied (the default here: copy,2048; -U the same)  ~2.2 KB, bound 2.5 KB
#   -K (the kernel callchain alone)                                   ~88 B, bound 128 B
#   --backend ftrace (kernel + user stack entries)                   ~160 B, bound 256 B
# So --buffer-size 65536 (64 MB a CPU) holds 26,843 copied samples, 16384
# holds 6,710; each exact check names its bound beside it.
RING_COPY_B=2560 RING_K_B=128 RING_FTRACE_B=256
# mount tracefs the way ftstack would, so state can be compared
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
# wait_for SECS CMD...: runs CMD every 50 ms until it succeeds (then 0) or
# SECS have passed (then 1). The bounds are generous: a pass costs no time,
# and a slow or busy host must not fail a test by its speed
wait_for() { local end=$((SECONDS + $1)); shift; until "$@" 2>/dev/null; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# started PID: ftstack PID says it is tracing ($TMP/e), or has ended.
# Empty $TMP/e before starting ftstack in the background (": >$TMP/e"):
# the redirection truncates it only once the child runs, and an earlier
# run's "Tracing" line would let the test go on before this run is armed
started() { grep -q Tracing $TMP/e 2>/dev/null || gone "$1"; }
# run_ft OUT ERR ARGS...: runs ftstack, stdout to OUT, stderr to ERR; returns its status
run_ft() { local o=$1 e=$2; shift 2; "$FTSTACK" "$@" >"$o" 2>"$e"; }
# p_until_exit NAME N ARGS...: starts getppid_paths N waiting for a go,
# attaches ftstack ARGS -p to it (stdout $TMP/o, stderr $TMP/e), lets it go,
# and checks that the run ends by itself once the process exits, exits 0
# and says why
p_until_exit() {
	local name=$1 n=$2 wpid fpid i; shift 2
	rm -f $TMP/go
	"$BIN/getppid_paths" $n --wait $TMP/go & wpid=$!
	: >$TMP/e; "$FTSTACK" "$@" -p $wpid >$TMP/o 2>$TMP/e & fpid=$!
	wait_for 60 started $fpid
	touch $TMP/go; wait $wpid
	wait_for 30 gone $fpid
	check "$name: ends when the process exits" gone $fpid
	kill -INT $fpid 2>/dev/null; wait $fpid; expect_eq "$name: exit status" $? 0
	check "$name: says why it ended" grep -q 'the traced processes exited' $TMP/e
}
finish() { exit $((fails > 0)); }
