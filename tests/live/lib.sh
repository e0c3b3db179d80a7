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
expect_eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1: got '$2', want '$3'"; fi; }
# folded_count FILE REGEX: the summed count of folded lines matching REGEX
folded_count() { awk -v re="$2" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"; }
# tracefs_state: everything ftstack could change, for before/after comparisons
tracefs_state() {
	( cd $T && cat kprobe_events uprobe_events dynamic_events set_event trace_options current_tracer 2>/dev/null
	  ls instances
	  grep -H -v '^#' events/*/*/trigger
	  grep -l '^1' events/*/*/enable ) 2>/dev/null
}
# mount tracefs the way ftstack would, so state can be compared
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
# run_ft OUT ERR ARGS...: runs ftstack, stdout to OUT, stderr to ERR; returns its status
run_ft() { local o=$1 e=$2; shift 2; "$FTSTACK" "$@" >"$o" 2>"$e"; }
finish() { exit $((fails > 0)); }
