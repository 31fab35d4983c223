#!/bin/sh
# Stage-2 init of an embedded-lab guest, inside the overlay root.  Generic part: mounts,
# identity, sshd; then the guest's own rendered boot script (network, DRBD or router).
# Ends as a reaper loop: dash reaps any child (orphans included) while it waits for sleep.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
labnode=$(sed -n 's/.*labnode=\([^ ]*\).*/\1/p' /proc/cmdline)
# init1.sh has mounted the lab state directory at /lab (the host's /run is hidden below)
labdir=/lab
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/lock /run/sshd
mount -t tmpfs -o mode=1777 tmpfs /tmp
# The host's /root (and its shell rc files, with their many forks) must not leak in: 22 ms per fork.
mount -t tmpfs -o mode=700 tmpfs /root
mine="$labdir/guests/$labnode"
hostname "$labnode"
echo "$labnode" >/etc/hostname
printf '127.0.0.1 localhost\n' >/etc/hosts
# Root logs in with the lab key only.  rm first: an overlay copy-up would need to read the
# host's /etc/shadow, which this unprivileged guest cannot.
rm -f /etc/shadow
printf 'root:*:19000:0:99999:7:::\n' >/etc/shadow
chmod 640 /etc/shadow
# A non-root operator with passwordless sudo, as cloud clusters have (`harness lab inventory`
# writes inventories that reach the lab as such a cluster).  The host's sudoers is 0440 root and
# so unreadable to this guest: the guest gets its own, without the host's includes.
printf 'harness:x:4243:4243:harness operator:/home/harness:/bin/sh\n' >>/etc/passwd
printf 'harness:x:4243:\n' >>/etc/group
printf 'harness:*:19000:0:99999:7:::\n' >>/etc/shadow
mkdir -p /home/harness
chown 4243:4243 /home/harness
rm -f /etc/sudoers
printf 'Defaults !lecture,!fqdn,secure_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nroot ALL=(ALL:ALL) ALL\nharness ALL=(ALL:ALL) NOPASSWD: ALL\n' >/etc/sudoers
chmod 440 /etc/sudoers
# A real node reboots by itself after a kernel panic; so does this one (sysrq crash scenarios).
echo 2 >/proc/sys/kernel/panic
rm -f /etc/ssh/ssh_host_*
mkdir -p /run/lab-ssh /run/sshd
cp "$mine/ssh_host_ed25519_key" /run/lab-ssh/ssh_host_ed25519_key
cp "$labdir/keys/lab_key.pub" /run/lab-ssh/authorized_keys
chmod 600 /run/lab-ssh/ssh_host_ed25519_key
chmod 644 /run/lab-ssh/authorized_keys
ip link set lo up
/usr/sbin/sshd -f "$labdir/guest/sshd_config" -E /run/sshd.log
. "$mine/boot.sh" >/run/lab-boot.log 2>&1 &
# A short sleep: should the guest kernel die, this loop's pending sleep runs on natively
# on the host (see harness.lab.processes.find_orphan_guest_processes); keep that brief.
while :; do sleep 60; done
