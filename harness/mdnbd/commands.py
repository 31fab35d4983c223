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

__all__ = [
    "EXPORT_DIR",
    "MD_DEVICE_PATTERN",
    "NBD_DEVICE_PATTERN",
    "array_device",
    "check_array_name",
    "check_nbd_device",
    "connect_leg_script",
    "demote_script",
    "disconnect_leg_script",
    "export_script",
    "exported_legs_script",
    "promote_script",
    "state_script",
    "verify_script",
]

MD_DEVICE_PATTERN: Final = r"^/dev/md/[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$"
NBD_DEVICE_PATTERN: Final = r"^/dev/nbd[0-9]{1,3}$"
_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,31}\Z")
_NBD = re.compile(r"\A/dev/nbd[0-9]{1,3}\Z")
_DISK = re.compile(r"\A/dev/[A-Za-z0-9/_.-]{1,64}\Z")
_IP = re.compile(r"\A[0-9a-fA-F.:]{2,45}\Z")
#: where the harness keeps an export's configuration and pid file on a node (tmpfs: a reboot
#: forgets the export, as it forgets a running nbd-server)
EXPORT_DIR: Final = "/run/harness-mdnbd"


def check_array_name(name: str) -> str:
    if not _NAME.match(name):
        raise ConfigError(f"md-nbd array name {name!r} must be 1-32 of [A-Za-z0-9_.-]")
    return name


def check_nbd_device(device: str) -> str:
    if not _NBD.match(device):
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


def state_script(name: str, port: int) -> str:
    """Read-only: the array (if assembled here) from sysfs, and this node's export of its leg."""
    md = shlex.quote(array_device(name))
    _conf, pid = _paths(name)
    return (
        f"md=$(readlink -e {md} 2>/dev/null); "
        'if [ -n "$md" ] && [ -d "/sys/block/${md##*/}/md" ]; then b="/sys/block/${md##*/}/md"; echo "array=$md"; '
        "for f in level raid_disks array_state degraded sync_action sync_completed mismatch_cnt; do "
        'echo "$f=$(cat "$b/$f" 2>/dev/null)"; done; '
        'for d in "$b"/dev-*; do [ -e "$d/state" ] || continue; '
        'echo "member ${d##*/dev-} slot=$(cat "$d/slot") state=$(cat "$d/state") errors=$(cat "$d/errors")"; done; '
        'echo "bitmap_backlog=$(cat "$b/bitmap/backlog" 2>/dev/null)"; '
        "else echo array=absent; fi; "
        f'if [ -s {pid} ] && kill -0 "$(cat {pid})" 2>/dev/null; then echo export=running; '
        "else echo export=stopped; fi; "
        f"echo \"export_peers=$(ss -Htn state established '( sport = :{int(port)} )' 2>/dev/null | wc -l)\""
    )


def exported_legs_script() -> str:
    """Read-only: the disk of every export the harness's configurations name on the node."""
    return f"sed -n 's/^ *exportname = //p' {EXPORT_DIR}/*.conf 2>/dev/null"


def export_script(name: str, disk: str, ip: str, port: int) -> str:
    """Start ``nbd-server`` exporting ``disk`` on the replication address (idempotent)."""
    if not _IP.match(ip):
        raise ConfigError(f"replication address {ip!r} is not an IP address")
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
    # the listener, then the per-client children it forked (they hold the leg open)
    return (
        f'if [ -s {pid} ]; then p=$(cat {pid}); kill "$p" 2>/dev/null; pkill -TERM -P "$p" 2>/dev/null; fi; '
        f"pkill -f 'nbd-server -C {_paths(name)[0]}' 2>/dev/null; rm -f {pid}; true"
    )


def connect_leg_script(name: str, nbd: str, peer_ip: str, port: int, timeout_s: int) -> str:
    """Connect the NBD client to the peer's export and put it back into the array: ``--re-add``
    lets the bitmap resync only what changed while the leg was out."""
    md, dev = shlex.quote(array_device(name)), shlex.quote(check_nbd_device(nbd))
    if not _IP.match(peer_ip):
        raise ConfigError(f"peer address {peer_ip!r} is not an IP address")
    return (
        f"modprobe nbd 2>/dev/null; "
        f"if ! nbd-client -c {dev} >/dev/null 2>&1; then "
        f"nbd-client {shlex.quote(peer_ip)} {int(port)} {dev} -N {shlex.quote(name)} "
        f"-t {int(timeout_s)} >/dev/null; fi; "
        f"mdadm {md} --re-add {dev} >/dev/null 2>&1 || mdadm {md} --add {dev}"
    )


def disconnect_leg_script(name: str, nbd: str) -> str:
    """Take the NBD leg out of the array and disconnect it (the array runs on the local leg)."""
    md, dev = shlex.quote(array_device(name)), shlex.quote(check_nbd_device(nbd))
    return (
        f"mdadm {md} --fail {dev} >/dev/null 2>&1; mdadm {md} --remove {dev} >/dev/null 2>&1; "
        f"nbd-client -d {dev} >/dev/null 2>&1; "
        f'! grep -q "^$(basename "$(readlink -e {md})") .*nbd" /proc/mdstat'
    )


def promote_script(name: str, disk: str) -> str:
    """Stop exporting the leg and assemble the array from it alone (the peer is gone)."""
    md = shlex.quote(array_device(name))
    return f"{_stop_export(name)}; sleep 0.2; mdadm --assemble --run {md} {shlex.quote(_check_disk(disk))}"


def demote_script(name: str, disk: str, ip: str, port: int) -> str:
    """Stop the array and export its local leg again, for the new primary to connect to."""
    md = shlex.quote(array_device(name))
    return f"mdadm --stop {md}; {export_script(name, disk, ip, port)}"


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
