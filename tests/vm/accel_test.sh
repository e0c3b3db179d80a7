#!/usr/bin/env bash
# The VM harness's choice of accelerator (tests/vm/accel.sh, tests/vm/run),
# on every host: no real VM boots. A fake qemu-system-x86_64 first on PATH
# fails the ways KVM fails on hosts where /dev/kvm opens but cannot run the
# guest (fixtures/kvm-internal-error.log and kvm-silent.log are the console
# of the real QEMU 7.2 on such a host, with -smp 1 and -smp 2), and the
# harness must boot with TCG. Needs no root; the runs of tests/vm/run need
# busybox-static and cpio (tests/deps.sh).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
FIX=$ROOT/tests/vm/fixtures
TMP=$(mktemp -d /tmp/ftstack-accel.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
expect_eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1: got '$2', want '$3'"; fi; }
# expect_match DESC TEXT REGEX
expect_match() { if grep -qE -- "$3" <<<"$2"; then ok "$1"; else not_ok "$1: /$3/ not in '$2'"; fi; }

. tests/vm/accel.sh

# --- the decision on captured consoles -------------------------------------

verdict() { VM_ACCEL_WHY=; vm_probe_verdict "$1" "$2"; echo "$?:$VM_ACCEL_WHY"; }
expect_match "real KVM internal error: KVM fails, at once" \
	"$(verdict $FIX/kvm-internal-error.log running)" '^1:KVM failed: KVM internal error\. Suberror: 1$'
expect_match "real silent KVM (-smp 2): undecided while it runs" \
	"$(verdict $FIX/kvm-silent.log running)" '^2:$'
expect_match "real silent KVM (-smp 2): fails at the time limit" \
	"$(verdict $FIX/kvm-silent.log timeout)" '^1:KVM did not reach /init in [0-9]+ s$'
{ cat $FIX/kvm-silent.log; echo "$VM_PROBE_MARK"; } >$TMP/reached.log
expect_match "/init reached: KVM works" "$(verdict $TMP/reached.log running)" '^0:KVM reached /init$'
expect_match "/init reached and QEMU exited 0: KVM works" "$(verdict $TMP/reached.log 'exited 0')" '^0:'
{ cat $FIX/kvm-silent.log; echo "$VM_PROBE_MARK"; cat $FIX/kvm-internal-error.log; } >$TMP/both.log
expect_match "/init reached, then a KVM error: KVM fails" "$(verdict $TMP/both.log running)" '^1:KVM failed'
printf '%s\n' "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" \
	"qemu-system-x86_64: ../target/i386/kvm/kvm.c:2893: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed." >$TMP/msr.log
expect_match "-cpu host's MSR abort: KVM fails" "$(verdict $TMP/msr.log 'exited 134')" \
	'^1:KVM failed: failed to set MSR 0x10a to 0x69$'
printf 'qemu-system-x86_64: something else went wrong\n' >$TMP/other.log
expect_match "QEMU exits before /init: KVM fails, QEMU's line said" "$(verdict $TMP/other.log 'exited 1')" \
	'^1:QEMU with KVM exited 1 before /init: qemu-system-x86_64: something else went wrong$'

# --- the probe, with a fake QEMU -------------------------------------------

# FAKE_KVM says how the fake's KVM behaves: ok, internal (the real console,
# then paused, as QEMU does), silent (-smp 2 here), msr (abort), noaccess,
# runfail (reaches /init in the probe, fails the real boot). Under TCG it
# prints a passing run. Every call's -accel and -cpu go to $TMP/calls.
mkdir -p $TMP/bin
cat >$TMP/bin/qemu-system-x86_64 <<EOF
#!/usr/bin/env bash
accel= opts= cpu= probe=0
while [ \$# -gt 0 ]; do
	case \$1 in
	-accel) accel=\${2%%,*}; opts=\${2#\$accel}; shift ;;
	-cpu) cpu=\$2; shift ;;
	-append) case " \$2 " in *" ftstack.probe=1 "*) probe=1 ;; esac; shift ;;
	esac
	shift
done
echo "\$accel\$opts\${cpu:+ \$cpu}\$( [ \$probe = 1 ] && echo ' probe')" >>$TMP/calls
hang() { while :; do sleep 0.1; done; }
if [ "\$accel" = tcg ] && [ "\${FAKE_TCG:-}" = wedge ] && [ ! -e $TMP/wedged ]; then
	touch $TMP/wedged
	printf '# case a.sh\nnot ok - a check\n# case b.sh\nnot ok - b check\n'
	echo "watchdog: BUG: soft lockup - CPU#0 stuck for 123s! [sh:1]"
	hang
fi
if [ "\$accel" = tcg ]; then
	[ \$probe = 1 ] && { echo "$VM_PROBE_MARK"; exit 0; }
	printf 'ok - a fake VM test\n1 passed, 0 failed\nFTSTACK-VM-END rc=0 uptime=1.0s\n'
	exit 0
fi
case \${FAKE_KVM:-ok} in
ok) cat $FIX/kvm-silent.log; echo "$VM_PROBE_MARK"
    [ \$probe = 1 ] || printf 'ok - a fake VM test\n1 passed, 0 failed\nFTSTACK-VM-END rc=0 uptime=1.0s\n'
    exit 0 ;;
internal) cat $FIX/kvm-internal-error.log >&2; hang ;;
silent) cat $FIX/kvm-silent.log; hang ;;
msr) echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
     echo "qemu-system-x86_64: ../target/i386/kvm/kvm.c:2893: kvm_buf_set_msrs: Assertion \\\`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
     kill -ABRT \$\$ ;;
noaccess) echo "Could not access KVM kernel module: Permission denied" >&2
     echo "qemu-system-x86_64: failed to initialize kvm: Permission denied" >&2
     exit 1 ;;
runfail) if [ \$probe = 1 ]; then echo "$VM_PROBE_MARK"; exit 0; fi
     cat $FIX/kvm-internal-error.log >&2; hang ;;
esac
EOF
chmod 755 $TMP/bin/qemu-system-x86_64
export PATH=$TMP/bin:$PATH
# /dev/null stands for a read-write /dev/kvm on every host
export FTSTACK_VM_KVM_DEV=/dev/null
unset FTSTACK_VM_ACCEL

# choose FAKE_KVM: runs the probe as tests/vm/run does; prints
# "ACCEL|WHY|calls"
choose() {
	rm -f $TMP/calls
	FAKE_KVM=$1 vm_choose_accel $TMP/probe.log qemu-system-x86_64 -accel kvm \
		-append "console=ttyS0 ftstack.probe=1"
	echo "$VM_ACCEL|$VM_ACCEL_WHY|$(cat $TMP/calls 2>/dev/null | tr '\n' ' ')"
}
# a generous limit: a failure QEMU names must be decided by its words, long
# before the limit (the reason would be the limit's otherwise)
export FTSTACK_VM_PROBE_TIMEOUT=60
expect_match "probe, KVM internal error: tcg, QEMU's words said" "$(choose internal)" \
	'^tcg\|KVM failed: KVM internal error\. Suberror: 1, after [0-9.]+ s\|kvm probe $'
expect_match "probe, MSR abort: tcg" "$(choose msr)" \
	'^tcg\|KVM failed: failed to set MSR 0x10a to 0x69, after'
expect_match "probe, KVM that cannot open: tcg" "$(choose noaccess)" \
	'^tcg\|KVM failed: Could not access KVM kernel module: Permission denied, after'
expect_match "probe, working KVM: kvm" "$(choose ok)" '^kvm\|KVM reached /init, after [0-9.]+ s\|kvm probe $'
FTSTACK_VM_PROBE_TIMEOUT=1
expect_match "probe, silent KVM: tcg at the time limit" "$(choose silent)" \
	'^tcg\|KVM did not reach /init in 1 s\|kvm probe $'
FTSTACK_VM_PROBE_TIMEOUT=60
FTSTACK_VM_KVM_DEV=$TMP/no-kvm
expect_match "no /dev/kvm: tcg, no probe" "$(choose ok)" "^tcg\|no $TMP/no-kvm\|\$"
FTSTACK_VM_KVM_DEV=$TMP/calls-not-a-device
touch $FTSTACK_VM_KVM_DEV
expect_match "/dev/kvm not a device: tcg, no probe" "$(choose ok)" '^tcg\|.* is not a character device.*\|$'
FTSTACK_VM_KVM_DEV=/dev/null
expect_match "FTSTACK_VM_ACCEL=tcg: tcg, no probe" "$(FTSTACK_VM_ACCEL=tcg choose ok)" \
	'^tcg\|forced by FTSTACK_VM_ACCEL\|$'
expect_match "FTSTACK_VM_ACCEL=kvm: kvm, no probe" "$(FTSTACK_VM_ACCEL=kvm choose internal)" \
	'^kvm\|forced by FTSTACK_VM_ACCEL\|$'
FTSTACK_VM_ACCEL=xen vm_choose_accel $TMP/probe.log true
expect_eq "FTSTACK_VM_ACCEL=xen: refused" "$?:$VM_ACCEL_WHY" "2:FTSTACK_VM_ACCEL is kvm or tcg, not 'xen'"

# --- tests/vm/run itself, with the fake QEMU --------------------------------

if ! command -v busybox >/dev/null || ldd "$(command -v busybox)" >/dev/null 2>&1 || ! command -v cpio >/dev/null; then
	not_ok "tests/vm/run needs busybox-static and cpio (tests/deps.sh installs them)"
	exit 1
fi
mkdir -p $TMP/build
echo "not a kernel" >$TMP/vmlinuz-fake
# vm FAKE_KVM [ENV...]: tests/vm/run with the fake; its output in $TMP/out
vm() {
	local fake=$1; shift
	rm -f $TMP/calls
	env FAKE_KVM=$fake FTSTACK_VM_KERNEL=$TMP/vmlinuz-fake FTSTACK_BUILD=$TMP/build \
		FTSTACK_VM_OUT=$TMP/vm "$@" tests/vm/run >$TMP/out 2>&1
}
booted() { grep '^vm: booting with' $TMP/out; }
vm internal
expect_eq "run, KVM internal error: passes" $? 0
expect_match "run, KVM internal error: tcg, and why" "$(booted)" \
	'^vm: booting with tcg \(KVM failed: KVM internal error\. Suberror: 1, after [0-9.]+ s\)$'
expect_eq "run, KVM internal error: a KVM probe, then one boot with -cpu max" "$(tr '\n' ' ' <$TMP/calls)" \
	"kvm probe tcg,thread=single max "
vm ok FTSTACK_VM_KVM_DEV=$TMP/no-kvm
expect_eq "run, no /dev/kvm: passes" $? 0
expect_eq "run, no /dev/kvm: tcg, no probe" "$(booted)|$(tr '\n' ' ' <$TMP/calls)" \
	"vm: booting with tcg (no $TMP/no-kvm)|tcg,thread=single max "
vm ok
expect_eq "run, working KVM: passes" $? 0
expect_match "run, working KVM: kvm" "$(booted)" '^vm: booting with kvm \(KVM reached /init, after [0-9.]+ s\)$'
expect_eq "run, working KVM: a probe, then one boot, both KVM alone" "$(tr '\n' ' ' <$TMP/calls)" "kvm probe kvm "
vm runfail
expect_eq "run, KVM that fails after the probe: passes" $? 0
check_line=$(grep '^vm: KVM failed' $TMP/out)
expect_match "run, KVM that fails after the probe: said, and booted with tcg" "$check_line" \
	'^vm: KVM failed: KVM internal error\. Suberror: 1 \(see .*console\.kvm\.log\); booting with tcg$'
expect_eq "run, KVM that fails after the probe: boots" "$(tr '\n' ' ' <$TMP/calls)" "kvm probe kvm tcg,thread=single max "
vm internal FTSTACK_VM_ACCEL=kvm
expect_eq "run, FTSTACK_VM_ACCEL=kvm on a failing KVM: fails" $? 1
expect_match "run, FTSTACK_VM_ACCEL=kvm on a failing KVM: says so" "$(cat $TMP/out)" \
	'vm: FAIL: KVM failed: KVM internal error\. Suberror: 1; FTSTACK_VM_ACCEL=kvm asked for KVM'
vm internal FTSTACK_VM_ACCEL=tcg
expect_eq "run, FTSTACK_VM_ACCEL=tcg: passes without a probe" "$?|$(booted)|$(tr '\n' ' ' <$TMP/calls)" \
	"0|vm: booting with tcg (forced by FTSTACK_VM_ACCEL)|tcg,thread=single max "
# one TCG thread unless asked (a thread per vCPU lets 6.1 oops on a stale
# int3 under a kprobe: run's comment, doc/RELIABILITY.md)
vm ok FTSTACK_VM_ACCEL=tcg FTSTACK_VM_TCG_THREAD=multi
expect_eq "run, FTSTACK_VM_TCG_THREAD=multi: a thread per vCPU" "$?|$(tr '\n' ' ' <$TMP/calls)" \
	"0|tcg,thread=multi max "
vm ok FTSTACK_VM_ACCEL=tcg FTSTACK_VM_TCG_THREAD=many
expect_eq "run, FTSTACK_VM_TCG_THREAD=many: refused, no boot" "$?|$(grep -c 'single or multi' $TMP/out)|$(cat $TMP/calls 2>/dev/null)" "1|1|"
# a first boot that wedged in case b.sh: a.sh's failure counts, b.sh's is the
# wedge's (commented out), and the second boot runs them all again
rm -f $TMP/wedged
vm ok FTSTACK_VM_ACCEL=tcg FAKE_TCG=wedge
expect_eq "run, first boot wedged after a failure: fails" $? 1
expect_eq "run, first boot wedged: its failure before the wedged case printed as one" \
	"$(grep '^not ok' $TMP/out | tr '\n' '|')" "not ok - first boot: a check|"
check_line=$(grep -c '^# first boot, wedged case: not ok - b check' $TMP/out)
expect_eq "run, first boot wedged: the wedged case's failure a comment" "$check_line" 1
expect_match "run, first boot wedged: says so" "$(cat $TMP/out)" \
	'vm: FAIL: the first boot failed 1 checks before it wedged'
exit $((fails > 0))
