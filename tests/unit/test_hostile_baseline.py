"""Saved baselines as hostile input: a ``baseline.json`` nested 100,000 deep, in Latin-1 or of
60 MB, samples from ``/dev/zero`` or a FIFO are refused in one line by ``harness baseline show``,
and whatever a baseline's files hold, ``harness baseline show|list`` and ``harness compare``
answer, or refuse in one line, without writing into the baseline or quoting a password.  The
baseline is the committed reports/baselines/lab/lab-ref, the run compared with it the recorded
lab run tests/data/runs/20261121-110501-f674; the fuzz target breaks any field of the
baseline's metadata and of its sample records."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.fuzz_tally import surface
from tests.unit.hostile_files import CLASSES, write_bytes
from tests.unit.hostile_inputs import FUZZ, no_secret, no_sentinel, run_cli, secret_forms, unchanged
from tests.unit.hostile_records import JSON_VALUES, RAW_JSON, broken_record, with_raw

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "reports" / "baselines" / "lab" / "lab-ref"
RUN = ROOT / "tests" / "data" / "runs" / "20261121-110501-f674"


def _reports(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(reports root, the baseline copied into it, the run copied into it)."""
    reports = tmp_path / "reports"
    baseline = reports / "baselines" / "lab" / "lab-ref"
    shutil.copytree(BASELINE, baseline)
    shutil.copytree(RUN, reports / RUN.name)
    return reports, baseline, reports / RUN.name


def _show(reports: Path) -> list[str]:
    return ["baseline", "show", "lab-ref", "--reports", str(reports)]


def _list(reports: Path) -> list[str]:
    return ["baseline", "list", "--reports", str(reports)]


def test_the_baseline_copy_itself_is_readable(tmp_path: Path) -> None:
    """The control of the cases below: untouched, the copy shows and compares (exit 0 or 1)."""
    reports, _, run = _reports(tmp_path)
    assert "baseline 'lab-ref' of inventory 'lab'" in run_cli(_show(reports)).clean((0,)).stdout
    run_cli(["compare", "lab-ref", str(run), "--reports", str(reports), "--no-write"]).clean((0, 1))
    assert json.loads((BASELINE / "baseline.json").read_text())["name"] == "lab-ref"


_BASELINE_FILES: dict[str, tuple[str, Callable[[Path], None]]] = {
    "metadata nested 100,000 deep": ("baseline.json", write_bytes(b"[" * 100_000 + b"]" * 100_000)),
    "metadata in Latin-1": ("baseline.json", write_bytes('{"name": "caf\xe9"}'.encode("latin-1"))),
    "metadata 60 MB": ("baseline.json", CLASSES["60 MB file"]),
    "samples nested 100,000 deep": ("samples.ndjson", write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")),
    "samples from /dev/zero": ("samples.ndjson", CLASSES["/dev/zero"]),
    "samples a FIFO": ("samples.ndjson", CLASSES["FIFO"]),
}


@pytest.mark.parametrize("kind", list(_BASELINE_FILES))
def test_hostile_baseline_files_are_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    name, write = _BASELINE_FILES[kind]
    reports, baseline, _ = _reports(tmp_path)
    (baseline / name).unlink()
    write(baseline / name)
    with unchanged(baseline):
        line = run_cli(_show(reports)).refusal()
    assert str(baseline / name) in line


@pytest.mark.parametrize("key", ["name", "inventory", "saved", "run_id", "notes"])
def test_a_password_in_baseline_json_is_never_shown_nor_written(tmp_path: Path, key: str) -> None:
    """Its texts were shown as written: by show and list, and in compare's Markdown and report."""
    reports, baseline, run = _reports(tmp_path)
    info = baseline / "baseline.json"
    secret = "Qs3cr3tPassw0rd"
    info.write_text(_with_metadata(info.read_text(), [("", key, json.dumps(f"postgresql://ci:{secret}@db/h"))]))
    commands = [_show(reports), _list(reports), ["compare", "lab-ref", str(run), "--reports", str(reports)]]
    outcomes = [run_cli(argv).clean((0, 1, 2)) for argv in commands]  # a baseline renamed is not found by its name
    written = [p for p in run.rglob("*") if p.name not in ("samples.ndjson", "run.json")]
    texts = [text for o in outcomes for text in (o.stdout, o.stderr)]
    no_secret(secret, texts, written)
    assert key == "notes" or "postgresql://ci:***redacted***@db/h" in "".join(texts)


# -- the fuzz target ----------------------------------------------------------------------------

_INFO_FIELDS = ["name", "inventory", "saved", "run_id", "cells", "samples", "exitstatus", "run", "notes"]
_RUN_FIELDS = ["argv", "inventory_name", "inventory_path", "profile", "started", "versions", "run_id"]


@st.composite
def broken_metadata(draw: st.DrawFn) -> tuple[str, str, str]:
    """(where in baseline.json: a key of it or ``run.KEY``, the key, raw JSON text)."""
    raw = draw(st.one_of(RAW_JSON, JSON_VALUES.map(json.dumps), secret_forms().map(json.dumps)))
    if draw(st.booleans()):
        return "run", draw(st.sampled_from(_RUN_FIELDS)), raw
    return "", draw(st.sampled_from(_INFO_FIELDS)), raw


def _with_metadata(text: str, breaks: list[tuple[str, str, str]]) -> str:
    """baseline.json's text with each broken key set to its raw JSON, as written (last of two
    equal keys wins); a key of ``run`` inside its own object."""
    for where, key, raw in breaks:
        if where == "run":
            text = text.replace('"run": {', f'"run": {{"{key}": {raw}, ', 1)
        else:
            text = text.rstrip().removesuffix("}") + f', "{key}": {raw}}}'
    return text


@FUZZ
@given(
    metadata=st.lists(broken_metadata(), max_size=3),
    records=st.lists(broken_record(), max_size=3),
    write=st.integers(0, 4).map(lambda n: n == 0),  # compare writing its report: a second each
)
@surface("saved baselines (baseline show, compare)")
def test_fuzz_saved_baselines(
    tmp_path_factory: pytest.TempPathFactory,
    metadata: list[tuple[str, str, str]],
    records: list[tuple[int, str, str]],
    write: bool,
) -> None:
    """Whatever a baseline's files hold: shown and compared, or refused in one line; the
    baseline never written into, nothing outside the run written, no password quoted."""
    reports, baseline, run = _reports(tmp_path_factory.mktemp("baseline"))
    info = baseline / "baseline.json"
    info.write_text(_with_metadata(info.read_text(), metadata))
    lines = (baseline / "samples.ndjson").read_text().splitlines()
    for number, field, raw in records:
        with_raw(lines, number, field, raw)
    (baseline / "samples.ndjson").write_text("\n".join(lines) + "\n")
    compare = ["compare", "lab-ref", str(run), "--reports", str(reports), *([] if write else ["--no-write"])]
    outcomes = []
    with unchanged(reports, allowed=[RUN.name] if write else []):  # compare writes into the run only
        for argv in [_show(reports), _list(reports), compare]:
            outcomes.append(run_cli(argv).clean((0, 1, 2)))
    written = [p for p in run.rglob("*") if p.name not in ("samples.ndjson", "run.json")]
    texts = [text for o in outcomes for text in (o.stdout, o.stderr)]
    no_sentinel([raw for *_, raw in metadata + records], texts, written)
