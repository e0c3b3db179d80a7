#!/usr/bin/env bash
# Stacks through the code of Python, Node and Java (issue 30): profile's
# default walks frame pointers where code has no CFI (JIT code, CPython's
# -X perf trampolines) and CFI again where it has it. Each workload
# (tests/lib/jit_work.py, jit_work.js, JitWork.java) calls heavy() (two
# calls of spin()) and light() (one) in a loop: heavy:light = 2:1 in
# spin()'s samples. For each runtime: >= 99% of the samples whole (their
# root the process's or a thread's start), the split within lib.sh's
# ratio bound, spin, heavy and light named by the runtime's perf map; a
# runtime missing here is skipped with its reason. Without the flag that
# makes a perf map, the summary names it. offcpu: python's nested sleeps
# whole through the trampolines. Threads (pingpong --threads):
# the second thread's stacks are whole to clone3 and none is counted cut.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
# node 20's --perf-basic-prof also writes a V8 log, isolate-*-v8.log in the
# working directory unless told where (--logfile, into $TMP)
# a whole stack's root: the program's entry, or a thread's clone
JIT_WHOLE='^[^;]*;(_start|__libc_start_call_main|clone3|__clone3|clone|__clone)[; ]'
SECS=${JIT_SECS:-4}

# whole_share FOLDED: "WHOLE TOTAL" samples, ftstack's own (before the exec) left out
whole_share() {
	awk -v re="$JIT_WHOLE" '/^ftstack;/ { next } { t += $NF } $0 ~ re { w += $NF }
		END { print w + 0, t + 0 }' "$1"
}
# split FOLDED HEAVY LIGHT SPIN: "HEAVY_N LIGHT_N SPIN_N", the samples under
# heavy and light, and of them those in spin
split() {
	awk -v h="$2" -v l="$3" -v s="$4" '$0 ~ h { a += $NF } $0 ~ l { b += $NF }
		($0 ~ h || $0 ~ l) && $0 ~ s { c += $NF } END { print a + 0, b + 0, c + 0 }' "$1"
}
# not_whole FOLDED: the samples not whole, ftstack's own child's too (the
# summary counts them all)
# not_whole FOLDED: the samples whose stack is not rooted where the walk
# ends one (_start, clone3): the summary's cut count, exactly. JIT_WHOLE
# also takes __libc_start_call_main for a root (count's stacks end
# there), but a profile stack rooted there was cut just above it
JIT_ROOTED='^[^;]*;(_start|clone3|__clone3|clone|__clone)[; ]'
not_whole() { awk -v re="$JIT_ROOTED" '$0 !~ re { n += $NF } END { print n + 0 }' "$1"; }
# cut_count ERR: the stacks the summary says may be cut (both lines)
cut_count() {
	sed -n -e 's/^ftstack: \([0-9]*\) user stacks reached the end of the.*/\1/p' \
		-e 's/^ftstack: \([0-9]*\) user stacks may be cut: .*/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }'
}
pct() { echo $(($2 ? $1 * 1000 / $2 : 0)); }

# runtime_frames FOLDED: the heaviest stacks by their runtime frames alone
# (py::, JS:, JitWork), to tell a misnamed split from a mis-walked one
runtime_frames() {
	awk '{ s = ""; n = split($0, f, ";"); sub(/ [0-9]+$/, "", f[n])
		for (i = 1; i <= n; i++) if (f[i] ~ /py::|JS:|JitWork/) { sub(/:(\/|<frozen ).*/, "", f[i]); s = s ";" f[i] }
		c[s] += $NF } END { for (s in c) print c[s], s }' "$1" | sort -rn | head -8 | cut -c1-300 | sed 's/^/# /'
}
# runtime NAME HEAVY LIGHT SPIN CMD: profile's default on CMD, judged
runtime() {
	local name=$1 heavy=$2 light=$3 spin=$4 w t h l; shift 4
	run_ft $TMP/o $TMP/e profile -F 499 -U -f -c "$*"
	read -r w t < <(whole_share $TMP/o)
	check "$name: $w of $t samples whole ($(pct $w $t)/1000, want >= 990)" \
		bash -c "[ $t -ge 200 ] && [ $(pct $w $t) -ge 990 ]"
	[ $w -eq $t ] || awk -v re="$JIT_WHOLE" '$0 !~ re { print "# not whole: " substr($0, 1, 300) }' $TMP/o | head -5
	read -r h l sp < <(split $TMP/o "$heavy" "$light" "$spin")
	check "$name: heavy:light $h:$l, 2:1 $(ratio_bound "$l" "$h" 2)" ratio_ok "$l" "$h" 2
	ratio_ok "$l" "$h" 2 || runtime_frames $TMP/o
	check "$name: spin named under heavy and light in most of their samples ($sp of $((h + l)))" \
		bash -c "[ $((sp * 10)) -ge $(((h + l) * 9)) ]"
	# a thread sampled in clone3's first child instructions is whole, one
	# frame, and its parent there walks on from [rsp] (symbolize/unwind_fp.c
	# clone_step): java and node start many
	expect_eq "$name: the summary counts the stacks that are not whole" \
		"$(cut_count $TMP/e)" "$(not_whole $TMP/o)"
	check "$name: no advice on JIT code without a map" bash -c "! grep -q 'no perf map names' $TMP/e"
}

# python 3.12 and 3.13 with -X perf (pyenv's builds, where this host has them)
for v in 3.12 3.13; do
	PY=$(ls -d /root/.pyenv/versions/$v.*/bin/python$v 2>/dev/null | head -1)
	[ -x "$PY" ] || PY=$(command -v python$v)
	if [ ! -x "$PY" ]; then
		ok "python$v -X perf # SKIP no python$v here (pyenv's /root/.pyenv/versions/$v.*)"
		continue
	fi
	runtime "python$v -X perf" 'py::heavy:' 'py::light:' 'py::spin:' \
		"$PY -X perf $PWD/tests/lib/jit_work.py $SECS"
done

# offcpu through the trampolines: 40 sleeps of 20 ms under outer, middle,
# inner, each whole to _start, at least 800 ms of them
if [ -x "${PY:-}" ]; then
	cat >$TMP/naps.py <<'EOF'
import time
def inner(): time.sleep(0.02)
def middle(): inner()
def outer():
    for _ in range(40): middle()
outer()
EOF
	run_ft $TMP/o $TMP/e offcpu -U -f -c "$PY -X perf $TMP/naps.py"
	us=$(folded_count $TMP/o "^[^;]*;_start;.*;py::outer:[^;]*;.*;py::middle:[^;]*;.*;py::inner:")
	all=$(folded_count $TMP/o "py::inner:")
	check "offcpu $(basename $PY) -X perf: the sleeps whole under outer, middle, inner ($us of $all us, want >= 800000, all)" \
		bash -c "[ $us -ge 800000 ] && [ $us -eq $all ]"
else
	ok "offcpu python -X perf: the sleeps whole under outer, middle, inner # SKIP no pyenv python 3.12 or 3.13 here"
fi

if ! command -v node >/dev/null; then
	ok "node --perf-basic-prof # SKIP no node here"
else
	runtime "node --perf-basic-prof" 'JS:[*~]heavy ' 'JS:[*~]light ' 'JS:[*~]spin ' \
		"node --perf-basic-prof --logfile=$TMP/v8.log --no-logfile-per-isolate --interpreted-frames-native-stack --no-turbo-inlining $PWD/tests/lib/jit_work.js $SECS"
	# without the flag: the stacks are still whole, and the summary names it
	run_ft $TMP/o $TMP/e profile -F 499 -U -f -c "node --logfile=$TMP/v8.log --no-logfile-per-isolate $PWD/tests/lib/jit_work.js 2"
	read -r w t < <(whole_share $TMP/o)
	check "node without a perf map: $w of $t samples whole (want >= 990/1000)" \
		bash -c "[ $t -ge 100 ] && [ $(pct $w $t) -ge 990 ]"
	check "node without a perf map: the summary names --perf-basic-prof" \
		grep -q 'through JIT code no perf map names: run node with --perf-basic-prof' $TMP/e
fi

if ! command -v java >/dev/null || ! command -v javac >/dev/null; then
	ok "java -XX:+PreserveFramePointer # SKIP no java and javac here (openjdk-17-jdk-headless)"
elif ! javac -d $TMP tests/lib/JitWork.java 2>$TMP/javac; then
	not_ok "java: JitWork.java compiles ($(head -1 $TMP/javac))"
else
	runtime "java -XX:+PreserveFramePointer" 'JitWork\.heavy' 'JitWork\.light' 'JitWork\.spin' \
		"java -XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JitWork::* -cp $TMP JitWork $SECS"
	run_ft $TMP/o $TMP/e profile -F 499 -U -f -c "java -cp $TMP JitWork 2"
	check "java without a perf map: the summary names -XX:+DumpPerfMapAtExit" \
		grep -q 'no perf map names: run java with .*-XX:+DumpPerfMapAtExit or jcmd PID Compiler.perfmap' $TMP/e
fi
# the maps these workloads left behind for the tracer (their processes gone)
for m in $(grep -l 'jit_work\|JitWork' /tmp/perf-*.map 2>/dev/null); do
	pid=${m#/tmp/perf-}; pid=${pid%.map}
	kill -0 "$pid" 2>/dev/null || rm -f "$m"
done

# threads: pong runs in a second thread; each of its stacks is whole to
# clone3 (start_thread's caller) and none counted cut, exactly
thread_stacks() {
	awk '/;pong_thread;pong;/ { t += $NF; if ($0 ~ /^pingpong;clone3;start_thread;pong_thread;pong;/) w += $NF }
		END { print w + 0, t + 0 }' "$1"
}
run_ft $TMP/o $TMP/e offcpu -U -f -c "$BIN/pingpong 2000 --threads"
read -r w t < <(thread_stacks $TMP/o)
expect_eq "offcpu pingpong --threads: the second thread's off-CPU time whole to clone3 (us whole, of)" \
	"$w $((t > 0 ? t : -1))" "$t $t"
# the summary's cut stacks, if any, are those of the command's child in
# its exec, once its old memory is gone (until 3f68b6f its stack was 61 KB
# deep, beyond offcpu's 16 KB copy, before the exec too): a few,
# where every one of the second thread's 2000-odd switches was before. The
# summary names the file of the frame where the copy ended, ftstack's or
# libc's (__libc_start_call_main), so the stacks are told apart by what
# they hold: none that is not whole runs pingpong's own code (a switch-out
# inside the exec has pingpong's name and the old program's stack, seen
# once under a loaded CI run)
# not_pingpongs_cut WHAT
not_pingpongs_cut() {
	local c p; c=$(cut_count $TMP/e)
	p=$(awk -v re="$JIT_WHOLE" '$0 !~ re && /;(main|ping|pong|pong_thread);/ { n++ } END { print n + 0 }' $TMP/o)
	check "$1: no stack of pingpong counted cut ($c cut, in ftstack's child; $p in pingpong's code)" \
		bash -c "[ $c -le 3 ] && [ $p -eq 0 ]"
	awk -v re="$JIT_WHOLE" '$0 !~ re { print "# not whole: " substr($0, 1, 200) }' $TMP/o | head -5
}
not_pingpongs_cut "offcpu pingpong --threads"
run_ft $TMP/o $TMP/e profile -F 999 -U -f -c "$BIN/pingpong 100000 --threads"
read -r w t < <(thread_stacks $TMP/o)
expect_eq "profile pingpong --threads: the second thread's samples whole to clone3 (whole, of)" \
	"$w $((t > 0 ? t : -1))" "$t $t"
# a sample in the new thread's first instructions (clone3's child, before
# thread_start's CFI) is whole too: one frame, clone3's. Every stack the
# summary counts cut prints not whole, exactly (under make asan ftstack's
# child, 61 KB deep until 3f68b6f, was once cut right above
# __libc_start_call_main, which JIT_WHOLE takes for a root: its stack is
# ~5 KB now, whole in any copy)
expect_eq "profile pingpong --threads: the summary counts the stacks not whole" \
	"$(cut_count $TMP/e)" "$(not_whole $TMP/o)"
not_pingpongs_cut "profile pingpong --threads"

[ $fails -eq 0 ]
