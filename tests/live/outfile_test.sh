#!/usr/bin/env bash
# -o FILE is written atomically (output/out_file.c): the result goes to an
# unnamed file in FILE's folder, renamed over FILE once complete. A SIGKILL
# in the middle of a large write or of a live run leaves FILE as it was and
# no temporary file; a symlink at FILE is refused (exit 2) unless --force; an
# unwritable folder is exit 1 with a message and nothing changed.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
W="$BIN/getppid_paths"
EV=t:syscalls:sys_enter_getppid
D=$TMP/out
mkdir -p $D
before=$(tracefs_state)
listing() { ls -A "$1" | tr '\n' ' '; }

# a report big enough that writing it takes a while: 300000 stacks, 16 MB
awk 'BEGIN { for (i = 0; i < 300000; i++) printf "main;f%d;g%d;h%d %d\n", i % 1000, i, i * 7, i % 13 + 1 }' \
	> $TMP/big.folded
"$FTSTACK" report $TMP/big.folded > $TMP/big.want 2>/dev/null
echo "the old result" > $D/r.txt

# SIGKILL once the new file holds more than 1 MB and is not complete yet.
# The write takes about 0.1 s here; a host fast enough to finish it
# between two looks gets another try (up to 5), not a failure
want=$(stat -c %s $TMP/big.want)
for try in 1 2 3 4 5; do
	"$FTSTACK" report $TMP/big.folded -o $D/r.txt 2>/dev/null & pid=$!
	size=0 fdpath=
	for i in $(seq 20000); do
		for fd in /proc/$pid/fd/*; do
			case $(readlink "$fd" 2>/dev/null) in "$D/#"*) fdpath=$fd ;; esac
		done
		[ -n "$fdpath" ] && size=$(stat -L -c %s "$fdpath" 2>/dev/null || echo 0)
		[ "${size:-0}" -gt 1048576 ] && break
		kill -0 $pid 2>/dev/null || break
	done
	kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
	[ "$size" -gt 1048576 -a "$size" -lt "$want" ] && break
	echo "the old result" > $D/r.txt
done
check "SIGKILL mid-write: killed with $size of $want bytes written (try $try)" \
	test "$size" -gt 1048576 -a "$size" -lt "$want"
expect_eq "SIGKILL mid-write: FILE is the old one" "$(cat $D/r.txt)" "the old result"
expect_eq "SIGKILL mid-write: no temporary left" "$(listing $D)" "r.txt "
"$FTSTACK" report $TMP/big.folded -o $D/r.txt 2>/dev/null
expect_eq "the next run: exit status" $? 0
check "the next run: FILE is the whole new result" cmp -s $D/r.txt $TMP/big.want
expect_eq "the next run: nothing else" "$(listing $D)" "r.txt "

# a temporary named by a run that died (a file system without O_TMPFILE, or
# a kill between naming and rename) is removed by the next run writing FILE
: > "$D/.r.txt.ftstack-999999999.tmp"
: > "$D/.r.txt.ftstack-$$.tmp"  # a live process's: kept
"$FTSTACK" report $TMP/big.folded -o $D/r.txt 2>/dev/null
expect_eq "a dead run's temporary is removed, a live one's kept" "$(listing $D)" ".r.txt.ftstack-$$.tmp r.txt "
rm -f "$D/.r.txt.ftstack-$$.tmp"

# FILE keeps its mode
chmod 640 $D/r.txt
"$FTSTACK" report $TMP/big.folded -f -o $D/r.txt 2>/dev/null
expect_eq "the replaced FILE keeps its mode" "$(stat -c %a $D/r.txt)" 640

# a symlink at FILE, pointing at a passwd-like file
printf 'root:x:0:0:root:/root:/bin/bash\n' > $TMP/passwd
cp $TMP/passwd $TMP/passwd.orig
ln -s $TMP/passwd $D/link
"$FTSTACK" report $TMP/big.folded -o $D/link >/dev/null 2>$TMP/e; st=$?
expect_eq "symlink at FILE: exit 2" $st 2
check "symlink at FILE: says --force" grep -q -- '--force' $TMP/e
check "symlink at FILE: target unchanged" cmp -s $TMP/passwd $TMP/passwd.orig
check "symlink at FILE: still a symlink" test -L $D/link
"$FTSTACK" report $TMP/big.folded -f -o $D/link --force >/dev/null 2>$TMP/e
expect_eq "--force: exit status" $? 0
check "--force: the target holds the result" cmp -s $TMP/passwd <("$FTSTACK" report -f $TMP/big.folded 2>/dev/null)
check "--force: the symlink stays" test -L $D/link
rm -f $D/link

# an unwritable folder: exit 1, a message, nothing changed
if id nobody >/dev/null 2>&1; then
	mkdir -p $TMP/ro; echo "kept" > $TMP/ro/r.txt; chmod 755 $TMP/ro; chmod 755 $TMP
	asnobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	asnobody "$FTSTACK" report -f $TMP/big.folded -o $TMP/ro/r.txt >/dev/null 2>$TMP/e; st=$?
	expect_eq "unwritable folder, FILE exists: exit 1" $st 1
	check "unwritable folder: says why" grep -q 'cannot write .*Permission denied; nothing was changed' $TMP/e
	expect_eq "unwritable folder: FILE unchanged, nothing added" "$(cat $TMP/ro/r.txt):$(listing $TMP/ro)" "kept:r.txt "
	asnobody "$FTSTACK" report -f $TMP/big.folded -o $TMP/ro/new.txt >/dev/null 2>$TMP/e; st=$?
	expect_eq "unwritable folder, new FILE: exit 1" $st 1
	expect_eq "unwritable folder: no file created" "$(listing $TMP/ro)" "r.txt "
	chmod 700 $TMP
else
	ok "unwritable folder: 5 checks # SKIP no user nobody"
fi
"$FTSTACK" report -f $TMP/big.folded -o $D >/dev/null 2>$TMP/e
expect_eq "FILE a directory: exit 2" $? 2
"$FTSTACK" report -f $TMP/big.folded -o /dev/null >/dev/null 2>$TMP/e
expect_eq "-o /dev/null: written in place, exit 0" "$?:$(stat -c %t,%T /dev/null)" "0:1,3"

# live: a run's result lands whole, with exact counts (20,000 copied
# samples x 2.5 KB = 50 MB fit a 64 MB ring with the reader stopped)
N=20000 A=5000 B=15000
echo old > $D/live.folded
run_ft $TMP/o $TMP/e -e $EV -f --buffer-size 65536 -o $D/live.folded -c "$W $N"; expect_eq "live -o: exit status" $? 0
expect_eq "live -o: stdout empty" "$(wc -c < $TMP/o)" 0
expect_eq "live -o: caller_a" "$(folded_count $D/live.folded 'main;caller_a;do_getppid')" $A
expect_eq "live -o: caller_b" "$(folded_count $D/live.folded 'main;caller_b;do_getppid')" $B
# -i: every interval goes into the one new file
run_ft $TMP/o $TMP/e -e $EV -f -i 1 --buffer-size 65536 -o $D/live.folded -c "$W $N"; expect_eq "live -o -i: exit status" $? 0
expect_eq "live -o -i: every event in FILE" "$(folded_count $D/live.folded 'main;caller_.;do_getppid')" $N

# live: SIGKILL while tracing leaves FILE as it was; cleanup removes the rest
echo "the old result" > $D/live.folded
rm -f $TMP/go
"$W" 1000 --wait $TMP/go & wpid=$!
: >$TMP/e; "$FTSTACK" -e $EV -f -o $D/live.folded -p $wpid >/dev/null 2>$TMP/e & fpid=$!
wait_for 60 started $fpid
kill -KILL $fpid; wait $fpid 2>/dev/null
touch $TMP/go; wait $wpid
expect_eq "live SIGKILL: FILE is the old one" "$(cat $D/live.folded)" "the old result"
expect_eq "live SIGKILL: no temporary left" "$(listing $D)" "live.folded r.txt "
"$FTSTACK" cleanup >/dev/null 2>&1
expect_eq "nothing left in tracefs" "$(tracefs_state)" "$before"
finish
