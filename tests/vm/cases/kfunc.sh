# Kernel functions through kprobes (the 6.1 kernel has the kprobe PMU and
# kprobe_events), exact per-path counts on the getppid workload, the
# headline command, and cleanup after kill -9.
have_ftstack || { ok "kfunc cases # SKIP ftstack not built"; exit 0; }
W="$BIN/getppid_paths"
n=5000; a=$((n / 4)); b=$((n - n / 4))
fc() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
state() { cat $T/kprobe_events; ls $T/instances; }
before=$(state)

# 16 MB rings: the 5,000 samples fit even if ftstack, under TCG, never ran
# until the command ended (x 2.5 KB with a copied user stack, the bound of
# tests/live/lib.sh, = 12.5 MB): exact counts, not a race
for m in kprobe-pmu kprobe-events; do
	$FTSTACK --buffer-size 16384 -e __x64_sys_getppid --mechanism $m -f -c "$W $n" >$TMP/o 2>$TMP/e
	expect_eq "$m: exit status" $? 0
	expect_eq "$m: caller_a path" "$(fc $TMP/o 'caller_a;do_getppid;.*__x64_sys_getppid [0-9]+$')" $a
	expect_eq "$m: caller_b path" "$(fc $TMP/o 'caller_b;do_getppid;.*__x64_sys_getppid [0-9]+$')" $b
	check "$m: mechanism said" grep -q "through: ${m%%-*}" $TMP/e
	[ "$(fc $TMP/o 'caller_a;do_getppid;.*__x64_sys_getppid [0-9]+$')" = $a ] || info "$m output: $(head -c 600 $TMP/o)"
done

# the kernel's symbols saved between runs, on a kernel with kprobes (their
# instruction pages and ftrace's trampolines are symbols the copy leaves
# to /proc/kallsyms): read back, the same stacks, exact
said() { sed -n 's/^ftstack: debug: kernel symbols //p' "$1"; }
for r in 1 2; do
	FTSTACK_CACHE_DIR=$TMP/ks $FTSTACK --debug --buffer-size 16384 -e __x64_sys_getppid \
		--mechanism kprobe-events -f -c "$W $n" >$TMP/ks$r 2>$TMP/e
	info "run $r: kernel symbols $(said $TMP/e); $(grep -c . /proc/modules 2>/dev/null) modules"
	expect_eq "saved kernel symbols, run $r: caller_a path" "$(fc $TMP/ks$r 'caller_a;do_getppid;.*__x64_sys_getppid [0-9]+$')" $a
done
expect_eq "saved kernel symbols: the second run read them back" "$(said $TMP/e)" "read back from $TMP/ks/kallsyms"
expect_eq "saved kernel symbols: the same stacks" "$(sort $TMP/ks2)" "$(sort $TMP/ks1)"

# the headline: __kmalloc exists on 6.1 under its own name
# with allocations for the whole run, however long its set-up takes (a
# fixed number of rounds could end before tracing starts under KVM)
touch $TMP/tracing
# (each new process allocates through __kmalloc on 6.1: security_prepare_creds
# and security_task_alloc under copy_process; busybox's ls may run in the
# shell without a fork, and tracefs's own allocations are kmalloc_trace)
( while [ -e $TMP/tracing ]; do sh -c : ; done ) &
load=$!
$FTSTACK -e __kmalloc -m 2 -t 3 2 >$TMP/o 2>$TMP/e
expect_eq "__kmalloc -m 2 -t 3: exit status" $? 0
rm -f $TMP/tracing; wait $load 2>/dev/null
info "__kmalloc: $(grep -c '^        [0-9]' $TMP/o) stacks printed; $(tail -1 $TMP/e)"
check "__kmalloc: 1 to 3 stacks, each seen >= 2 times" awk '/^        [0-9]+$/ { n++; if ($1 < 2) bad = 1 } END { exit !(n >= 1 && n <= 3 && !bad) }' $TMP/o
check "__kmalloc: kprobe PMU used" grep -q 'kprobe PMU' $TMP/e
first=$(awk 'BEGIN { f = 1 } /^$/ { f = 1; next } f { print; f = 0 }' $TMP/o | sort -u)
expect_eq "__kmalloc: every stack's leaf is __kmalloc" "$first" "    __kmalloc"

# a glob over functions, capped
$FTSTACK -e 'vfs_rea*' --max-probes 2 -K -f 1 >$TMP/o 2>$TMP/e
expect_eq "glob vfs_rea*: exit status" $? 0
check "glob: the cap is said" grep -q 'tracing the first 2' $TMP/e

# the tracepoint fallback agrees with kprobes on the leaf
$FTSTACK -e __kmalloc --mechanism tracepoint -K -f -c "$W 100" >$TMP/o 2>$TMP/e
expect_eq "tracepoint fallback: exit status" $? 0
check "tracepoint fallback: stacks end in __kmalloc" awk '{ sub(/ [0-9]+$/, ""); if ($0 !~ /;__kmalloc$/) exit 1 }' $TMP/o

# kill -9 leaves a kprobe_events group behind; ftstack cleanup removes it
$FTSTACK -e __x64_sys_getppid --mechanism kprobe-events 30 >/dev/null 2>&1 &
pid=$!
# (up to 60 s: under TCG on a busy host the set-up may be slow; a pass costs nothing)
i=0; while [ $i -lt 600 ] && ! grep -q "ftstack_$pid" $T/kprobe_events; do sleep 0.1; i=$((i + 1)); done
check "kprobe_events group created" grep -q "ftstack_$pid" $T/kprobe_events
kill -9 $pid; wait $pid 2>/dev/null
echo 'p:mine/keep_me do_sys_openat2' >> $T/kprobe_events
$FTSTACK cleanup >$TMP/o 2>&1
info "cleanup said: $(cat $TMP/o)"
check "cleanup reports what it removed" grep -q "ftstack_$pid" $TMP/o
check "cleanup removed the dead run's group" sh -c "! grep -q ftstack_$pid $T/kprobe_events"
check "cleanup kept the user's own probe" grep -q 'mine/keep_me' $T/kprobe_events
echo '-:mine/keep_me' >> $T/kprobe_events
expect_eq "kernel state as found" "$(state)" "$before"
