"""The device guard: fio only ever writes where the inventory said it may.

A benchmark pointed at the wrong disk (``/dev/vda``) destroys the root filesystem, and
fio's own guard only compares path strings with ``/etc/mtab``.  So before every
write phase we resolve the target *on the node* and refuse, fail-closed, unless:

* it is a block device whose real path is the replicated device of the inventory's pair, as
  the replication product resolves it on the node (DRBD: ``drbdadm sh-dev``), and not a device
  that backs it (DRBD: ``drbdadm sh-ll-dev``), both asked through :mod:`harness.replication`;
* nothing has it mounted, nothing holds it (``/sys/class/block/X/holders``), it has no
  partitions, and it carries no filesystem or RAID signature (``blkid -p``);
* it is at least as large as the job's footprint.

Any probe that fails is a refusal, never a pass (ceph-volume's rule: assume the unsafe case).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.errors import RefusedError
from harness.fields import DRBD_DEVICE_PATTERN, MD_DEVICE_PATTERN, SCRATCH_DEVICE_PATTERN
from harness.remote import CommandResult, Runner, Shell, run_batch
from harness.replication import Replication, backing_devices_probe, read_backing_devices

__all__ = [
    "DeviceFacts",
    "SizeHint",
    "evaluate_drbd_target",
    "evaluate_scratch_target",
    "guard_replicated_device",
    "guard_scratch_device",
    "probe_device",
]

_DRBD = re.compile(DRBD_DEVICE_PATTERN)
_MD_NAME = re.compile(MD_DEVICE_PATTERN)
_MD_KERNEL = re.compile(r"\A/dev/md[0-9]{1,4}\Z")
_PLAIN = re.compile(SCRATCH_DEVICE_PATTERN)


@dataclass(frozen=True)
class DeviceFacts:
    """What the node says about a device (raw command outputs, parsed)."""

    path: str
    realpath: str
    is_block: bool
    size_bytes: int | None
    mounted_at: tuple[str, ...]
    holders: tuple[str, ...]
    partitions: tuple[str, ...]
    signature: str
    #: the device as the replication product resolves the pair on the node (None: it cannot)
    sh_dev: str | None
    #: the devices that back it
    backing: tuple[str, ...]
    probe_errors: tuple[str, ...]
    extra: dict[str, CommandResult] = field(default_factory=dict)


def _lines(res: CommandResult) -> tuple[str, ...]:
    return tuple(line.strip() for line in res.stdout.splitlines() if line.strip())


def probe_device(
    node: Runner,
    device: str,
    replication: Replication | None,
    *,
    extra: Mapping[str, Sequence[str] | Shell] | None = None,
    resolved: tuple[str, str] | None = None,
) -> DeviceFacts:
    """Collect the facts in one round trip (read-only commands only).  ``extra`` commands
    ride along in the same round trip; their results land in ``facts.extra``.  ``replication``
    is the pair's replicated device on ``node`` (None for a raw scratch device): its identity
    probes ride along too, unless ``resolved`` gives the ``(device, backing device)`` already
    read from this node in this run (the configuration does not change under a run; drbdadm
    costs ~0.2 s per call on slow nodes)."""
    if not any(pattern.fullmatch(device) for pattern in (_DRBD, _MD_NAME, _PLAIN)):
        raise RefusedError(f"{node.name}: {device!r} is not a plain device path")
    q = shlex.quote
    # the kernel's name of the device, $k (an md array's /dev/md/NAME is a link to /dev/mdN);
    # only a link costs a fork and an exec
    kname = f"r={q(device)}; [ -L {q(device)} ] && r=$(readlink -e -- {q(device)}); k=${{r##*/}}"
    sysdir = "/sys/class/block/$k"
    # Shell builtins and sysfs wherever they answer: each exec costs ~0.1-0.2 s on a UML
    # guest, and this probe runs before every write phase.
    commands: dict[str, Sequence[str] | Shell] = {
        "realpath": Shell(
            f"if [ -L {q(device)} ]; then readlink -e -- {q(device)}; "
            f"elif [ -e {q(device)} ]; then echo {q(device)}; else false; fi"
        ),
        "isblock": Shell(f"[ -b {q(device)} ]"),
        "size": Shell(f"{kname}; read s < {sysdir}/size && echo $((s * 512))"),
        # by major:minor, so a mount through any alias of the device is found
        "mounts": Shell(
            f"{kname}; read mm < {sysdir}/dev && while read -r _ _ m _ mp _; do "
            f'[ "$m" = "$mm" ] && echo "$mp"; done < /proc/self/mountinfo; true'
        ),
        "holders": Shell(
            f'{kname}; for h in {sysdir}/holders/*; do [ -e "$h" ] && echo "${{h##*/}}"; done; [ -d {sysdir}/holders ]'
        ),
        "parts": Shell(f'{kname}; for p in {sysdir}/$k*; do [ -e "$p" ] && echo "$p"; done; true'),
        "blkid": ["blkid", "-p", "-o", "export", "--", device],
    }
    identity = replication.identity_probes() if replication is not None and resolved is None else {}
    for name in [*identity, *(extra or {})]:
        if name in commands:
            raise ValueError(f"extra command name {name!r} clashes with a probe")
    commands.update(identity)
    res = run_batch(node, {**commands, **(extra or {})}, timeout=30)
    errors: list[str] = []
    for name in ("realpath", "size", "holders"):
        if res[name].exit_code != 0:
            errors.append(f"{name}: exit {res[name].exit_code} {res[name].stderr.strip()}")
    # blkid -p exits 2 when it finds nothing: that is the answer we want, not an error.
    if res["blkid"].exit_code not in (0, 2):
        errors.append(f"blkid: exit {res['blkid'].exit_code} {res['blkid'].stderr.strip()}")
    size = res["size"].stdout.strip()
    sh_dev, backing = (resolved[0], tuple(resolved[1:])) if resolved else (None, tuple[str, ...]())
    if replication is not None and resolved is None:
        sh_dev, backing = replication.read_identity(res)
    return DeviceFacts(
        path=device,
        realpath=res["realpath"].stdout.strip(),
        is_block=res["isblock"].exit_code == 0,
        size_bytes=int(size) if size.isdigit() else None,
        mounted_at=_lines(res["mounts"]),
        holders=_lines(res["holders"]),
        partitions=_lines(res["parts"]),
        signature=" ".join(_lines(res["blkid"])) if res["blkid"].exit_code == 0 else "",
        sh_dev=sh_dev,
        backing=backing,
        probe_errors=tuple(errors),
        extra={name: res[name] for name in extra or {}},
    )


#: advice for a device too small for the job: what would fit its size (None: nothing to say)
SizeHint = Callable[[int], str | None]


def evaluate_drbd_target(
    facts: DeviceFacts, *, expected_device: str, needed_bytes: int, fits: SizeHint | None = None
) -> list[str]:
    """Every reason to refuse writing to ``facts.path`` (empty: safe to write)."""
    problems = [f"probe failed ({e})" for e in facts.probe_errors]
    if not facts.is_block:
        problems.append("not a block device")
    if _MD_NAME.fullmatch(expected_device):
        # md-nbd: the product's own answer is the array its name resolves to on the node
        if facts.sh_dev is None:
            problems.append(f"no md array {expected_device} is assembled on this node")
        elif facts.sh_dev != facts.realpath or not _MD_KERNEL.match(facts.realpath):
            problems.append(f"resolves to {facts.realpath or '?'}, not the md array {facts.sh_dev}")
    else:
        if facts.sh_dev is None:
            problems.append("drbdadm sh-dev failed: the resource is not configured on this node")
        elif facts.sh_dev != expected_device:
            problems.append(f"drbdadm sh-dev says the resource's device is {facts.sh_dev}, not {expected_device}")
        if facts.realpath != expected_device or not _DRBD.fullmatch(facts.realpath):
            problems.append(f"resolves to {facts.realpath or '?'}, not the DRBD device {expected_device}")
    problems += [f"is the resource's backing device {b}" for b in facts.backing if b in (facts.path, facts.realpath)]
    return problems + _common_problems(facts, needed_bytes, fits)


def _common_problems(facts: DeviceFacts, needed_bytes: int, fits: SizeHint | None = None) -> list[str]:
    """What makes any device unsafe to overwrite: in use, partitioned, carrying data, too small."""
    problems = []
    if facts.mounted_at:
        problems.append(f"is mounted at {', '.join(facts.mounted_at)}")
    if facts.holders:
        problems.append(f"is held by {', '.join(facts.holders)}")
    if facts.partitions:
        problems.append(f"has partitions {', '.join(p.rsplit('/', 1)[-1] for p in facts.partitions)}")
    if facts.signature:
        problems.append(f"carries a signature ({facts.signature})")
    if facts.size_bytes is None:
        problems.append("size unknown")
    elif facts.size_bytes < needed_bytes:
        hint = fits(facts.size_bytes) if fits is not None else None
        problems.append(
            f"is {facts.size_bytes} bytes, smaller than the {needed_bytes} bytes the job writes"
            + (f" ({hint})" if hint else "")
        )
    return problems


def guard_replicated_device(
    node: Runner,
    replication: Replication,
    *,
    needed_bytes: int,
    device: str | None = None,
    extra: Mapping[str, Sequence[str] | Shell] | None = None,
    resolved: tuple[str, str] | None = None,
    fits: SizeHint | None = None,
) -> DeviceFacts:
    """Probe and evaluate; raise RefusedError naming the node, device and every reason
    (``fits``: what would fit a device too small for the job)."""
    device = device or replication.device
    facts = probe_device(node, device, replication, extra=extra, resolved=resolved)
    problems = evaluate_drbd_target(facts, expected_device=device, needed_bytes=needed_bytes, fits=fits)
    if problems:
        raise RefusedError(
            f"{node.name}: refusing to write to {device} (resource {replication.resource}): " + "; ".join(problems)
        )
    return facts


def evaluate_scratch_target(facts: DeviceFacts, *, backing: Sequence[str], needed_bytes: int) -> list[str]:
    """Every reason to refuse fio (reads included) on a raw scratch device the inventory named:
    the same checks as for a DRBD device, and it must back no DRBD resource."""
    problems = [f"probe failed ({e})" for e in facts.probe_errors]
    if not facts.is_block:
        problems.append("not a block device")
    if not facts.realpath.startswith("/dev/"):
        problems.append(f"resolves to {facts.realpath or '?'}")
    if _DRBD.fullmatch(facts.realpath):
        problems.append("is a DRBD device (disk studies use raw scratch devices only)")
    if any(dev in (facts.path, facts.realpath) for dev in backing):
        problems.append("backs a DRBD resource")
    return problems + _common_problems(facts, needed_bytes)


def guard_scratch_device(node: Runner, *, device: str, scratch: Sequence[str], needed_bytes: int) -> DeviceFacts:
    """Probe ``device`` on ``node`` and refuse unless it is one of the node's inventory
    ``scratch`` devices and safe to overwrite; RefusedError names every reason."""
    if device not in scratch:
        raise RefusedError(
            f"{node.name}: {device} is not one of the scratch devices the inventory names "
            f"({', '.join(scratch) or 'none'})"
        )
    # every replicated device's backing device on this node (resources the harness may not know too)
    facts = probe_device(node, device, None, extra={"backing": backing_devices_probe()})
    backing = read_backing_devices(facts.extra["backing"].stdout)
    problems = evaluate_scratch_target(facts, backing=backing, needed_bytes=needed_bytes)
    if problems:
        raise RefusedError(f"{node.name}: refusing to use scratch device {device}: " + "; ".join(problems))
    return facts
