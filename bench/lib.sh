# Shared by the bench scripts (bench/run, realprog, ustacks, ab): sourced.
# median: the middle of the numbers on stdin, one a line (the lower of the
# two middles for an even count)
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# cost_ratios A B BASE: files of one figure a round each; each round's
# (A - BASE) / (B - BASE), one a line: a cost over another's, both less the
# untraced run of the same round (the host's speed drifts between rounds)
cost_ratios() { paste "$1" "$2" "$3" | awk '{ printf "%.4f\n", ($1 - $3) / ($2 - $3) }'; }
# perf_folded SCRIPT: perf script's callchains (-F comm,ip,sym,dso) folded
# as ftstack folds them: comm;root;...;leaf 1
# (a frame with no symbol is its file's base name in brackets)
perf_folded() {
	awk '
	function flush() { if (comm != "") { s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; print s, 1 } comm = ""; n = 0 }
	/^[^ \t]/ { flush(); comm = $1; next }
	NF >= 2 {
		line = $0; sub(/^[ \t]+[0-9a-f]+ /, "", line)
		dso = line; sub(/.*\(/, "", dso); sub(/\)$/, "", dso); sub(/.*\//, "", dso)
		sym = line; sub(/ \([^(]*\)$/, "", sym)
		f[++n] = sym == "[unknown]" ? "[" dso "]" : sym
	}
	END { flush() }' "$1"
}
# steal_ms: the time the hypervisor took from all CPUs since boot, in ms
# (/proc/stat's steal column; USER_HZ is 100)
steal_ms() { awk '/^cpu / { print $9 * 10 }' /proc/stat; }
# ft_lost FILE: the records ftstack's summary in FILE (its stderr) says
# were lost, empty when FILE holds no summary
ft_lost() { sed -n 's/^ftstack: .* \([0-9][0-9]*\) lost.*/\1/p' "$1" | head -1; }
# ft_own_ms FILE, ft_own_faults FILE: ftstack's own CPU (ms, all its
# threads) and page faults from --debug's last line in FILE (its stderr);
# empty when FILE has no such line (faults: a build before 9224376)
ft_own_ms() { sed -n "s/^ftstack: debug: ftstack's own CPU: \([0-9.]*\) ms.*/\1/p" "$1"; }
ft_own_faults() { sed -n "s/^ftstack: debug: ftstack's own CPU: .*, \([0-9]*\) page faults.*/\1/p" "$1"; }
# closes_done: returns once the last run's events are closed (its child,
# ftstack-close, closes them after it exits); a run started before would
# wait in its first perf_event_open for the kernel to unregister them
closes_done() { while ps -C ftstack-close -o stat= | grep -qv Z; do sleep 0.005; done; }
# ft_armed_us CMD...: microseconds from ftstack's execve to its last
# PERF_EVENT_IOC_ENABLE, both the kernel's own time stamps, in a tracefs
# instance of the two events (filtered in the kernel; nothing stops the
# run; bench/armed_strace compares ft_armed_strace_us).
ft_armed_us() {
	local t=/sys/kernel/tracing/instances/ftstack_bench_armed
	mkdir "$t" || return 1
	echo 'cmd == 0x2400' >"$t/events/syscalls/sys_enter_ioctl/filter" # PERF_EVENT_IOC_ENABLE
	echo 1 >"$t/events/syscalls/sys_enter_ioctl/enable"
	echo 1 >"$t/events/sched/sched_process_exec/enable"
	"$@" >/dev/null 2>&1
	echo 0 >"$t/tracing_on"
	awk 'function ts() { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) return $i + 0 }
	     /sched_process_exec:/ && / filename=[^ ]*ftstack / && !t0 { t0 = ts() }
	     / sys_ioctl\(/ && t0 && $1 ~ /^ftstack-/ { t1 = ts() }
	     END { printf "%d\n", (t1 > t0 ? (t1 - t0) * 1e6 : 0) }' "$t/trace"
	rmdir "$t"
}
# ft_armed_strace_us CMD...: the same span by strace -f's stamps, the
# benches' measure until a9f310b: strace stops each child ftstack forks
# until it has attached, so this is the longer (bench/armed_strace)
ft_armed_strace_us() {
	local out
	out=$(mktemp)
	strace -f --seccomp-bpf -ttt -e trace=execve,ioctl -o "$out" "$@" >/dev/null 2>&1
	# seconds.micros, split: a double holds too few digits for both
	awk '{ split($2, t, "."); us = (t[1] - 1e9) * 1e6 + t[2] }
	     NR == 1 { t0 = us } /PERF_EVENT_IOC_ENABLE/ { t1 = us }
	     END { printf "%d\n", (t1 > t0 ? t1 - t0 : 0) }' "$out"
	rm -f "$out"
}
