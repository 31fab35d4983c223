"""Run ids: one rule (harness.runfiles.runid), and every place that builds a path from a run id keeps it."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.cli import main
from harness.drbd.watch import watch_paths
from harness.errors import ConfigError
from harness.remote.nodefiles import node_run_dir
from harness.runfiles.rundir import RunDir
from harness.runfiles.runid import GENERATED_RUN_ID, MAX_RUN_ID_LEN, is_run_id, new_run_id, validate_run_id
from harness.safety.lock import local_owner

# Mostly the allowed characters, with the ones that make trouble mixed in.
_TEXT = st.text(alphabet=st.sampled_from("aZ09._-/ ;~\\\n"), min_size=0, max_size=MAX_RUN_ID_LEN + 6)


def _create_run_dir(run_id: str) -> object:
    with tempfile.TemporaryDirectory() as tmp:
        return RunDir.create(Path(tmp) / "reports", run_id).run_id


# Every place that turns a run id into a directory: reports/<id>/ here, /run/harness/<id>/ on a
# node (fault records, fio output, the DRBD event watch), and the cluster lock's owner record.
SITES: dict[str, Callable[[str], object]] = {
    "reports/<run-id>/": _create_run_dir,
    "/run/harness/<run-id>/": node_run_dir,
    "DRBD event watch": lambda run_id: watch_paths(run_id, "r0"),
    "cluster lock owner": lambda run_id: local_owner(run_id, "inv.yaml"),
}


def _accepted(site: Callable[[str], object], run_id: str) -> bool:
    try:
        site(run_id)
    except ConfigError:
        return False
    return True


@given(_TEXT)
@example("nightly-42")
@example("../../x")
@example("a..b")
@example("x" * (MAX_RUN_ID_LEN + 1))
@example("latest")
@example("Baselines")
@example("lock")
@example("20261121-101500-ab12")
def test_every_site_applies_the_one_rule(run_id: str) -> None:
    verdicts = {name: _accepted(site, run_id) for name, site in SITES.items()}
    assert verdicts == dict.fromkeys(SITES, is_run_id(run_id)), run_id


@given(_TEXT)
def test_an_accepted_id_is_one_plain_path_component(run_id: str) -> None:
    if not is_run_id(run_id):
        with pytest.raises(ConfigError, match=r"run id .* is not allowed: "):
            validate_run_id(run_id)
        return
    root = Path("/reports")
    assert (root / run_id).parent == root and Path(run_id).name == run_id
    assert ".." not in run_id and not run_id.startswith(("-", ".")) and len(run_id) <= MAX_RUN_ID_LEN


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(UTC)))
def test_generated_ids_follow_the_rule(when: datetime) -> None:
    run_id = new_run_id(when)
    assert GENERATED_RUN_ID.match(run_id) and validate_run_id(run_id) == run_id


@pytest.mark.parametrize("run_id", ["nightly-42", "pr-1234.retry_2", "20261121-101500-ab12", "A"])
def test_user_chosen_ids_are_allowed_everywhere(run_id: str) -> None:
    assert all(_accepted(site, run_id) for site in SITES.values())


def test_cleanup_refuses_a_bad_run_id_while_parsing(capsys: pytest.CaptureFixture[str]) -> None:
    # The inventory does not exist: the run id is judged first, at option parsing.
    with pytest.raises(SystemExit) as exit_info:
        main(["cleanup", "--inventory", "/nonexistent/inv.yaml", "--run-id", "../../x"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --run-id: run id '../../x' is not allowed: use 1-64 letters" in err
