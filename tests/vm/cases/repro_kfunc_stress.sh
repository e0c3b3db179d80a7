# Reproducer, run only when named (FTSTACK_VM_CASES=repro_kfunc_stress):
# kfunc.sh's kprobe_events run and then its __kmalloc headline, ITER times
# (30), the order in which issue 33's oops came (doc/RELIABILITY.md)
have_ftstack || { ok "kfunc stress # SKIP ftstack not built"; exit 0; }
W="$BIN/getppid_paths"
ITER=${ITER:-30}
i=0
while [ $i -lt $ITER ]; do
	$FTSTACK --buffer-size 16384 -e __x64_sys_getppid --mechanism kprobe-events -f -c "$W 2000" >$TMP/o 2>$TMP/e
	expect_eq "stress $i: kprobe-events exit" $? 0
	touch $TMP/tracing
	( while [ -e $TMP/tracing ]; do sh -c : ; done ) &
	load=$!
	$FTSTACK -e __kmalloc -m 2 -t 3 1 >$TMP/o 2>$TMP/e
	expect_eq "stress $i: __kmalloc exit" $? 0
	rm -f $TMP/tracing; wait $load 2>/dev/null
	i=$((i + 1))
done
