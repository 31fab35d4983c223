#!/bin/sh
# Stage-1 init of an embedded-lab guest: PID 1 on the host's root, mounted read-only through
# hostfs.  Builds a writable root (overlay: host / below, guest tmpfs above) and chroots into
# it for stage 2.  PID 1 must never exit: the guest kernel panics if it does.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
kver=$(uname -r)
mods=/usr/lib/uml/modules/$kver
labdir=$(sed -n 's/.*labdir=\([^ ]*\).*/\1/p' /proc/cmdline)
mount -t tmpfs -o mode=755 guestroot /tmp
insmod "$mods/kernel/fs/overlayfs/overlay.ko"
mkdir -p /tmp/ov/upper /tmp/ov/work /tmp/ov/root
mount -t overlay overlay -o lowerdir=/,upperdir=/tmp/ov/upper,workdir=/tmp/ov/work /tmp/ov/root
# modprobe looks in /lib/modules/$(uname -r); the UML package keeps its modules elsewhere.
mkdir -p /tmp/ov/root/lib/modules
ln -sfn "$mods" "/tmp/ov/root/lib/modules/$kver"
umount /proc
exec chroot /tmp/ov/root /bin/sh "$labdir/guest/init2.sh"
