#!/usr/bin/env bash
# Bad input exits 2 with one line on stderr, before anything is created.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
before=$(tracefs_state)
bad() {
	local what=$1; shift
	"$FTSTACK" "$@" >$TMP/o 2>$TMP/e; local st=$?
	if [ $st -eq 2 ] && [ "$(wc -l < $TMP/e)" -eq 1 ] && grep -q '^ftstack: ' $TMP/e; then
		ok "$what: exit 2, '$(cat $TMP/e)'"
	else
		not_ok "$what: exit $st, stderr: $(head -3 $TMP/e)"
	fi
}
bad "unknown tracepoint suggests" -e t:sched:sched_swich 1
check "suggestion names sched_switch" grep -q 'sched:sched_switch' $TMP/e
bad "pattern matching nothing" -e 't:nosuch*:x*' 1
bad "no such pid" -e t:sched:sched_switch -p 999999999
bad "-U with -K" -e t:sched:sched_switch -U -K
bad "non-numeric -m" -e t:sched:sched_switch -m ten
bad "negative -t" -e t:sched:sched_switch -t -3
bad "unknown option" -e t:sched:sched_switch --frobnicate
bad "unknown format" -e t:sched:sched_switch --format xml
bad "no event" count 1
bad "bad duration" -e t:sched:sched_switch -- 
bad "command not found" -e t:sched:sched_switch -c /nonexistent/cmd
bad "malformed event" -e t:sched
if id nobody >/dev/null 2>&1; then
	st=0; setpriv --reuid=nobody --regid=nogroup --clear-groups "$FTSTACK" -e t:sched:sched_switch 1 \
		>$TMP/o 2>$TMP/e || st=$?
	expect_eq "unprivileged: exit 2" "$st" 2
	check "unprivileged: names the capability" grep -q CAP_PERFMON $TMP/e
fi
expect_eq "nothing created in tracefs" "$(tracefs_state)" "$before"
finish
