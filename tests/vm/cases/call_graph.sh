# User stacks from a copy of the stack, on a second kernel: --call-graph
# copy walks the frame pointers in the copy as the kernel's own walk does
# (the same stacks, exactly), and --call-graph dwarf unwinds code built
# without frame pointers, where that walk loses the callers.
have_ftstack || { ok "call-graph cases # SKIP ftstack not built"; exit 0; }
n=4000; a=$((n / 4)); b=$((n - n / 4))
EV=t:syscalls:sys_enter_getppid
fc() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
state() { cat $T/uprobe_events; ls $T/instances; }
before=$(state)

# big rings: under TCG ftstack may not run often enough to drain 1 MB, and
# 2 KB copies of 4000 samples fit in 16 MB whether it runs or not
$FTSTACK --buffer-size 16384 -e $EV -f -c "$BIN/getppid_paths $n" >$TMP/fp 2>$TMP/e
expect_eq "fp: exit status" $? 0
$FTSTACK --buffer-size 16384 -e $EV -f --call-graph copy -c "$BIN/getppid_paths $n" >$TMP/o 2>$TMP/e
expect_eq "copy: exit status" $? 0
expect_eq "copy: main;caller_a, main;caller_b" \
	"$(fc $TMP/o 'main;caller_a;do_getppid;'):$(fc $TMP/o 'main;caller_b;do_getppid;')" "$a:$b"
expect_eq "copy: the same folded stacks as the kernel's walk" "$(sort $TMP/o)" "$(sort $TMP/fp)"
$FTSTACK --buffer-size 16384 -e $EV -f --call-graph copy,64 -c "$BIN/getppid_paths $n" >$TMP/o 2>$TMP/e
check "copy,64: every walk cut at the copy's end, and said" \
	grep -q "^ftstack: $n user stacks reached the end of the 64-byte stack copy" $TMP/e

# the default's rings (issue 32): 32 MB that grow to 64 MB once 1/16
# full, the events moved (SET_OUTPUT) from one per-CPU dummy's ring to
# another's; 40,000 2 KB copies (~92 MB) exact through it, or the loss
# counted and named (under TCG the reader may not keep up). A ring grows
# when a drain finds it 1/16 full; under TCG the events come so slowly
# that the loop's timeouts drain each ring before (no growth in 1 boot of
# several): the command stops ftstack ($PPID) while the first 2,000
# events (~4.6 MB) are written, so the next drain finds 1/8 of 32 MB,
# whatever the speed
m=40000
stopped="while ! grep -q '^State:.*T' /proc/\$PPID/status; do :; done"
$FTSTACK --debug -e $EV -f -c "kill -STOP \$PPID; $stopped; $BIN/getppid_paths 2000; kill -CONT \$PPID; $BIN/getppid_paths $((m - 2000))" >$TMP/o 2>$TMP/e
st=$? l=$(sed -n 's/^ftstack: .*events counted.*, \([0-9]*\) lost.*/\1/p' $TMP/e)
check "default rings: they grew from 32 MB" grep -q 'perf rings growing from 32768 to 65536 KB' $TMP/e
check "default rings: every event moved to the new rings" grep -q 'perf events moved after' $TMP/e
if [ "${l:-x}" = 0 ]; then
	expect_eq "default rings, 0 lost: exit status, main;caller_a, main;caller_b" \
		"$st:$(fc $TMP/o 'main;caller_a;do_getppid;'):$(fc $TMP/o 'main;caller_b;do_getppid;')" \
		"0:$((m / 4)):$((m - m / 4))"
else
	check "default rings: $l lost, named" grep -q ' lost (ring buffer full: raise --buffer-size)$' $TMP/e
fi
grep 'perf rings\|perf events moved' $TMP/e | sed 's/^/# /'

$FTSTACK --buffer-size 16384 -e $EV -f -c "$BIN/nofp_paths $n" >$TMP/o 2>$TMP/e
expect_eq "default on code without frame pointers: CFI finds main;nofp_a" "$(fc $TMP/o 'main;nofp_a;nofp_b;')" $n
# whole stacks by default, with either frame-pointer walk: a frameless libc
# function (syscall) under a frame-pointer caller
for cg in "" "--call-graph fp" "--call-graph copy"; do
	$FTSTACK --buffer-size 16384 -e $EV -f -U $cg -c "$BIN/syscall_paths $n" >$TMP/o 2>$TMP/e
	expect_eq "${cg:-default}: main;call_getppid;syscall, every call" \
		"$(fc $TMP/o ';main;call_getppid;syscall( |$)')" $n
done
# offcpu: nap_x, nap_y call libc's nanosleep (no frame pointer)
$FTSTACK offcpu -f -U -c "$BIN/libc_naps" >$TMP/o 2>$TMP/e
x=$(fc $TMP/o ';main;nap_x;nanosleep;'); y=$(fc $TMP/o ';main;nap_y;nanosleep;')
check "offcpu default: main;nap_x;nanosleep $x us, nap_y $y us, within 5% of 400000, 800000" \
	awk -v x=$x -v y=$y 'BEGIN { exit !(x >= 380000 && x <= 420000 && y >= 760000 && y <= 840000) }'
# profile: func_a, func_b (frame pointers) burn CPU in a frameless leaf, 1:2
$FTSTACK profile -F 499 -f -U -c "$BIN/leaf_ab 2" >$TMP/o 2>$TMP/e
fa=$(fc $TMP/o ';func_a;leaf( |$)'); fb=$(fc $TMP/o ';func_b;leaf( |$)')
check "profile default: leaf under func_a:func_b = 1:2 +- 15% ($fa:$fb)" \
	awk -v a=$fa -v b=$fb 'BEGIN { exit !(a > 0 && b / a >= 1.7 && b / a <= 2.3) }'
$FTSTACK --buffer-size 16384 -e $EV -f --call-graph dwarf,2048 -c "$BIN/nofp_paths $n" >$TMP/o 2>$TMP/e
expect_eq "dwarf: exit status" $? 0
expect_eq "dwarf: main;nofp_a;nofp_b, every call" "$(fc $TMP/o '(^|;)main;nofp_a;nofp_b;entry_SYSCALL')" $n
[ "$(fc $TMP/o 'main;nofp_a;nofp_b;')" = $n ] || info "output: $(head -c 600 $TMP/o) / $(tail -c 400 $TMP/e)"
expect_eq "call-graph: kernel state as found" "$(state)" "$before"
