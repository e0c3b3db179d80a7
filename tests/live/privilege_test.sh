#!/usr/bin/env bash
# No root handed out. Under sudo (real uid 0, SUDO_UID/SUDO_GID set) the -c
# command runs as the invoking user, with that user's groups, HOME, USER and
# LOGNAME; --keep-root keeps root. The command is still traced from its
# first instruction: exact counts on getppid_paths. Then the capability
# path (doc/RELIABILITY.md): nobody with CAP_PERFMON, CAP_SYS_PTRACE and
# CAP_SYSLOG as ambient capabilities (capsh) counts tracepoint stacks once
# the event's id is readable, and is refused what needs tracefs writes.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
W="$BIN/getppid_paths"
EV=t:syscalls:sys_enter_getppid
# 20,000 copied samples x 2.5 KB = 50 MB: the sudo run's 64 MB rings hold
# them all with the reader stopped, so the counts are exact at any speed
N=20000 A=5000 B=15000
before=$(tracefs_state)
nobody_home=$(getent passwd nobody | cut -d: -f6)
nobody_groups=$(id -G nobody)
chmod 755 $TMP
cat > $TMP/who.sh <<EOF
#!/bin/sh
echo "uid=\$(id -u) gid=\$(id -g) groups=\$(id -G) home=\$HOME user=\$USER logname=\$LOGNAME"
exec "$W" $N
EOF
chmod 755 $TMP/who.sh

SUDO_UID=65534 SUDO_GID=65534 USER=root HOME=/root "$FTSTACK" -e $EV -f -o $TMP/r -c "sh -c 'id -u'" >$TMP/o 2>$TMP/e
expect_eq "sudo: sh -c 'id -u' prints the invoking user's uid" "$?:$(cat $TMP/o)" "0:65534"
SUDO_UID=65534 SUDO_GID=65534 USER=root HOME=/root "$FTSTACK" -e $EV -f --buffer-size 65536 -o $TMP/r -c $TMP/who.sh >$TMP/o 2>$TMP/e
expect_eq "sudo: exit status" $? 0
expect_eq "sudo: uid, gid, groups (initgroups), HOME, USER, LOGNAME" "$(cat $TMP/o)" \
	"uid=65534 gid=65534 groups=$nobody_groups home=$nobody_home user=nobody logname=nobody"
expect_eq "sudo: caller_a, exact" "$(folded_count $TMP/r 'getppid_paths;.*main;caller_a;do_getppid;entry_SYSCALL')" $A
expect_eq "sudo: caller_b, exact" "$(folded_count $TMP/r 'getppid_paths;.*main;caller_b;do_getppid;entry_SYSCALL')" $B
"$FTSTACK" -e t:sched:sched_process_exec -f -o $TMP/r -c "$W 4" >/dev/null 2>$TMP/e
SUDO_UID=65534 SUDO_GID=65534 "$FTSTACK" -e t:sched:sched_process_exec -f -o $TMP/r -c "$W 4" >/dev/null 2>$TMP/e
expect_eq "sudo: the command's own exec is traced (its first instruction is)" \
	"$(folded_count $TMP/r '^getppid_paths;')" 1
SUDO_UID=65534 SUDO_GID=65534 "$FTSTACK" -e $EV -f --keep-root -o $TMP/r -c "sh -c 'id -u'" >$TMP/o 2>$TMP/e
expect_eq "--keep-root: the command runs as root" "$?:$(cat $TMP/o)" "0:0"
SUDO_UID=0 SUDO_GID=0 "$FTSTACK" -e $EV -f -o $TMP/r -c "sh -c 'id -u'" >$TMP/o 2>$TMP/e
expect_eq "sudo from root: root" "$?:$(cat $TMP/o)" "0:0"
"$FTSTACK" -e $EV -f -o $TMP/r -c "sh -c 'id -u'" >$TMP/o 2>$TMP/e
expect_eq "no sudo: as ftstack itself" "$?:$(cat $TMP/o)" "0:0"
SUDO_UID=4242424 SUDO_GID=4242424 "$FTSTACK" -e $EV -f -o $TMP/r -c "sh -c 'id -u; echo \$HOME'" >$TMP/o 2>$TMP/e
expect_eq "a uid without a passwd entry: that uid, HOME=/" "$?:$(cat $TMP/o | tr '\n' ' ')" "0:4242424 / "
SUDO_UID=nobody SUDO_GID=65534 "$FTSTACK" -e $EV -f -c "sh -c 'id -u'" >$TMP/o 2>$TMP/e
expect_eq "SUDO_UID not a number: exit 2, the command never ran" "$?:$(cat $TMP/o)" "2:"
check "SUDO_UID not a number: says --keep-root" grep -q -- '--keep-root' $TMP/e
# a command the user may not run: refused at exec, ftstack exits 1
mkdir -p $TMP/priv; cp "$W" $TMP/priv/w; chmod 700 $TMP/priv/w
SUDO_UID=65534 SUDO_GID=65534 "$FTSTACK" -e $EV -f -c "$TMP/priv/w 4" >$TMP/o 2>$TMP/e
expect_eq "a command only root may run: exit 1" $? 1
check "... says Permission denied" grep -q 'Permission denied' $TMP/e

# nobody with CAP_PERFMON, CAP_SYS_PTRACE, CAP_SYSLOG (ambient, via capsh)
if command -v capsh >/dev/null; then
	asperfmon() {
		capsh --caps="cap_perfmon,cap_sys_ptrace,cap_syslog,cap_setuid,cap_setgid,cap_setpcap+eip" \
			--keep=1 --user=nobody --addamb=cap_perfmon,cap_sys_ptrace,cap_syslog -- -c "$*"
	}
	asperfmon "grep CapEff /proc/self/status" > $TMP/o
	expect_eq "capsh: nobody's CapEff is CAP_PERFMON|CAP_SYSLOG|CAP_SYS_PTRACE" "$(cat $TMP/o)" "CapEff:	0000004400080000"
	asperfmon "$FTSTACK check" > $TMP/o 2>&1
	check "check reports CapEff and CAP_PERFMON" grep -q 'CAP_PERFMON yes' $TMP/o
	asperfmon "$FTSTACK -e $EV -f -c '$W 1000'" > $TMP/o 2>$TMP/e; st=$?
	expect_eq "capsh, tracefs root-only: exit 2 (the environment refuses it)" $st 2
	check "capsh, tracefs root-only: says tracefs" grep -q tracefs $TMP/e
	# the administrator lets the user read the event's ids (perf-security.rst):
	# under perf, sys_enter_X is raw_syscalls:sys_enter filtered on the number
	IDS="$T/events/syscalls/sys_enter_getppid/id $T/events/raw_syscalls/sys_enter/id"
	trap 'chmod o-x $T; chmod o-r $IDS; rm -rf "$TMP"' EXIT
	modes=$(stat -c %a $T $IDS | tr '\n' ' ')
	chmod o+x $T; chmod o+r $IDS
	mkdir -p $TMP/cap; chown nobody $TMP/cap
	# rings are locked memory: without CAP_IPC_LOCK the default ones are
	# sized to what kernel.perf_event_mlock_kb and ulimit -l allow; a
	# --buffer-size past that is refused, saying so
	asperfmon "$FTSTACK -e $EV -f -U -c '$W 10'" > $TMP/o 2>$TMP/e; st=$?
	expect_eq "capsh: default rings fit the lock limit: exit 0" $st 0
	asperfmon "$FTSTACK -e $EV -f -U --buffer-size 65536 -c '$W 10'" > $TMP/o 2>$TMP/e; st=$?
	check "capsh: --buffer-size past the lock limit: says --buffer-size and CAP_IPC_LOCK" grep -q 'smaller --buffer-size, or give CAP_IPC_LOCK' $TMP/e
	# a sample is ~2.3 KB when the host's method copies 2 KB of user stack
	# (ftstack check): 1000 of them fill 2.3 MB of one CPU's 4 MB ring, so
	# none is lost even if the reader is never scheduled (1800 would fill it)
	asperfmon "$FTSTACK -e $EV -f -U --buffer-size 4096 -o $TMP/cap/r.folded -c '$W 1000'" > $TMP/o 2>$TMP/e
	expect_eq "capsh: exit status" $? 0
	check "capsh: -o FILE written, owned by nobody" test "$(stat -c %U $TMP/cap/r.folded)" = nobody
	expect_eq "capsh: caller_a, exact" "$(folded_count $TMP/cap/r.folded '^getppid_paths;.*main;caller_a;do_getppid ')" 250
	expect_eq "capsh: caller_b, exact" "$(folded_count $TMP/cap/r.folded '^getppid_paths;.*main;caller_b;do_getppid ')" 750
	check "capsh: zero lost" grep -q ' 0 lost' $TMP/e
	asperfmon "$FTSTACK -e $EV -f --buffer-size 256 -p 1 1" > $TMP/o 2>$TMP/e; st=$?
	expect_eq "capsh: another user's process (-p 1), through CAP_SYS_PTRACE: exit 0" $st 0
	# each of these writes tracefs: exit 1 with a message, as RELIABILITY.md says
	asperfmon "$FTSTACK -e $EV --backend ftrace -f -c '$W 10'" > $TMP/o 2>$TMP/e; st=$?
	expect_eq "capsh: the ftrace backend (an instance in tracefs) is refused: exit 1" $st 1
	check "capsh: ... with a message ($(head -1 $TMP/e))" grep -q "^ftstack: cannot make the instance $T/instances/ftstack_[0-9]*: Permission denied$" $TMP/e
	asperfmon "$FTSTACK -e '$W:caller_a' -f -c '$W 10'" > $TMP/o 2>$TMP/e; st=$?
	expect_eq "capsh: a uprobe (uprobe_events) is refused: exit 1" $st 1
	check "capsh: ... with a message ($(head -1 $TMP/e))" grep -q "^ftstack: the kernel refused 'p:ftstack_[0-9]*/u0_caller_a $W:0x[0-9a-f]*' in uprobe_events: Permission denied$" $TMP/e
	asperfmon "$FTSTACK cleanup" > $TMP/o 2>$TMP/e; st=$?
	expect_eq "capsh: cleanup cannot touch tracefs: exit 1" $st 1
	check "capsh: ... with a message ($(head -1 $TMP/e))" grep -q "^ftstack: cleanup failed: Permission denied (are you root?)$" $TMP/e
	chmod o-x $T; chmod o-r $IDS
	expect_eq "tracefs modes restored" "$(stat -c %a $T $IDS | tr '\n' ' ')" "$modes"
	trap 'rm -rf "$TMP"' EXIT
else
	ok "capsh: nobody with CAP_PERFMON, CAP_SYS_PTRACE, CAP_SYSLOG, 19 checks # SKIP capsh is not installed (tests/deps.sh installs libcap2-bin)"
fi
expect_eq "nothing left in tracefs" "$(tracefs_state)" "$before"
finish
