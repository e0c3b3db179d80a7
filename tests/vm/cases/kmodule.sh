# The kernel's symbols saved once a boot (symbolize/kallsyms_cache.c) with a
# module loaded and unloaded: the module is part of the copy's stamp (its
# name, size, state, address and build-id), so a copy saved with it is read
# back while it stays, names a stack through it exactly as /proc/kallsyms
# does, and is made anew when it goes or comes back. The host's kernel has
# no modules; this is where the stamp's module parts run for real.
have_ftstack || { ok "kmodule cases # SKIP ftstack not built"; exit 0; }
KO=$(ls /lib/modules/test/dummy.ko* 2>/dev/null | head -n 1)
[ -n "$KO" ] || { ok "kmodule cases # SKIP no dummy.ko in the image (tests/vm/run copies it from Debian's kernel package)"; exit 0; }
[ -f $T/kprobe_events ] || { ok "kmodule cases # SKIP no kprobes"; exit 0; }

said() { sed -n 's/^ftstack: debug: kernel symbols //p' "$1"; }
links() { for l in $(ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: \(ftstack_[a-z0-9]*\)[:@].*/\1/p'); do ip link del "$l"; done; }
# leaf_count FILE: the samples whose stack's leaf (the probed function) is
# dummy_setup, in -K's folded output (leaf last)
leaf_count() { awk '/;dummy_setup [0-9]+$/ { s += $NF } END { print s + 0 }' "$1"; }
# two links made: dummy_setup runs once for each (alloc_netdev_mqs calls
# the link type's setup), exact
run() {
	FTSTACK_CACHE_DIR=$TMP/km $FTSTACK --debug -K -f -e dummy_setup \
		-c "sh -c 'ip link add ftstack_d0 type dummy && ip link add ftstack_d1 type dummy'" >"$1" 2>"$1.e"
	rc=$?
	links
	return $rc
}

rmmod dummy 2>/dev/null
insmod "$KO"
check "dummy loaded" grep -q '^dummy ' /proc/modules
check "dummy has a build-id note" [ -e /sys/module/dummy/notes/.note.gnu.build-id ]

run $TMP/m1
expect_eq "module: first run's exit status" $? 0
expect_eq "module: first run saved the symbols" "$(said $TMP/m1.e)" "read and saved in $TMP/km/kallsyms"
expect_eq "module: first run, two links made through dummy_setup" "$(leaf_count $TMP/m1)" 2
[ "$(leaf_count $TMP/m1)" = 2 ] || info "first run: $(head -c 800 $TMP/m1) $(tail -3 $TMP/m1.e)"

run $TMP/m2
expect_eq "module: second run's exit status" $? 0
expect_eq "module: second run read them back" "$(said $TMP/m2.e)" "read back from $TMP/km/kallsyms"
expect_eq "module: second run, two links made through dummy_setup" "$(leaf_count $TMP/m2)" 2
expect_eq "module: the same stacks from the copy" "$(sort $TMP/m2)" "$(sort $TMP/m1)"
# the module's frames named by the copy itself, the kernel's list not
# read (ftstack says when a lookup sent it there)
check "module: the copy named every frame, /proc/kallsyms not read" sh -c "! grep -q 'kernel symbols: .* read too' $TMP/m2.e"

# the module gone: the stamp differs, the copy is made anew
links
rmmod dummy
check "dummy unloaded" sh -c "! grep -q '^dummy ' /proc/modules"
FTSTACK_CACHE_DIR=$TMP/km $FTSTACK --debug -K -f -e t:syscalls:sys_enter_getppid -c "$BIN/getppid_paths 10" >$TMP/m3 2>$TMP/m3.e
expect_eq "module unloaded: exit status" $? 0
expect_eq "module unloaded: the copy made anew" "$(said $TMP/m3.e)" "read and saved in $TMP/km/kallsyms"
check "module unloaded: no stack names dummy" sh -c "! grep -q dummy $TMP/m3"

# back again (most often at another address): anew once more, then read back
insmod "$KO"
run $TMP/m4
expect_eq "module back: exit status" $? 0
expect_eq "module back: the copy made anew" "$(said $TMP/m4.e)" "read and saved in $TMP/km/kallsyms"
expect_eq "module back: two links made through dummy_setup" "$(leaf_count $TMP/m4)" 2
run $TMP/m5
expect_eq "module back: read back" "$(said $TMP/m5.e)" "read back from $TMP/km/kallsyms"
expect_eq "module back: the same stacks from the copy" "$(sort $TMP/m5)" "$(sort $TMP/m4)"
check "module back: the copy named every frame" sh -c "! grep -q 'kernel symbols: .* read too' $TMP/m5.e"
rmmod dummy
check "kprobes left: none named ftstack" sh -c "! grep -q ftstack $T/kprobe_events"
