# Under lockdown=confidentiality (DESIGN.md section 7): tracefs and kprobes
# are closed, perf sampling is not. profile and offcpu give the results they
# give without lockdown (the thresholds of call_graph.sh, which runs on the
# same kernel without it); a tracepoint and a kernel function refuse in one
# line that names the lockdown; ftstack check says why.
# Boot: FTSTACK_VM_APPEND=lockdown=confidentiality FTSTACK_VM_CASES=lockdown
# tests/vm/run (make check-vm-lockdown). Booted without lockdown= the case
# skips; booted with it, a kernel that is not in confidentiality lockdown
# fails: that boot exists to test the lockdown.
have_ftstack || { ok "lockdown # SKIP ftstack not built"; exit 0; }
LD=/sys/kernel/security/lockdown
asked=
for w in $(cat /proc/cmdline); do
	case $w in lockdown=*) asked=${w#lockdown=} ;; esac
done
if ! grep -q '\[confidentiality\]' $LD 2>/dev/null; then
	now=$(cat $LD 2>/dev/null || echo 'no securityfs')
	if [ -n "$asked" ]; then
		not_ok "lockdown: booted with lockdown=$asked, but $LD shows '$now', not [confidentiality]"
	else
		ok "lockdown # SKIP not booted with lockdown=confidentiality ($now)"
	fi
	exit 0
fi
ok "lockdown: $LD shows [confidentiality] active"
fc() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
# one_line FILE: FILE holds exactly one line (the refusal)
lines() { grep -c '' "$1"; }
if cat $T/trace_clock >/dev/null 2>&1; then
	not_ok "lockdown: tracefs readable under confidentiality lockdown"
else
	ok "lockdown: tracefs unreadable (as the kernel's lockdown says)"
fi

# ran NAME ARGS...: ftstack ARGS into $TMP/o and $TMP/e, which exits 0
ran() {
	n=$1; shift
	$FTSTACK "$@" >$TMP/o 2>$TMP/e
	st=$?
	expect_eq "lockdown: $n exit status" $st 0
	[ $st = 0 ] || info "$n: $(head -c 400 $TMP/e)"
}
# profile: func_a, func_b burn CPU in a frameless leaf, 1:2 (leaf_ab.c)
ran profile profile -F 499 -f -U -c "$BIN/leaf_ab 2"
fa=$(fc $TMP/o ';func_a;leaf( |$)'); fb=$(fc $TMP/o ';func_b;leaf( |$)')
# (from 257 samples on, as tests/live/lib.sh's ratio_min 2: fewer tell a
# whole stack from a swapped or merged one by chance; 2 s of CPU take ~1000)
check "lockdown: profile leaf under func_a:func_b = 1:2 +- 15% ($fa:$fb, >= 257 samples), as without lockdown" \
	awk -v a=$fa -v b=$fb 'BEGIN { exit !(a > 0 && a + b >= 257 && b / a >= 1.7 && b / a <= 2.3) }'
# offcpu: nap_x sleeps 400 ms, nap_y 800 ms in libc's nanosleep (libc_naps.c)
ran offcpu offcpu -f -U -c "$BIN/libc_naps"
x=$(fc $TMP/o ';main;nap_x;nanosleep;'); y=$(fc $TMP/o ';main;nap_y;nanosleep;')
check "lockdown: offcpu main;nap_x $x us, nap_y $y us, within 5% of 400000, 800000, as without lockdown" \
	awk -v x=$x -v y=$y 'BEGIN { exit !(x >= 380000 && x <= 420000 && y >= 760000 && y <= 840000) }'

# refused_clearly WHAT FILE STATUS: a failure (1 or 2, DESIGN.md section 1),
# one line on stderr, and that line names the lockdown
refused_clearly() {
	check "lockdown: $1 refused (status $3)" [ "$3" = 1 -o "$3" = 2 ]
	expect_eq "lockdown: $1 refusal is one line" "$(lines $2)" 1
	expect_match "lockdown: $1 refusal names the lockdown" "$(cat $2)" 'lockdown'
}
$FTSTACK -e t:syscalls:sys_enter_getppid -f -c "$BIN/getppid_paths 100" >$TMP/o 2>$TMP/e
refused_clearly "tracepoint" $TMP/e $?
$FTSTACK -e do_sys_openat2 -f -c "cat /proc/version" >$TMP/o 2>$TMP/e
refused_clearly "kernel function (kprobe)" $TMP/e $?

# check: the lockdown line, and the rows that cannot work say it is why
$FTSTACK check >$TMP/o 2>$TMP/e
echo "check: status $?"; sed 's/^/# check: /' $TMP/o
expect_match "lockdown: check names the lockdown" "$(grep -i '^lockdown' $TMP/o)" 'confidentiality'
# (the matrix's rows, indented two spaces, come before the feature list)
for row in tracepoints 'kernel functions'; do
	l=$(grep -i "^  $row " $TMP/o | head -1)
	expect_match "lockdown: check's $row row says no because of lockdown" "$l" "^  $row +no .*lockdown"
done
l=$(grep -i '^  profile ' $TMP/o | head -1)
expect_match "lockdown: check's profile row says yes" "$l" '^  profile +yes'
l=$(grep -i '^  offcpu ' $TMP/o | head -1)
expect_match "lockdown: check's offcpu row says yes" "$l" '^  offcpu +yes'
