"""Built guest roots (harness.lab.roots): cache key, stamps, the UML command line, the mirror
read from apt sources, and the userland probe read on real roots (tests/data/lab_userland)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.record import os_release_name
from harness.cli import main
from harness.errors import ConfigError
from harness.inventory import Inventory, parse_inventory
from harness.lab import roots
from harness.lab.mirror import mirror_serves, parse_deb822_sources, parse_sources_list
from harness.lab.render import uml_argv
from harness.lab.roots import (
    NODE_PACKAGES,
    STAGE0_PATH,
    STAMP,
    BuiltRoot,
    missing_for_build,
    prune_stale_roots,
    root_dir,
    root_key,
    used_suites,
)
from harness.lab.topology import build_topology
from harness.lab.userland import KEY_TOOLS, parse_probe

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventories" / "lab.yaml"
PROBES = ROOT / "tests" / "data" / "lab_userland"

packages = st.lists(st.from_regex(r"[a-z][a-z0-9+.-]{1,20}", fullmatch=True), min_size=1, max_size=15, unique=True)


@given(packages, st.randoms())
def test_root_key_ignores_package_order(pkgs: list[str], rnd: object) -> None:
    shuffled = list(pkgs)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert root_key("bullseye", tuple(pkgs)) == root_key("bullseye", tuple(shuffled))


@given(packages, st.from_regex(r"[a-z][a-z0-9+.-]{1,20}", fullmatch=True))
def test_root_key_changes_with_the_package_list_and_suite(pkgs: list[str], extra: str) -> None:
    if extra in pkgs:
        return
    key = root_key("trixie", tuple(pkgs))
    assert root_key("trixie", (*pkgs, extra)) != key  # a package added: another directory, a rebuild
    assert root_key("bullseye", tuple(pkgs)) != key


def _stamp(path: Path, suite: str, **change: object) -> None:
    (path / "etc").mkdir(parents=True)
    stamp: dict[str, object] = {
        "suite": suite,
        "key": root_key(suite),
        "packages": list(NODE_PACKAGES),
        "os": "Debian GNU/Linux 11 (bullseye)",
        "codename": suite,
        "debian_version": "11.11",
        "versions": {"fio": "3.25"},
    }
    stamp.update(change)
    (path / STAMP).write_text(json.dumps(stamp))


def test_a_stamped_root_is_taken_from_the_cache(tmp_path: Path) -> None:
    path = root_dir("bullseye", cache=tmp_path)
    _stamp(path, "bullseye")
    root = BuiltRoot.load(path)
    assert root is not None and root.userland.versions == {"fio": "3.25"} and root.build_s is None


def test_a_root_of_another_package_list_or_no_stamp_is_not_taken(tmp_path: Path) -> None:
    path = root_dir("bullseye", cache=tmp_path)
    assert BuiltRoot.load(path) is None  # nothing there
    _stamp(path, "bullseye", packages=["fio"])  # the stamp's list does not give the key it claims
    assert BuiltRoot.load(path) is None
    other = root_dir("trixie", cache=tmp_path)
    _stamp(other, "bullseye")  # a bullseye stamp in the trixie directory
    assert BuiltRoot.load(other) is None


def _with_roots(roots: dict[str, str]) -> Inventory:
    """inventories/lab.yaml with ``lab.nodes`` replaced by ``roots``."""
    return parse_inventory(_with_roots_text(roots), "lab-roots.yaml")


def _with_roots_text(roots: dict[str, str]) -> str:
    lines = LAB.read_text().splitlines()
    start = lines.index("lab:") + 1
    end = next(i for i in range(start, len(lines)) if lines[i] and not lines[i].startswith(" "))
    kept: list[str] = []
    in_nodes = False
    for line in lines[start:end]:
        if line.startswith("  ") and not line.startswith("   "):  # a key of `lab:`
            in_nodes = line.startswith("  nodes:")
        if not in_nodes:
            kept.append(line)
    nodes = ["  nodes:", *(f"    {node}: {{root: {suite}}}" for node, suite in roots.items())] if roots else []
    return "\n".join([*lines[:start], *kept, *nodes, *lines[end:]]) + "\n"


def test_host_root_by_default_and_built_roots_where_asked() -> None:
    mixed = _with_roots({"a3": "bullseye", "b1": "trixie"})
    topo = build_topology(mixed)
    assert mixed.lab is not None
    assert used_suites(mixed.lab, sorted(mixed.nodes)) == ["bullseye", "trixie"]
    a1 = uml_argv(mixed, topo, topo.guest("a1"))
    assert "rootflags=/" in a1 and any(a.startswith("init=") and a.endswith("/guest/init1.sh") for a in a1)
    b1 = uml_argv(mixed, topo, topo.guest("b1"))
    assert f"rootflags={root_dir('trixie')}" in b1 and f"init={STAGE0_PATH}" in b1
    router = uml_argv(mixed, topo, topo.guest("router"))
    assert "rootflags=/" in router  # the router keeps the host's root


def test_a_root_for_a_node_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"lab.nodes.c9"):
        build_topology(_with_roots({"c9": "bullseye"}))


def test_an_unknown_release_is_refused() -> None:
    with pytest.raises(ConfigError):
        _with_roots({"a1": "buster"})


def test_without_lab_nodes_every_node_boots_the_host_root() -> None:
    plain = _with_roots({})
    assert plain.lab is not None and used_suites(plain.lab, sorted(plain.nodes)) == []


# -- the mirror -------------------------------------------------------------------------------
# This lab host's /etc/apt/sources.list.d/debian.sources (Debian 12 image), recorded 2026-11-25.
HOST_DEB822 = """Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
# and its nodesource.sources (a third-party repository: never a Debian release)
HOST_NODESOURCE = """Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main
Architectures: amd64
Signed-By: /usr/share/keyrings/nodesource.gpg
"""


def test_the_mirror_is_the_main_archive_of_the_host_sources() -> None:
    assert parse_deb822_sources(HOST_DEB822) == ["http://deb.debian.org/debian"]
    assert parse_deb822_sources(HOST_NODESOURCE) == []


def test_one_line_sources() -> None:
    text = (
        "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://ftp.de.debian.org/debian/ "
        "bookworm main\n"
        "deb http://security.debian.org/debian-security bookworm-security main\n"
        "# deb http://old.example/debian bookworm main\n"
        "deb-src http://deb.debian.org/debian bookworm main\n"
    )
    assert parse_sources_list(text) == ["http://ftp.de.debian.org/debian"]


# -- the userland probe, on roots built on this lab host ----------------------------------------
@pytest.mark.parametrize(
    ("suite", "want"),
    [
        ("bullseye", {"fio": "3.25", "iproute2": "5.9.0", "drbd-utils": "9.15.0", "openssh": "8.4p1"}),
        ("bookworm", {"fio": "3.33", "iproute2": "6.1.0", "drbd-utils": "9.22.0", "openssh": "9.2p1"}),
        ("trixie", {"fio": "3.39", "iproute2": "6.15.0", "drbd-utils": "9.22.0", "openssh": "10.0p2"}),
    ],
)
def test_probe_reads_every_tool_of_a_real_root(suite: str, want: dict[str, str]) -> None:
    userland = parse_probe((PROBES / f"{suite}.txt").read_text())
    assert userland.codename == suite and userland.missing() == []
    assert {tool: userland.versions[tool] for tool in want} == want
    text = userland.describe()
    assert f"({suite})" in text and all(tool in text for tool in KEY_TOOLS)


def test_probe_of_a_node_without_a_tool_says_it_is_missing() -> None:
    text = (PROBES / "bullseye.txt").read_text()
    without = "\n".join(line for line in text.splitlines() if not line.startswith("iperf3\t"))
    assert parse_probe(without + "\niperf3\tsh: 1: iperf3: not found\n").missing() == ["iperf3"]


@pytest.mark.parametrize(
    ("suite", "name"),
    [("bullseye", "Debian GNU/Linux 11 (bullseye)"), ("trixie", "Debian GNU/Linux 13 (trixie)")],
)
def test_the_distribution_a_sample_records_is_os_release_pretty_name(suite: str, name: str) -> None:
    text = (PROBES / f"os-release.{suite}").read_text()
    assert os_release_name(text) == name
    # without PRETTY_NAME: NAME and VERSION_ID
    bare = "\n".join(line for line in text.splitlines() if not line.startswith("PRETTY_NAME="))
    assert os_release_name(bare) == f"Debian GNU/Linux {name.split()[2]}"
    assert os_release_name("") == ""


def test_a_rebuilt_root_removes_the_outdated_ones_of_its_suite_only(tmp_path: Path) -> None:
    final = root_dir("trixie", cache=tmp_path)
    for name in (final.name, "trixie-0123456789ab", "trixie-0123456789ab.building", "bullseye-0123456789ab"):
        (tmp_path / name).mkdir()
    said: list[str] = []
    prune_stale_roots(final, "trixie", said.append)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [final.name, "trixie-0123456789ab.building", "bullseye-0123456789ab"]
    )
    assert len(said) == 1 and "trixie-0123456789ab" in said[0]


def test_lab_up_says_what_stops_a_build_before_booting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda _: None)
    monkeypatch.setattr(roots, "host_mirror", lambda: None)
    problems = missing_for_build(["bullseye", "trixie"], tmp_path)
    assert len(problems) == 2
    assert "debootstrap is not installed" in problems[0] and "bullseye, trixie" in problems[0]
    assert "no Debian mirror" in problems[1] and "HARNESS_LAB_MIRROR" in problems[1]


def test_a_cached_root_needs_neither_debootstrap_nor_a_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda _: None)
    monkeypatch.setattr(roots, "host_mirror", lambda: None)
    _stamp(root_dir("bullseye", cache=tmp_path), "bullseye")
    assert missing_for_build(["bullseye"], tmp_path) == []


def test_a_mirror_that_does_not_answer_is_named() -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    why = mirror_serves(f"http://127.0.0.1:{port}/debian", "trixie", timeout=5)
    assert why is not None and f"127.0.0.1:{port}/debian/dists/trixie/Release is unreachable" in why


def test_lab_roots_lists_the_cached_roots_of_the_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HARNESS_LAB_ROOT_CACHE", str(tmp_path / "cache"))
    for suite in ("bullseye", "trixie"):
        _stamp(root_dir(suite), suite, codename=suite)
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(_with_roots_text({"a3": "bullseye", "b1": "trixie", "a1": "bullseye"}))
    assert main(["lab", "roots", "--inventory", str(mixed), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {suite: entry["nodes"] for suite, entry in listed.items()} == {"bullseye": ["a1", "a3"], "trixie": ["b1"]}
    plain = tmp_path / "plain.yaml"
    plain.write_text(_with_roots_text({}))
    assert main(["lab", "roots", "--inventory", str(plain)]) == 0
    assert "boots the host's root" in capsys.readouterr().out


def test_a_busybox_ping_is_named_as_such() -> None:
    """The preflight's parser reads the tools both know (harness.probes.toolversions): BusyBox's ping too."""
    busybox = (ROOT / "tests" / "data" / "versions" / "busybox-1.30.1-ping-V.txt").read_text()
    text = (PROBES / "bullseye.txt").read_text()
    lines = [line for line in text.splitlines() if not line.startswith("iputils\t")]
    userland = parse_probe("\n".join([*lines, "iputils\t" + busybox.replace("\n", " ")]) + "\n")
    assert userland.versions["iputils"] == "busybox 1.30.1"
