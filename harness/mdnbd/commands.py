"""The node commands of an md-nbd pair: read-only probes, and the few changes the harness makes.

Every name that reaches a shell here is checked against a tight pattern first, and every
script quotes what it interpolates.  Nothing here creates an array over a disk or wipes one:
that is the lab's provisioning (:mod:`harness.mdnbd.provision`), on blank disks it made itself.
The changes are the ones DataKeeper's own tools make on a running pair: drop the network leg
(``--fail``/``--remove``, disconnect the NBD client), bring it back (reconnect, ``--re-add``:
the write-intent bitmap makes it a partial resync), and move the primary role (stop the export
and assemble the leg on the peer; stop the array and export the leg again).
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from harness.errors import ConfigError
from harness.fields import ARRAY_NAME_PATTERN, NBD_DEVICE_PATTERN

__all__ = [
    "EXPORT_DIR",
    "array_device",
    "check_array_name",
    "check_nbd_device",
    "connect_leg_script",
    "demote_script",
    "disconnect_leg_script",
    "end_verify_script",
    "export_script",
    "exported_legs_script",
    "keeper_script",
    "promote_script",
    "state_script",
    "verify_script",
    "write_mode_script",
]

_NAME = re.compile(ARRAY_NAME_PATTERN)
_NBD = re.compile(NBD_DEVICE_PATTERN)
_DISK = re.compile(r"\A/dev/[A-Za-z0-9/_.-]{1,64}\Z")
_IP = re.compile(r"\A[0-9a-fA-F.:]{2,45}\Z")
#: where the harness keeps an export's configuration and pid file on a node (tmpfs: a reboot
#: forgets the export, as it forgets a running nbd-server)
EXPORT_DIR: Final = "/run/harness-mdnbd"


def check_array_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ConfigError(f"md-nbd array name {name!r} must be 1-32 of [A-Za-z0-9_.-]")
    return name


def check_nbd_device(device: str) -> str:
    if not _NBD.fullmatch(device):
        raise ConfigError(f"{device!r} is not an NBD device path (expected /dev/nbdN)")
    return device


def _check_disk(disk: str) -> str:
    if not _DISK.match(disk) or ".." in disk:
        raise ConfigError(f"md-nbd leg {disk!r} is not a plain /dev path")
    return disk


def array_device(name: str) -> str:
    return f"/dev/md/{check_array_name(name)}"


def _paths(name: str) -> tuple[str, str]:
    base = f"{EXPORT_DIR}/{check_array_name(name)}"
    return f"{base}.conf", f"{base}.pid"


def _standalone(name: str) -> str:
    return f"{EXPORT_DIR}/{check_array_name(name)}.standalone"


def _under_leg_lock(name: str, body: str) -> str:
    """``body`` in a subshell holding the array's leg lock (in :data:`EXPORT_DIR`, which the
    caller creates).  The keeper decides and acts under it, so a ``disconnect`` can never fall
    between its look at the flag and its reconnect (the leg then came back while a calibration
    measured the array alone)."""
    return f"( flock 9 || exit 1; {body} ) 9>{EXPORT_DIR}/{check_array_name(name)}.lock"


def _check_ip(ip: str, what: str) -> str:
    if not _IP.match(ip):
        raise ConfigError(f"{what} {ip!r} is not an IP address")
    return ip


def state_script(name: str, port: int, peer_ip: str | None = None) -> str:
    """Read-only: the array (if assembled here) from sysfs, and this node's export of its leg.

    With ``peer_ip``, a node that only exports also says whether the peer answers a ping: a
    primary that died holds its TCP connection to the export open (nothing tells the
    secondary), so the socket alone cannot say the peer is gone."""
    md = shlex.quote(array_device(name))
    _conf, pid = _paths(name)
    peer = ""
    if peer_ip:
        ip = shlex.quote(_check_ip(peer_ip, "peer address"))
        peer = (
            f'case "$running" in 1) ;; *) if ping -c 1 -W 1 -q {ip} >/dev/null 2>&1; '
            "then echo peer=up; else echo peer=down; fi;; esac; "
        )
    return (
        f"md=$(readlink -e {md} 2>/dev/null); running=0; "
        f"if [ -e {_standalone(name)} ]; then echo standalone=1; fi; "
        'if [ -n "$md" ] && [ -d "/sys/block/${md##*/}/md" ]; then b="/sys/block/${md##*/}/md"; echo "array=$md"; '
        'case "$(cat "$b/array_state" 2>/dev/null)" in clear|inactive|"") ;; *) running=1;; esac; '
        "for f in level raid_disks array_state degraded sync_action sync_completed mismatch_cnt; do "
        'echo "$f=$(cat "$b/$f" 2>/dev/null)"; done; '
        'for d in "$b"/dev-*; do [ -e "$d/state" ] || continue; '
        'echo "member ${d##*/dev-} slot=$(cat "$d/slot") state=$(cat "$d/state") errors=$(cat "$d/errors")"; done; '
        'echo "bitmap_backlog=$(cat "$b/bitmap/backlog" 2>/dev/null)"; '
        # degraded: how much the missing leg lacks, as md tracks it (dirty chunks of the bitmap
        # on the running local leg); read only then, as mdadm -X reads the leg's disk
        'if [ "$(cat "$b/degraded" 2>/dev/null)" != 0 ]; then for d in "$b"/dev-*; do l="${d##*/dev-}"; '
        'case "$l" in nbd*) continue;; esac; '
        'echo "bitmap_dirty=$(mdadm -X "/dev/$l" 2>/dev/null | sed -n \'s/.* \\([0-9][0-9]*\\) dirty.*/\\1/p\')"; '
        'echo "bitmap_chunk=$(cat "$b/bitmap/chunksize" 2>/dev/null)"; break; done; fi; '
        "else echo array=absent; fi; "
        f'if [ -s {pid} ] && kill -0 "$(cat {pid})" 2>/dev/null; then echo export=running; '
        "else echo export=stopped; fi; "
        f"echo \"export_peers=$(ss -Htn state established '( sport = :{int(port)} )' 2>/dev/null | wc -l)\"; "
        f"{peer}true"
    )


def exported_legs_script() -> str:
    """Read-only: the disk of every export the harness's configurations name on the node."""
    return f"sed -n 's/^ *exportname = //p' {EXPORT_DIR}/*.conf 2>/dev/null"


def export_script(name: str, disk: str, ip: str, port: int) -> str:
    """Start ``nbd-server`` exporting ``disk`` on the replication address (idempotent)."""
    _check_ip(ip, "replication address")
    conf, pid = _paths(name)
    body = (
        f"[generic]\\n  user = root\\n  group = root\\n  listenaddr = {ip}\\n  port = {int(port)}\\n"
        f"[{check_array_name(name)}]\\n  exportname = {_check_disk(disk)}\\n  flush = true\\n  fua = true\\n"
    )
    return (
        f"mkdir -p {EXPORT_DIR}; "
        f'if [ -s {pid} ] && kill -0 "$(cat {pid})" 2>/dev/null; then exit 0; fi; '
        f"printf '{body}' > {conf}; modprobe nbd 2>/dev/null; nbd-server -C {conf} -p {pid}"
    )


def _stop_export(name: str) -> str:
    _conf, pid = _paths(name)
    # the per-client children the listener forked (they hold the leg open), then the listener;
    # wait until the leg is closed, or the assemble that follows finds it busy
    return (
        f'if [ -s {pid} ]; then p=$(cat {pid}); pkill -TERM -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; '
        'i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; '
        f"fi; rm -f {pid}; true"
    )


def _attach_leg(name: str, nbd: str, peer_ip: str, port: int, timeout_s: int) -> str:
    """Connect the NBD client to the peer's export and put it back into the array: ``--re-add``
    lets the bitmap resync only what changed while the leg was out."""
    md, dev = shlex.quote(array_device(name)), shlex.quote(check_nbd_device(nbd))
    _check_ip(peer_ip, "peer address")
    return (
        "modprobe nbd 2>/dev/null; "
        f"if ! nbd-client -c {dev} >/dev/null 2>&1; then "
        f"nbd-client {shlex.quote(peer_ip)} {int(port)} {dev} -N {shlex.quote(name)} "
        f"-t {int(timeout_s)} >/dev/null; fi; "
        f"mdadm {md} --re-add {dev} >/dev/null 2>&1 || mdadm {md} --add {dev}"
    )


def connect_leg_script(name: str, nbd: str, peer_ip: str, port: int, timeout_s: int) -> str:
    """End a ``disconnect``: the keeper may bring the leg back again, and it is attached now."""
    return f"rm -f {_standalone(name)}; {_attach_leg(name, nbd, peer_ip, port, timeout_s)}"


def disconnect_leg_script(name: str, nbd: str) -> str:
    """Take the NBD leg out of the array and disconnect it (the array runs on the local leg)."""
    md, dev = shlex.quote(array_device(name)), shlex.quote(check_nbd_device(nbd))
    take_out = (
        f"touch {_standalone(name)}; "
        f"mdadm {md} --fail {dev} >/dev/null 2>&1; mdadm {md} --remove {dev} >/dev/null 2>&1; "
        f"nbd-client -d {dev} >/dev/null 2>&1"
    )
    return (
        f"mkdir -p {EXPORT_DIR}; {_under_leg_lock(name, take_out)}; "
        f'! grep -q "^$(basename "$(readlink -e {md})") .*nbd" /proc/mdstat'
    )


def promote_script(name: str, disk: str) -> str:
    """Stop exporting the leg and assemble the array from it alone (the peer is gone)."""
    md = shlex.quote(array_device(name))
    return f"{_stop_export(name)}; sleep 0.2; mdadm --assemble --run {md} {shlex.quote(_check_disk(disk))}"


def demote_script(name: str, disk: str, nbd: str, ip: str, port: int) -> str:
    """Stop the array, disconnect its NBD leg and export the local leg again, for the new
    primary to connect to."""
    md, dev = shlex.quote(array_device(name)), shlex.quote(check_nbd_device(nbd))
    # without udev nobody else removes the name link of the stopped array
    return (
        f"mdadm --stop {md} && {{ rm -f {md}; nbd-client -d {dev} >/dev/null 2>&1; "
        f"{export_script(name, disk, ip, port)}; }}"
    )


def write_mode_script(name: str, nbd: str, *, asynchronous: bool, write_behind: int = 256) -> str:
    """Set the running array's replication mode: the NBD leg is always ``write_mostly`` (reads
    stay on the local leg, as DataKeeper serves them; md's read balancing would otherwise send
    some across the path), every other leg never; the bitmap's write-behind backlog (what
    ``--write-behind`` sets) makes writes to the NBD leg asynchronous, 0 synchronous.

    The flag lives in each member's superblock and follows a leg through a failover, so a
    local leg may arrive flagged: it is cleared, or its writes too could complete "behind".
    The kernel refuses a backlog while no member is write-mostly: flags first."""
    md = shlex.quote(array_device(name))
    leg = check_nbd_device(nbd).rsplit("/", 1)[1]
    backlog = int(write_behind) if asynchronous else 0
    return (
        f'b="/sys/block/$(basename "$(readlink -e {md})")/md"; '
        f'for d in "$b"/dev-*; do if [ "${{d##*/dev-}}" = {leg} ]; then echo writemostly > "$d/state" || exit 1; '
        'else echo -writemostly > "$d/state" || exit 1; fi; done; '
        f'echo {backlog} > "$b/bitmap/backlog"'
    )


def keeper_script(name: str, nbd: str, peer_ip: str, port: int, timeout_s: int) -> str:
    """The node-side loop that brings a lost NBD leg back, as DataKeeper's own service does:
    while the array runs here and no one asked for it to stay apart (``disconnect``), a
    faulty or missing NBD leg is reconnected to the peer's export and re-added (a bitmap
    resync).  Runs on both nodes of a pair; it acts only where the array is assembled."""
    md = shlex.quote(array_device(name))
    connect = _attach_leg(name, nbd, peer_ip, port, timeout_s)
    dev = shlex.quote(check_nbd_device(nbd))
    leg = check_nbd_device(nbd).rsplit("/", 1)[1]
    look_and_mend = (
        f"[ -e {_standalone(name)} ] && exit 0; "
        f'md=$(readlink -e {md} 2>/dev/null) || exit 0; b="/sys/block/${{md##*/}}/md"; '
        f'if [ -e "$b/dev-{leg}" ] && ! grep -q faulty "$b/dev-{leg}/state"; then exit 0; fi; '
        f"mdadm {md} --remove {dev} >/dev/null 2>&1; "
        f'nbd-client -c {dev} >/dev/null 2>&1 && ! [ -e "$b/dev-{leg}" ] && nbd-client -d {dev} >/dev/null 2>&1; '
        f"{{ {connect}; }} >/dev/null 2>&1"
    )
    # the directory once, not an exec every second
    return f"mkdir -p {EXPORT_DIR}; while :; do sleep 1; {_under_leg_lock(name, look_and_mend)}; done"


def end_verify_script(name: str) -> str:
    """End a ``check`` (one that reached its ``sync_max`` waits there), open the range again
    and print the mismatch count (512-byte sectors)."""
    md = shlex.quote(array_device(name))
    return (
        f'b="/sys/block/$(basename "$(readlink -e {md})")/md"; '
        'if [ "$(cat "$b/sync_action")" = check ]; then echo idle > "$b/sync_action"; fi; '
        'i=0; while [ "$(cat "$b/sync_action")" != idle ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; '
        'echo 0 > "$b/sync_min"; echo max > "$b/sync_max"; cat "$b/mismatch_cnt"'
    )


def verify_script(name: str, start_sector: int, stop_sector: int | None) -> str:
    """Start md's own ``check`` of both legs over a sector range (read-only: ``check``
    counts mismatches, ``repair`` would rewrite them)."""
    md = shlex.quote(array_device(name))
    stop = "max" if stop_sector is None else str(int(stop_sector))
    return (
        f'b="/sys/block/$(basename "$(readlink -e {md})")/md"; '
        f'[ "$(cat "$b/sync_action")" = idle ] || {{ echo "md is busy: $(cat "$b/sync_action")" >&2; exit 1; }}; '
        f'echo {int(start_sector)} > "$b/sync_min"; echo {stop} > "$b/sync_max"; echo check > "$b/sync_action"'
    )
