"""The lab on DRBD 9 modules the user supplies: the checks before boot on real module files (the
UML kernel's own stock modules under /usr/lib/uml/modules, and a DRBD 9 build when
HARNESS_LAB_DRBD_MODULES names one), the load order, and what the lab leaves alone on 8.4."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.inventory import Inventory, load_inventory, parse_inventory
from harness.lab.drbd9 import (
    ENV_VAR,
    UML_MODULES,
    DrbdModules,
    ModuleLoad,
    check_built_for,
    check_modules,
    lab_inventory,
    load_order,
    modules_dir,
    stock_modules,
    uml_release,
)
from harness.lab.drbdrun import KERNEL_DRBD, read_drbd_in_use
from harness.lab.modinfo import ModuleFileError, parse_modinfo, read_modinfo
from tests.doubles import Answer, FakeRunner, data

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventories" / "lab.yaml"
needs_uml = pytest.mark.skipif(
    not any(UML_MODULES.glob("*/modules.dep")), reason="user-mode-linux's modules are not installed here"
)


@pytest.fixture(scope="module")
def stock() -> dict[str, Path]:
    return stock_modules(uml_release())


@needs_uml
def test_stock_modules_read_as_modinfo_prints_them(stock: dict[str, Path]) -> None:
    lru = read_modinfo(stock["lru_cache"])
    drbd = read_modinfo(stock["drbd"])
    release = uml_release()
    assert lru.name == "lru_cache" and lru.depends == () and lru.machine_name == "x86-64"
    assert lru.vermagic is not None and lru.vermagic.split()[0] == release
    assert (drbd.name, drbd.depends) == ("drbd", ("lru_cache",))
    assert drbd.vermagic == lru.vermagic
    if shutil.which("modinfo"):  # kmod's own reading of the same file, where it is installed
        for key, value in (("version", drbd.version), ("vermagic", drbd.vermagic), ("depends", "lru_cache")):
            out = subprocess.run(
                ["modinfo", "-F", key, str(stock["drbd"])], check=False, capture_output=True, text=True
            )
            assert " ".join(out.stdout.split()) == value


@needs_uml
def test_the_kernel_release_is_the_module_trees(stock: dict[str, Path]) -> None:
    release = uml_release()
    assert (UML_MODULES / release / "modules.dep").is_file()
    assert stock["lru_cache"] == UML_MODULES / release / "kernel" / "lib" / "lru_cache.ko"
    linux = Path("/usr/bin/linux.uml")
    if linux.exists():
        out = subprocess.run([str(linux), "--version"], check=False, capture_output=True, text=True, timeout=30)
        assert out.stdout.split()[-1] == release


def test_modinfo_strings_split_at_nul() -> None:
    data = b"version=9.2.18\0license=GPL\0\0\0depends=lru_cache,handshake\0alias=a\0alias=b\0"
    assert parse_modinfo(data) == {
        "version": ("9.2.18",),
        "license": ("GPL",),
        "depends": ("lru_cache,handshake",),
        "alias": ("a", "b"),
    }


@needs_uml
def test_files_that_are_no_module_are_named(tmp_path: Path, stock: dict[str, Path]) -> None:
    text = tmp_path / "drbd.ko"
    text.write_text("not a module\n")
    with pytest.raises(ModuleFileError, match=rf"{text}: not an ELF file") as caught:
        read_modinfo(text)
    assert caught.value.exit_code == 2
    cut = tmp_path / "cut.ko"
    cut.write_bytes(stock["lru_cache"].read_bytes()[:200])
    with pytest.raises(ModuleFileError, match=rf"{cut}: truncated ELF file"):
        read_modinfo(cut)
    with pytest.raises(ModuleFileError, match="cannot read it"):
        read_modinfo(tmp_path / "absent.ko")


def _supplied(tmp_path: Path, files: dict[str, Path]) -> Path:
    directory = tmp_path / "modules"
    directory.mkdir()
    for name, source in files.items():
        shutil.copyfile(source, directory / name)
    return directory


@needs_uml
def test_the_kernels_own_drbd_84_is_refused_as_not_drbd_9(tmp_path: Path, stock: dict[str, Path]) -> None:
    directory = _supplied(tmp_path, {"drbd.ko": stock["drbd"], "drbd_transport_tcp.ko": stock["lru_cache"]})
    with pytest.raises(ConfigError, match=rf"{directory}/drbd.ko: is DRBD 8.4.11, not DRBD 9") as caught:
        check_modules(directory)
    assert caught.value.exit_code == 2


@needs_uml
def test_a_missing_directory_or_transport_is_named(tmp_path: Path, stock: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match=rf"^{ENV_VAR}={tmp_path}/none: not a directory"):
        check_modules(tmp_path / "none")
    directory = _supplied(tmp_path, {"drbd.ko": stock["drbd"]})
    with pytest.raises(ConfigError, match=rf"{directory}/drbd_transport_tcp.ko: missing; lab.drbd_modules must"):
        check_modules(directory, source="lab.drbd_modules")


@needs_uml
def test_a_module_built_for_another_kernel_is_refused(stock: dict[str, Path]) -> None:
    module = read_modinfo(stock["drbd"])
    lab = read_modinfo(stock["lru_cache"])
    check_built_for(module, lab, uml_release())  # the same kernel: accepted
    other = dataclasses.replace(lab, fields={**lab.fields, "vermagic": ("6.1.177 SMP mod_unload ",)})
    with pytest.raises(ConfigError, match=r"drbd.ko: vermagic '6.1.176 mod_unload' is not linux.uml .* '6.1.177 SMP"):
        check_built_for(module, other, "6.1.177")
    arm = dataclasses.replace(lab, machine=183)
    with pytest.raises(ConfigError, match=r"drbd\.ko: built for x86-64, the lab's kernel modules are aarch64"):
        check_built_for(module, arm, uml_release())


def test_a_real_drbd_9_build_loads_in_dependency_order() -> None:
    directory = os.environ.get(ENV_VAR, "")
    if not directory or not (Path(directory) / "drbd.ko").is_file():
        pytest.skip(f"set {ENV_VAR} to a directory of DRBD 9 modules built for linux.uml to check a real build")
    modules = check_modules(Path(directory))
    names = [m.name for m in modules.loads]
    assert modules.version.startswith("9.")
    assert names.index("drbd") < names.index("drbd_transport_tcp")
    assert modules.loads[0] == ModuleLoad("lru_cache")  # the kernel's own, loaded first
    assert all(m.file is not None and m.file.parent == Path(directory) for m in modules.supplied)


# -- the load order, for any dependency graph ---------------------------------------------------
@st.composite
def module_graphs(draw: st.DrawFn) -> tuple[dict[str, tuple[str, ...]], set[str]]:
    """A DAG of supplied modules (each depends only on earlier ones) and the kernel's own."""
    count = draw(st.integers(1, 8))
    names = [f"m{i}" for i in range(count)]
    stock = {"lru_cache", "libcrc32c"}
    graph = {
        name: tuple(draw(st.lists(st.sampled_from([*names[:i], *sorted(stock)]), max_size=3, unique=True)))
        for i, name in enumerate(names)
    }
    return graph, stock


@given(module_graphs())
def test_every_module_loads_after_what_it_needs(case: tuple[dict[str, tuple[str, ...]], set[str]]) -> None:
    graph, stock = case
    loads = load_order(sorted(graph, reverse=True), graph.get, stock)
    order = [m.name for m in loads]
    assert sorted(order) == sorted(set(graph) | {d for deps in graph.values() for d in deps if d in stock})
    for name, deps in graph.items():
        assert all(order.index(dep) < order.index(name) for dep in deps)
    kernel = [m for m in loads if m.file is None]
    assert loads[: len(kernel)] == tuple(kernel) and {m.name for m in kernel} <= stock


def test_a_dependency_nothing_provides_or_a_cycle_is_named() -> None:
    with pytest.raises(ConfigError, match=r"drbd_transport_tcp\.ko: needs module handshake, which is neither"):
        load_order(["drbd_transport_tcp"], {"drbd_transport_tcp": ("drbd", "handshake"), "drbd": ()}.get, set())
    with pytest.raises(ConfigError, match=r"a\.ko: depends on itself through a -> b -> a"):
        load_order(["a"], {"a": ("b",), "b": ("a",)}.get, set())


def test_guests_insmod_the_supplied_files_in_order_and_check_the_version() -> None:
    modules = DrbdModules(
        Path("/opt/drbd9"),
        "9.2.18",
        "6.1.176",
        "6.1.176 mod_unload",
        (
            ModuleLoad("lru_cache"),
            ModuleLoad("handshake", Path("/opt/drbd9/handshake.ko")),
            ModuleLoad("drbd", Path("/opt/drbd9/drbd.ko")),
            ModuleLoad("drbd_transport_tcp", Path("/opt/drbd9/drbd_transport_tcp.ko")),
        ),
    )
    assert modules.guest_lines("/lab/drbd-modules") == [
        "modprobe -a lru_cache",
        "insmod /lab/drbd-modules/handshake.ko",
        "insmod /lab/drbd-modules/drbd.ko",
        "insmod /lab/drbd-modules/drbd_transport_tcp.ko",
        "grep -q '^version: 9.2.18 ' /proc/drbd",
    ]
    assert modules.describe() == (
        "DRBD 9.2.18 (modules from /opt/drbd9: handshake, drbd, drbd_transport_tcp; lru_cache of linux.uml 6.1.176)"
    )


# -- which pairs the lab runs --------------------------------------------------------------------
@pytest.fixture(scope="module")
def lab() -> Inventory:
    return load_inventory(LAB)


def test_the_variable_wins_over_the_inventory_setting(lab: Inventory) -> None:
    assert lab.lab is not None
    assert modules_dir(lab.lab, {}) is None
    spec = lab.lab.model_copy(update={"drbd_modules": Path("/srv/drbd9")})
    assert modules_dir(spec, {}) == (Path("/srv/drbd9"), "lab.drbd_modules")
    assert modules_dir(spec, {ENV_VAR: "/opt/x"}) == (Path("/opt/x"), ENV_VAR)
    assert modules_dir(spec, {ENV_VAR: " "}) == (Path("/srv/drbd9"), "lab.drbd_modules")


def test_drbd_9_pairs_join_only_on_drbd_9(lab: Inventory) -> None:
    on84 = lab_inventory(lab, {})
    on9 = lab_inventory(lab, {ENV_VAR: "/opt/drbd9"})
    assert on84 == lab and "three-node" not in on84.pairs
    assert sorted(set(on9.pairs) - set(lab.pairs)) == ["three-node", "tiebreaker"]
    assert on9.pairs["tiebreaker"].tiebreakers == {"b1"}
    assert lab_inventory(on9, {ENV_VAR: "/opt/drbd9"}) == on9  # once is enough


def test_a_three_node_pair_on_drbd_84_names_the_variable(lab: Inventory) -> None:
    text = LAB.read_text().replace(
        "pairs:\n  single-az:",
        "pairs:\n  tri: {primary: a1, secondary: a2, peers: {a3: diskful}, resource: tri, "
        "device: /dev/drbd5, port: 7795}\n  single-az:",
    )
    inv = parse_inventory(text, "lab.yaml")
    with pytest.raises(ConfigError, match=rf"pair 'tri': resource tri has 3 nodes, which needs DRBD 9.*{ENV_VAR}"):
        lab_inventory(inv, {})
    assert "tri" in lab_inventory(inv, {ENV_VAR: "/opt/drbd9"}).pairs


# -- which DRBD the running lab reports --------------------------------------------------------
def test_status_and_doctor_name_the_drbd_each_node_runs() -> None:
    on9 = data("drbd/drbd-9.2.18/a1.cat-proc-drbd.3-uptodate.txt")
    on84 = data("drbd/84-proc-drbd-connected.txt")
    nodes = {
        "a1": FakeRunner("a1", argv={("cat", "/proc/drbd"): [Answer(on9)]}),
        "b1": FakeRunner("b1", argv={("cat", "/proc/drbd"): [Answer(on84)]}),
        "a2": FakeRunner("a2", argv={("cat", "/proc/drbd"): [Answer("", 1, "cat: /proc/drbd: No such file")]}),
    }
    booted = "DRBD 9.2.18 (modules from /opt/drbd9: drbd, drbd_transport_tcp; lru_cache of linux.uml 6.1.176)"
    in_use = read_drbd_in_use(booted, nodes)
    assert in_use.versions == {"a1": "9.2.18", "a2": "unknown", "b1": "8.4.11"}
    assert in_use.describe() == f"{booted}; /proc/drbd: 8.4.11 on b1; 9.2.18 on a1; unknown on a2"
    assert in_use.mismatches() == [
        f"node a2 runs DRBD unknown, the lab booted {booted}",
        f"node b1 runs DRBD 8.4.11, the lab booted {booted}",
    ]
    kernel = read_drbd_in_use(None, {"b1": nodes["b1"]})
    assert kernel.mismatches() == [] and kernel.describe() == f"{KERNEL_DRBD}; /proc/drbd: 8.4.11 on b1"
