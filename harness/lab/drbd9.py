"""The lab on DRBD 9: the modules the user supplies, checked before boot, and the pairs they bring.

The lab's UML kernel ships DRBD 8.4 only, and no distribution packages DRBD 9 for it.  A user
who built DRBD 9 for that very kernel names the directory of the modules in
``HARNESS_LAB_DRBD_MODULES`` (or ``lab.drbd_modules`` in the inventory; the variable wins).
The project never builds or ships such modules.  Without them the lab runs 8.4, exactly as
before, and leaves out the pairs only DRBD 9 can run (``lab.drbd9_pairs``).

Before anything is created the directory is checked, each finding naming the file and what is
wrong with it:

* ``drbd.ko`` is DRBD 9 (its ``version=``), and ``drbd_transport_tcp.ko`` (DRBD 9 replicates
  through a transport module) comes from the same build;
* every module's ``vermagic`` is the one of the lab's kernel, read from its own stock modules
  (``/usr/lib/uml/modules/<release>/``): the kernel refuses a module built for another, and the
  machine (the ELF architecture) matches theirs;
* everything they depend on is there: in the directory (DRBD's own ``handshake`` on kernels
  without one) or among the kernel's stock modules (``lru_cache``), loaded first.

Inside each guest the modules are loaded in that order, the stock ones with ``modprobe`` and
the supplied files with ``insmod`` (the lab copies them where every guest, on any root, sees
them); the boot fails unless ``/proc/drbd`` then reports the version checked here.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.errors import ConfigError
from harness.inventory.models import Inventory, LabSpec
from harness.lab.modinfo import ModInfo, read_modinfo

__all__ = [
    "ENV_VAR",
    "GUEST_MODULES",
    "LINUX_UML",
    "UML_MODULES",
    "DrbdModules",
    "ModuleLoad",
    "check_built_for",
    "check_modules",
    "lab_inventory",
    "load_order",
    "modules_dir",
    "stock_modules",
    "uml_release",
]

ENV_VAR: Final = "HARNESS_LAB_DRBD_MODULES"
LINUX_UML: Final = Path("/usr/bin/linux.uml")
UML_MODULES: Final = Path("/usr/lib/uml/modules")
#: where in the lab state directory the supplied modules are copied (every guest sees it at /lab)
GUEST_MODULES: Final = "drbd-modules"
#: the modules DRBD 9 needs besides drbd.ko: its TCP transport, and DRBD's own TLS handshake
#: helper where the kernel has none (loaded when the directory holds it)
TRANSPORT: Final = "drbd_transport_tcp"
HANDSHAKE: Final = "handshake"


@dataclass(frozen=True)
class ModuleLoad:
    """One module to load in a guest: a supplied file (``file``), or the kernel's own (``file`` None)."""

    name: str
    file: Path | None = None


@dataclass(frozen=True)
class DrbdModules:
    """A checked directory of DRBD 9 modules and the order they load in."""

    directory: Path
    version: str
    release: str
    vermagic: str
    loads: tuple[ModuleLoad, ...]

    @property
    def supplied(self) -> tuple[ModuleLoad, ...]:
        return tuple(m for m in self.loads if m.file is not None)

    def describe(self) -> str:
        stock = [m.name for m in self.loads if m.file is None]
        own = ", ".join(m.name for m in self.supplied)
        kernel = f"; {', '.join(stock)} of linux.uml {self.release}" if stock else ""
        return f"DRBD {self.version} (modules from {self.directory}: {own}{kernel})"

    def guest_lines(self, guest_dir: str) -> list[str]:
        """Boot-script lines that load the modules in order from ``guest_dir`` (where the lab
        copied the supplied files) and fail unless ``/proc/drbd`` then says this version."""
        stock = [m.name for m in self.loads if m.file is None]
        lines = [shlex.join(["modprobe", "-a", *stock])] if stock else []
        lines += [shlex.join(["insmod", f"{guest_dir}/{m.file.name}"]) for m in self.supplied if m.file is not None]
        lines.append(shlex.join(["grep", "-q", f"^version: {self.version} ", "/proc/drbd"]))
        return lines


def modules_dir(spec: LabSpec, environ: Mapping[str, str] = os.environ) -> tuple[Path, str] | None:
    """The directory of DRBD 9 modules the lab should run, and where it was named; None: 8.4."""
    value = environ.get(ENV_VAR, "").strip()
    if value:
        return Path(value), ENV_VAR
    if spec.drbd_modules is not None:
        return spec.drbd_modules, "lab.drbd_modules"
    return None


def lab_inventory(
    inventory: Inventory, environ: Mapping[str, str] = os.environ, *, drbd9: bool | None = None
) -> Inventory:
    """The lab inventory as the lab runs it: with ``lab.drbd9_pairs`` on DRBD 9; on 8.4 without
    them, refusing a pair of ``pairs:`` that names more nodes (8.4 connects two).  Whether it
    runs DRBD 9 is whether modules are named, unless ``drbd9`` says (a replay: as recorded)."""
    spec = inventory.lab
    if spec is None:
        return inventory
    if (modules_dir(spec, environ) is not None) if drbd9 is None else drbd9:
        missing = {name: pair for name, pair in spec.drbd9_pairs.items() if name not in inventory.pairs}
        return inventory.with_pairs(missing) if missing else inventory
    for name, pair in sorted(inventory.pairs.items()):
        if pair.peers:
            raise ConfigError(
                f"pair {name!r}: resource {pair.resource} has {len(pair.nodes)} nodes, which needs DRBD 9; the lab "
                f"runs its kernel's DRBD 8.4 unless {ENV_VAR} (or lab.drbd_modules) names DRBD 9 modules "
                "(put such pairs under lab.drbd9_pairs)"
            )
    return inventory


def uml_release(linux: Path = LINUX_UML, modules_root: Path = UML_MODULES) -> str:
    """The lab kernel's release: the one module tree of ``modules_root``, or with several the
    one ``linux.uml --version`` prints."""
    trees = sorted(p.name for p in modules_root.glob("*") if (p / "modules.dep").is_file())
    if len(trees) == 1:
        return trees[0]
    try:
        out = subprocess.run([str(linux), "--version"], capture_output=True, text=True, timeout=30, check=False)
    except OSError as exc:
        raise ConfigError(f"{linux}: cannot tell the lab kernel's release ({exc.strerror or exc})") from None
    release = out.stdout.strip().split()[-1] if out.stdout.strip() else ""
    if release not in trees:
        raise ConfigError(
            f"{linux} --version says {release or 'nothing'!r}, and {modules_root} holds modules for "
            f"{', '.join(trees) or 'no release'}: reinstall user-mode-linux"
        )
    return release


def stock_modules(release: str, modules_root: Path = UML_MODULES) -> dict[str, Path]:
    """The kernel's own modules by name (``modules.dep``), e.g. ``lru_cache`` -> its .ko."""
    tree = modules_root / release
    try:
        lines = (tree / "modules.dep").read_text().splitlines()
    except OSError as exc:
        raise ConfigError(
            f"{tree}/modules.dep: cannot read it ({exc.strerror or exc}); reinstall user-mode-linux"
        ) from None
    found: dict[str, Path] = {}
    for line in lines:
        rel = line.partition(":")[0].strip()
        if rel.endswith(".ko"):
            found[Path(rel).name.removesuffix(".ko").replace("-", "_")] = tree / rel
    return found


def _need(directory: Path, name: str, source: str, release: str) -> Path:
    path = directory / f"{name}.ko"
    if not path.is_file():
        raise ConfigError(
            f"{path}: missing; {source} must name a directory holding DRBD 9's drbd.ko and {TRANSPORT}.ko "
            f"built for linux.uml {release}"
        )
    return path


def check_built_for(info: ModInfo, reference: ModInfo, release: str) -> None:
    """A supplied module the lab's kernel would refuse: built for another kernel or machine."""
    if info.machine != reference.machine:
        raise ConfigError(
            f"{info.path}: built for {info.machine_name}, the lab's kernel modules are {reference.machine_name}"
        )
    if info.vermagic != reference.vermagic:
        raise ConfigError(
            f"{info.path}: vermagic {info.vermagic!r} is not linux.uml {release}'s {reference.vermagic!r} "
            f"(as {reference.path.name} has it): built for another kernel, the guests would refuse it"
        )


def _versions(drbd: ModInfo, transport: ModInfo, source: str) -> str:
    version = drbd.version or ""
    if drbd.name != "drbd":
        raise ConfigError(f"{drbd.path}: its module name is {drbd.name!r}, not drbd")
    if not version.startswith("9."):
        raise ConfigError(
            f"{drbd.path}: is DRBD {version or '(no version)'}, not DRBD 9 (the lab's kernel brings 8.4 itself, "
            f"which it runs without {source})"
        )
    if transport.version not in (None, version):
        raise ConfigError(f"{transport.path}: is from DRBD {transport.version}, drbd.ko from {version}: one build")
    return version


class _Supplied:
    """The directory's module files by module name, each read when first needed."""

    def __init__(self, directory: Path) -> None:
        self.files = {p.name.removesuffix(".ko").replace("-", "_"): p for p in sorted(directory.glob("*.ko"))}
        self._read: dict[str, ModInfo] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.files

    def __getitem__(self, name: str) -> ModInfo:
        if name not in self._read:
            self._read[name] = read_modinfo(self.files[name])
        return self._read[name]


def load_order(
    wanted: Sequence[str], depends: Callable[[str], tuple[str, ...] | None], stock: Collection[str]
) -> tuple[ModuleLoad, ...]:
    """``wanted`` and every module they need, each after what it needs, the kernel's own first.

    ``depends(name)`` is what a supplied module needs (None: it is not supplied; then it must be
    one of ``stock``, the kernel's own, which ``modprobe`` loads with theirs).  A supplied file
    is named ``<name>.ko``.  ConfigError names a module nothing provides, or a cycle."""
    placed: list[str] = []
    stock_first: list[str] = []
    visiting: list[str] = []

    def visit(name: str, needed_by: str | None) -> None:
        if name in placed or name in stock_first:
            return
        if name in visiting:
            raise ConfigError(f"{name}.ko: depends on itself through {' -> '.join([*visiting, name])}")
        needs = depends(name)
        if needs is None:
            if name not in stock:
                raise ConfigError(
                    f"{needed_by}.ko: needs module {name}, which is neither supplied nor the kernel's own"
                )
            stock_first.append(name)
            return
        visiting.append(name)
        for dep in needs:
            visit(dep, name)
        visiting.pop()
        placed.append(name)

    for name in wanted:
        visit(name, None)
    return (*(ModuleLoad(n) for n in stock_first), *(ModuleLoad(n, Path(f"{n}.ko")) for n in placed))


def check_modules(
    directory: Path, *, source: str = ENV_VAR, release: str | None = None, modules_root: Path = UML_MODULES
) -> DrbdModules:
    """Check ``directory`` (named by ``source``) as described above; :class:`ConfigError`
    names the file and what is wrong with it, before anything of the lab is created."""
    if not directory.is_dir():
        raise ConfigError(f"{source}={directory}: not a directory of DRBD 9 modules")
    release = release or uml_release(modules_root=modules_root)
    stock = stock_modules(release, modules_root)
    if "lru_cache" not in stock:
        raise ConfigError(f"{modules_root / release}: the lab kernel has no lru_cache module, which DRBD needs")
    reference = read_modinfo(stock["lru_cache"])
    for name in ("drbd", TRANSPORT):
        _need(directory, name, source, release)
    supplied = _Supplied(directory)
    version = _versions(supplied["drbd"], supplied[TRANSPORT], source)

    def depends(name: str) -> tuple[str, ...] | None:
        if name not in supplied:
            return None
        # DRBD's own TLS handshake helper, where the directory has one: before the transport uses it
        extra = (HANDSHAKE,) if name == TRANSPORT and HANDSHAKE in supplied else ()
        return (*supplied[name].depends, *extra)

    try:
        order = load_order(["drbd", TRANSPORT], depends, stock)
    except ConfigError as exc:
        raise ConfigError(f"{directory}/{exc} (linux.uml {release})") from None
    loads = tuple(ModuleLoad(m.name, supplied.files[m.name] if m.file is not None else None) for m in order)
    for load in loads:
        if load.file is not None:
            check_built_for(supplied[load.name], reference, release)
    return DrbdModules(directory, version, release, reference.vermagic or "", loads)
