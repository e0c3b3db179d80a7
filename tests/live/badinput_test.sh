#!/usr/bin/env bash
# Bad input exits 2 with one line on stderr, before anything is created.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
before=$(tracefs_state)
tried=0
bad() {
	local what=$1; shift
	tried=$((tried + 1))
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
# values and combinations cli/options.c refuses
EV=t:sched:sched_switch
bad "--keep-root without a command" -e $EV --keep-root 1
bad "--force without -o" -e $EV --force 1
bad "--backend unknown" -e $EV --backend bpf 1
bad "--buffer-size 0" -e $EV --buffer-size 0 1
bad "--max-stacks 0" -e $EV --max-stacks 0 1
bad "--max-probes 0" -e $EV --max-probes 0 1
bad "--mechanism unknown" -e $EV --mechanism magic 1
bad "profile -F 0" profile -F 0 1
bad "profile -F not a number" profile -F abc 1
bad "profile --period too small" profile --period 1000 1
bad "profile --period not a number" profile --period abc 1
bad "profile with -e" profile -e $EV 1
bad "-i not a number" -e $EV -i abc 1
bad "-D negative" -e $EV -D -1
bad "-D not a number" -e $EV -D abc
bad "-C not a number" -e $EV -C abc 1
bad "-C no such CPU" -e $EV -C 99999 1
bad "-p not a number" -e $EV -p abc 1
bad "-L not a number" -e $EV -L abc 1
bad "-p with -c" -e $EV -p 1 -c true
bad "--state not a number" -e $EV --state abc 1
bad "offcpu -u with -k" offcpu -u -k 1
bad "offcpu --max-block below --min-block" offcpu -M 5 -m 10 1
bad "offcpu -U with -k" offcpu -U -k 1
bad "offcpu --min-total not a number" offcpu --min-total abc 1
bad "-c unbalanced quote" -e $EV -c "'unbalanced"
bad "-c empty" -e $EV -c ""
bad "-c and --" -e $EV -c true -- false
bad "-o without a value" -e $EV -o
bad "--call-graph unknown" -e $EV --call-graph magic 1
bad "--call-graph fp with a size" -e $EV --call-graph fp,8 1
bad "--call-graph copy,0" -e $EV --call-graph copy,0 1
bad "-t not a number" -e $EV -t abc 1
bad "-m negative" -e $EV -m -1 1
bad "two durations" -e $EV 1 2
bad "--diff outside report" -e $EV --diff 1
bad "--input-format outside report" -e $EV --input-format ftrace 1
bad "--through no such function" -e $EV --through zz_no_such_kfunc 1
# a kernel thread runs no user code: a user probe never fires in it
# (not kworkers: the kernel ends idle ones, and a pid that went would fail the run)
kthreads=$(for f in /proc/[0-9]*/stat; do
	l=$(cat $f 2>/dev/null) || continue; set -- ${l##*) } # the 7th field after comm: PF_*
	[ $(($7 & 0x200000)) -ne 0 ] && [[ $l != *"(kworker"* ]] && echo ${l%% *}; done | head -2)
read -r K1 K2 <<< "$(echo $kthreads)"
if [ -n "$K2" ]; then
	C1=$(cat /proc/$K1/comm)
	bad "-p of a kernel thread with a user probe" -e "$W:main" -p $K1 1
	expect_eq "it says why" "$(cat $TMP/e)" \
		"ftstack: -p $K1 ($C1) is a kernel thread: it runs no user code, so $W:main never fires in it"
	bad "-L of two kernel threads" -e "$W:main" -L $K1,$K2 1
	expect_eq "it names the first, and says the others are too" "$(cat $TMP/e)" \
		"ftstack: -L $K1 ($C1) and the other targets are kernel threads: they run no user code, so $W:main never fires in them"
	st=0; "$FTSTACK" -e "$W:main" -p $K1,$$ 0.2 >$TMP/o 2>$TMP/e || st=$?
	expect_eq "a kernel thread among others: runs, and warns once" \
		"$st:$(grep -cxF "ftstack: -p $K1 ($C1) is a kernel thread: it runs no user code, so no user probe fires in it" $TMP/e):$(grep -c 'kernel thread' $TMP/e)" 0:1:1
	st=0; "$FTSTACK" -e $EV -p $K1 0.2 >$TMP/o 2>$TMP/e || st=$?
	expect_eq "a kernel event in a kernel thread: runs, no word" "$st:$(grep -c 'kernel thread' $TMP/e)" 0:0
else
	ok "kernel threads: 6 checks # SKIP fewer than two kernel threads seen (a pid namespace)"
fi
# -o FILE refused before anything is created (output/out_file.c)
ln -s $TMP/target $TMP/link; echo keep > $TMP/target
bad "-o a symlink (live)" -e $EV -o $TMP/link 1
bad "-o a directory (live)" -e $EV -o $TMP 1
bad "report -o a symlink" report -o $TMP/link $TMP/target
expect_eq "the symlink's target unchanged" "$(cat $TMP/target)" keep
# report's inputs: missing or unreadable is bad input
printf 'main;a 3\n' > $TMP/in.folded
bad "report: missing input" report /nonexistent/in.folded
bad "report: a directory as input" report $TMP
bad "report: no input" report
bad "report --diff with one file" report --diff $TMP/in.folded
bad "report --diff, A missing" report --diff /nonexistent $TMP/in.folded
bad "report --input-format unknown" report --input-format xml $TMP/in.folded
bad "report --keep-root" report --keep-root $TMP/in.folded
bad "report --force without -o" report --force $TMP/in.folded
bad "report --format unknown" report --format xml $TMP/in.folded
bad "report --weight unknown" report --weight bytes $TMP/in.folded
bad "--weight outside report" -e $EV --weight period 1
# the ClickHouse sink's options (fleet/)
bad "--sink with another scheme" -e $EV --sink http://x/db 1
bad "--sink without a database" -e $EV --sink clickhouse:// 1
bad "--sink-buffer 0" -e $EV --sink-buffer 0 1
bad "--sink-buffer not a number" -e $EV --sink-buffer abc 1
bad "--host-name empty" -e $EV --host-name "" 1
bad "--sink-buffer without --sink" -e $EV --sink-buffer 8 1
bad "--host-name without --sink" -e $EV --host-name web1 1
bad "profile --host-name without --sink" profile --host-name web1 1
bad "report --sink" report --sink clickhouse://h/db $TMP/in.folded
if id nobody >/dev/null 2>&1; then
	chmod 711 $TMP; chmod 600 $TMP/in.folded
	st=0; setpriv --reuid=nobody --regid=nogroup --clear-groups "$FTSTACK" report $TMP/in.folded \
		>$TMP/o 2>$TMP/e || st=$?
	expect_eq "report: unreadable input: exit 2" "$st:$(cat $TMP/e)" \
		"2:ftstack: cannot read $TMP/in.folded: Permission denied"
	chmod 700 $TMP
else
	ok "report: unreadable input # SKIP no user nobody"
fi
if id nobody >/dev/null 2>&1; then
	st=0; setpriv --reuid=nobody --regid=nogroup --clear-groups "$FTSTACK" -e t:sched:sched_switch 1 \
		>$TMP/o 2>$TMP/e || st=$?
	expect_eq "unprivileged: exit 2" "$st" 2
	check "unprivileged: names the capability" grep -q CAP_PERFMON $TMP/e
else
	ok "unprivileged: 2 checks # SKIP no user nobody"
fi
echo "# $tried bad inputs tried"
expect_eq "nothing created in tracefs" "$(tracefs_state)" "$before"
finish
