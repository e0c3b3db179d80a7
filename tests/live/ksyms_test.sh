#!/usr/bin/env bash
# The kernel's symbols saved between runs (symbolize/kallsyms_cache.c): the
# first run reads /proc/kallsyms and saves it, the next reads the copy back
# and names every frame as the first did, with exact counts; a copy of
# another boot is made anew; no copy when FTSTACK_CACHE_DIR is empty, and
# nobody never reads root's.
cd "$(dirname "$0")/../.." && . tests/live/lib.sh
N=2000 A=500 B=1500
W="$BIN/getppid_paths"
EV=t:syscalls:sys_enter_getppid
C=$TMP/ksyms
before=$(tracefs_state)
said() { sed -n 's/^ftstack: debug: kernel symbols //p' "$1"; }

FTSTACK_CACHE_DIR=$C run_ft $TMP/f1 $TMP/e1 --debug -e $EV -f -c "$W $N"
expect_eq "first run: exit status" $? 0
expect_eq "first run: read and saved" "$(said $TMP/e1)" "read and saved in $C/kallsyms"
expect_eq "the copy is root's alone" "$(stat -c '%U %a' $C/kallsyms)" "root 600"
FTSTACK_CACHE_DIR=$C run_ft $TMP/f2 $TMP/e2 --debug -e $EV -f -c "$W $N"
expect_eq "second run: read back" "$(said $TMP/e2)" "read back from $C/kallsyms"
expect_eq "read back: caller_a, exact" \
	"$(folded_count $TMP/f2 '^getppid_paths;.*main;caller_a;do_getppid;entry_SYSCALL_64[a-z_]*;do_syscall_64;')" $A
expect_eq "read back: caller_b, exact" \
	"$(folded_count $TMP/f2 '^getppid_paths;.*main;caller_b;do_getppid;entry_SYSCALL_64[a-z_]*;do_syscall_64;')" $B
check "read back: the same stacks, named alike" cmp -s <(sort $TMP/f1) <(sort $TMP/f2)

# another boot's copy: the boot id is the stamp's first field (after its
# label and count)
printf 'X' | dd of=$C/kallsyms bs=1 seek=$((32 + 5 + 8)) conv=notrunc status=none
FTSTACK_CACHE_DIR=$C run_ft $TMP/f3 $TMP/e3 --debug -e $EV -f -c "$W $N"
expect_eq "another boot's copy: read and saved" "$(said $TMP/e3)" "read and saved in $C/kallsyms"
check "... the same stacks" cmp -s <(sort $TMP/f1) <(sort $TMP/f3)

FTSTACK_CACHE_DIR= run_ft $TMP/f4 $TMP/e4 --debug -e $EV -f -c "$W $N"
expect_eq "FTSTACK_CACHE_DIR empty: /proc/kallsyms read" "$(said $TMP/e4)" "read /proc/kallsyms"

if command -v capsh >/dev/null; then
	chmod 755 $TMP
	asnobody() {
		capsh --caps="cap_perfmon,cap_sys_ptrace,cap_syslog,cap_setuid,cap_setgid,cap_setpcap+eip" \
			--keep=1 --user=nobody --addamb=cap_perfmon,cap_sys_ptrace,cap_syslog -- -c "$*"
	}
	# profile: nobody may not use tracefs; most of getppid_paths' samples
	# are in the kernel
	asnobody "FTSTACK_CACHE_DIR=$C $FTSTACK profile -F 999 --debug -c '$W 300000'" >$TMP/o 2>$TMP/e5
	expect_eq "nobody, given root's directory: /proc/kallsyms read" "$(said $TMP/e5)" "read /proc/kallsyms"
	asnobody "unset FTSTACK_CACHE_DIR XDG_CACHE_HOME; HOME=/nonexistent $FTSTACK profile -F 999 --debug -c '$W 300000'" \
		>$TMP/o 2>$TMP/e6
	expect_eq "nobody without a home: /proc/kallsyms read" "$(said $TMP/e6)" "read /proc/kallsyms"
else
	ok "nobody's runs # SKIP capsh is not installed"
fi
expect_eq "tracefs left as found" "$(tracefs_state)" "$before"
finish
