#!/usr/bin/env bash
# Installs what building and testing ftstack needs on Debian 12 (as root).
# Idempotent: only what is missing is installed.
set -eu
pkgs="build-essential pkg-config libtracefs-dev libtraceevent-dev libelf-dev
      libunwind-dev libdw-dev liblzma-dev zlib1g-dev clang libclang-rt-14-dev
      linux-perf cppcheck systemtap-sdt-dev busybox-static cpio qemu-system-x86
      golang-go libxml2-utils firefox-esr
      libcap2-bin valgrind
      podman runc jq
      libcurl4-openssl-dev clickhouse-server python3 openjdk-17-jdk-headless
      libdebuginfod-dev debuginfod python3.11-dbg libc6-dbg libpython3.11"
# podman runc jq: tests/live/podman_test.sh runs README's container recipe
# (runc: podman's default crun refuses a hybrid cgroup layout; jq writes the
# recipe's seccomp profile). Rootful with --network none: no uidmap,
# slirp4netns or fuse-overlayfs needed
# libdebuginfod-dev: the debuginfod client; debuginfod (the server),
# python3.11-dbg and libc6-dbg: tests/live/debuginfod_test.sh serves their
# debug files to a stripped-binary run; libpython3.11: python_test's
# late_python loads it after its first samples
# libdw-dev: only its <dwarf.h>, the DWARF constants (DW_EH_PE_*) the
# unwinder reads .eh_frame_hdr with; libdw itself is not linked
# jit_test: java and javac (openjdk-17-jdk-headless), node (npm's below);
# python 3.12+ is not in Debian 12: pyenv's builds where present, else skipped
# report_formats_test: node and npm fetch speedscope's schema (a nodejs that
# already brings npm, e.g. NodeSource's, is kept)
command -v npm >/dev/null || pkgs="$pkgs npm"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing packages:$missing (run as root: sudo make check)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	# clickhouse-server's postinst would start the system service: the tests
	# run their own servers (tests/fleet/clickhouse.sh), so no service is
	# started during the install (policy-rc.d 101: "action forbidden")
	policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		policy=1
	fi
	apt-get update -qq
	rc=0
	apt-get install -y -qq --no-install-recommends $missing || rc=$?
	[ -z "$policy" ] || rm -f /usr/sbin/policy-rc.d
	[ "$rc" -eq 0 ] || exit "$rc"
fi
