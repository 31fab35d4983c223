"""A missing optional feature refuses only the cells that need it, up front (case 13).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.features import FeatureMissing, from_findings, read_missing, refuse_missing, write_missing
from harness.cell.spec import CellSpec
from harness.fio.workloads import write_job
from harness.impair.profile import Direction, NetemProfile
from tests.doubles import Answer
from tests.unit.reliability.support import lab_node, preflight

#: constructed: kmod's message when the module does not exist
NO_TBF = Answer(rc=1, stderr="modinfo: ERROR: Module sch_tbf not found.")
JOB = write_job("write", 1024 * 1024)


@pytest.mark.reliability_row(13)
def test_case_13_a_rate_capped_cell_is_refused_naming_the_node_and_the_module(tmp_path: Path) -> None:
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2", tbf=NO_TBF)})
    assert report.ok  # the run goes on
    write_missing(tmp_path, from_findings((f.node, f.check, f.status, f.detail) for f in report.findings))
    missing = read_missing(tmp_path)  # what each xdist worker reads
    assert [(m.node, m.feature) for m in missing] == [("a2", "sch_tbf")]
    capped = CellSpec("bandwidth_cap", "single-az", JOB, impairment=NetemProfile.from_text("cap", rate="128mbit"))
    with pytest.raises(FeatureMissing) as info:
        refuse_missing(capped, ("a1", "a2"), missing)
    assert str(info.value).startswith(f"{capped.id} needs sch_tbf for its rate cap (cap): a2 lacks sch_tbf (")
    assert "sch_tbf kernel module not available" in str(info.value) and "nothing changed" in str(info.value)
    assert info.value.exit_code == 3
    # the cells that do not need it run: delay only, no fault, a cap on the node that has tbf
    for spec in (
        CellSpec("latency", "single-az", JOB, impairment=NetemProfile.from_text("wan", delay="5ms")),
        CellSpec("replicated_write", "single-az", JOB),
        CellSpec("cap", "single-az", JOB, impairment=NetemProfile.from_text("c", rate="128mbit", direction="primary")),
    ):
        refuse_missing(spec, ("a1", "a2"), missing)
    assert read_missing(tmp_path / "nowhere") == []  # no preflight ran: nothing is refused


@pytest.mark.reliability_row(13)
@given(
    rate=st.booleans(),
    direction=st.sampled_from(["both", "primary", "secondary"]),
    lacking=st.sets(st.sampled_from(["a1", "a2"])),
)
def test_case_13_refused_exactly_when_a_node_the_cap_is_applied_on_lacks_tbf(
    rate: bool, direction: Direction, lacking: set[str]
) -> None:
    profile = NetemProfile.from_text("p", delay="1ms", rate="64mbit" if rate else None, direction=direction)
    spec = CellSpec("s", "single-az", JOB, impairment=profile)
    missing = from_findings((n, "tbf", "warn", "absent") for n in lacking)
    applied = {"a1"} if direction == "primary" else {"a2"} if direction == "secondary" else {"a1", "a2"}
    try:
        refuse_missing(spec, ("a1", "a2"), missing)
        refused = False
    except FeatureMissing:
        refused = True
    assert refused == (rate and bool(applied & lacking))
