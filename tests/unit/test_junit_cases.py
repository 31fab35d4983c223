"""What CI systems read in a testcase: its stable name, error or failure, and its properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harness.cell.certificate import Readings, cell_certificate
from harness.cell.outcome import junit_properties, property_name
from harness.report.junitcases import ERROR_PROPERTY, ci_junit, stable_name
from harness.rules.bounds import BoundResult
from harness.rules.validitythresholds import DEFAULT_THRESHOLDS
from harness.runfiles.samples import METRICS, Sample

_PARAMS = st.text(st.sampled_from("abc-4k@.[]"), max_size=12)
_GROUP = st.from_regex(r"[a-z][a-z0-9:-]{0,10}", fullmatch=True)


@given(st.from_regex(r"test_[a-z_]{1,10}", fullmatch=True), st.none() | _PARAMS, _GROUP)
def test_the_xdist_group_is_removed_and_nothing_else(name: str, params: str | None, group: str) -> None:
    test_id = name if params is None else f"{name}[{params}]"
    assert stable_name(f"{test_id}@{group}") == test_id
    # without xdist there is no group: an "@" inside the parameters stays
    assert stable_name(test_id) == test_id


def test_an_infrastructure_failure_becomes_an_error_and_the_counts_follow() -> None:
    xml = f"""<testsuites><testsuite name="pytest" errors="0" failures="2" skipped="0" tests="2">
      <testcase classname="scenarios.test_x" name="test_a[p1]@nodes-b1">
        <properties><property name="{ERROR_PROPERTY}" value="ToolError"/></properties>
        <failure message="harness.errors.ToolError: iperf3: unable to connect">trace</failure>
      </testcase>
      <testcase classname="scenarios.test_x" name="test_b[p1]"><failure message="145 IOPS &lt; min 150"/></testcase>
    </testsuite></testsuites>""".encode()
    suite = ET.fromstring(ci_junit(xml)).find("testsuite")
    assert suite is not None and (suite.get("failures"), suite.get("errors")) == ("1", "1")
    a, b = suite.iter("testcase")
    assert a.get("name") == "test_a[p1]" and a.find("failure") is None
    error = a.find("error")
    assert error is not None and error.get("type") == "ToolError" and error.text == "trace"
    assert b.find("failure") is not None and b.find("error") is None


@given(st.sampled_from(sorted(METRICS)))
def test_every_metric_is_named_with_its_unit(metric: str) -> None:
    name = property_name(metric, METRICS[metric])
    assert name.startswith(metric) and name.isascii() and " " not in name and "/" not in name
    # only metrics whose name says the unit already (IOPS, a 0/1 flag, a ratio, a fraction, a
    # count of repeats, the durability map's count of crash trials) stay as they are
    self_named = ("IOPS", "0/1", "×", "0-1", "runs", "trials")
    assert name != metric or METRICS[metric] in self_named or metric.endswith("_s")


def test_properties_are_text_a_ci_system_shows_without_python_reprs() -> None:
    props = junit_properties(
        [("bw_mib_s", 77.95183), ("clat_p99_ms", float("nan"))],
        [("devices", ["/dev/ubdb", "/dev/ubdc"]), ("steady_state", None), ("ok", True), ("cal", {"b": 1, "a": "x"})],
    )
    assert props == [
        ("bw_mib_s", "77.9518"),
        ("devices", "/dev/ubdb,/dev/ubdc"),
        ("ok", "true"),
        ("cal", '{"a":"x","b":1}'),
    ]


def test_a_cells_certificate_is_named_as_its_verdict_is() -> None:
    """A disk cell with the certificate of a recorded hog window (tests/data/pressure: a stress-ng
    CPU hog on this machine) and a node that could not be read at the window's end."""
    from harness.disk.cell import DiskCellResult, DiskCellSpec
    from harness.disk.layout import DiskLayout
    from harness.fio.report import parse_fio_json
    from harness.fio.spec import WorkloadSpec

    data = Path(__file__).resolve().parents[1] / "data"
    start, end = (
        Readings({"a2": (data / "pressure" / f"psi/r1-hog-cpu1-load50-nice-{e}.txt").read_text()})
        for e in ("before", "after")
    )
    end = Readings(end.nodes, problems=("a1: the pressure probe did not run",))
    certificate = cell_certificate(start, end, DEFAULT_THRESHOLDS)
    fio = parse_fio_json((data / "fio" / "fio-3.33-randwrite-4k-libaio.json").read_text())
    workload = WorkloadSpec.from_mapping({"name": "w", "rw": "randwrite", "bs": "4k", "size": "64M"})
    spec = DiskCellSpec("disk_baseline", "a2", DiskLayout("raw", ("/dev/ubdb",)), workload)
    meta = {"node": "a2", "mode": "raw", "workload": "w", **certificate.properties()}
    verdict = BoundResult("inconclusive", certificate.certificate.reason)
    result = DiskCellResult(spec, fio, fio.write, verdict, meta, [Sample("bw", 12.5, "MiB/s", meta)])
    props = dict(result.properties())
    # the cell-wide pair reads as verdict/verdict_reason do
    assert (props["verdict"], props["verdict_reason"]) == ("inconclusive", "cpu pressure 41 % on a2 > 10 %")
    assert (props["validity"], props["validity_reason"]) == ("disturbed", "cpu pressure 41 % on a2 > 10 %")
    assert props["validity_unread"] == "a1: the pressure probe did not run"
    # each figure keeps its path, its name ending in its unit, with threshold, source and judgement
    assert float(props["validity.a2.cpu_pressure_pct"]) > 10 and props["validity.a2.cpu_pressure_pct.max"] == "10"
    assert props["validity.a2.cpu_pressure_pct.source"] == "/proc/pressure/cpu some"
    assert props["validity.a2.cpu_pressure_pct.disturbed"] == "yes"
    assert "validity.reason" not in props and "validity.unread" not in props
