"""Hard version floors (harness.probes.toolversions.REQUIREMENTS): below the version the harness needs,
preflight BLOCKs before any change, naming the version found and the one needed and why; below
the tested version it only warns.  The logic with hypothesis, the floors on recorded outputs."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harness.probes.toolversions import REQUIREMENTS, TOOLS, Requirement, Version, assess, parse_tool_version
from tests.doubles import Answer
from tests.unit.reliability.support import finding, lab_node, preflight

DATA = Path(__file__).resolve().parents[1] / "data"

parts = st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))


@given(found=parts, needed=parts, tested=parts)
def test_block_below_needed_warn_below_tested(
    found: tuple[int, int, int], needed: tuple[int, int, int], tested: tuple[int, int, int]
) -> None:
    req = Requirement(Version(tested, "fio-T"), "somewhere", Version(needed, "fio-N"), "a reason")
    status, detail = assess(parse_tool_version("fio", "fio-{}.{}.{}\n".format(*found)), {"fio": req})
    shown = "fio-{}.{}.{}".format(*found)
    if found < needed:
        assert (status, detail) == ("BLOCK", f"{shown} found, fio-N or newer needed (a reason)")
    elif found < tested:
        assert status == "warn" and detail.startswith(f"{shown} found; the harness is tested from fio-T")
    else:
        assert (status, detail) == ("ok", shown)


@given(found=parts)
def test_without_a_floor_an_old_tool_is_only_a_warning(found: tuple[int, int, int]) -> None:
    req = Requirement(Version((99, 0, 0), "iproute2-99"), "nowhere")
    status, _ = assess(parse_tool_version("tc", "tc utility, iproute2-{}.{}.{}\n".format(*found)), {"tc": req})
    assert status == "warn"


def test_floors_are_data_with_a_reason_below_what_is_tested() -> None:
    floors = {tool: req for tool, req in REQUIREMENTS.items() if req.needed is not None}
    assert set(floors) == {"fio", "iperf3"}
    for tool, req in floors.items():
        assert tool in TOOLS and req.needed is not None
        assert req.needed < req.tested and len(req.needed_for) > 40


def _fio_version_line(name: str) -> str:
    # the version string fio itself wrote into a recorded report
    version: str = json.loads((DATA / "fio" / name).read_text())["fio version"]
    return version + "\n"


def test_fio_floor_on_recorded_versions() -> None:
    status, detail = assess(parse_tool_version("fio", _fio_version_line("fio-2.1.4-pkb-sample.json")))
    assert status == "BLOCK"
    assert detail.startswith("fio-2.1.4 found, fio-2.2.10 or newer needed (failover and partition cells count")
    # the oldest report that carries total_ios, and the public 3.16: old, but not blocked
    for name in ("fio-2.2.10-powersj-perfkit.json", "public/fio-3.16-randrw-lat-percentiles-superbenchmark.json"):
        assert "total_ios" in json.loads((DATA / "fio" / name).read_text())["jobs"][0]["write"]
        assert assess(parse_tool_version("fio", _fio_version_line(name)))[0] == "warn"
    assert "total_ios" not in json.loads((DATA / "fio" / "fio-2.1.4-pkb-sample.json").read_text())["jobs"][0]["write"]
    assert assess(parse_tool_version("fio", (DATA / "fio/fio339/fio-3.39-version.txt").read_text()))[0] == "ok"


def test_iperf3_floor_passes_every_recorded_iperf3() -> None:
    # 3.7 (Ubuntu 20.04, public JSON), 3.9 and 3.18 (recorded --version): all past 3.0.11
    v37 = json.loads((DATA / "iperf3/public/iperf3-3.7-ubuntu-20.04-robotframework.json").read_text())
    assert assess(parse_tool_version("iperf3", v37["start"]["version"]))[0] == "warn"
    for name in ("iperf3-3.9-version.txt", "iperf3-3.18-version.txt"):
        assert assess(parse_tool_version("iperf3", (DATA / "versions" / name).read_text()))[0] == "ok"
    floor = REQUIREMENTS["iperf3"]
    assert floor.needed == Version((3, 0, 11)) and "-1/--one-off" in floor.needed_for


def test_preflight_blocks_an_old_fio_before_any_change() -> None:
    old = lab_node("a1", fio=Answer(_fio_version_line("fio-2.1.4-pkb-sample.json")))
    report = preflight({"a1": old, "a2": lab_node("a2")})
    fio = finding(report, "a1", "fio version")
    assert fio.status == "BLOCK" and "fio-2.1.4 found, fio-2.2.10 or newer needed" in fio.detail
    assert finding(report, "a2", "fio version").status == "ok"
    assert not report.ok
    # preflight only read: no workload, no qdisc or filter change went to the node
    assert not [c for c in old.calls if "--name=" in c or " add " in c or " replace " in c or " del " in c]


def test_a_tc_that_prints_no_json_is_blocked_naming_its_version() -> None:
    text_only = lab_node(
        "a1",
        tc=Answer((DATA / "versions/tc-V-ubuntu-20.04-public.txt").read_text()),
        qdisc=Answer(
            (DATA / "tc/versions/iproute2-5.10-qdisc-harness-delay5ms-jitter1ms-loss1-rate100mbit.txt").read_text()
        ),
    )
    report = preflight({"a1": text_only, "a2": lab_node("a2")})
    qdisc = finding(report, "a1", "qdisc")
    assert qdisc.status == "BLOCK"
    assert qdisc.detail.startswith("cannot read qdiscs on ") and " with tc iproute2-ss200127: " in qdisc.detail
    assert finding(report, "a1", "tc version").status == "warn"
