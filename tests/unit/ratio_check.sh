#!/usr/bin/env bash
# tests/live/lib.sh's ratio_ok, the judge of every sampled 1:R split in the
# live tests: it accepts a true split and refuses a swapped (1/R) or merged
# (1:1) one at any count it accepts at all. Prints "ok - ..." lines.
set -u
cd "$(dirname "$0")/../.."
. tests/live/lib.sh
is() { if [ "$2" = "$3" ]; then ok "ratio: $1 ($2)"; else not_ok "ratio: $1: got '$2', want '$3'"; fi; }
verdict() { if ratio_ok "$@"; then echo yes; else echo no; fi; }
min=$(ratio_min 2)
is "ratio_min 2: a merge's 1:1 leaves the band from 257 samples" "$min" 257
is "no count tells 1.5 from 1 within the 0.4 R floor" "$(ratio_min 1.5)" 0
h=$(((min - 1) / 2))
is "a merge (1:1) refused below the minimum ($h:$h)" "$(verdict $h $h 2)" no
is "a merge (1:1) refused at the minimum ($((h + 1)):$((h + 1)))" "$(verdict $((h + 1)) $((h + 1)) 2)" no
is "a swap (2:1) refused with few samples (60:30)" "$(verdict 60 30 2)" no
is "a swap (2:1) refused with many (700:350)" "$(verdict 700 350 2)" no
is "a true 1:2 accepted (333:665)" "$(verdict 333 665 2)" yes
is "a true 1:2 with few samples refused, not passed (40:80)" "$(verdict 40 80 2)" no
# at every count from the minimum on, an exact swap or merge stays out
bad=$(for n in $(seq "$min" 17 3000); do
	a=$((n * 2 / 3)) b=$((n / 3)); ratio_ok $a $b 2 && echo "swap $a:$b"
	a=$((n / 2)); ratio_ok $a $a 2 && echo "merge $a:$a"; done | head -3)
is "no exact swap or merge passes from $min to 3000 samples" "${bad:-none}" none
finish
