"""The harness's JUnit from a real lab run, read by a real consumer (junitparser) and held
against the schema Jenkins' xUnit plugin validates with (junit-10.xsd, tests/data/junit)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from junitparser import xunit2
from lxml import etree

from harness.report.junit import PROPERTY_LINE_PREFIX, strict_junit

DATA = Path(__file__).parent.parent / "data" / "junit"
RECORDED = DATA / "junit-lab-filesystems.xml"


def _schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(DATA / "junit-10.xsd")))


def _read(path: Path = RECORDED) -> list[xunit2.TestSuite]:
    """The suites of a JUnit file, read as xunit2 (whose testcases have properties)."""
    xml = xunit2.JUnitXml.fromfile(str(path))
    return [cast(xunit2.TestSuite, suite) for suite in xml]


def _cases(suite: xunit2.TestSuite) -> list[xunit2.TestCase]:
    return [cast(xunit2.TestCase, case) for case in suite]


def _properties(suites: list[xunit2.TestSuite]) -> dict[str, dict[str, str]]:
    return {case.name: {p.name: p.value for p in case.properties()} for suite in suites for case in _cases(suite)}  # type: ignore[no-untyped-call]


def test_junitparser_reads_every_cell_and_its_metrics() -> None:
    suites = _read()
    (suite,) = suites
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (8, 0, 0, 0)
    props = _properties(suites)
    assert len(props) == 8
    raw = props["test_filesystem[a1-randwrite-4k-nj4-qd8-raw]"]
    assert raw["verdict"] == "pass" and float(raw["iops"]) > 0 and raw["mode"] == "raw"
    bonnie = props["test_filesystem_bonnie[a1-ext4]"]
    assert bonnie["engine"] == "bonnie++" and float(bonnie["bonnie-seq-output-block.bw"]) > 0


def test_pytests_own_file_breaks_the_xunit_schema_where_the_metrics_are() -> None:
    schema = _schema()
    assert not schema.validate(etree.parse(str(RECORDED)))
    assert "'properties': This element is not expected" in str(schema.error_log.last_error)


def test_the_strict_copy_validates_and_keeps_every_property(tmp_path: Path) -> None:
    strict = strict_junit(RECORDED.read_bytes())
    schema = _schema()
    assert schema.validate(etree.fromstring(strict)), schema.error_log
    original = _properties(_read())
    (tmp_path / "junit-strict.xml").write_bytes(strict)
    (suite,) = _read(tmp_path / "junit-strict.xml")
    assert suite.tests == 8
    for case in _cases(suite):
        assert list(case.properties()) == []  # type: ignore[no-untyped-call]
        lines = [line for line in (case.system_out or "").split("\n") if line.startswith(PROPERTY_LINE_PREFIX)]
        moved = dict(line.removeprefix(PROPERTY_LINE_PREFIX).split("=", 1) for line in lines)
        assert moved == original[case.name]


_VALUE = st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=40).filter(
    lambda s: all(ord(c) >= 0x20 or c in "\t\n" for c in s) and "\n" not in s
)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_.-]{0,15}", fullmatch=True), _VALUE, max_size=6), _VALUE)
def test_strict_copy_of_any_properties_validates(props: dict[str, str], out: str) -> None:
    case = etree.Element("testcase", name="t")
    if props:
        holder = etree.SubElement(case, "properties")
        for k, v in props.items():
            etree.SubElement(holder, "property", name=k, value=v)
    if out:
        etree.SubElement(case, "system-out").text = out
    suite = etree.Element("testsuite", tests="1")
    suite.append(case)
    strict = strict_junit(etree.tostring(suite))
    assert _schema().validate(etree.fromstring(strict))
    text = etree.fromstring(strict).find("testcase/system-out")
    body = "" if text is None else text.text or ""
    for k, v in props.items():
        assert f"{PROPERTY_LINE_PREFIX}{k}={v}" in body.split("\n")
    if out:
        assert body.endswith(out)


@pytest.mark.parametrize("name", ["junit-10.xsd"])
def test_the_schema_is_the_cited_file(name: str) -> None:
    assert len((DATA / name).read_bytes()) == 7522
