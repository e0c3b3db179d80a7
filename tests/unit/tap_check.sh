#!/usr/bin/env bash
# tests/tap.sh, tests/run's counting: a skip counts as skipped wherever it is
# printed, in a test program's own lines or inside a nested tests/run (make
# asan's unit and live runs), and reaches the grouped list of reasons.
# Prints "ok - ..." / "not ok - ..." lines.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.sh
tmp=$(mktemp -d /tmp/ftstack-tap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
is() { if [ "$2" = "$3" ]; then echo "ok - tap: $1 ($2)"; else echo "not ok - tap: $1: got '$2', want '$3'"; fail=1; fi; }

# a program's own lines
printf '%s\n' 'ok - a' 'ok 2 - b # SKIP no pidfd here' 'not ok - c' 'ok - d # skip: no pidfd here' \
	'# ok - e # SKIP a comment' 'ok - f' >$tmp/plain
p= f= k=; tap_count plain $tmp/plain $tmp/skips1
is "a program's lines: passed, failed, skipped" "$p $f $k" "2 1 2"
is "a program's skips, each with its reason" "$(cut -f1 $tmp/skips1 | sort -u)" "no pidfd here"

# an inner tests/run's output, made by the same functions as tests/run's end:
# one "ok" line a program, the grouped list, the last line
printf '%s\n' 'ok - x' 'ok - y # SKIP valgrind cannot' 'ok - z # SKIP no BTF' >$tmp/prog
p= f= k=; tap_count unit/x_test $tmp/prog $tmp/inner_skips
{ echo "ok - unit/x_test ($p checks, $k skipped, 0s)"
  echo "ok - asan-live/w_test (5 checks, 0 skipped, 3s)"
  tap_skip_list $tmp/inner_skips
  echo "$((p + 5)) passed, 0 failed, $k skipped"; } >$tmp/nested
p= f= k=; tap_count --nested asan $tmp/nested $tmp/skips2
is "a nested run: its last line's counts, not one ok a program" "$p $f $k" "6 0 2"
is "a nested run's skips reach the list, named by the inner test" \
	"$(sort $tmp/skips2 | tr '\t' '|' | paste -sd,)" "no BTF|asan/unit/x_test: z,valgrind cannot|asan/unit/x_test: y"
tap_skip_list $tmp/skips2 >$tmp/list
is "... and the outer list groups them by reason" "$(grep -c '^#   [^ ]' $tmp/list)" 2

# a nested run whose list lost a skip: one failure more
grep -v 'x_test: y$' $tmp/nested >$tmp/lost
p= f= k=; tap_count --nested asan $tmp/lost $tmp/skips3
is "a nested run's list short of its count fails" "$p $f $k" "6 1 2"
# no last line (its build failed): its lines are counted as a program's
printf '%s\n' 'make: *** [asan] Error 2' >$tmp/broken
p= f= k=; tap_count --nested asan $tmp/broken $tmp/skips4
is "a nested run with no last line counts as lines" "$p $f $k" "0 0 0"
exit $fail
