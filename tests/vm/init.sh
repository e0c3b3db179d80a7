#!/bin/busybox sh
# /init of the ftstack test VM (tests/vm/run builds the initramfs). Mounts
# the kernel file systems, runs tests.sh (or a shell with ftstack.shell=1 on
# the kernel command line; with ftstack.probe=1 it only says it was reached),
# prints the end marker and powers off. It must never exit: the kernel would
# panic, and the run would look like a crash.
/bin/busybox mkdir -p /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root TERM=${TERM:-vt100}

mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
# tests/vm/run's accelerator probe: reaching /init is all it asks
case " $(cat /proc/cmdline) " in
*" ftstack.probe=1 "*)
	echo "FTSTACK-VM-PROBE: /init reached"
	poweroff -f
	while :; do sleep 3600; done
	;;
esac
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# tracefs also appears under debugfs/tracing; ftstack wants the real mount
mount -t tracefs tracefs /sys/kernel/tracing ||
	echo "init: cannot mount tracefs"
# securityfs: /sys/kernel/security/lockdown says whether the kernel is
# locked down (a boot with lockdown=confidentiality, cases/lockdown.sh)
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
ln -sf /proc/self/fd /dev/fd 2>/dev/null
hostname ftstack-vm

LIBDIRS=$(cat /etc/ftstack-libdirs 2>/dev/null)
[ -n "$LIBDIRS" ] && export LD_LIBRARY_PATH=$LIBDIRS
export FTSTACK=/ftstack/build/ftstack BIN=/ftstack/build/tests FTSTACK_VM=1
[ -f /etc/ftstack-env ] && . /etc/ftstack-env
for m in $(cat /etc/ftstack-modules 2>/dev/null); do
	insmod "/lib/modules/$m" || echo "init: insmod $m failed"
done

cd /ftstack
rc=0
case " $(cat /proc/cmdline) " in
*" ftstack.shell=1 "*)
	echo "ftstack VM: $(uname -r); ftstack in /ftstack (\$FTSTACK, \$BIN)."
	echo "Run tests/vm/tests.sh; 'exit' powers off."
	setsid cttyhack sh -l || sh
	;;
*)
	sh /ftstack/tests/vm/tests.sh
	rc=$?
	;;
esac
echo "FTSTACK-VM-END rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)s"
sync
poweroff -f
# poweroff -f does not return; if it ever did, keep init alive
while :; do sleep 3600; done
