# The counting of tests/run, sourced by it and by tests/unit/tap_check.sh.
# A test program's output holds TAP-style lines: "ok - CHECK", "not ok -
# CHECK", and "ok - CHECK # SKIP reason" (or "ok N - ..."), a check that
# cannot run here: skipped, never passed.

# a TAP skip: "ok - name # SKIP reason", "ok 3 - name # skip reason"
SKIP_RE='^ok( [0-9]+)? .*# *[Ss][Kk][Ii][Pp]([ :]|$)'

# tap_count [--nested] NAME LOG SKIPS: sets p, f and k to the checks LOG
# passed, failed and skipped, and appends each skip to SKIPS as
# "REASON<tab>NAME: CHECK" (tests/run's grouped list). --nested: LOG is
# another tests/run's (make asan's): its counts are its last line's "N
# passed, M failed, K skipped" and its skips those its list names, not one
# "ok" line a program; a list that does not hold K skips is one failure more.
# Without that line (the build failed before the run), LOG counts as lines.
tap_count() {
	local nested=0 sum=
	[ "$1" = --nested ] && { nested=1; shift; }
	local name=$1 log=$2 out=$3
	[ $nested -eq 1 ] && sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -n "$sum" ]; then
		read -r p _ f _ k _ <<<"$sum"
		# its list: "#   REASON (N):", then "#     TEST: CHECK" under it
		local listed n
		listed=$(sed -n '/^# skipped, by reason:$/,$p' "$log" | awk -v t="$name" '
			/^#     / { print r "\t" t "/" substr($0, 7); next }
			/^#   [^ ]/ { r = substr($0, 5); sub(/ \([0-9]+\):$/, "", r) }')
		n=0; [ -n "$listed" ] && { echo "$listed" >>"$out"; n=$(grep -c . <<<"$listed"); }
		if [ "$n" -ne "$k" ]; then
			echo "not ok - $name: $k skipped, $n in its list of skips" >>"$log"
			f=$((f + 1))
		fi
		return
	fi
	k=$(grep -Ec "$SKIP_RE" "$log")
	p=$(($(grep -c '^ok ' "$log") - k)); f=$(grep -c '^not ok ' "$log")
	grep -E "$SKIP_RE" "$log" | awk -v t="$name" '{
		i = match($0, /# *[Ss][Kk][Ii][Pp]:? */); r = substr($0, i + RLENGTH)
		c = substr($0, 1, i - 1); sub(/^ok( [0-9]+)? (- )?/, "", c); sub(/ +$/, "", c)
		print r "\t" t ": " c }' >>"$out"
}

# tap_skip_list SKIPS: the skips, grouped by reason: "#   REASON (N):" and
# the checks under it
tap_skip_list() {
	[ -s "$1" ] || return 0
	echo "# skipped, by reason:"
	sort -t$'\t' -k1,1 -s "$1" | awk -F'\t' '
		function flush() { if (n) { printf "#   %s (%d):\n%s", (r == "" ? "no reason given" : r), n, l } }
		$1 != r || NR == 1 { flush(); r = $1; n = 0; l = "" }
		{ n++; l = l "#     " $2 "\n" }
		END { flush() }'
}
