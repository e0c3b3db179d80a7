# Reproducer, run only when named (FTSTACK_VM_CASES=repro_kprobe_toggle):
# no ftstack. A kprobe_events probe on __kmalloc, ftrace-based (__kmalloc
# starts with its ftrace call), enabled and disabled up to N times (at most
# SECS seconds) while two shells fork. Each toggle patches __kmalloc's call
# site with text_poke_bp. With FTSTACK_VM_TCG_THREAD=multi, QEMU 7.2 kept
# running the int3 of such a patch and 6.1 oopsed (RIP 0) on the next
# __kmalloc (doc/RELIABILITY.md, "A kernel oops in the 6.1 VM").
N=${N:-1000} SECS=${SECS:-150}
wsys $T/kprobe_events 'p:ftstack_repro/km __kmalloc' || { not_ok "repro: add a kprobe on __kmalloc"; exit 0; }
touch $TMP/run
( while [ -e $TMP/run ]; do sh -c : ; done ) &
l1=$!
( while [ -e $TMP/run ]; do sh -c : ; done ) &
l2=$!
i=0 t0=$(cut -d. -f1 /proc/uptime)
while [ $i -lt $N ] && [ $(( $(cut -d. -f1 /proc/uptime) - t0 )) -lt $SECS ]; do
	echo 1 > $T/events/ftstack_repro/km/enable
	echo 0 > $T/events/ftstack_repro/km/enable
	i=$((i + 1))
	[ $((i % 50)) = 0 ] && info "repro: $i toggles"
done
rm -f $TMP/run; wait $l1 $l2 2>/dev/null
ok "repro: $i enable/disable toggles of a kprobe on __kmalloc in $(( $(cut -d. -f1 /proc/uptime) - t0 )) s"
check "repro: kprobe removed" wsys $T/kprobe_events '-:ftstack_repro/km'
