# Names for stripped binaries (issue 31), against Debian's own debuginfod
# server on a loopback port over a directory filled here: a workload built
# -g then split (objcopy --only-keep-debug, strip), and Debian's
# python3.11-dbg and libc6-dbg debug files of the installed binaries. Local
# debug files are hidden (--debug-dir of an empty directory), so names come
# from the server or not at all. Then the fleet: a host without access sinks
# deferred frames into ClickHouse, and a report with access names them.
. tests/live/lib.sh
. tests/fleet/clickhouse.sh
SPID=
trap '[ -z "$SPID" ] || { kill -CONT $SPID; kill $SPID; wait $SPID; } 2>/dev/null; ch_stop_all; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM

if ! command -v debuginfod >/dev/null; then
	ok "debuginfod # SKIP Debian's debuginfod server is not installed (tests/deps.sh installs it)"
	finish
fi
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_TIMEOUT
SRV=$TMP/srv NODBG="--debug-dir $TMP/nodebug"
mkdir -p $SRV $TMP/nodebug
export DEBUGINFOD_CACHE_PATH=$TMP/cache

# the workload, whole (work.full) and stripped (cpu_ab) with its debug file served
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o $TMP/work.full tests/lib/cpu_ab.c
cp $TMP/work.full $TMP/cpu_ab
objcopy --only-keep-debug $TMP/cpu_ab $SRV/cpu_ab.debug
strip $TMP/cpu_ab
build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3; exit }'; }
ID=$(build_id $TMP/cpu_ab)
# Debian's debug files of the installed binaries, matched by build-id
served=""
for f in /usr/bin/python3.11 /lib/x86_64-linux-gnu/libc.so.6; do
	id=$(build_id $f) d=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && [ -f "$d" ] && cp "$d" "$SRV/$(basename $f).debug" && served="$served $(basename $f)"
done

port=$((18100 + $$ % 800))
debuginfod -F $SRV -p $port -d $TMP/db.sqlite -vv >$TMP/server.log 2>&1 & SPID=$!
export DEBUGINFOD_URLS=http://127.0.0.1:$port
up() { curl -sf "$DEBUGINFOD_URLS/buildid/$ID/debuginfo" -o /dev/null; }
if ! wait_for 60 up; then
	not_ok "debuginfod server on :$port serves the workload's debug file"; tail -5 $TMP/server.log; finish
fi
requests() { grep -c ' GET /buildid/' $TMP/server.log; }
# asked FROM: the build-ids asked for after log line FROM, one a line
asked() { tail -n +$(($1 + 1)) $TMP/server.log | grep -o ' GET /buildid/[0-9a-f]*' | sort -u | cut -d/ -f3; }

# ---- a stripped workload: the unstripped binary's names ----
paths() { grep -o 'main;func_[ab];spin' "$1" | sort -u | tr '\n' ' '; }
run_ft $TMP/full $TMP/e0 profile -F 499 -f $NODBG --no-debuginfod -c "$TMP/work.full 1"
run_ft $TMP/none $TMP/e1 profile -F 499 -f $NODBG --no-debuginfod -c "$TMP/cpu_ab 1"
check "stripped, no debuginfod: frames are [cpu_ab]" grep -q '\[cpu_ab\]' $TMP/none
before=$(requests) line1=$(wc -l <$TMP/server.log)
run_ft $TMP/s1 $TMP/e2 profile -F 499 -f $NODBG -c "$TMP/cpu_ab 1"
expect_eq "stripped with DEBUGINFOD_URLS: exit 0, no [cpu_ab] frame" \
	"$?:$(grep -c '\[cpu_ab' $TMP/s1)" "0:0"
expect_eq "stripped with DEBUGINFOD_URLS: the unstripped binary's names" \
	"$(paths $TMP/s1)" "$(paths $TMP/full)"
expect_eq "... which are main;func_a;spin and main;func_b;spin" "$(paths $TMP/full)" \
	"main;func_a;spin main;func_b;spin "
check "the debug file is in DEBUGINFOD_CACHE_PATH" test -s $TMP/cache/$ID/debuginfo
check "the first run asked the server" test "$(requests)" -gt "$before"

# ---- the second run: from the cache, no request ----
# (for a file the first run fetched: a file only the second run's samples
# fall in, ld.so's at start or the sanitized ftstack's own before its exec,
# is asked for once, as it should be)
first=$(asked $line1) line2=$(wc -l <$TMP/server.log)
run_ft $TMP/s2 $TMP/e3 profile -F 499 -f $NODBG -c "$TMP/cpu_ab 0.5"
again=$(asked $line2 | grep -cxF -f <(echo "$first"))
expect_eq "second run: named from the cache, the server's log shows no request for what the first fetched" \
	"$(grep -c '\[cpu_ab' $TMP/s2):$(paths $TMP/s2):$again" \
	"0:main;func_a;spin main;func_b;spin :0"
check "... among them the workload's ($ID)" grep -qx "$ID" <(echo "$first")

# ---- under sudo: the fetch and the cache are the invoking user's ----
U=$(mktemp -d /tmp/ftstack-dbgi-user.XXXXXX)
chmod 755 $U; cp $TMP/cpu_ab $U/; mkdir $U/cache; chown 65534:65534 $U/cache
SUDO_UID=65534 SUDO_GID=65534 DEBUGINFOD_CACHE_PATH=$U/cache \
	run_ft $TMP/u1 $TMP/ue1 profile -F 499 -f $NODBG -c "$U/cpu_ab 0.5"
expect_eq "under sudo: named, the cache's files are the user's (uid 65534), none root's" \
	"$(grep -c '\[cpu_ab' $TMP/u1):$(paths $TMP/u1):$(find $U/cache -mindepth 1 ! -uid 65534 | wc -l):$(find $U/cache -uid 65534 -name debuginfo | wc -l | awk '{ print ($1 > 0) }')" \
	"0:main;func_a;spin main;func_b;spin :0:1"
rm -rf $U

# ---- python3.11 and libc, named by Debian's debug files ----
if [[ " $served " != *" python3.11 "* ]]; then
	ok "python3.11 frames named # SKIP no python3.11-dbg debug file matches /usr/bin/python3.11's build-id"
else
	PY='def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
import time
t = time.process_time()
while time.process_time() - t < 1.5: f(18)'
	# Debian's, not one PATH finds first (pyenv's)
	run_ft $TMP/p0 $TMP/pe0 profile -F 499 -f $NODBG --no-debuginfod -c "/usr/bin/python3.11 -c '$PY'"
	DEBUGINFOD_PROGRESS=1 run_ft $TMP/p1 $TMP/pe1 profile -F 499 -f $NODBG -c "/usr/bin/python3.11 -c '$PY'"
	# frames of a file without a name, summed over samples
	unnamed() { awk -v f="[$2]" '{ for (i = 1; i < NF; i++) { n = split($i, a, ";")
		for (j = 1; j <= n; j++) if (a[j] == f) u += $NF } } END { print u + 0 }' "$1"; }
	u0=$(unnamed $TMP/p0 python3.11) u1=$(unnamed $TMP/p1 python3.11)
	check "python3.11 without debuginfod: [python3.11] frames ($u0)" test "$u0" -gt 100
	check "python3.11 with debuginfod: under 1% of them left ($u1 of $u0)" test $((u1 * 100)) -lt "$u0"
	check "DEBUGINFOD_PROGRESS: a progress line for python3.11's 11 MB" \
		grep -q "debuginfod: python3.11's debug file: [0-9.]* of [0-9.]* MB" $TMP/pe1
	expect_eq "python3.11 with debuginfod: _PyEval_EvalFrameDefault named" \
		"$(grep -c '_PyEval_EvalFrameDefault' $TMP/p1 | awk '{ print ($1 > 0) }')" 1
fi
if [[ " $served " != *" libc.so.6 "* ]]; then
	ok "libc frames named # SKIP no libc6-dbg debug file matches libc.so.6's build-id"
else
	check "libc's frames named from the server: no [libc.so.6] in the stripped runs" \
		test "$(cat $TMP/s1 $TMP/s2 | grep -c '\[libc\.so\.6\]')" -eq 0
	# what they were, when there are any (one ASan CI run had some; three
	# runs here did not)
	grep -h '\[libc\.so\.6\]' $TMP/s1 $TMP/s2 | head -3 | cut -c1-300 | sed 's/^/# unnamed: /'
fi

# ---- a server that does not answer: its timeout once, frames stay [file] ----
kill -STOP $SPID
export DEBUGINFOD_TIMEOUT=2
t0=$(date +%s%N)
DEBUGINFOD_CACHE_PATH=$TMP/cache2 run_ft $TMP/d1 $TMP/de1 profile -F 99 -f $NODBG -c "$TMP/cpu_ab 0.3"
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
t0=$(date +%s%N)
run_ft $TMP/d0 $TMP/de0 profile -F 99 -f $NODBG --no-debuginfod -c "$TMP/cpu_ab 0.3"
base=$((($(date +%s%N) - t0) / 1000000))
kill -CONT $SPID
expect_eq "a stopped server: exit 0, frames stay [cpu_ab], one line says so" \
	"$rc:$(grep -c '\[cpu_ab\]' $TMP/d1 | awk '{ print ($1 > 0) }'):$(grep -c 'debuginfod:' $TMP/de1)" "0:1:1"
check "a stopped server costs one DEBUGINFOD_TIMEOUT (2 s), not one a file: ${ms} ms against ${base} ms" \
	test $((ms - base)) -lt 3500
unset DEBUGINFOD_TIMEOUT
check "--no-debuginfod: no line about it" test "$(grep -c 'debuginfod' $TMP/de0)" -eq 0

# ---- perf script text with build-ids, named by report ----
if command -v perf >/dev/null; then
	perf record -q --buildid-mmap -g -F 499 -o $TMP/perf.data $TMP/cpu_ab 0.5 >/dev/null 2>&1
	perf script -i $TMP/perf.data --show-mmap-events -F comm,pid,ip,sym,dso >$TMP/perf.txt 2>/dev/null
	run_ft $TMP/pr $TMP/pre report -f $NODBG $TMP/perf.txt
	expect_eq "report names perf script's [unknown] frames by their MMAP2 build-id" \
		"$(grep -c '\[cpu_ab' $TMP/pr):$(paths $TMP/pr)" "0:main;func_a;spin main;func_b;spin "
else
	ok "perf script names # SKIP perf is not installed (tests/deps.sh installs linux-perf)"
fi

# ---- the fleet: deferred frames sunk by a host without access ----
if ! ch_available; then
	ok "fleet deferred frames # SKIP clickhouse-server is not installed (tests/deps.sh installs it)"
	finish
fi
base=$((20000 + ($$ % 500) * 20 + 7))
check "clickhouse starts" ch_start a $base $((base + 1)) $((base + 1))
CH=clickhouse://127.0.0.1:$base/default
mkdir -p $TMP/other && cp $TMP/cpu_ab $TMP/other/cpu_ab_renamed
DEBUGINFOD_URLS= run_ft $TMP/h1 $TMP/he1 profile -F 499 -f $NODBG --sink $CH --host-name nodbg-1 -c "$TMP/cpu_ab 1"
expect_eq "host 1 without access: exit 0, its own output [cpu_ab] as ever (the rows are deferred)" \
	"$?:$(grep -c "@$ID" $TMP/h1):$(grep -c '\[cpu_ab\]' $TMP/h1 | awk '{ print ($1 > 0) }')" "0:0:1"
DEBUGINFOD_URLS= run_ft $TMP/h2 $TMP/he2 profile -F 499 -f $NODBG --sink $CH --host-name nodbg-2 -c "$TMP/other/cpu_ab_renamed 1"
deferred=$(ch_query a "SELECT count() FROM default.ftstack_stacks_stacks WHERE arrayExists(x -> match(x, '^\\[cpu_ab(_renamed)?\\+0x[0-9a-f]+@$ID\\]\$'), \`user\`)")
check "deferred frames [cpu_ab+0xADDR@BUILDID] in the stacks table ($deferred stacks)" test "${deferred:-0}" -gt 0
hashes() { ch_query a "SELECT DISTINCT stack FROM default.ftstack_stacks WHERE host = '$1' ORDER BY stack" | tr '\n' ' '; }
# stacks through the workload's frames that both hosts wrote under one hash
common=$(ch_query a "SELECT count() FROM (SELECT DISTINCT stack FROM default.ftstack_stacks WHERE host = 'nodbg-1'
	AND stack IN (SELECT stack FROM default.ftstack_stacks_stacks WHERE arrayExists(x -> x LIKE '[cpu_ab%+0x%@%]', \`user\`)))
	WHERE stack IN (SELECT stack FROM default.ftstack_stacks WHERE host = 'nodbg-2')")
check "the workload under another file name: the same stack hashes ($common shared)" test "${common:-0}" -gt 0
h1=$(hashes nodbg-1)
run_ft $TMP/b0 $TMP/be0 profile -F 499 -f $NODBG --no-debuginfod --build-ids -c "$TMP/cpu_ab 0.5"
expect_eq "--build-ids: a local run's unnamed frames deferred, none [cpu_ab]" \
	"$(grep -c "\[cpu_ab+0x[0-9a-f]*@$ID\]" $TMP/b0 | awk '{ print ($1 > 0) }'):$(grep -c '\[cpu_ab\]' $TMP/b0)" "1:0"
run_ft $TMP/b1 $TMP/be1 report -f $NODBG $TMP/b0
expect_eq "report names a folded file's deferred frames" \
	"$(grep -c '\[cpu_ab' $TMP/b1):$(paths $TMP/b1)" "0:main;func_a;spin main;func_b;spin "
run_ft $TMP/r0 $TMP/re0 report -f $NODBG --no-debuginfod $CH
# (a stack both hosts had is either host's text: ANY LEFT JOIN)
check "report without access: frames stay deferred" grep -q "\[cpu_ab\(_renamed\)\?+0x[0-9a-f]*@$ID\]" $TMP/r0
run_ft $TMP/r1 $TMP/re1 report -f $NODBG $CH
expect_eq "report with DEBUGINFOD_URLS: exit 0, every deferred frame named" \
	"$?:$(grep -c '\[cpu_ab' $TMP/r1):$(paths $TMP/r1)" "0:0:main;func_a;spin main;func_b;spin "
total() { awk '{ n += $NF } END { print n + 0 }' "$@"; }
expect_eq "report's total is the two hosts' local totals" "$(total $TMP/r1)" "$(total $TMP/h1 $TMP/h2)"
expect_eq "the stack hashes in the table are unchanged by the naming" "$(hashes nodbg-1)" "$h1"
finish
