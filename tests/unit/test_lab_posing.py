"""The inventories that reach the lab as a cloud cluster (harness.lab.posing), built from the
real lab inventory and validated by the real inventory loader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.errors import ConfigError
from harness.inventory import parse_inventory
from harness.lab.panicreboot import panicked
from harness.lab.posing import KEY_ENV, SHAPES, posing_inventory
from harness.userfiles.yamlsafe import load_yaml_file

LAB = Path(__file__).resolve().parents[2] / "inventories" / "lab.yaml"
KNOWN_HOSTS = "/run/harness-lab/known_hosts"


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_is_a_valid_cloud_inventory(shape: str) -> None:
    data = posing_inventory(load_yaml_file(LAB).data, shape, KNOWN_HOSTS)  # type: ignore[arg-type]
    inv = parse_inventory(yaml.safe_dump(data), f"<{shape}>")
    assert inv.lab is None
    for node in inv.nodes.values():
        assert node.ssh.user == "harness" and node.ssh.sudo
        assert node.ssh.key_env == KEY_ENV and node.ssh.key is None
        assert str(node.ssh.known_hosts) == KNOWN_HOSTS
        assert node.ssh.netns is None
        assert node.instance_type == "t3.medium"
    # the posing nodes are the lab's one-CPU guests: their validity thresholds are the lab's
    assert inv.validity == parse_inventory(LAB.read_text()).validity
    placements = {inv.placement(p) for p in inv.pairs}
    expected = {"multi-az": {"same-az", "cross-az"}, "cross-az-only": {"cross-az"}, "same-az-only": {"same-az"}}
    assert placements == expected[shape]
    with_scratch = [n for n, node in inv.nodes.items() if node.scratch_devices]
    assert bool(with_scratch) == (shape == "same-az-only")
    # the multi-az shape is the shipped DRBD example's; the narrower ones carry md-nbd pairs too
    products = {pair.replication for pair in inv.pairs.values()}
    assert products == ({"drbd"} if shape == "multi-az" else {"drbd", "md-nbd"})


def test_only_the_nodes_of_the_chosen_pairs_are_named() -> None:
    data = posing_inventory(load_yaml_file(LAB).data, "cross-az-only", KNOWN_HOSTS)
    assert sorted(data["nodes"]) == ["a3", "b1"]
    assert data["nodes"]["a3"]["az"] != data["nodes"]["b1"]["az"]


def test_unknown_shape_and_missing_pairs_are_config_errors() -> None:
    lab = load_yaml_file(LAB).data
    with pytest.raises(ConfigError, match="unknown shape"):
        posing_inventory(lab, "ring", KNOWN_HOSTS)  # type: ignore[arg-type]
    same_only = {**lab, "pairs": {"single-az": lab["pairs"]["single-az"]}}
    with pytest.raises(ConfigError, match="no pair for shape 'cross-az-only'"):
        posing_inventory(same_only, "cross-az-only", KNOWN_HOSTS)


# A UML console as a guest writes it (recorded on the lab, 2026-11-25): a boot, then a sysrq crash.
_BOOT = "Linux version 6.1.176 (debian-kernel@lists.debian.org)\nRun /run/harness-lab/guest/init1.sh as init process\n"
_PANIC = "sysrq: Trigger a crash\nKernel panic - not syncing: sysrq triggered crash\nCPU: 0 PID: 803 Comm: tee\n"


def test_a_console_ending_in_a_panic_means_reboot() -> None:
    assert panicked(_BOOT + _PANIC)
    assert not panicked(_BOOT)
    # rebooted after the panic: the latest boot has not panicked
    assert not panicked(_BOOT + _PANIC + _BOOT)
    assert panicked(_BOOT + _PANIC + _BOOT + _PANIC)


def test_the_xstate_shim_builds_and_overrides_ptrace(tmp_path: Path) -> None:
    import subprocess

    from harness.lab.xstate import build_xstate_shim

    lib = build_xstate_shim(tmp_path / "shim.so")
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    assert any(line.split()[-1] == "ptrace" for line in symbols.stdout.splitlines())
    assert lib.stat().st_mode & 0o004  # guests load it as the unprivileged lab uid


def test_lab_inventory_never_writes_over_its_input_or_an_existing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    out = tmp_path / "cloud.yaml"
    assert main(["lab", "inventory", "--inventory", str(LAB), "--shape", "cross-az-only", "-o", str(out)]) == 0
    first = out.read_text()
    assert "lab-as-aws-cross-az-only" in first and "HARNESS_SSH_KEY" in first
    assert main(["lab", "inventory", "--inventory", str(LAB), "--shape", "multi-az", "-o", str(out)]) == 2
    assert out.read_text() == first
    assert "pass --force" in capsys.readouterr().err
    assert main(["lab", "inventory", "--inventory", str(LAB), "-o", str(LAB), "--force"]) == 2
    assert "that is the lab inventory" in capsys.readouterr().err
    assert main(["lab", "inventory", "--inventory", str(LAB), "-o", str(tmp_path / "no" / "x.yaml")]) == 2
    assert f"the directory {tmp_path / 'no'} does not exist" in capsys.readouterr().err
