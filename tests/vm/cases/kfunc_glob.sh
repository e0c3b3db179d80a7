# A kernel-function pattern matching hundreds of functions (bcc's tcp_*):
# progress on stderr while attaching and detaching, a final line saying how
# many were attached, matches kprobes cannot trace or the kernel refuses
# skipped and named, stdout clean, the fd limit raised, kernel state as found.
have_ftstack || { ok "ftstack not built: kfunc glob cases skipped"; exit 0; }
KL=/sys/kernel/debug/kprobes/list
state() { cat $T/kprobe_events; ls $T/instances; cat $KL 2>/dev/null; }
before=$(state)

# loopback TCP for the workload: busybox httpd and wget
ip link set lo up
mkdir -p $TMP/www && echo hello > $TMP/www/index.html
httpd -f -p 127.0.0.1:8080 -h $TMP/www &
httpd=$!
# runs until ftstack is done; system-wide, not -c: a kprobe PMU event cannot
# be inherited by a fork (the kernel reads the function name from the
# forking process's memory: fork fails with EFAULT). Gentle: a busy loop of
# sendfile() under 368 probes being attached crashed this kernel once under
# TCG (NULL call in tcp_sendpage).
load() {
	while [ ! -e $TMP/done ]; do
		wget -q -O /dev/null http://127.0.0.1:8080/index.html; sleep 0.2
	done
}
n=$(awk '$1 ~ /^tcp_/ { print $1 }' $T/available_filter_functions | sort -u | wc -l)
info "tcp_* matches $n functions in available_filter_functions"
check "tcp_* matches hundreds of functions" [ "$n" -ge 200 ]

# a soft fd limit below what 2 fds per function need: ftstack raises it
load &
wl=$!
(ulimit -S -n 512; exec $FTSTACK -e 'tcp_*' -K -f 3) >$TMP/o 2>$TMP/e
expect_eq "tcp_*: exit status" $? 0
touch $TMP/done; wait $wl
grep 'ftstack: \(attach\|detach\|creat\)' $TMP/e | sed 's/^/# stderr: /'
check "tcp_*: progress starts with the number of probes" grep -qx "ftstack: attaching $n probes\.\.\." $TMP/e
p=$(grep -c "^ftstack: attaching [0-9]*/$n probes\.\.\.$" $TMP/e)
check "tcp_*: a few attaching N/$n lines ($p), not hundreds" [ "$p" -ge 1 -a "$p" -le 9 ]
check "tcp_*: final line: all attached" grep -qx "ftstack: attached $n of $n kernel functions" $TMP/e
check "tcp_*: detaching progress" grep -qx "ftstack: detaching $n probes\.\.\." $TMP/e
check "tcp_*: stdout is folded stacks only" awk '!/^[^ ].* [0-9]+$/ || /ftstack/ { exit 1 }' $TMP/o
check "tcp_*: stacks end in tcp_ functions" awk '{ sub(/ [0-9]+$/, ""); if ($0 !~ /;tcp_[A-Za-z0-9_.]+$/) exit 1 } END { exit NR == 0 }' $TMP/o
check "tcp_*: wget's connects seen" grep -q '^wget;.*;tcp_v4_connect [0-9]*$' $TMP/o
info "tcp_*: $(grep 'events counted' $TMP/e); $(wc -l < $TMP/o) stacks, e.g. $(head -c 300 $TMP/o)"
# what doc/KFUNC.md advises for -c commands that fork: kprobe_events
# probes are tracepoints, which children inherit
$FTSTACK -e tcp_v4_connect --mechanism kprobe-events -K -f \
	-c "sh -c 'wget -q -O /dev/null http://127.0.0.1:8080/index.html'" >$TMP/o 2>$TMP/e
expect_eq "kprobe-events, -c that forks: exit status" $? 0
check "kprobe-events, -c that forks: the child's connect seen" grep -q '^wget;.*;tcp_v4_connect 1$' $TMP/o
check "kprobe-events, -c that forks: fork worked" sh -c "! grep -q \"can't fork\" $TMP/e"
kill $httpd 2>/dev/null; wait $httpd 2>/dev/null

# blacklisted matches are skipped before the kernel is asked, and named
$FTSTACK -e '*notifier_call_chain' -K -f 1 >$TMP/o 2>$TMP/e
expect_eq "*notifier_call_chain: exit status" $? 0
grep -v '^Tracing' $TMP/e | sed 's/^/# stderr: /'
check "*notifier_call_chain: the blacklisted ones named as untraceable" \
	grep -q "skipping .* kprobes cannot trace (kprobe blacklist.*notifier_call_chain" $TMP/e
check "*notifier_call_chain: how many were attached" grep -q '^ftstack: attached [1-9][0-9]* of [1-9][0-9]* kernel functions' $TMP/e

# a name several functions share: refused by the kernel when it checks
# (6.6+ and backports), then skipped and said, the others traced
$FTSTACK -r -e 'c_next|vfs_read' -K -f 1 >$TMP/o 2>$TMP/e
st=$?
grep -v '^Tracing' $TMP/e | sed 's/^/# stderr: /'
expect_eq "c_next|vfs_read: exit status" $st 0
if grep -q 'refused' $TMP/e; then
	check "c_next|vfs_read: refusal and reason said" \
		grep -qx 'ftstack: attached 1 of 2 kernel functions; the kernel refused 1 .*(c_next)' $TMP/e
else
	check "c_next|vfs_read: both attached" grep -qx 'ftstack: attached 2 of 2 kernel functions' $TMP/e
fi
expect_eq "kfunc glob: kernel state as found" "$(state)" "$before"
