#!/usr/bin/env bash
# Records bench/fleet's fixture once: real CPU profiles of python3, cc1 and
# perl as ftstack profile -f prints them (folded, comm first), into
# bench/fleet_data/profiles.folded. bench/fleet mixes hosts' batches from
# these stacks. Root (perf_event_open), under the live-test lock.
#   bench/fleet_fixture.sh     (made 2026-11-25 on the 2-CPU VM)
set -eu
cd "$(dirname "$0")/.."
# OUT and FLAGS (ftstack's) for a variant: deferred frames (issue 31) are
#   OUT=bench/fleet_data/deferred.folded.gz FLAGS="--build-ids --no-debuginfod --debug-dir /nonexistent"
out=${OUT:-bench/fleet_data/profiles.folded.gz} tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
[ -x $py ] || py=python3
prof() { # prof NAME COMMAND
	flock /tmp/ftstack-live.lock ./ftstack profile -F 999 -f ${FLAGS:-} -o "$tmp/$1" -c "$2" 2>"$tmp/$1.err"
	echo "$1: $(wc -l <"$tmp/$1") stacks, $(awk '{ n += $NF } END { print n }' "$tmp/$1") samples"
}
prof python3 "$py -c 'import json, re, compileall, difflib, textwrap
for i in range(6):
    compileall.compile_dir(\"/usr/lib/python3.11/json\", force=True, quiet=1)
    d = [{\"k%d\" % j: [j, str(j) * 3, {\"x\": j / 3}]} for j in range(20000)]
    s = json.dumps(d); json.loads(s)
    re.findall(r\"\\w+\\d\", s[:400000])
    list(difflib.unified_diff(s[:3000].split(\",\"), s[100:3100].split(\",\")))
    textwrap.fill(s[:200000], 70)'"
prof cc1 "for f in collector/loop.c aggregate/table.c symbolize/elf.c report/text.c cli/options.c; do gcc -O2 -g -I. -I/usr/include/tracefs -I/usr/include/traceevent -Ibuild/gen -D_GNU_SOURCE -c \$f -o /dev/null; done"
prof perl "perl -e 'my %h; for my \$i (1..400000) { my \$s = join(\",\", map { \$_ * \$i } 1..8); \$h{\$s} = length(\$s); \$s =~ s/(\\d+),/<\$1>/g; } my @k = sort { \$h{\$a} <=> \$h{\$b} or \$a cmp \$b } keys %h; print scalar(@k), \"\\n\"' >/dev/null"
# the comm's own stacks only (a profile sees the shell and gcc's driver too)
cat "$tmp/python3" "$tmp/cc1" "$tmp/perl" | awk '$1 ~ /^(python3|cc1|perl);/' | LC_ALL=C sort | gzip -9 -n >"$out"
echo "$out: $(zcat "$out" | wc -l) stacks, $(wc -c <"$out") bytes"
