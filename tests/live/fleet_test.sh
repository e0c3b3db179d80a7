# Fleet: --sink into real ClickHouse servers (Debian's clickhouse-server run
# as plain processes on loopback ports, two shards behind a Distributed
# table) and `ftstack report clickhouse://...` back, exact on the getppid
# workload: what comes back equals the sum of the runs' local outputs.
. tests/live/lib.sh
. tests/fleet/clickhouse.sh
trap 'ch_stop_all; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM
W="$BIN/getppid_paths"
EV=t:syscalls:sys_enter_getppid

if ! ch_available; then
	ok "fleet # SKIP clickhouse-server is not installed (tests/deps.sh installs it)"
	finish
fi

# two shards; the ports are loopback only, moved by this shell's pid so a
# leftover server of another run cannot answer
base=$((20000 + ($$ % 500) * 20))
HA=$base HB=$((base + 1)) TA=$((base + 2)) TB=$((base + 3))
check "shard a starts" ch_start a $HA $TA $TA $TB
check "shard b starts" ch_start b $HB $TB $TA $TB
A=clickhouse://127.0.0.1:$HA/default

# sum_folded FILE...: folded lines summed per stack, sorted (the fleet view)
sum_folded() { cat "$@" | awk '{ n = $NF; $NF = ""; s[$0] += n } END { for (k in s) print k s[k] }' | sort; }
# total FILE...: the summed counts
total() { cat "$@" | awk '{ n += $NF } END { print n + 0 }'; }

# ---- two hosts through the Distributed table ----
# The local tables are made by ftstack itself (a run with no events inserts
# nothing but creates the table), the Distributed one over them by hand.
for s in $HA $HB; do
	"$FTSTACK" --sink clickhouse://127.0.0.1:$s/default -e $EV -c /bin/true -o /dev/null 2>$TMP/e
	expect_eq "table created on :$s" "$?:$(grep -c 'sink: 0 rows sent' $TMP/e)" "0:1"
done
for n in a b; do
	ch_query $n "CREATE TABLE default.fleet AS default.ftstack_stacks ENGINE = Distributed(ftstack_test, default, ftstack_stacks, rand())" >/dev/null
done
# exact totals: 2,000 copied samples x 2.5 KB (lib.sh's bound) fit 8 MB
# rings with the reader stopped
run_ft $TMP/r1 $TMP/e1 --sink $A.fleet --host-name web-1 -f -e $EV --buffer-size 8192 -c "$W 1000"
expect_eq "run 1 exits 0" $? 0
check "run 1's summary: 2 rows sent, none pending or dropped" \
	grep -q 'sink: 2 rows sent in 1 inserts, 0 pending at exit, 0 dropped$' $TMP/e1
sleep 1.2; T1=$(date +%s); sleep 0.2
run_ft $TMP/r2 $TMP/e2 --sink $A.fleet --host-name db-1 -f -e $EV --buffer-size 8192 -c "$W 2000"
expect_eq "run 2 exits 0" $? 0
expect_eq "run totals" "$(total $TMP/r1):$(total $TMP/r2)" "1000:2000"
rows=$(( $(ch_query a "SELECT count() FROM default.ftstack_stacks") + $(ch_query b "SELECT count() FROM default.ftstack_stacks") ))
expect_eq "4 rows over the two shards" $rows 4

"$FTSTACK" report -f $A.fleet >$TMP/fleet 2>$TMP/e; expect_eq "report exits 0" $? 0
expect_eq "the fleet = the sum of the two runs" "$(sort $TMP/fleet)" "$(sum_folded $TMP/r1 $TMP/r2)"
"$FTSTACK" report -f --host web-1 $A.fleet >$TMP/h1 2>/dev/null
expect_eq "--host web-1 = run 1" "$(sort $TMP/h1)" "$(sort $TMP/r1)"
"$FTSTACK" report -f --host 'db-*' $A.fleet >$TMP/h2 2>/dev/null
expect_eq "--host 'db-*' = run 2" "$(sort $TMP/h2)" "$(sort $TMP/r2)"
"$FTSTACK" report -f --until $T1 $A.fleet >$TMP/t1 2>/dev/null
expect_eq "--until = run 1" "$(sort $TMP/t1)" "$(sort $TMP/r1)"
"$FTSTACK" report -f --since $T1 --mode count --event 't:syscalls:*' $A.fleet >$TMP/t2 2>/dev/null
expect_eq "--since, --mode, --event = run 2" "$(sort $TMP/t2)" "$(sort $TMP/r2)"
"$FTSTACK" report -f --since $((T1 + 3600)) $A.fleet >$TMP/t3 2>/dev/null
expect_eq "--since in an hour: nothing" "$(wc -c <$TMP/t3)" 0
"$FTSTACK" report -f --mode profile $A.fleet >$TMP/t4 2>/dev/null
expect_eq "--mode profile: nothing" "$(wc -c <$TMP/t4)" 0
"$FTSTACK" report -f -t 1 $A.fleet >$TMP/top 2>/dev/null
expect_eq "-t 1: caller_b's path, 750 + 1500" "$(folded_count $TMP/top 'main;caller_b;do_getppid'):$(wc -l <$TMP/top)" "2250:1"
"$FTSTACK" report -f -x 'caller_b' $A.fleet >$TMP/x 2>/dev/null
expect_eq "-x caller_b: caller_a's 250 + 500" "$(total $TMP/x)" 750
"$FTSTACK" report -f -K $A.fleet >$TMP/k 2>/dev/null
expect_eq "-K: one kernel stack of 3000" "$(wc -l <$TMP/k):$(total $TMP/k)" "1:3000"
"$FTSTACK" report --diff "$A.fleet?host=web-1" "$A.fleet?host=db-1" >$TMP/d 2>/dev/null
expect_eq "--diff between two hosts" "$(awk '/caller_a/ { print $(NF-1), $NF }' $TMP/d)" "250 500"
"$FTSTACK" report --diff "$A.fleet?until=$T1" "$A.fleet?since=$T1" >$TMP/d2 2>/dev/null
expect_eq "--diff between two time ranges" "$(awk '/caller_b/ { print $(NF-1), $NF }' $TMP/d2)" "750 1500"
for fmt in text top pprof speedscope svg; do
	"$FTSTACK" report --format $fmt -o $TMP/fmt $A.fleet 2>/dev/null
	check "--format $fmt writes a result" test -s $TMP/fmt
done
"$FTSTACK" report $A.fleet >$TMP/text 2>/dev/null
check "text format: caller_b's 2250" grep -qx '        2250' $TMP/text

# ---- names that need escaping round-trip ----
weird=$(printf "q'b\\\\t\tn\nz\xff%%_")
ln -s "$W" "$TMP/$weird"
whost=$(printf "h'o\\\\s\tt\n%%_\xfe")
run_ft $TMP/w $TMP/we --sink $A.fleet --host-name "$whost" -f -e $EV -- "$TMP/$weird" 400
expect_eq "a run of a command with quotes, backslash, tab, newline, invalid UTF-8 in its name" "$?:$(total $TMP/w)" "0:400"
expect_eq "its comm is stored as the bytes it is" \
	"$(ch_query a "SELECT DISTINCT hex(comm) FROM default.fleet WHERE pid = 0 AND comm NOT IN ('getppid_paths')")" \
	"$(printf '%s' "$weird" | head -c 15 | od -An -tx1 | tr -d ' \n' | tr a-f A-F)"
"$FTSTACK" report -f --host "$whost" $A.fleet >$TMP/wr 2>/dev/null
expect_eq "--host with quotes, backslash, tab, newline, %, _ and a byte 0xfe: that host's rows, as printed locally" \
	"$(sort $TMP/wr)" "$(sort $TMP/w)"
"$FTSTACK" report -f --host "$(printf "h'o\\\\s\tt\n%%_*")" $A.fleet >$TMP/wr3 2>/dev/null
expect_eq "a glob --host with quotes, backslash, tab, newline, %, _" "$(sort $TMP/wr3)" "$(sort $TMP/w)"
"$FTSTACK" report -f --host "h'o%" $A.fleet >$TMP/wr2 2>/dev/null
expect_eq "a literal % in --host matches only a %" "$(wc -c <$TMP/wr2)" 0
ch_query a "DROP TABLE default.fleet" >/dev/null; ch_query b "DROP TABLE default.fleet" >/dev/null

# ---- a server away for a few seconds mid-run ----
# -i 1 over a command making getppid calls for about 11 s; server a stops
# after 2 s and comes back 4 s later: every interval must arrive.
loop="for i in $(seq -s " " 20); do $W 100; sleep 0.5; done"
outage() { # outage NAME EXTRA_ARGS...
	local name=$1; shift
	"$FTSTACK" --sink $A.$name -i 1 -f -e $EV "$@" -c "$loop" >$TMP/$name 2>$TMP/$name.e & fpid=$!
	sleep 2.5; ch_stop a; sleep 4; ch_up a
	wait $fpid; expect_eq "$name: ftstack exits 0" $? 0
}
outage outage
local_total=$(total $TMP/outage)
check "outage: the run counted calls" test "$local_total" -ge 1600
expect_eq "outage: the fleet total is exact" "$("$FTSTACK" report -f $A.outage 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')" "$local_total"
check "outage: none dropped or pending" grep -q 'pending at exit, 0 dropped (' $TMP/outage.e
check "outage: retried, and says why" grep -q 'retries; last error: cannot reach 127.0.0.1' $TMP/outage.e

# a buffer that holds one interval's batch, not four: the oldest go
outage small --sink-buffer 0.001
local_total=$(total $TMP/small)
got=$("$FTSTACK" report -f $A.small 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')
dropped=$(sed -n 's/.*rows (weight \([0-9]*\)) dropped: --sink-buffer.*/\1/p' $TMP/small.e)
check "small buffer: some rows were dropped, and said so" test "${dropped:-0}" -gt 0
expect_eq "small buffer: dropped = exactly what is missing" "$((local_total - got))" "${dropped:-0}"
check "small buffer: nothing pending" grep -q ' 0 pending at exit' $TMP/small.e

# ---- bad sinks: exit 2, one line; the password is never shown ----
bad_sink() { # bad_sink WHAT WORDS URL
	local what=$1 words=$2 url=$3
	FTSTACK_CLICKHOUSE_PASSWORD=envs3cret "$FTSTACK" --debug --sink "$url" -e $EV -c /bin/true >$TMP/bo 2>$TMP/be
	expect_eq "$what: exit 2" $? 2
	expect_eq "$what: one line" "$(grep -vc '^ftstack: debug\|^\[debug\]' $TMP/be)" 1
	check "$what: says $words" grep -q "$words" $TMP/be
	check "$what: no password printed" bash -c "! grep -q 'pw0rd\|envs3cret' $TMP/be $TMP/bo"
}
bad_sink "bad URL" "the port must be" "clickhouse://127.0.0.1:x/default"
bad_sink "unknown scheme" "unknown scheme 'mysql://'" "mysql://u:pw0rd@127.0.0.1/default"
bad_sink "unreachable" "cannot reach 127.0.0.1:1" "clickhouse://u:pw0rd@127.0.0.1:1/default"
bad_sink "wrong password" "Wrong password for user tester" "clickhouse://tester:pw0rd@127.0.0.1:$HA/default"
bad_sink "wrong password from the environment" "Wrong password for user tester" "clickhouse://tester@127.0.0.1:$HA/default"
FTSTACK_CLICKHOUSE_PASSWORD="s3cr\$t'pw" "$FTSTACK" --debug --sink clickhouse://tester@127.0.0.1:$HA/default -e $EV -c /bin/true -o /dev/null 2>$TMP/pe
expect_eq "the right password from the environment" "$?:$(grep -c "s3cr" $TMP/pe)" "0:0"
"$FTSTACK" report clickhouse://127.0.0.1:1/default.x >/dev/null 2>$TMP/re
expect_eq "report from an unreachable server: exit 2, one line" "$?:$(wc -l <$TMP/re)" "2:1"
"$FTSTACK" report clickhouse://127.0.0.1:$HA/default.nosuch >/dev/null 2>$TMP/re
expect_eq "report from a missing table: exit 2, one line" "$?:$(wc -l <$TMP/re)" "2:1"
finish
