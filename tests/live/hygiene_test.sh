#!/usr/bin/env bash
# Kernel-state hygiene on every exit path: tracefs is byte-identical before
# and after a normal run, SIGINT, SIGTERM, SIGHUP, SIGPIPE, a set-up that
# fails on the 2nd of 3 events, and a SIGKILL followed by `ftstack cleanup`.
# A user's uprobe group and instance whose names look like ftstack's are
# there throughout and survive untouched. Each run makes an instance, a
# uprobe_events group and a stacktrace trigger (--backend ftrace, uprobe).
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
W="$BIN/getppid_paths"
off=$(nm "$W" | awk '$3 == "do_getppid" { print $1 }')
UG=ftstack_user UI=ftstack_user_inst
# the workload is PIE with text at the same file offset and address
user_objects() { echo "p:$UG/mine $W:0x$off" >>$T/uprobe_events && mkdir $T/instances/$UI; }
user_remove() { rmdir $T/instances/$UI 2>/dev/null; echo "-:$UG/mine" >>$T/uprobe_events 2>/dev/null; }
trap 'user_remove; rm -rf "$TMP"' EXIT
check "user objects made (uprobe group $UG, instance $UI)" user_objects
before=$(tracefs_state)
check "user uprobe listed" grep -q "$UG/mine" $T/uprobe_events
ARGS=(--backend ftrace -e t:syscalls:sys_enter_getppid -e "u:$W:do_getppid")

# waits until ftstack PID has made its instance (the set-up is done)
armed() { wait_for 60 eval "[ -d $T/instances/ftstack_$1 ] && grep -q Tracing $TMP/e || gone $1" && ! gone $1; }

run_ft $TMP/o $TMP/e "${ARGS[@]}" -f -c "$W 1000"
expect_eq "normal run: exit status" $? 0
expect_eq "normal run: both events counted" "$(folded_count $TMP/o 'do_getppid [0-9]+$'):$(folded_count $TMP/o 'sys_enter_getppid\] [0-9]+$')" "1000:1000"
expect_eq "normal run: tracefs as found" "$(tracefs_state)" "$before"

for sig in INT TERM HUP; do
	"$FTSTACK" "${ARGS[@]}" -f 30 >$TMP/o 2>$TMP/e & pid=$!
	check "SIG$sig: set up" armed $pid
	check "SIG$sig: its uprobe group exists while it runs" grep -q "ftstack_$pid/" $T/uprobe_events
	kill -$sig $pid; wait $pid; st=$?
	expect_eq "SIG$sig: exit status" $st 0
	check "SIG$sig: summary printed" grep -q 'events counted' $TMP/e
	expect_eq "SIG$sig: tracefs as found" "$(tracefs_state)" "$before"
done

"$FTSTACK" "${ARGS[@]}" -c "$W 100000" 2>$TMP/e | head -c 1 >/dev/null
expect_eq "SIGPIPE: tracefs as found" "$(tracefs_state)" "$before"

# the 2nd of 3 events cannot be set up (ftrace:kernel_stack has no enable):
# the 1st's trigger, enable and uprobe are undone, exit 1, nothing left
"$FTSTACK" --backend ftrace -e "u:$W:do_getppid" -e t:ftrace:kernel_stack -e t:sched:sched_switch 1 >$TMP/o 2>$TMP/e
st=$?
check "set-up failing on the 2nd of 3: fails ($st)" [ $st -eq 1 -o $st -eq 2 ]
check "set-up failing on the 2nd of 3: one clear line" grep -q 'kernel_stack' $TMP/e
expect_eq "set-up failing on the 2nd of 3: tracefs as found" "$(tracefs_state)" "$before"

# SIGKILL leaves the run's objects; `ftstack cleanup` removes them, and only them
"$FTSTACK" "${ARGS[@]}" -f 30 >$TMP/o 2>$TMP/e & pid=$!
check "SIGKILL: set up" armed $pid
kill -KILL $pid; wait $pid 2>/dev/null
check "SIGKILL: the dead run's instance is left" test -d $T/instances/ftstack_$pid
check "SIGKILL: the dead run's uprobe group is left" grep -q "ftstack_$pid/" $T/uprobe_events
run_ft $TMP/o $TMP/e cleanup
expect_eq "cleanup: exit status" $? 0
check "cleanup: names what it removed" grep -q "ftstack_$pid" $TMP/o $TMP/e
expect_eq "cleanup: tracefs as found" "$(tracefs_state)" "$before"
check "cleanup: the user's look-alike uprobe survived" grep -q "$UG/mine" $T/uprobe_events
check "cleanup: the user's look-alike instance survived" test -d $T/instances/$UI
check "user's instance untouched (tracing_on still 1)" grep -qx 1 $T/instances/$UI/tracing_on

# ftstack check probes (and times the user-stack walks) without a trace left
run_ft $TMP/o $TMP/e check
expect_eq "check: exit status" $? 0
check "check: the capability rows" grep -Eq '^perf_event_open callchains +yes' $TMP/o
# the figures are this host's: what is checked is their meaning (a cost,
# never negative, or too small to measure here); the verdict, one of three,
# is the user-stack method line's (the one rule, ft_ustack_rule)
ustacks=$(grep '^user stacks ' $TMP/o)
cost='([0-9]+\.[0-9]{2} us|too small to measure here)'
check "check: user stacks timed, fp against a copy: $ustacks" \
	grep -Eq "^user stacks +yes +the kernel's walk \+ a 1024-byte copy \(fp\) $cost( a sample)?, a 2048-byte copy \(copy\) $cost\$" <<<"$ustacks"
check "check: no negative figure" bash -c "! grep -q -- '-[0-9]' <<<\"\$1\"" _ "$ustacks"
rule=$(grep '^user-stack method ' $TMP/o)
check "check: the method says one of the three verdicts: $rule" \
	grep -Eq ": (fp measurably cheaper|copy measurably cheaper|within the noise: copy \(its cut stacks are counted\))\)" <<<"$rule"
# the rule: fp only when it is measurably the cheaper, else copy
method=$(sed -n 's/^user-stack method  *yes  *\([a-z]*\) .*/\1/p' $TMP/o)
want=copy; grep -q ': fp measurably cheaper)' <<<"$rule" && want=fp
expect_eq "check: the method follows the verdict (fp only when measurably cheaper)" "$method" "$want"
expect_eq "check: tracefs as found" "$(tracefs_state)" "$before"

# the events' last closes (the kernel's unregistration waits) are a
# child's after ftstack exits, when nothing in tracefs waits on them
run_ft $TMP/o $TMP/e -e t:syscalls:sys_enter_getppid --debug -f -c "$W 1000"
expect_eq "closed behind: the count" "$(folded_count $TMP/o ' [0-9]+$')" 1000
check "closed behind: said" grep -q 'events closed behind, by a child' $TMP/e
check "closed behind: the child is gone within 10 s" wait_for 10 eval '! pgrep -x ftstack-close >/dev/null'
# probes are unregistered before ftstack exits: kprobes are listed in
# debugfs, a uprobe's breakpoint stays in its file's code till then
# (system-wide: -c's uprobes are made in uprobe_events, see KFUNC.md)
run_ft $TMP/o $TMP/e -e "u:$W:do_getppid" --debug -f 1
check "uprobe PMU: through the PMU" grep -q 'probes through: uprobe PMU' $TMP/e
check "uprobe PMU: probes are closed by ftstack, not behind" \
	bash -c "! grep -q 'closed behind' $TMP/e && grep -q 'perf: .* events open' $TMP/e"
run_ft $TMP/o $TMP/e "${ARGS[@]}" --debug -f -c "$W 10"
check "tracefs objects: their events are closed before they are removed, not behind" \
	bash -c "! grep -q 'closed behind' $TMP/e && grep -q 'perf: .* events open' $TMP/e"
expect_eq "tracefs objects: tracefs as found" "$(tracefs_state)" "$before"
finish
