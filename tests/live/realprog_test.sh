#!/usr/bin/env bash
# Whole user stacks by default on programs nobody here wrote (issue 22):
# Debian's python3, perl and gcc's cc1 keep no frame pointers and run deep.
# profile's default (CFI all the way in a 65528-byte copy) must bring >= 99%
# of python3's and perl's samples to their start, and cc1's, but for those
# deeper than any copy, within one point of --call-graph dwarf,65528; the
# summary must count every stack that
# is not whole, and its advice must never name --call-graph fp for them.
# offcpu: a python3 script sleeping in nested functions, whole by default.
# Shares, not counts: the sample counts depend on the host's speed, the
# shares do not (each run takes hundreds of samples or more). A run may
# leave 0-2 start-up samples not whole (python3's _init, _dl_map_object:
# a walk stopped where the loader has no CFI yet), so each takes ~500 or
# more: rec.py 6000 and re.pl 40000 gave ~170 and ~220 on one host, and
# 2 of 176 failed the 99% (CI, 2026-11-28).
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
PY=/usr/bin/python3 PL=/usr/bin/perl GCC=/usr/bin/gcc

. tests/lib/realprog.sh
share() { realprog_share "$1"; }
WHOLE=$REALPROG_WHOLE
ROOTED='^[^;]*;((_start|__clone3|__clone)[; ]|\[libc\.so\.6\];__spawni_child[; ])'
# cut_count ERR: the stacks the summary says may be cut (both lines)
cut_count() {
	sed -n -e 's/^ftstack: \([0-9]*\) user stacks reached the end of the.*/\1/p' \
		-e 's/^ftstack: \([0-9]*\) user stacks may be cut: .*/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }'
}
# copy_end ERR: the stacks the summary says reached the end of a
# 65528-byte copy, the most the kernel copies: no mode could make them whole
copy_end() {
	sed -n 's/^ftstack: \([0-9]*\) user stacks reached the end of the 65528-byte stack copy.*/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }'
}
# pct W T: W / T in tenths of a percent
pct() { echo $(($2 ? $1 * 1000 / $2 : 0)); }

realprog_workloads $TMP

# profile_whole NAME MINPCT CMD [ARGS...]: the default's share, the summary's
# cut count against the stacks that are not whole, and its advice
profile_whole() {
	local name=$1 min=$2 w t; shift 2
	run_ft $TMP/o $TMP/e profile -F 499 -U -f "$@"
	read -r w t < <(share $TMP/o)
	check "$name, default: $w of $t samples whole ($(pct $w $t)/1000, want >= $min)" \
		bash -c "[ $t -ge 100 ] && [ $(pct $w $t) -ge $min ]"
	# Every stack is whole or counted as cut, exactly. Whole as the walk
	# knows it: rooted where the CFI ends a stack (_start, clone3) or in
	# posix_spawn's child; a stack deeper than the copy by a hair prints
	# rooted at __libc_start_call_main, which WHOLE takes for a root (the
	# share's rule, and count's), and is cut (1 in a CI run of cc1's deep
	# stacks, 2026-11-27)
	local cut nw; cut=$(cut_count $TMP/e)
	nw=$(awk -v re="$ROOTED" '$0 !~ re { n += $NF } END { print n + 0 }' $TMP/o)
	expect_eq "$name, default: the summary counts the stacks that are not whole (cut, not whole)" \
		"$cut" "$nw"
	[ "$cut" = "$nw" ] || {
		awk -v re="$ROOTED" '$0 !~ re { c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); print "# not whole: " f[1] ";" f[2] ";" f[3] " ... " f[n] " " c }' $TMP/o | head -40
		sed -n 's/^ftstack: .*user stacks/# &/p' $TMP/e
	}
	check "$name, default: no advice to use --call-graph fp" bash -c "! grep -Eq 'call-graph fp (walks|follows)' $TMP/e"
	def_nw=$nw def_t=$t def_end=$(copy_end $TMP/e)
}

if [ ! -x $PY ]; then
	ok "python3 # SKIP no $PY"
else
	profile_whole python3 990 -c "$PY $TMP/rec.py 20000"
	# the 2 KB copy cuts some: the advice names the largest copy, not fp
	run_ft $TMP/o $TMP/e profile -F 499 -U -f --call-graph copy -c "$PY $TMP/rec.py 20000"
	if [ "$(cut_count $TMP/e)" -gt 0 ]; then
		check "python3, copy: the advice names dwarf,65528, not fp" bash -c \
			"grep -q 'python3.11 keeps no frame pointers, so --call-graph fp would not help; --call-graph dwarf,65528' $TMP/e"
	else
		ok "python3, copy: the advice names dwarf,65528, not fp # SKIP no stack cut at 2 KB in this run"
	fi
	# offcpu: 40 sleeps of 20 ms under outer;middle;inner, through the interpreter
	run_ft $TMP/o $TMP/e offcpu -U -f -c "$PY $TMP/naps.py"
	read -r w t < <(share $TMP/o)
	check "python3, offcpu: $w of $t us blocked in whole stacks (>= 99%)" \
		bash -c "[ $t -gt 0 ] && [ $(pct $w $t) -ge 990 ]"
	slept=$(folded_count $TMP/o "__libc_start_call_main;.*_PyEval_EvalFrameDefault;.*clock_nanosleep")
	check "python3, offcpu: time.sleep's 800 ms from the start through the interpreter ($slept us)" \
		awk -v v=$slept 'BEGIN { exit !(v >= 760000) }'
	# offcpu's counts are microseconds: each distinct stack that is not
	# whole was cut at least once, and none cut means all whole
	nw=$(awk -v re="$WHOLE" '$0 !~ re { n++ } END { print n + 0 }' $TMP/o) cut=$(cut_count $TMP/e)
	check "python3, offcpu: the summary counts the stacks that are not whole ($nw distinct, $cut cut)" \
		bash -c "[ $nw -le $cut ] && { [ $nw -gt 0 ] || [ $cut -eq 0 ]; }"
fi

if [ ! -x $PL ]; then
	ok "perl # SKIP no $PL"
else
	profile_whole perl 990 -c "$PL $TMP/re.pl 100000"
fi

if [ ! -x $GCC ]; then
	ok "gcc # SKIP no $GCC"
else
	profile_whole "gcc -O2 -c (cc1)" 0 -c "$GCC -O2 -c $TMP/big.c -o $TMP/big.o"
	# the advice names the file most cut stacks stopped in, and says
	# whether it keeps frame pointers only for stacks deeper than the copy
	# (a run whose cut stacks all ended at the stack's top gets another:
	# seen under ASan in CI, 2026-11-28). Usually cc1; as or libc.so.6
	# when a run cuts few stacks (2 in libc, CI 2026-11-29): on Debian
	# none of the three keeps frame pointers
	if grep -Eq 'deeper than the kernel copies; (cc1|as|libc\.so\.6) keeps' $TMP/e; then
		check "cc1, default: the advice says fp would not help ($(grep -Eo '(cc1|as|libc\.so\.6) keeps' $TMP/e | head -1))" \
			grep -Eq '(cc1|as|libc\.so\.6) keeps no frame pointers: --call-graph fp would not help' $TMP/e
	else
		ok "cc1, default: the advice says fp would not help # SKIP no advice on cc1's stacks deeper than the copy in this run ($(sed -n 's/^ftstack: \([0-9]*\) user stacks reached the end.*(user stacks: \([^;]*\); \(.\{0,60\}\).*/\1: \3/p' $TMP/e))"
	fi
	run_ft $TMP/o $TMP/e profile -F 499 -U -f --call-graph dwarf,65528 -c "$GCC -O2 -c $TMP/big.c -o $TMP/big.o"
	read -r w t < <(share $TMP/o)
	# cc1's ranger recurses deeper than 64 KB in bursts, so how many
	# samples fall there differs run to run by more than sampling error
	# (986 against 998 of 1000 was seen): those reached the end of the
	# largest copy, which no mode could make whole, and are left out. The
	# rest (no CFI, a walk gone wrong, a smaller copy's end) must be as
	# few as dwarf,65528's: within one point, or three standard errors of
	# the difference of two shares where that is more
	ds=$(pct $((def_nw - def_end)) $def_t) ws=$(pct $((t - w - $(copy_end $TMP/e))) $t)
	m=$(awk -v a=$ds -v b=$ws -v n=$def_t -v k=$t 'BEGIN { p = a / 1000; q = b / 1000
		if (p < 0.005) p = 0.005; if (q < 0.005) q = 0.005
		m = n && k ? 3000 * sqrt(p * (1 - p) / n + q * (1 - q) / k) : 10; if (m < 10) m = 10; printf "%d", m + 0.5 }')
	check "cc1: the default's $ds/1000 stopped short of a 65528-byte copy's end within max(10, 3 SE) = $m/1000 of dwarf,65528's $ws/1000" \
		bash -c "[ $def_t -ge 100 ] && [ $((ds)) -le $((ws + m)) ]"
	run_ft $TMP/o $TMP/e profile -F 499 -U -f --call-graph copy -c "$GCC -O2 -c $TMP/big.c -o $TMP/big.o"
	check "cc1, copy: the advice names dwarf,65528, not fp" \
		grep -q 'cc1 keeps no frame pointers, so --call-graph fp would not help; --call-graph dwarf,65528' $TMP/e
fi
[ $fails -eq 0 ]
