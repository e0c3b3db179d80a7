#!/usr/bin/env bash
# No symbol ftstack defines may share a name with one that a library it
# links (or the unwinders it may link) exports: with ELF interposition the
# library's own internal calls would land in ftstack's function. Checks the
# binary and every object of libftstack.a (unit tests link those).
# Prints "ok - ..." / "not ok - ..." lines.
set -u
cd "$(dirname "$0")/../.."
build=${FTSTACK_BUILD:-build}
fail=0

# No exceptions, weak hooks included: libtracefs's tracefs_warning is
# silenced through tracefs_set_loglevel, not overridden.

# every library of these families the binary links (ldd), and the others
# that are installed, which a build may link
libs=()
for so in libtracefs.so.1 libtraceevent.so.1 libelf.so.1 libdw.so.1 \
	  libunwind.so.8 libunwind-x86_64.so.8 libunwind-ptrace.so.0; do
	path=$(ldconfig -p | awk -v n="$so" '$1 == n && /x86-64|x86_64/ { print $NF; exit }')
	[ -n "$path" ] && libs+=("$path")
done
linked=$(ldd "$build/ftstack" 2>/dev/null | awk '/libtracefs|libtraceevent|libelf|libdw|libunwind/ { print $3 }')
for need in libtracefs libtraceevent; do
	if printf '%s\n' $linked | grep -q "/$need\.so"; then
		echo "ok - $build/ftstack links $need"
	else
		echo "not ok - $build/ftstack does not link $need"; fail=1
	fi
done
known=" "
for l in "${libs[@]}"; do known+="$(readlink -f "$l") "; done
for l in $linked; do
	l=$(readlink -f "$l")
	case "$known" in *" $l "*) ;; *) libs+=("$l"); known+="$l " ;; esac
done

# a sanitized build's runtime defines interceptors of libc and libunwind
# (backtrace, _Unwind_RaiseException) that are not ftstack's; the plain
# build is the one checked
if nm "$build/ftstack" 2>/dev/null | grep -q ' __asan_init$'; then
	echo "ok - $build/ftstack is sanitized: its runtime's interceptors are not ftstack's (checked in the plain build)"
	exit $fail
fi

exported=$(mktemp); ours=$(mktemp)
trap 'rm -f "$exported" "$ours"' EXIT
for l in "${libs[@]}"; do
	nm -D --defined-only "$l" | awk '{ print $NF }' | sed 's/@.*//'
done | sort -u >"$exported"

for obj in "$build/ftstack" "$build/libftstack.a"; do
	if [ ! -f "$obj" ]; then
		echo "not ok - $obj missing (make ftstack)"; fail=1; continue
	fi
	# defined global symbols (T, D, B, R, W, ...), without the toolchain's
	# start-up symbols every executable and library has
	nm -g --defined-only "$obj" 2>/dev/null | awk 'NF == 3 { print $3 }' | sed 's/@.*//' |
		grep -vxE '_init|_fini|_start|_edata|_end|__bss_start|__data_start|data_start|__dso_handle|_IO_stdin_used|__TMC_END__' |
		sort -u >"$ours"
	clash=$(comm -12 "$ours" "$exported")
	n=$(wc -l <"$ours")
	if [ -z "$clash" ] && [ "$n" -gt 0 ]; then
		echo "ok - $obj: none of its $n defined symbols is exported by ${#libs[@]} libraries"
	else
		echo "not ok - $obj defines what a linked library exports: $(echo $clash)"; fail=1
	fi
done
exit $fail
