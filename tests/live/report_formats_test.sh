#!/bin/bash
# Every format of `ftstack report` from the same input holds the same totals
# and opens in its viewer, names with invalid UTF-8 and control characters
# included (issue 15): folded sums; pprof through `go tool pprof -raw`;
# speedscope against the JSON schema of the npm package `speedscope` (the
# one check skipped, with a message, when npm cannot reach its registry);
# svg through xmllint and a headless Firefox screenshot that must not be
# blank. Then -P -f's comm-PID frame in a live run. Needs golang-go,
# libxml2-utils, firefox-esr, nodejs/npm (tests/deps.sh).
cd "$(dirname "$0")/../.." || exit 1
. tests/live/lib.sh
FX=tests/unit/fixtures/report/compat

# A perf script whose names are bytes no viewer accepts as they are.
printf 'bad\377comm 42/42 1.0:          3 cycles:\n' >$TMP/bad.txt
printf '\t55d0 ok_\303_bad (/x)\n\t55d1 sur\355\240\200rogate (/x)\n' >>$TMP/bad.txt
printf '\t55d2 amp<&>]]> (/x)\n\t55d3 ctl\033name (/x)\n\t55d4 caf\303\251 (/x)\n' >>$TMP/bad.txt
printf '\t55d5 over\300\257long (/x)\n\t55d6 big\364\220\200\200 (/x)\n' >>$TMP/bad.txt
printf '\t55d7 nonchar\357\277\276 (/x)\n\t55d8 c1\302\205ctl (/x)\n\n' >>$TMP/bad.txt
printf 'bad\377comm 42/43 1.1:          5 cycles:\n\t55d8 main (/x)\n\n' >>$TMP/bad.txt

utf8_ok() { python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$1" 2>/dev/null; }
# pprof_sums FILE: the summed first and second sample values
pprof_sums() {
	go tool pprof -raw "$1" 2>$TMP/pprof.err | awk '
		/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $0 ~ /^ *[0-9]+ +[0-9]+:/ { a += $1; b += $2 }
		END { print a + 0, b + 0 }'
}

# The validator: ajv and the speedscope package, in a scratch npm folder.
npmdir=$TMP/npm
mkdir -p $npmdir
schema=
if (cd $npmdir && timeout 180 npm install --no-audit --no-fund --silent speedscope ajv@8 >/dev/null 2>&1); then
	schema=$npmdir/node_modules/speedscope/dist/release/file-format-schema.json
fi
speedscope_valid() {
	NODE_PATH=$npmdir/node_modules node -e '
		const Ajv = require("ajv"), fs = require("fs");
		const ajv = new Ajv({ allErrors: true, strict: false });
		const data = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
		if (!ajv.validate(JSON.parse(fs.readFileSync(process.argv[1], "utf8")), data)) {
			console.log(JSON.stringify(ajv.errors)); process.exit(1);
		}' "$schema" "$1"
}
# png_nonblank FILE: more than one colour, and some of it is not the background
png_nonblank() {
	python3 - "$1" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    if kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
# distinct 3-byte runs of the filtered rows: a blank page has a handful
runs = {raw[i:i + 3] for i in range(0, len(raw) - 3, 3)}
sys.exit(0 if len(runs) > 200 else 1)
EOF
}

for in in $FX/perf61_multi_default.txt $FX/perf61_pf_default.txt $FX/edge_samples.txt $TMP/bad.txt; do
	n=$(basename $in .txt)
	"$FTSTACK" report -f $in >$TMP/$n.folded 2>$TMP/e; expect_eq "$n: folded exit" $? 0
	total=$(folded_count $TMP/$n.folded .)
	"$FTSTACK" report -f --weight samples $in >$TMP/$n.samples 2>/dev/null
	samples=$(folded_count $TMP/$n.samples .)
	check "$n: folded is valid UTF-8" utf8_ok $TMP/$n.folded
	"$FTSTACK" report --format pprof $in >$TMP/$n.pb.gz 2>/dev/null; expect_eq "$n: pprof exit" $? 0
	expect_eq "$n: pprof samples/count and period totals" "$(pprof_sums $TMP/$n.pb.gz)" "$samples $total"
	check "$n: go tool pprof reads it without a word" test ! -s $TMP/pprof.err
	go tool pprof -raw $TMP/$n.pb.gz >$TMP/$n.raw 2>/dev/null
	check "$n: pprof strings are valid UTF-8" utf8_ok $TMP/$n.raw
	"$FTSTACK" report --format speedscope $in >$TMP/$n.json 2>/dev/null
	expect_eq "$n: speedscope exit" $? 0
	check "$n: speedscope is valid UTF-8" utf8_ok $TMP/$n.json
	expect_eq "$n: speedscope weights total" "$(python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))["profiles"][0]; print(sum(p["weights"]))' $TMP/$n.json)" "$total"
	if [ -n "$schema" ]; then
		check "$n: speedscope matches its file-format schema" speedscope_valid $TMP/$n.json
	else
		ok "$n: speedscope schema # SKIP npm cannot reach the registry"
	fi
	"$FTSTACK" report --format svg $in >$TMP/$n.svg 2>/dev/null; expect_eq "$n: svg exit" $? 0
	check "$n: svg is well-formed XML" xmllint --noout $TMP/$n.svg
	expect_eq "$n: svg total" "$(sed -n 's/.*TOTAL = \([0-9]*\);.*/\1/p' $TMP/$n.svg)" "$total"
	expect_eq "$n: svg root frame" "$(grep -o 'data-n="all" data-x="0" data-w="[0-9]*"' $TMP/$n.svg |
		sed 's/.*data-w="//; s/"//')" "$total"
done
expect_eq "bad names: folded" "$(cat $TMP/bad.folded | LC_ALL=C sort)" \
"bad�comm;c1\\x85ctl;nonchar�;big����;over��long;café;ctl\\x1bname;amp<&>]]>;sur���rogate;ok_�_bad 3
bad�comm;main 5"

# Firefox draws the svg (the one with the bad names): a screenshot, not blank.
if command -v firefox-esr >/dev/null; then
	mkdir -p $TMP/ff
	HOME=$TMP/ff timeout 120 firefox-esr --headless --no-remote --profile $TMP/ff \
		--window-size 1200,400 --screenshot $TMP/bad.png "file://$TMP/bad.svg" \
		>$TMP/ff.log 2>&1
	check "firefox screenshot of the svg" test -s $TMP/bad.png
	check "the screenshot is not blank" png_nonblank $TMP/bad.png
	[ -n "${KEEP_PNG:-}" ] && cp $TMP/bad.png "$KEEP_PNG"
else
	not_ok "firefox-esr is not installed (tests/deps.sh)"
fi

# -P -f, live: two processes with the same comm and stacks print apart,
# each line's first frame comm-PID (600 copied samples x 2.5 KB, lib.sh's
# bound, fit 4 MB rings with the reader stopped).
"$FTSTACK" -P -f -e t:syscalls:sys_enter_getppid -U --buffer-size 4096 \
	-c "sh -c '$BIN/getppid_paths 400 & $BIN/getppid_paths 200; wait'" >$TMP/p.folded 2>$TMP/e
expect_eq "-P -f live: exit" $? 0
expect_eq "-P -f live: per comm-PID, all getppid calls of that process" \
	"$(awk '/^getppid_paths-[0-9]+;/ { split($0, f, ";"); n[f[1]] += $NF }
		END { for (k in n) print n[k] }' $TMP/p.folded | sort -n | tr '\n' ' ')" "200 400 "
expect_eq "-P -f live: caller_a, 1/4 of each" \
	"$(awk '/^getppid_paths-[0-9]+;.*caller_a;do_getppid / { print $NF }' $TMP/p.folded |
		sort -n | tr '\n' ' ')" "50 100 "
expect_eq "-P -f live: no two lines alike" "$(cut -d' ' -f1 $TMP/p.folded | sort | uniq -d)" ""
finish
