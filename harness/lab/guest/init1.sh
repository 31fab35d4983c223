#!/bin/sh
# Stage-1 init of an embedded-lab guest: PID 1 on a read-only hostfs root, the host's own (/)
# or a root built by harness.lab.roots, whose stage 0 has mounted the lab state directory at
# /lab.  Builds a writable root (overlay: that root below, guest tmpfs above), gives it the UML
# kernel's modules and the lab directory, and chroots into it for stage 2.  PID 1 must never
# exit: the guest kernel panics if it does.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
kver=$(uname -r)
labdir=$(sed -n 's/.*labdir=\([^ ]*\).*/\1/p' /proc/cmdline)
# A built root (harness.lab.roots) boots through its stage 0, which has mounted the lab state
# directory at /lab; the host's root sees it at its host path.
built=0
grep -q "init=/sbin/harness-lab-init" /proc/cmdline && built=1
mount -t tmpfs -o mode=755 guestroot /tmp
# The UML package keeps its modules on the host (/usr/lib/uml/modules), which a built root
# lacks: read them through hostfs (read-only: the guest runs as an unprivileged host uid).
mkdir -p /tmp/mods
mount -t hostfs -o ro,/usr/lib/uml/modules umlmods /tmp/mods
insmod "/tmp/mods/$kver/kernel/fs/overlayfs/overlay.ko"
mkdir -p /tmp/ov/upper /tmp/ov/work /tmp/ov/root
mount -t overlay overlay -o lowerdir=/,upperdir=/tmp/ov/upper,workdir=/tmp/ov/work /tmp/ov/root
# modprobe looks in /lib/modules/$(uname -r); the overlay sees no mount below its lower root,
# so the modules and the lab directory are mounted into it again.
mkdir -p /tmp/ov/root/lib/modules /tmp/ov/root/lab
mount --bind /tmp/mods /tmp/ov/root/lib/modules
# The lab state directory may live under the host's /run, which stage 2's tmpfs hides: /lab.
# Either way the guest's writes there (booted-once) stay in the guest, as on the root itself.
if [ "$built" = 1 ]; then
  mkdir -p /tmp/labov/upper /tmp/labov/work
  mount -t overlay labov -o lowerdir=/lab,upperdir=/tmp/labov/upper,workdir=/tmp/labov/work /tmp/ov/root/lab
else
  mount --bind "/tmp/ov/root$labdir" /tmp/ov/root/lab
fi
umount /proc
exec chroot /tmp/ov/root /bin/sh /lab/guest/init2.sh
