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
# The local tables (minute rows, stacks, hours and the view) are made by
# ftstack itself (a run with no events inserts nothing but creates them),
# the three Distributed ones over them by hand (doc/FLEET.md, "Shards").
for s in $HA $HB; do
	"$FTSTACK" --sink clickhouse://127.0.0.1:$s/default -e $EV -c /bin/true -o /dev/null 2>$TMP/e
	expect_eq "table created on :$s" "$?:$(grep -c 'sink: 0 rows sent' $TMP/e)" "0:1"
done
# dist SHARD NAME LOCAL: NAME, NAME_stacks and NAME_hourly over LOCAL's
dist() {
	ch_query $1 "CREATE TABLE default.$2 AS default.$3 ENGINE = Distributed(ftstack_test, default, $3, rand())" >/dev/null
	ch_query $1 "CREATE TABLE default.$2_stacks AS default.$3_stacks ENGINE = Distributed(ftstack_test, default, $3_stacks, stack)" >/dev/null
	ch_query $1 "CREATE TABLE default.$2_hourly AS default.$3_hourly ENGINE = Distributed(ftstack_test, default, $3_hourly, rand())" >/dev/null
}
undist() { for t in $2 $2_stacks $2_hourly; do ch_query $1 "DROP TABLE default.$t" >/dev/null; done; }
ch_query a "CREATE TABLE default.fleet AS default.ftstack_stacks ENGINE = Distributed(ftstack_test, default, ftstack_stacks, rand())" >/dev/null
"$FTSTACK" --sink $A.fleet -e $EV -c /bin/true -o /dev/null 2>$TMP/e
expect_eq "a Distributed table without its _stacks and _hourly: exit 2, says so" \
	"$?:$(grep -c 'and so must default.fleet_stacks be' $TMP/e)" "2:1"
ch_query a "DROP TABLE default.fleet" >/dev/null
for n in a b; do dist $n fleet ftstack_stacks; done
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
for n in a b; do ch_query $n "OPTIMIZE TABLE default.ftstack_stacks_stacks FINAL" >/dev/null; done
expect_eq "each stack's frames stored once: 2 stacks, sent once by each run, 2 after merges" \
	"$(ch_query a "SELECT count(), uniqExact(stack) FROM default.fleet_stacks")" "$(printf '2\t2')"
hourly=$(ch_query a "SELECT count(), sum(weight) FROM default.fleet_hourly")
expect_eq "the view filled the hours: 4 rows (2 hosts x 2 stacks, one hour or two), weight 3000" \
	"$(echo "$hourly" | cut -f2):$(echo "$hourly" | cut -f1 | awk '{ print ($1 == 4) }')" "3000:1"

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
H0=$((T1 / 3600 * 3600))
"$FTSTACK" report -f --since $((H0 - 3600)) --until $((H0 + 3600)) $A.fleet >$TMP/hr 2>/dev/null
expect_eq "whole hours (read from the hours) = the sum of the two runs" "$(sort $TMP/hr)" "$(sum_folded $TMP/r1 $TMP/r2)"
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
undist a fleet; undist b fleet

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

# ---- exactly once through network faults (tests/fleet/proxy.py) ----
# A proxy in front of shard a breaks the second insert of a run, once; the
# run inserts into a Distributed table over both shards. -i 1 over about 4 s
# of getppid calls (600 in all): 4 or 5 batches of 2 rows. Cases 1-5 may lose the
# answer after the server wrote, or the write itself: the fleet's total must
# equal the run's local total exactly (no loss, no duplicate).
for s in $HA $HB; do
	"$FTSTACK" --sink clickhouse://127.0.0.1:$s/default.fx -e $EV -c /bin/true -o /dev/null 2>/dev/null
done
for n in a b; do dist $n fxd fx; done
PX=$((base + 4))
# fault CASE MODE SECONDS [FTSTACK ARGS...]: a run through the proxy in
# MODE, of ROUNDS (default 6) rounds of 100 calls 0.6 s apart
fault() {
	local case=$1 mode=$2 secs=$3 short; shift 3
	short="for i in $(seq -s ' ' ${ROUNDS:-6}); do $W 100; sleep 0.6; done"
	rm -rf $TMP/px; mkdir -p $TMP/px
	python3 tests/fleet/proxy.py $PX $HA $mode 2 $TMP/px $secs 2>$TMP/px.err & ppid=$!
	for i in $(seq 100); do [ -e $TMP/px/ready ] && break; sleep 0.05; done
	"$FTSTACK" --sink clickhouse://127.0.0.1:$PX/default.fxd --host-name $case -i 1 -f -e $EV \
		"$@" -c "$short" >$TMP/$case 2>$TMP/$case.e & fpid=$!
	if [ $mode = kill ]; then # kill -9 shard a while it holds half an insert
		for i in $(seq 200); do [ -e $TMP/px/paused ] && break; sleep 0.05; done
		kill -KILL "${CH_PID[a]}"; wait "${CH_PID[a]}" 2>/dev/null; CH_PID[a]=
		sleep 1; ch_up a
	fi
	wait $fpid; local rc=$?
	kill $ppid 2>/dev/null; wait $ppid 2>/dev/null
	expect_eq "$case: ftstack exits 0, and the fault happened" "$rc:$(cat $TMP/px/fired 2>/dev/null)" "0:1"
	echo "# $case: $(grep 'sink:' $TMP/$case.e)"
}
# exact CASE: the fleet's total for CASE's host = the run's local total
exact() {
	local case=$1 here there
	here=$(total $TMP/$case)
	there=$("$FTSTACK" report -f --host $case $A.fxd 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')
	expect_eq "$case: fleet total = local total ($here calls), nothing pending or dropped" \
		"$there:$here:$(grep -c ' 0 pending at exit, 0 dropped' $TMP/$case.e)" "$here:$here:1"
}
fault cut-after-answer cut_after_answer 0
exact cut-after-answer
check "cut-after-answer: the unanswered insert was looked up, its rows found written" \
	grep -Eq '1 inserts without an answer looked up in the table, [1-9][0-9]* of their rows were there' $TMP/cut-after-answer.e
fault cut-mid-body cut_mid_body 0
exact cut-mid-body
check "cut-mid-body: the broken insert was looked up" grep -q 'inserts without an answer looked up' $TMP/cut-mid-body.e
# the answer held 25 s, past ftstack's timeout (curl's speed under 1 byte/s
# for 10 s: about 15 s after the last byte sent): a run of 15 s, so that its
# 10 s of flush at exit still see the batches after the timeout
ROUNDS=22 fault hold-answer hold 25
exact hold-answer
check "hold-answer: timed out, looked up, its rows found written" \
	grep -Eq 'last error: .*too slow.*looked up in the table, [1-9][0-9]* of their rows were there' $TMP/hold-answer.e
fault fake-500 fake_500 0
exact fake-500
check "fake-500: the 500 was looked up, its rows found written" \
	grep -Eq 'looked up in the table, [1-9][0-9]* of their rows were there' $TMP/fake-500.e
fault kill-server kill 0
exact kill-server
check "kill-server: the insert was looked up after the restart" grep -q 'inserts without an answer looked up' $TMP/kill-server.e
# 6: refused for 5 s, longer than a buffer of one batch lasts: the oldest
# batches go, and the summary's dropped weight is exactly what is missing
fault refused refuse 5 --sink-buffer 0.0006
here=$(total $TMP/refused)
there=$("$FTSTACK" report -f --host refused $A.fxd 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')
dropped=$(sed -n 's/.*rows (weight \([0-9]*\)) dropped: --sink-buffer.*/\1/p' $TMP/refused.e)
check "refused: some rows were dropped, and said so" test "${dropped:-0}" -gt 0
expect_eq "refused: dropped = exactly what is missing, nothing pending" \
	"$((here - there)):$(grep -c ' 0 pending at exit' $TMP/refused.e)" "${dropped:-0}:1"
undist a fxd; undist b fxd

# ---- a table of an older ftstack (frames as arrays in each row) ----
ch_query a "CREATE TABLE default.old (ts DateTime, duration_ms UInt32, host String, mode String, \
event String, comm String, pid UInt32, kernel Array(String), \`user\` Array(String), weight UInt64) \
ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY (host, event, ts)" >/dev/null
ch_query a "INSERT INTO default.old VALUES (1764100000, 1000, 'h1', 'count', 'E', 'c', 0, ['k1', 'k0'], \
['main', 'f'], 5), (1764100000, 1000, 'h1', 'count', 'E', 'c', 0, [], ['main', 'g'], 7), \
(1764103600, 1000, 'h2', 'count', 'E', 'c', 0, ['k1', 'k0'], ['main', 'f'], 11)" >/dev/null
"$FTSTACK" --sink $A.old -e $EV -c /bin/true -o /dev/null 2>$TMP/oe
expect_eq "an older ftstack's table: the sink refuses it (exit 2) and says how to migrate" \
	"$?:$(grep -c 'older ftstack.s table .*migrate it as doc/FLEET.md' $TMP/oe)" "2:1"
# the migration doc/FLEET.md gives ("Older tables"), statement for statement
ch_query a "RENAME TABLE default.old TO default.old_arrays" >/dev/null
"$FTSTACK" --sink $A.old -e $EV -c /bin/true -o /dev/null 2>/dev/null
ch_query a "INSERT INTO default.old_stacks SELECT DISTINCT cityHash64(kernel, \`user\`), kernel, \`user\` FROM default.old_arrays" >/dev/null
ch_query a "INSERT INTO default.old (ts, duration_ms, host, mode, event, comm, pid, stack, weight) \
SELECT ts, duration_ms, host, mode, event, comm, pid, cityHash64(kernel, \`user\`), weight FROM default.old_arrays" >/dev/null
"$FTSTACK" report -f $A.old >$TMP/old 2>/dev/null
expect_eq "migrated: the old rows read back from the hours" "$(sort $TMP/old)" "$(printf 'c;main;f;k1;k0 16\nc;main;g 7')"
"$FTSTACK" report -f --until 1764100001 $A.old >$TMP/old 2>/dev/null
expect_eq "migrated: and from the minute rows" "$(sort $TMP/old)" "$(printf 'c;main;f;k1;k0 5\nc;main;g 7')"
# a stack migrated under cityHash64 and sent by ftstack under its own hash: one stack
ch_query a "INSERT INTO default.old_stacks VALUES (42, ['k1', 'k0'], ['main', 'f'])" >/dev/null
ch_query a "INSERT INTO default.old (ts, host, mode, event, comm, stack, weight) VALUES (1764100000, 'h3', 'count', 'E', 'c', 42, 100)" >/dev/null
"$FTSTACK" report -f $A.old >$TMP/old 2>/dev/null
expect_eq "the same frames under two hashes are one stack" "$(sort $TMP/old)" "$(printf 'c;main;f;k1;k0 116\nc;main;g 7')"

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

# ---- the cgroup column (issue 25), and a table of an older ftstack ----
# made by hand as ftstack made it before the column (the minute rows of
# stacks by hash, without cgroup): the first run adds it (looked up in
# system.columns: 18.16 has no ADD COLUMN IF NOT EXISTS) and makes the
# companions, a second finds it; the command runs in this shell's cgroup2.
# Exact: 2,000 copied samples x 2.5 KB (lib.sh's bound) fit 8 MB rings
ch_query a "CREATE TABLE default.precg (ts DateTime, duration_ms UInt32, host String, mode String, event String, comm String, pid UInt32, stack UInt64, weight UInt64, run UInt64, seq UInt32, row UInt32) ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY (host, event, ts)" >/dev/null
run_ft $TMP/c1 $TMP/ce1 --sink $A.precg --per-cgroup -f -e $EV --buffer-size 8192 -c "$W 1000"
expect_eq "older table: the run exits 0" $? 0
run_ft $TMP/c2 $TMP/ce2 --sink $A.precg --per-cgroup -f -e $EV --buffer-size 8192 -c "$W 2000"
expect_eq "older table, column there: the run exits 0" $? 0
expect_eq "older table: the cgroup column added" \
	"$(ch_query a "SELECT type FROM system.columns WHERE database = 'default' AND table = 'precg' AND name = 'cgroup'")" String
cg=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
expect_eq "cgroup column: the command's cgroup2 ($cg), every call of both runs" \
	"$(ch_query a "SELECT cgroup, sum(weight) FROM default.precg WHERE comm = 'getppid_paths' GROUP BY cgroup")" \
	"$cg	3000"
finish
