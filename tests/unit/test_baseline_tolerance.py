"""Tolerance rules: parsing the inventory section, defaults, and the regression/improvement bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness.errors import ConfigError
from harness.inventory import Inventory, parse_inventory
from harness.rules.tolerance import (
    DEFAULT_TOLERANCES,
    METRIC_DIRECTIONS,
    Tolerance,
    format_percent,
    parse_tolerances,
    tolerance_rules,
)

INVENTORY = """\
name: tol-test
nodes:
  n1: {az: a, ssh: {host: 192.0.2.1, key: /k, known_hosts: /kh}, replication: {ip: 10.0.0.1, iface: eth1}}
  n2: {az: a, ssh: {host: 192.0.2.2, key: /k, known_hosts: /kh}, replication: {ip: 10.0.0.2, iface: eth1}}
pairs:
  p: {primary: n1, secondary: n2, resource: r1, device: /dev/drbd1}
"""

percents = st.decimals(min_value=0, max_value=99, places=1).map(str)


def test_defaults_are_the_issue_s_numbers() -> None:
    rules = {r.metric: r for r in tolerance_rules()}
    assert set(rules) == {"bw", "iops", "clat_p99"}
    assert rules["bw"].describe() == "−5 %"
    assert rules["iops"].describe() == "−5 %"
    assert rules["clat_p99"].describe() == "+10 %"


def test_overrides_replace_add_and_switch_off() -> None:
    rules = {r.metric: r.limit for r in tolerance_rules({"bw": 0.1, "clat_p50": 0.2, "iops": None})}
    assert rules == {"bw": 0.1, "clat_p50": 0.2, "clat_p99": DEFAULT_TOLERANCES["clat_p99"]}


@given(percents)
def test_percent_round_trips(text: str) -> None:
    assert parse_tolerances({"bw": f"{text}%"})["bw"] == pytest.approx(float(text) / 100)
    assert parse_tolerances({"clat_p99": f"+{text} %"})["clat_p99"] == pytest.approx(float(text) / 100)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"bandwidth": "5%"}, "unknown metric 'bandwidth'"),
        ({"bw": 5}, "as a percentage"),
        ({"bw": 0.05}, "as a percentage"),
        ({"bw": True}, "as a percentage"),
        ({"bw": "5"}, "not a percentage"),
        ({"bw": "+5%"}, "higher is better"),
        ({"clat_p99": "-10%"}, "lower is better"),
        ({"bw": "100%"}, "allows any drop"),
        ({"clat_p99": "2000%"}, "allows almost any rise"),
        (["bw"], "expected a mapping"),
    ],
)
def test_bad_tolerances_are_refused_with_the_reason(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_tolerances(value)


def test_off_and_null_switch_a_rule_off() -> None:
    assert parse_tolerances({"bw": "off", "iops": None}) == {"bw": None, "iops": None}


def test_inventory_section_validates_and_names_file_line_key() -> None:
    inv = parse_inventory(INVENTORY + "baseline_tolerances:\n  bw: 3%\n  clat_p99: off\n")
    assert inv.baseline_tolerances == {"bw": 0.03, "clat_p99": None}
    assert Inventory.model_validate(parse_inventory(INVENTORY).model_dump()).baseline_tolerances == {}
    with pytest.raises(ConfigError, match=r"<string>:7: baseline_tolerances: .*higher is better"):
        parse_inventory(INVENTORY + "baseline_tolerances:\n  bw: +3%\n")
    with pytest.raises(ConfigError, match="unknown metric 'bandwith'"):
        parse_inventory(INVENTORY + "baseline_tolerances:\n  bandwith: 3%\n")


def test_tolerance_limits_are_checked_on_construction() -> None:
    with pytest.raises(ValueError, match="out of range"):
        Tolerance("bw", "higher", 1.0)
    with pytest.raises(ValueError, match="out of range"):
        Tolerance("clat_p99", "lower", math.nan)
    with pytest.raises(ValidationError):
        Inventory.model_validate({**parse_inventory(INVENTORY).model_dump(), "baseline_tolerances": {"x": "1%"}})


@given(
    st.sampled_from(sorted(METRIC_DIRECTIONS)),
    st.floats(min_value=0, max_value=0.99),
    st.floats(min_value=-50, max_value=50, allow_nan=False),
)
def test_improvement_is_the_mirror_of_regression(metric: str, limit: float, log_ratio: float) -> None:
    rule = Tolerance(metric, METRIC_DIRECTIONS[metric], limit)
    assert rule.is_improvement(log_ratio) == rule.is_regression(-log_ratio)
    assert not (rule.is_regression(log_ratio) and rule.is_improvement(log_ratio))
    assert not rule.is_regression(0.0) and not rule.is_improvement(0.0)


def test_the_bound_sits_at_the_stated_percentage() -> None:
    bw = Tolerance("bw", "higher", 0.05)
    assert not bw.is_regression(math.log(0.951)) and bw.is_regression(math.log(0.949))
    p99 = Tolerance("clat_p99", "lower", 0.10)
    assert not p99.is_regression(math.log(1.099)) and p99.is_regression(math.log(1.101))


@pytest.mark.parametrize(
    ("fraction", "text"),
    [(-0.052, "−5.2 %"), (0.1, "+10 %"), (0.0, "0 %"), (2.5, "+250 %"), (-0.00049, "0 %"), (-0.9996, "−100 %")],
)
def test_format_percent(fraction: float, text: str) -> None:
    assert format_percent(fraction) == text
