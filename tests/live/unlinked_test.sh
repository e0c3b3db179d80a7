#!/usr/bin/env bash
# Code in files no path reaches, named, and never called JIT code: a
# program unlinked while it runs (as a service's, after an upgrade: -p reads
# "(deleted)" in /proc/PID/maps), and one run from a memfd (as runc runs
# itself: the kernel names the mapping "/memfd:NAME (deleted)"). ftstack
# reads them through /proc/PID/map_files (root), else the program through
# /proc/PID/exe (its own user).
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
before=$(tracefs_state)
EV=t:syscalls:sys_enter_getppid
n=4000 a=1000 b=3000 # getppid_paths N: N/4 calls from caller_a, the rest from caller_b
counts() { echo "$(folded_count $1 ';main;caller_a;do_getppid;'):$(folded_count $1 ';main;caller_b;do_getppid;')"; }

# -p: the program unlinked under the running process
cp "$BIN/getppid_paths" $TMP/gp
rm -f $TMP/go
$TMP/gp $n --wait $TMP/go & wpid=$!
wait_for 10 grep -q "$TMP/gp" /proc/$wpid/maps
rm $TMP/gp
check "-p: the process maps its program '(deleted)'" grep -q "$TMP/gp (deleted)" /proc/$wpid/maps
: >$TMP/e; "$FTSTACK" -e $EV -f -p $wpid >$TMP/o 2>$TMP/e & fpid=$!
wait_for 60 started $fpid
touch $TMP/go; wait $wpid
wait_for 30 gone $fpid; kill -INT $fpid 2>/dev/null; wait $fpid
expect_eq "-p, unlinked: main;caller_a, main;caller_b, every call" "$(counts $TMP/o):$(folded_count $TMP/o .)" "$a:$b:$n"
check "-p, unlinked: no frame left unnamed in it" bash -c "! grep -q 'deleted)\]' $TMP/o"
check "-p, unlinked: no JIT code said" bash -c "! grep -q 'JIT code' $TMP/e"

# -c: a program run from a memfd
cat >$TMP/memfd_run.py <<'EOF'
import os, sys
fd = os.memfd_create("gp", 0)
with open(sys.argv[1], "rb") as f:
    os.write(fd, f.read())
os.execv("/proc/self/fd/%d" % fd, ["gp"] + sys.argv[2:])
EOF
for how in "" "--call-graph dwarf"; do
	name="memfd${how:+, $how}"
	run_ft $TMP/o $TMP/e -e $EV -f $how -c "python3 $TMP/memfd_run.py $BIN/getppid_paths $n"
	expect_eq "$name: main;caller_a, main;caller_b" "$(counts $TMP/o)" "$a:$b"
	check "$name: no frame left unnamed in it" bash -c "! grep -q 'memfd:gp' $TMP/o"
	check "$name: no JIT code said" bash -c "! grep -q 'JIT code' $TMP/e"
done
check "dwarf: whole to the memfd program's _start" grep -q '^[^;]*;_start;__libc_start_main;__libc_start_call_main;main;caller_b;' $TMP/o

# as nobody, no capability: the memfd program through /proc/PID/exe
if command -v setpriv >/dev/null; then
	chmod 755 $TMP; chmod 644 $TMP/memfd_run.py
	setpriv --reuid=65534 --regid=65534 --clear-groups "$FTSTACK" profile -F 499 -f \
		-c "python3 $TMP/memfd_run.py $BIN/getppid_paths 3000000" >$TMP/o 2>$TMP/e
	expect_eq "nobody, profile of the memfd program: exit status" $? 0
	check "nobody: samples in caller_b named ($(folded_count $TMP/o ';main;caller_b;'))" \
		test "$(folded_count $TMP/o ';main;caller_b;')" -gt 0
	check "nobody: no frame left unnamed in it" bash -c "! grep -q 'memfd:gp' $TMP/o"
	check "nobody: no JIT code said" bash -c "! grep -q 'JIT code' $TMP/e"
else
	echo "ok - nobody, profile of the memfd program # SKIP setpriv not installed"
fi
expect_eq "tracing state restored" "$(tracefs_state)" "$before"
finish
