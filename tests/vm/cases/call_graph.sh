# User stacks from a copy of the stack, on a second kernel: --call-graph
# copy walks the frame pointers in the copy as the kernel's own walk does
# (the same stacks, exactly), and --call-graph dwarf unwinds code built
# without frame pointers, where that walk loses the callers.
have_ftstack || { ok "ftstack not built: call-graph cases skipped"; exit 0; }
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

$FTSTACK --buffer-size 16384 -e $EV -f -c "$BIN/nofp_paths $n" >$TMP/o 2>$TMP/e
expect_eq "fp on code without frame pointers: main;nofp_a lost" "$(fc $TMP/o 'main;nofp_a;nofp_b;')" 0
$FTSTACK --buffer-size 16384 -e $EV -f --call-graph dwarf,2048 -c "$BIN/nofp_paths $n" >$TMP/o 2>$TMP/e
expect_eq "dwarf: exit status" $? 0
expect_eq "dwarf: main;nofp_a;nofp_b, every call" "$(fc $TMP/o '(^|;)main;nofp_a;nofp_b;entry_SYSCALL')" $n
[ "$(fc $TMP/o 'main;nofp_a;nofp_b;')" = $n ] || info "output: $(head -c 600 $TMP/o) / $(tail -c 400 $TMP/e)"
expect_eq "call-graph: kernel state as found" "$(state)" "$before"
