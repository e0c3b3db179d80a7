#!/usr/bin/env bash
# Python frames in place (issue 30 part 2): each _PyEval_EvalFrameDefault
# of a user stack is followed by the Python functions it ran, read from
# the process (python/). Debian's python3.11 (stripped, no frame pointers):
# the share of samples in Python code that carry them, a known split
# (heavy() = spin() twice, light() = once: 2:1), the names, two threads
# with their own stacks and samples in a generator's entry or exit (3.12
# and 3.13 too), offcpu in nested functions, count's user stacks
# of c:malloc, and a user without privileges profiling their own command.
# pyenv's 3.12 and 3.13 (shared libpython): names and split; 3.10: said
# once to be unsupported, its native stacks kept. A program that loads
# libpython after its first samples: its Python frames. Each part is
# skipped with its reason where its python is missing. Run under the live
# lock (the count part makes uprobes).
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
PY=tests/lib/python
PY311=/usr/bin/python3.11
PYENV=/root/.pyenv/versions

# split.py's spin() runs ~5 ms a call: a read that finds the thread
# between two calls is refused (it has left the sampled frame), and with
# 1 ms calls those were 0.3-0.9% of the samples here: a share of the
# workload's, not the reader's, that left the 99% bar no margin.
# profile_split NAME PYTHON: PYTHON runs split.py; the share of samples in
# Python code that carry Python frames, the unreadable ones said, the split.
# A sample whose frames could not be read within PY_MAX_AGE_NS (1 ms) of
# it is not read (ftstack waited for a CPU: this host's load, not the
# reader's doing); the share is of the samples read in time, the late ones
# shown
profile_split() {
	local name=$1 py=$2
	run_ft $TMP/o $TMP/e profile --debug -F 199 -f -c "$py $PY/split.py 6"
	local ev py_n heavy light said late
	ev=$(folded_count $TMP/o '_PyEval_EvalFrameDefault')
	# any Python frame (split.py's, or threading's and importlib's at the
	# start and the end)
	py_n=$(folded_count $TMP/o ' \([^;()]*:[0-9]+\)(;| )')
	heavy=$(folded_count $TMP/o 'heavy \(split\.py:17\);spin \(split\.py:10\)')
	light=$(folded_count $TMP/o 'light \(split\.py:22\);spin \(split\.py:10\)')
	said=$(sed -n "s/.* \([0-9]*\) of \([0-9]*\) samples' Python frames could not be read.*/\1/p" $TMP/e)
	late=$(sed -n 's/.*python: \([0-9]*\) not read: they would have been read too long.*/\1/p' $TMP/e)
	echo "# $name: ${late:-0} of $ev samples not read within 1 ms of the sample"
	# the rings are read by a thread pinned on each CPU
	# (collector/cpu_readers.h), so a read waits for no idle CPU's
	# wake-up: at most 10% late (0.5-20%, hour to hour, when one reader
	# read from the other CPU), a sanity bound: the share is the host's as
	# much as ftstack's, measured by bench/python_ab
	check "$name: at most 10% read too late (${late:-0} of $ev)" \
		[ $((${late:-0} * 10)) -le "$ev" -a "$ev" -gt 100 ]
	local cpus fifo here all
	cpus=$(sed -n 's/.*python: the rings read by a thread on each of \([0-9]*\) CPUs.*/\1/p' $TMP/e)
	fifo=$(sed -n 's/.*python: the readers on each CPU woke [0-9]* times (\([0-9]*\) under SCHED_FIFO).*/\1/p' $TMP/e)
	read -r here all < <(sed -n 's/.*python: \([0-9]*\) of \([0-9]*\) samples read on the CPU they were taken on.*/\1 \2/p' $TMP/e)
	expect_eq "$name: a reader on each online CPU" "${cpus:-0}" "$(getconf _NPROCESSORS_ONLN)"
	# under SCHED_FIFO where this user may have it, so that it preempts
	# the target at once (EEVDF let ~0.8% of the reads wait 2.7 ms)
	if chrt -f 1 true 2>/dev/null; then
		expect_eq "$name: each reader under SCHED_FIFO" "${fifo:-0}" "${cpus:-0}"
	else
		ok "$name: each reader under SCHED_FIFO # SKIP SCHED_FIFO refused to this user here"
	fi
	# one read of the rings takes what every CPU wrote: a sample another
	# CPU's reader took first is read there, the first ones (before the
	# readers start) wherever the loop ran
	check "$name: >= 90% of the samples read on the CPU they were taken on (${here:-0} of ${all:-0})" \
		[ "${all:-0}" -gt 100 -a $((${here:-0} * 10)) -ge $((${all:-0} * 9)) ]
	check "$name: >= 99% of the $((ev - ${late:-0})) samples in Python code read in time carry Python frames ($py_n)" \
		[ $((py_n * 100)) -ge $(((ev - ${late:-0}) * 99)) ]
	expect_eq "$name: the samples without them are said in the summary" "${said:-0}" $((ev - py_n))
	if [ "${said:-0}" != $((ev - py_n)) ]; then
		# seen once in 30 runs (3 said, 2 found): what to look at next time
		grep 'python: [0-9]* not read' $TMP/e | sed 's/^/# /'
		grep -Ev ' \([^;()]*:[0-9]+\)(;| )' $TMP/o | grep -E 'python|Py|_Py' | cut -c1-400 | sed 's/^/# no Python frame: /'
	fi
	check "$name: heavy:light = 2:1 (spin under them $heavy:$light, $(ratio_bound $light $heavy 2))" \
		ratio_ok $light $heavy 2
	echo "# $name: split error $(awk -v h=$heavy -v l=$light 'BEGIN { if (l) printf "%.1f%%", (h / l - 2) * 50 }')"
	check "$name: names in place: <module>;main;heavy;spin after _PyEval_EvalFrameDefault" \
		grep -q '_PyEval_EvalFrameDefault;<module> (split.py:1);main (split.py:38);heavy (split.py:17);spin (split.py:10)' $TMP/o
}

# two_threads NAME PYTHON: split.py with a second thread running
# other() -> spin2(); the two share the GIL, so each runs about half the
# time: each keeps its own Python stack in at least a quarter of the
# process's samples, and no stack mixes them
two_threads() {
	local name=$1 py=$2 all mixed first second
	run_ft $TMP/o $TMP/e profile -F 199 -f -c "$py $PY/split.py 4 2"
	all=$(folded_count $TMP/o .)
	mixed=$(folded_count $TMP/o 'spin2 .*heavy|heavy.*spin2|other \(split.*heavy|light.*other \(split')
	second=$(folded_count $TMP/o 'Thread.run \(threading.py:[0-9]+\);([^;]+;)*other \(split.py:33\);spin2 \(split.py:26\)')
	first=$(folded_count $TMP/o '<module> \(split.py:1\);main \(split.py:38\);(heavy|light) \(split.py:(17|22)\);spin \(split.py:10\)')
	check "$name, two threads: the second's stacks run other;spin2 under Thread.run ($second of $all)" \
		[ $((second * 4)) -ge "$all" -a "$all" -gt 100 ]
	check "$name, two threads: the first's run main;heavy/light;spin ($first of $all)" \
		[ $((first * 4)) -ge "$all" ]
	expect_eq "$name, two threads: no stack mixes the two" "$mixed" 0
}

# entry_exit NAME PYTHON: gens.py resumes a generator 1000 times a call,
# so some samples land in the generator's eval loop as it enters or leaves
# (the leaf: _PyEval_EvalFrameDefault under gen_iternext, no Python frame
# of its own), where its record on the C stack is not made yet or given
# up. Its callers' frames are read all the same: 2-3% of such a thread's
# samples lost all their Python frames before (2026-11-28, at f5a94d2)
entry_exit() {
	local name=$1 py=$2 edge named
	run_ft $TMP/o $TMP/e profile -F 499 -f -c "$py $PY/gens.py 4"
	edge=$(folded_count $TMP/o ';gen_iternext[^;]*;_PyEval_EvalFrameDefault [0-9]+$')
	named=$(folded_count $TMP/o 'main \(gens.py:13\);squares \(gens.py:9\);builtin_sum[^;]*;(PyIter_Next;)?gen_iternext[^;]*;_PyEval_EvalFrameDefault [0-9]+$')
	check "$name: samples in a generator's entry or exit name its callers ($named of $edge)" \
		[ "$edge" -ge 5 -a $((named * 10)) -ge $((edge * 9)) ]
}

if [ ! -x $PY311 ]; then
	ok "python3.11 # SKIP $PY311 is not installed"
else
	profile_split python3.11 $PY311
	entry_exit python3.11 $PY311

	# frames read late would name the caller running then: a sample whose
	# native leaf is the xor of spin_l was taken under light(), never heavy()
	run_ft $TMP/o $TMP/e profile -F 199 -f -c "$PY311 $PY/proof.py 6"
	right=$(folded_count $TMP/o 'light \(proof.py:[0-9]+\);spin_l \(proof.py:[0-9]+\);(binary_iop|PyNumber_InPlaceXor)')
	wrong=$(folded_count $TMP/o '(heavy|spin_h) \(proof.py:[0-9]+\);.*(binary_iop|PyNumber_InPlaceXor)')
	check "proof: samples in spin_l's xor named under light ($right)" [ "$right" -gt 5 ]
	# the reader's one blind spot: a thread that left a frame and called
	# another at the same depth within PY_MAX_AGE_NS (1 ms) of the sample;
	# 1 of 83 at 2 ms in one run here
	check "proof: <= 3% of them named under heavy ($wrong)" [ $((wrong * 100)) -le $((right * 3)) ]

	two_threads python3.11 $PY311

	run_ft $TMP/o $TMP/e offcpu -f -c "$PY311 $PY/naps.py 50"
	nap=$(folded_count $TMP/o '<module> \(naps.py:1\);outer \(naps.py:15\);middle \(naps.py:11\);nap \(naps.py:7\);.*clock_nanosleep')
	bare=$(folded_count $TMP/o 'time_sleep' )
	check "offcpu: 50 naps of 20 ms under outer;middle;nap: ${nap} us" \
		[ "$nap" -ge 1000000 -a "$nap" -le 1600000 ]
	# a short block (a preemption on the way in or out) leaves the thread
	# running again before its frames are read: refused, and counted
	check "offcpu: >= 99% of the time in time.sleep carries them ($nap of $bare us)" \
		[ $((nap * 100)) -ge $((bare * 99)) ]

	run_ft $TMP/o $TMP/e -e c:malloc -f -c "$PY311 $PY/allocs.py 50"
	heavy=$(folded_count $TMP/o '<module> \(allocs.py:1\);outer \(allocs.py:27\);heavy \(allocs.py:18\);make \(allocs.py:12\);.*bytearray')
	light=$(folded_count $TMP/o '<module> \(allocs.py:1\);outer \(allocs.py:27\);light \(allocs.py:23\);make \(allocs.py:12\);.*bytearray')
	check "count -e c:malloc: of 100 mallocs under heavy;make and 50 under light;make, none misnamed ($heavy, $light)" \
		[ "$heavy" -le 100 -a "$light" -le 50 ]
	# count wakes at a quarter-full ring and drains every 1 ms: some are
	# read later than 1 ms after the malloc and refused (counted); a quiet
	# host reads >= 99% in time, one loaded beyond its CPUs 56% (seen)
	check "count -e c:malloc: >= half of them carry their frames ($((heavy + light)) of 150)" \
		[ $((heavy + light)) -ge 75 ]

	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -lt 2 ]; then
		ok "unprivileged # SKIP perf_event_paranoid is below 2 here"
	else
		chmod 755 $TMP
		cp "$FTSTACK" $TMP/ftstack && cp $PY/split.py $TMP/split.py && chmod 755 $TMP/ftstack && chmod 644 $TMP/split.py
		(cd $TMP && su nobody -s /bin/bash -c "$TMP/ftstack profile --debug -F 199 -f -c '$PY311 $TMP/split.py 6'" \
			>$TMP/o 2>$TMP/e)
		ev=$(folded_count $TMP/o '_PyEval_EvalFrameDefault')
		named=$(folded_count $TMP/o 'main \(split.py:38\);(heavy|light) \(split.py:(17|22)\);spin')
		# any Python frame, as profile_split counts them (a sample in main's
		# own loop, or at the start and the end, names no spin)
		py_n=$(folded_count $TMP/o ' \([^;()]*:[0-9]+\)(;| )')
		late=$(sed -n 's/.*python: \([0-9]*\) not read: they would have been read too long.*/\1/p' $TMP/e)
		# as profile_split: the share of the samples read in time (a busy
		# host delays the reader; the late ones are said, and not guessed)
		check "nobody, paranoid 2, no CAP_SYS_PTRACE: own -c command's Python frames ($py_n of $ev, ${late:-0} late; $named under heavy/light)" \
			[ "$named" -gt 0 -a $((${late:-0} * 2)) -le "$ev" -a \
			  $((py_n * 100)) -ge $(((ev - ${late:-0}) * 99)) ]
	fi
fi

for v in 3.12.1 3.13.0; do
	py=$PYENV/$v/bin/python${v%.*}
	if [ -x "$py" ]; then
		profile_split "python$v" "$py"
		two_threads "python$v" "$py"
		entry_exit "python$v" "$py"
	else
		ok "python$v # SKIP $py is not installed (pyenv)"
	fi
done
py=$PYENV/3.10.13/bin/python3.10
if [ -x "$py" ]; then
	run_ft $TMP/o $TMP/e profile -F 199 -f -c "$py $PY/split.py 1"
	expect_eq "python3.10: said once that its frames cannot be read" \
		"$(grep -c 'Python before 3.11 (.*libpython3.10.*): its Python frames cannot be read' $TMP/e)" 1
	check "python3.10: its native stacks kept" grep -q '_PyEval_EvalFrameDefault' $TMP/o
else
	ok "python3.10 # SKIP $py is not installed (pyenv)"
fi

# a process that maps CPython after its first samples were read (a program
# embedding it; pyenv's python, whose loader maps libpython after the
# exec): late_python spins 300 ms in native code, then dlopens libpython
# and runs hot() for 2 s. Found once "no Python" and never looked at
# again, it named none of hot()'s frames, and said nothing.
LIBPY=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
if [ ! -r $LIBPY ]; then
	ok "late libpython # SKIP $LIBPY is not installed (Debian's libpython3.11)"
else
	run_ft $TMP/o $TMP/e profile -F 199 -f -c "$BIN/late_python $LIBPY 300 2"
	spin=$(folded_count $TMP/o ';main;now(;| )')
	ev=$(folded_count $TMP/o '_PyEval_EvalFrameDefault')
	hot=$(folded_count $TMP/o '_PyEval_EvalFrameDefault;<module> \(<string>:1\);hot \(<string>:2\)')
	check "late libpython: samples of the native spin before it was mapped ($spin)" [ "$spin" -ge 20 ]
	check "late libpython: >= 95% of the Python samples name hot() ($hot of $ev)" \
		[ "$ev" -ge 200 -a $((hot * 100)) -ge $((ev * 95)) ]
fi
finish
