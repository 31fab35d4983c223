"""Root filesystems of other Debian releases for lab guests, built once with debootstrap and cached.

By default a guest boots the host's own root (``rootflags=/``).  A node with ``lab.nodes.<node>.root:
bullseye`` (or ``bookworm``, ``trixie``) boots a minimal root of that release instead, so that the
harness meets the tool versions real clusters run.  A root is:

* built with ``debootstrap --variant=minbase`` and exactly :data:`NODE_PACKAGES`, from the mirror
  of the host's apt sources (:mod:`harness.lab.mirror`);
* cached under ``/var/cache/harness-lab/roots/<suite>-<key>``, where the key hashes what the root
  is made of (suite, package list, stage-0 init): a changed list is a new directory, hence a rebuild;
* verified before it is used: every tool of :mod:`harness.lab.userland` must answer in a chroot,
  and only then is its stamp (``etc/harness-lab-root.json``) written and the directory renamed
  into place, so a half-built root is never taken for a built one;
* shared read-only by every guest that boots it, as the host's root is: each guest's writes go
  to an overlay on its own tmpfs (``guest/init1.sh``).

What a built root lacks is the host's: the UML kernel's modules and the lab's own files.  The
stage-0 init (:data:`STAGE0`, baked into the root) mounts the lab state directory through hostfs
at ``/lab`` and hands over to the project's ``init1.sh`` there, which mounts the modules from
the host the same way.  The xstate preload stays on the host side (it is loaded by linux.uml).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.errors import InfraError
from harness.inventory.models import LabRoot, LabSpec
from harness.lab.mirror import MIRROR_ENV, host_mirror, mirror_serves
from harness.lab.userland import PROBE_SCRIPT, Userland, parse_probe
from harness.progress import Progress

__all__ = [
    "NODE_PACKAGES",
    "ROOT_CACHE_ENV",
    "STAGE0",
    "STAGE0_PATH",
    "STAMP",
    "BuiltRoot",
    "build_root",
    "ensure_roots",
    "missing_for_build",
    "node_root",
    "prune_stale_roots",
    "root_cache",
    "root_dir",
    "root_key",
    "used_suites",
]

#: Every package a lab node runs something of: sshd (the harness's transport), sudo (posing
#: inventories log in as a non-root operator), fio, drbd-utils (drbdadm-84 drives the UML
#: kernel's DRBD 8.4), iproute2 (ip, tc), kmod (modprobe), mdadm, xfsprogs and e2fsprogs (disk
#: studies, and bonnie++, their second engine; with nbd-client and nbd-server, the md-nbd
#: pairs), iputils-ping (RTT), iperf3 (path rate), procps
#: (pkill) and util-linux (setsid, wipefs, findmnt, blockdev).  No python3: nothing the
#: harness runs in a guest needs it.
NODE_PACKAGES: Final = (
    "bonnie++",
    "drbd-utils",
    "e2fsprogs",
    "fio",
    "iperf3",
    "iproute2",
    "iputils-ping",
    "kmod",
    "mdadm",
    "nbd-client",
    "nbd-server",
    "openssh-server",
    "procps",
    "sudo",
    "util-linux",
    "xfsprogs",
)

ROOT_CACHE_ENV: Final = "HARNESS_LAB_ROOT_CACHE"
_DEFAULT_CACHE: Final = Path("/var/cache/harness-lab/roots")
#: the stamp a verified root carries (inside it: a guest can read what it runs on)
STAMP: Final = "etc/harness-lab-root.json"
STAGE0_PATH: Final = "/sbin/harness-lab-init"
#: The built root's init (PID 1): the lab's files live on the host, so reach them through
#: hostfs at /lab (a directory of the root), then run the project's stage 1 from there.
STAGE0: Final = """#!/bin/sh
# Stage 0 of an embedded-lab guest on a built root (harness.lab.roots): mount the lab state
# directory from the host through hostfs at /lab, then run the lab's stage-1 init from it.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
labdir=$(sed -n 's/.*labdir=\\([^ ]*\\).*/\\1/p' /proc/cmdline)
umount /proc
mount -t hostfs -o "$labdir" labdir /lab
exec /bin/sh /lab/guest/init1.sh
"""
#: bump when the way a root is built changes in a way its inputs do not show
_FORMAT: Final = 1


def root_cache() -> Path:
    return Path(os.environ.get(ROOT_CACHE_ENV) or _DEFAULT_CACHE)


def root_key(suite: str, packages: tuple[str, ...] = NODE_PACKAGES) -> str:
    """12 hex digits naming what a root is made of: suite, packages (any order), stage 0."""
    material = json.dumps({"format": _FORMAT, "suite": suite, "packages": sorted(set(packages)), "stage0": STAGE0})
    return hashlib.sha256(material.encode()).hexdigest()[:12]


def root_dir(suite: str, packages: tuple[str, ...] = NODE_PACKAGES, cache: Path | None = None) -> Path:
    """Where the root of ``suite`` with ``packages`` lives once built."""
    return (cache or root_cache()) / f"{suite}-{root_key(suite, packages)}"


def used_suites(spec: LabSpec, nodes: list[str]) -> list[str]:
    """The built roots the lab's nodes boot (``host`` needs none), sorted."""
    return sorted({spec.root_of(n) for n in nodes} - {"host"})


@dataclass(frozen=True)
class BuiltRoot:
    """A verified root: where it is, what it is and how long it took to make."""

    suite: str
    path: Path
    userland: Userland
    build_s: float | None  # None: taken from the cache

    @classmethod
    def load(cls, path: Path) -> BuiltRoot | None:
        """The root at ``path`` if it carries a stamp of the right key; None otherwise."""
        try:
            stamp = json.loads((path / STAMP).read_text())
            suite = str(stamp["suite"])
            if stamp.get("key") != root_key(suite, tuple(stamp["packages"])) or path.name != f"{suite}-{stamp['key']}":
                return None
            versions = {str(k): str(v) for k, v in stamp["versions"].items()}
            userland = Userland(stamp["os"], stamp["codename"], stamp["debian_version"], versions)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return cls(suite, path, userland, None)


def missing_for_build(suites: list[str], cache: Path | None = None) -> list[str]:
    """What stops the roots of ``suites`` that are not cached yet from being built (empty: nothing).

    Checked before anything is booted, so ``lab up`` fails with what to install or set."""
    to_build = [s for s in suites if BuiltRoot.load(root_dir(s, cache=cache)) is None]
    if not to_build:
        return []
    problems: list[str] = []
    if shutil.which("debootstrap") is None:
        problems.append(
            f"debootstrap is not installed; the lab builds the {', '.join(to_build)} root(s) with it: "
            "apt-get install -y debootstrap  (or run scripts/bootstrap)"
        )
    mirror = host_mirror()
    if mirror is None:
        problems.append(
            "no Debian mirror in the host's apt sources (/etc/apt/sources.list, sources.list.d/*.sources) "
            f"to build the {', '.join(to_build)} root(s) from; set {MIRROR_ENV}=http://deb.debian.org/debian"
        )
    else:
        for suite in to_build:
            why = mirror_serves(mirror, suite)
            if why is not None:
                problems.append(f"the {suite} root cannot be built: mirror {mirror} does not serve it: {why}")
    return problems


@contextmanager
def _build_lock(cache: Path, name: str) -> Iterator[None]:
    """One builder per root at a time (two labs may start at once)."""
    cache.mkdir(mode=0o755, parents=True, exist_ok=True)
    with open(cache / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run(argv: list[str], what: str, timeout: float) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-1500:]
        raise InfraError(f"{what} failed (exit {done.returncode}: {' '.join(argv)}):\n{tail}")
    return done.stdout


def _finish(tmp: Path) -> None:
    """What a lab guest needs of the root beyond the packages, and nothing it should not carry."""
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for entry in (tmp / cache).glob("*"):
            if entry.is_file():
                entry.unlink()
    (tmp / "lab").mkdir(mode=0o755, exist_ok=True)  # stage 0 mounts the lab state directory here
    stage0 = tmp / STAGE0_PATH.lstrip("/")
    stage0.write_text(STAGE0)
    os.chmod(stage0, 0o755)
    os.chmod(tmp, 0o755)  # the guests read it as the unprivileged lab uid


def _verify(tmp: Path, suite: str) -> Userland:
    """Every probed tool must answer in the root, and the root must be the release asked for."""
    userland = parse_probe(_run(["chroot", str(tmp), "/bin/sh", "-c", PROBE_SCRIPT], f"checking the {suite} root", 120))
    problems = [f"{tool} does not run" for tool in userland.missing()]
    if userland.codename != suite:
        problems.append(f"/etc/os-release says {userland.codename or 'nothing'}, not {suite}")
    if not (tmp / "usr/sbin/sshd").exists():
        problems.append("no /usr/sbin/sshd")
    if problems:
        raise InfraError(f"the {suite} root built in {tmp} is not usable: {'; '.join(problems)}")
    return userland


def _in_use(root: Path) -> bool:
    """Whether a running guest boots ``root`` (its linux.uml command line names it)."""
    needle = f"rootflags={root}".encode()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and needle in (proc / "cmdline").read_bytes().split(b"\0"):
                return True
        except OSError:
            continue
    return False


def prune_stale_roots(final: Path, suite: str, progress: Progress) -> None:
    """Remove the roots of ``suite`` built from an older package list, unless a guest runs on one."""
    for old in final.parent.glob(f"{suite}-*"):
        if old != final and "." not in old.name and old.is_dir() and not _in_use(old):
            progress(f"lab: removing the outdated root {old}")
            shutil.rmtree(old, ignore_errors=True)


def build_root(suite: str, progress: Progress, cache: Path | None = None) -> BuiltRoot:
    """The verified root of ``suite``: from the cache, or built now (about a minute)."""
    final = root_dir(suite, cache=cache)
    with _build_lock(final.parent, final.name):
        cached = BuiltRoot.load(final)
        if cached is not None:
            return cached
        problems = missing_for_build([suite], cache)
        if problems:
            raise InfraError("; ".join(problems))
        mirror = host_mirror()
        assert mirror is not None  # missing_for_build said so
        tmp = final.with_name(f"{final.name}.building")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)  # a stale or unverified one
        progress(f"lab: building the {suite} root ({len(NODE_PACKAGES)} packages from {mirror}); once, ~1-2 min")
        start = time.monotonic()
        argv = ["debootstrap", "--variant=minbase", f"--include={','.join(NODE_PACKAGES)}", suite, str(tmp), mirror]
        try:
            # no service starts: minbase has no init system, and invoke-rc.d refuses without one
            _run(argv, f"debootstrap of {suite}", 1800)
            _finish(tmp)
            userland = _verify(tmp, suite)
            stamp = {
                "suite": suite,
                "key": root_key(suite),
                "packages": list(NODE_PACKAGES),
                "mirror": mirror,
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "build_s": round(time.monotonic() - start, 1),
                "os": userland.os,
                "codename": userland.codename,
                "debian_version": userland.debian_version,
                "versions": userland.versions,
            }
            (tmp / STAMP).write_text(json.dumps(stamp, indent=2, sort_keys=True) + "\n")
            tmp.rename(final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        built = time.monotonic() - start
        prune_stale_roots(final, suite, progress)
        progress(f"lab: {suite} root built and verified in {built:.0f} s: {userland.describe()}")
        return BuiltRoot(suite, final, userland, round(built, 1))


def ensure_roots(spec: LabSpec, nodes: list[str], progress: Progress) -> dict[str, BuiltRoot]:
    """Every root the lab's nodes boot, built if missing; by suite."""
    suites = used_suites(spec, nodes)
    problems = missing_for_build(suites)
    if problems:
        raise InfraError("the lab cannot build its guest roots:\n  " + "\n  ".join(problems))
    # side by side: each build waits mostly on the mirror and on dpkg's fsyncs, not on a CPU
    with ThreadPoolExecutor(max_workers=max(1, len(suites))) as pool:
        built = list(pool.map(lambda suite: build_root(suite, progress), suites))
    return {root.suite: root for root in built}


def node_root(spec: LabSpec, node: str) -> Path | None:
    """The root directory ``node`` boots from, None for the host's root."""
    suite: LabRoot = spec.root_of(node)
    return None if suite == "host" else root_dir(suite)
