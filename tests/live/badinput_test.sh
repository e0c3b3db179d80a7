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
bad "--call-graph dwarf with a size too small" -e t:sched:sched_switch --call-graph dwarf,8
bad "--call-graph dwarf with --backend ftrace" -e t:sched:sched_switch --call-graph dwarf --backend ftrace
bad "--call-graph copy with a size not a multiple of 8" -e t:sched:sched_switch --call-graph copy,1001
bad "no event" count 1
bad "bad duration" -e t:sched:sched_switch -- 
bad "command not found" -e t:sched:sched_switch -c /nonexistent/cmd
bad "malformed event" -e t:sched
# probes (kernel and user functions, USDT)
W=$BIN/getppid_paths U=$BIN/usdt_paths
bad "unknown kernel function suggests" -e tcp_sendmsx 1
check "suggestion names tcp_sendmsg" grep -q 'did you mean tcp_sendmsg' $TMP/e
bad "unknown user function" -e "$W:no_such_fn" 1
bad "missing binary" -e /nonexistent/bin:main 1
bad "non-ELF binary" -e /etc/passwd:main 1
for spec in u: p: t:x; do bad "malformed spec $spec" -e "$spec" 1; done
bad "unknown USDT provider" -e "u:$U:nosuchprov:tick" 1
bad "USDT glob matching nothing" -e "u:$U:ftstack_test:zz*" 1
bad "user function glob matching nothing" -e "$W:zz_nothing_*" 1
bad "kernel function glob matching nothing" -e 'zz_no_such_kfunc_*' 1
if id nobody >/dev/null 2>&1; then
	st=0; setpriv --reuid=nobody --regid=nogroup --clear-groups "$FTSTACK" -e t:sched:sched_switch 1 \
		>$TMP/o 2>$TMP/e || st=$?
	expect_eq "unprivileged: exit 2" "$st" 2
	check "unprivileged: names the capability" grep -q CAP_PERFMON $TMP/e
fi
expect_eq "nothing created in tracefs" "$(tracefs_state)" "$before"
finish
