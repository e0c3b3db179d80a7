# A uprobe at a function's first instruction: the frame-pointer walk starts
# before the function has pushed its frame, so the kernel's user callchain
# goes from the function straight to its caller's caller. ftstack puts the
# caller back from [sp] (PERF_SAMPLE_STACK_USER) unless the kernel already
# did: 6.13+ and stable backports (Debian's 6.1 has "perf,x86: avoid missing
# caller address in stack traces captured in uprobe") add it, but only when
# the first instruction is push %rbp or endbr64. entry_paths' probed() starts
# with a nop, so there the callers come from ftstack's fix alone. With
# whole user stacks by default (each sample carries the stack top and the
# registers) that fix is the CFI's: at a function's first instruction the
# return address is at the CFA - 8 = [sp], so the [sp] fix has nothing left
# to put back.
have_ftstack || { ok "uprobe entry cases # SKIP ftstack not built"; exit 0; }
n=20000; a=$((n / 4)); b=$((n - n / 4))
fc() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
state() { cat $T/uprobe_events; ls $T/instances; }
# put_back: how many callers ftstack read from [sp] (--debug)
put_back() { sed -n 's/.*uprobe entry callers put back from \[sp\]: \([0-9]*\).*/\1/p' "$1"; }
before=$(state)

# entry_case WORKLOAD FUNC WANT_PUT_BACK: exact per-path counts
entry_case() {
	w=$BIN/$1 f=$2
	# big rings: under TCG ftstack may not run often enough to drain 1 MB;
	# 20000 samples with 2 KB stack copies fit in 64 MB whether it runs or not
	$FTSTACK --debug --buffer-size 65536 -e "u:$w:$f" -U -f -c "$w $n" >$TMP/o 2>$TMP/e
	expect_eq "$1:$f: exit status" $? 0
	expect_eq "$1: main;caller_a;$f" "$(fc $TMP/o "(^|;)main;caller_a;$f [0-9]+\$")" $a
	expect_eq "$1: main;caller_b;$f" "$(fc $TMP/o "(^|;)main;caller_b;$f [0-9]+\$")" $b
	expect_eq "$1: no stack skips the caller (main;$f)" "$(fc $TMP/o "main;$f [0-9]+\$")" 0
	expect_eq "$1: every stack's leaf is $f" "$(fc $TMP/o ";$f [0-9]+\$")" $n
	expect_eq "$1: callers put back from [sp] by ftstack" "$(put_back $TMP/e)" "$3"
	[ "$(fc $TMP/o "(^|;)main;caller_[ab];$f [0-9]+\$")" = $n ] ||
		info "output: $(head -c 600 $TMP/o) / $(grep -v 'debug: ' $TMP/e | tail -c 600)"
}

# starts with push %rbp: this kernel adds the caller, ftstack sees it there
entry_case getppid_paths do_getppid 0
# starts with a nop: every caller comes from the CFI ([sp]); without it each
# stack would read main;probed
entry_case entry_paths probed 0
expect_eq "uprobe entry: kernel state as found" "$(state)" "$before"
