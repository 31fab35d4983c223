"""Node instance types and volumes are checked against the sizing catalog (the
built-in one plus the inventory's own ``catalog:`` files) by ``harness inventory check`` and at
the start of a pytest run, not discovered after the disruptive calibration ran."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import ConfigError
from harness.inventory import load_inventory
from harness.prediction.cellmodel import inventory_catalog
from harness.sizing.catalog.loader import load_builtin_catalog

from .test_inventory import GOOD

ROOT = Path(__file__).resolve().parents[2]


def _inventory(tmp_path: Path, n1: str, extra: str = "") -> Path:
    text = GOOD.replace("    az: us-east-1a\n", f"    az: us-east-1a\n{n1}", 1) + extra
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("n1", "message"),
    [
        (
            "    instance_type: t3.mediun\n",
            "inv.yaml:5: nodes.n1.instance_type: unknown instance type 't3.mediun'; did you mean t3.medium",
        ),
        ("    volume: gp3:-5GiB\n", "inv.yaml:5: nodes.n1.volume: 'gp3:-5GiB': size must be a positive number"),
        ("    volume: gp3:0GiB\n", "inv.yaml:5: nodes.n1.volume: 'gp3:0GiB': size must be a positive number"),
        ("    volume: gp33:100GiB\n", "inv.yaml:5: nodes.n1.volume: unknown volume type 'gp33'; did you mean gp3"),
        (
            "    instance_type: t3.medium\n    volume: gp2:99999GiB\n",
            "inv.yaml:6: nodes.n1.volume: gp2 volumes are at most 16384 GiB, got 99999 GiB",
        ),
    ],
)
def test_inventory_check_refuses_types_the_catalog_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], n1: str, message: str
) -> None:
    assert main(["inventory", "check", str(_inventory(tmp_path, n1))]) == 2
    err = capsys.readouterr().err
    assert message in err, err


def test_the_inventory_s_own_catalog_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "catalogs").mkdir()
    (tmp_path / "catalogs" / "lab.yaml").write_text((ROOT / "inventories" / "catalogs" / "lab.yaml").read_text())
    n1 = "    instance_type: lab-uml\n    volume: lab-file:2GiB\n"
    path = _inventory(tmp_path, n1)
    assert main(["inventory", "check", str(path)]) == 2
    assert "unknown instance type 'lab-uml'" in capsys.readouterr().err
    path = _inventory(tmp_path, n1, "catalog: [catalogs/lab.yaml]\n")
    assert main(["inventory", "check", str(path)]) == 0


@pytest.mark.parametrize(
    "path",
    [*sorted((ROOT / "inventories").glob("*.yaml")), ROOT / "inventories" / "ansible" / "mapping.yaml"],
    ids=lambda p: p.name,
)
def test_every_shipped_inventory_names_catalog_types(path: Path) -> None:
    inventory_catalog(load_inventory(path), path)


@settings(max_examples=40)
@given(st.from_regex(r"\A[a-z][a-z0-9]{0,4}\.[a-z0-9]{1,8}\Z"))
def test_no_name_outside_the_catalog_passes(name: str) -> None:
    # the catalog's own names pass (every shipped inventory above); any other is refused,
    # named, with the near names or the known ones
    known = load_builtin_catalog().instance_types
    if name in known:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = _inventory(Path(tmp), f"    instance_type: {name}\n")
        with pytest.raises(ConfigError, match=rf"unknown instance type '{re.escape(name)}'; (did you mean|known:) "):
            inventory_catalog(load_inventory(path), path)
