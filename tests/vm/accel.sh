# Sourced by tests/vm/run (bash): which accelerator the VM boots with.
#
# A read-write /dev/kvm is no proof that KVM can run the guest. On some hosts
# (nested virtualisation) KVM opens, then the guest dies in early boot:
#   KVM internal error. Suberror: 1 ... emulation failure
#   Code=... <f0> 48 0f c7 ...          (a lock cmpxchg16b)
# or, with -smp 2, hangs without a word; with -cpu host QEMU aborts
# ("failed to set MSR 0x10a to 0x69", an assertion in kvm_buf_set_msrs).
# QEMU does not fall back to TCG once the guest has started, so KVM is
# proven first: a boot of the real image with ftstack.probe=1, whose /init
# prints VM_PROBE_MARK and powers off, must say so within
# FTSTACK_VM_PROBE_TIMEOUT seconds (default 10; a working KVM takes about
# one). QEMU's own words for a KVM failure, or its exit, end the probe at
# once. Otherwise TCG. A broken KVM costs seconds.
#
#   vm_choose_accel LOG CMD...   sets VM_ACCEL (kvm or tcg) and VM_ACCEL_WHY;
#                                CMD is the probe: a KVM-only QEMU command
#                                line; its console goes to LOG. Returns 2 on
#                                a bad FTSTACK_VM_ACCEL (VM_ACCEL_WHY says it)
#   vm_probe_verdict LOG STATE   the decision on a probe's console so far;
#                                STATE is running, timeout or "exited RC"
#   vm_kvm_failure LOG           prints QEMU's line saying KVM failed, if any
#
# Environment: FTSTACK_VM_ACCEL=kvm|tcg forces one (no probe);
# FTSTACK_VM_KVM_DEV the device to look for (default /dev/kvm; tests).

VM_PROBE_MARK='FTSTACK-VM-PROBE: /init reached'
# QEMU's words (7.2) when KVM cannot run the guest: emulation failures and
# hardware errors of a running vCPU, MSRs KVM refuses, KVM that cannot open
VM_KVM_FAILED='KVM internal error|KVM: entry failed|failed to set MSR|kvm_buf_set_msrs: Assertion|failed to initialize kvm|Could not access KVM kernel module|kvm_init_vcpu failed'

vm_kvm_failure() {
	grep -aoEm1 "($VM_KVM_FAILED).*" "$1" 2>/dev/null | tr -d '\r'
}

# vm_probe_verdict LOG STATE: 0 KVM works, 1 it does not (VM_ACCEL_WHY says
# why), 2 not known yet. QEMU's failure words win over the marker: a vCPU
# may fail after the other reached /init.
vm_probe_verdict() {
	local log=$1 state=$2 failed last
	failed=$(vm_kvm_failure "$log")
	if [ -n "$failed" ]; then
		VM_ACCEL_WHY="KVM failed: $failed"
		return 1
	fi
	if grep -aq "^$VM_PROBE_MARK" "$log" 2>/dev/null; then
		VM_ACCEL_WHY="KVM reached /init"
		return 0
	fi
	case $state in
	running) return 2 ;;
	timeout) VM_ACCEL_WHY="KVM did not reach /init in ${FTSTACK_VM_PROBE_TIMEOUT:-10} s" ;;
	*)
		last=$(grep -a 'qemu-system' "$log" 2>/dev/null | grep -v 'warning:' | tail -n 1 | tr -d '\r')
		VM_ACCEL_WHY="QEMU with KVM ${state} before /init${last:+: $last}" ;;
	esac
	return 1
}

# vm_kvm_probe LOG CMD...: runs CMD until vm_probe_verdict decides, then
# stops it (by its pid); returns the verdict
vm_kvm_probe() {
	local log=$1 pid state verdict t0 limit=${FTSTACK_VM_PROBE_TIMEOUT:-10}
	shift
	t0=$EPOCHREALTIME
	"$@" </dev/null >"$log" 2>&1 &
	pid=$!
	while :; do
		state=running
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			state="exited $?"
		elif awk -v a="$t0" -v b="$EPOCHREALTIME" -v l="$limit" 'BEGIN { exit !(b - a >= l) }'; then
			state=timeout
		fi
		vm_probe_verdict "$log" "$state"
		verdict=$?
		[ $verdict = 2 ] || break
		sleep 0.1
	done
	kill $pid 2>/dev/null && wait $pid 2>/dev/null
	[ "$state" = timeout ] ||
		VM_ACCEL_WHY="$VM_ACCEL_WHY, after $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	return $verdict
}

vm_choose_accel() {
	local log=$1 dev=${FTSTACK_VM_KVM_DEV:-/dev/kvm}
	shift
	case ${FTSTACK_VM_ACCEL:-} in
	kvm|tcg)
		VM_ACCEL=$FTSTACK_VM_ACCEL VM_ACCEL_WHY="forced by FTSTACK_VM_ACCEL"
		return 0 ;;
	"") ;;
	*)
		VM_ACCEL= VM_ACCEL_WHY="FTSTACK_VM_ACCEL is kvm or tcg, not '$FTSTACK_VM_ACCEL'"
		return 2 ;;
	esac
	VM_ACCEL=tcg
	if [ ! -e "$dev" ]; then
		VM_ACCEL_WHY="no $dev"
	elif [ ! -c "$dev" ] || [ ! -r "$dev" ] || [ ! -w "$dev" ]; then
		VM_ACCEL_WHY="$dev is not a character device this user can read and write"
	elif vm_kvm_probe "$log" "$@"; then
		VM_ACCEL=kvm
	fi
	return 0
}
