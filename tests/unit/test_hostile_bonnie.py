"""bonnie++'s output as hostile input: what the parser accepts, every later reader of the run
accepts too (a negative %CPU once made the samples, and so the whole run, unreadable), and what
it refuses is its own error, never Python's.  The lines are the ones recorded on the lab
(tests/data/bonnie, sources in its README), broken field by field; the fuzz target breaks up to
three fields of either line at once with any text, a password among them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.bonnie import BonnieOutputError, bonnie_values
from harness.bonnie.result import BonnieResult, parse_bonnie_csv
from harness.limits import MAX_BONNIE_BYTES
from harness.runfiles.samples import METRICS, Sample
from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import fuzz, no_sentinel, probe, secret_forms

DATA = Path(__file__).parent.parent / "data" / "bonnie"
LINES = [
    next(line for line in (DATA / name).read_text().splitlines() if line.startswith("1.9"))
    for name in ("bonnie-2.00a-lab-ext4-n16.csv", "bonnie-2.00a-lab-xfs-n4.csv")
]
RATE, CPU, LATENCY, CONCURRENCY = 11, 12, 39, 3  # seq-output-block's rate, %CPU and latency


def _with(field: int, text: str, line: str = LINES[0]) -> str:
    fields = line.split(",")
    fields[field] = text
    return ",".join(fields)


def _readable(results: list[BonnieResult]) -> None:
    """The samples of ``results`` read back as any run's samples are read."""
    for result in results:
        for values in bonnie_values(result).values():
            for metric, value in values.items():
                Sample.from_json(Sample(metric, value, METRICS[metric], {"workload": "w"}).to_json())


def test_the_recorded_lines_parse_and_read_back() -> None:
    """The control: both recorded lines parse, and their samples read back."""
    for line in LINES:
        _readable(parse_bonnie_csv(line))


@pytest.mark.parametrize(
    ("field", "text", "message"),
    [
        (RATE, "inf", "seq-output-block is 'inf', not a non-negative number"),
        (RATE, "nan", "seq-output-block is 'nan', not a non-negative number"),
        (RATE, "-1", "seq-output-block is '-1', not a non-negative number"),
        (RATE, "1e400", "seq-output-block is '1e400', not a non-negative number"),
        (RATE, "9" * 400, "seq-output-block is '9999999999999999999999999999999999999999'"),
        (CPU, "-5", "seq-output-block %CPU is '-5', not a non-negative number"),
        (CPU, "inf", "seq-output-block %CPU is 'inf', not a non-negative number"),
        (LATENCY, "-3ms", "seq-output-block latency '-3ms' is not <number>us|ms|s"),
        (LATENCY, "infms", "seq-output-block latency 'infms' is not <number>us|ms|s"),
        (CONCURRENCY, "inf", "concurrency is 'inf', not a non-negative number"),
        (CONCURRENCY, "nan", "concurrency is 'nan', not a non-negative number"),
        (RATE, "١٢٣", "seq-output-block is '١٢٣', not a non-negative number"),
    ],
)
def test_figures_no_reader_accepts_are_refused_by_the_parser(field: int, text: str, message: str) -> None:
    with pytest.raises(BonnieOutputError, match=re.escape(message)):
        parse_bonnie_csv(_with(field, text))


def test_a_password_in_a_field_is_redacted_before_its_quote_is_cut() -> None:
    """The quote is the field's first 40 characters: cut first, the URL lost its ``@`` and most
    of its password stayed."""
    with pytest.raises(BonnieOutputError) as refused:
        parse_bonnie_csv(_with(RATE, "--results-db=postgres://ci:hunter2hunter2@h/d"))
    assert "hunter" not in str(refused.value) and "'--results-db=postgres://ci:***redacted*" in str(refused.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_with(RATE, '"' + "1" * 200_000 + '"'), "bonnie\\+\\+ CSV is not CSV: field larger than field limit"),
        (LINES[0] + "\n" + "x" * MAX_BONNIE_BYTES, f"more than {MAX_BONNIE_BYTES} bytes"),
        ("", "no CSV result line"),
    ],
)
def test_what_is_no_bonnie_output_is_the_parsers_own_error(text: str, message: str) -> None:
    with pytest.raises(BonnieOutputError, match=message):
        parse_bonnie_csv(text)


# -- the fuzz target ----------------------------------------------------------------------------

_FIELD = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["inf", "-inf", "nan", "-1", "1e400", "9" * 400, "+++++", "+++", "", "5us", "-2ms", "0", '"']),
    st.floats().map(repr),
    st.integers().map(str),
    secret_forms(),  # a password pasted where a figure goes: the error quotes the field
)


@fuzz(200)  # a parse is microseconds: more examples, same second
@given(
    line=st.sampled_from(LINES),
    changes=st.lists(st.tuples(st.integers(0, 49), _FIELD), min_size=1, max_size=3),
)
@surface("bonnie++ CSV")
def test_fuzz_bonnie_csv(line: str, changes: list[tuple[int, str]]) -> None:
    """Any field broken: the parser's own error (no password quoted), or results whose every
    sample reads back."""
    texts = [text.replace(",", ";") for _, text in changes]
    for (field, _), text in zip(changes, texts, strict=True):
        line = _with(field, text, line)
    try:
        with probe():
            results = parse_bonnie_csv(line)
            _readable(results)
    except BonnieOutputError as exc:
        no_sentinel(texts, [str(exc)])
