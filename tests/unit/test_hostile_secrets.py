"""Passwords in URLs never leave: not in run.json, report.html, a saved baseline, the results
database, nor in what ``--results-db`` and ``--pushgateway`` say when they fail.  The servers
are never reached: PostgreSQL and the Pushgateway are pointed at 127.0.0.1 port 1, where nothing
listens (the tests that start real servers are in tests/integration).  The run is the recorded
lab run tests/data/runs/20261121-110501-f674 with its command line as an older harness wrote it,
password and all; the fuzz target puts any password in every URL form."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.redact import REDACTED, is_secret_name, redact, redact_url
from harness.runfiles.runinfo import RunInfo
from tests.unit.hostile_inputs import FUZZ, no_secret, run_cli

RUN = Path(__file__).resolve().parents[1] / "data" / "runs" / "20261121-110501-f674"
SECRET = "Qs3cr3tPassw0rd"
CLOSED = "127.0.0.1:1"  # nothing listens: a refused connection, at once


def _leaky_run(tmp_path: Path, secret: str = SECRET) -> Path:
    run = tmp_path / "reports" / RUN.name
    shutil.copytree(RUN, run)
    info = json.loads((run / "run.json").read_text())
    info["argv"] = [*info["argv"], "--results-db", f"postgresql://ci:{secret}@db.example.com/harness",
                    f"--pushgateway=https://u:{secret}@pushgateway.example.com:9091"]  # fmt: skip
    (run / "run.json").write_text(json.dumps(info))
    return run


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://ci:SECRET@db/harness", f"postgresql://ci:{REDACTED}@db/harness"),
        ("https://u:SECRET@pushgateway:9091", f"https://u:{REDACTED}@pushgateway:9091"),
        ("https://u:SEC RET@x/", f"https://u:{REDACTED}@x/"),
        ("postgresql://ci:S@CRET@[::1/h", f"postgresql://ci:{REDACTED}@[::1/h"),
        ("--results-db=postgres://:SECRET@h/d", f"--results-db=postgres://:{REDACTED}@h/d"),
        ("http://host:8080/path", "http://host:8080/path"),
        ("postgresql://ci@db/harness", "postgresql://ci@db/harness"),
    ],
)
def test_a_urls_password_reads_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "SECRET" not in redact(f"error: {url.replace(' ', '')} refused")


@pytest.mark.parametrize("name", ["root_pw", "db_pw", "pgpass", "ansible_ssh_pass", "mysql_pwd", "ssh_key", "vault_x"])
def test_secret_variables_are_found_by_their_name(name: str) -> None:
    assert is_secret_name(name)
    assert redact(f"{name}=hunter2") == f"{name}={REDACTED}" or name in ("ssh_key", "vault_x")


@pytest.mark.parametrize("name", ["ansible_ssh_private_key_file", "key_env", "ansible_host_key_checking", "passive"])
def test_references_and_plain_words_are_no_secrets(name: str) -> None:
    assert not is_secret_name(name)


def test_the_command_line_is_redacted_in_every_file_written_from_it(tmp_path: Path) -> None:
    run = _leaky_run(tmp_path)
    reports = tmp_path / "reports"
    outputs = [
        run_cli(["report", str(run)]).clean((0,)),
        run_cli(["results", "import", str(reports)]).clean((0,)),
        run_cli(["baseline", "save", "main", str(run), "--reports", str(reports), "--inventory-name", "lab"]).clean(
            (0,)
        ),
        run_cli(["metrics", str(run)]).clean((0,)),
    ]
    assert SECRET in (run / "run.json").read_text()  # the old file itself, as it was recorded
    (run / "run.json").unlink()
    no_secret(SECRET, [o.stdout + o.stderr for o in outputs], [reports])
    assert (run / "report.html").is_file() and (reports / "results.sqlite").is_file()
    assert (reports / "baselines" / "lab" / "main" / "baseline.json").is_file()
    assert RunInfo.from_json(json.dumps({"run_id": "r", "argv": ["x", f"postgresql://a:{SECRET}@h"]})).argv[1] == (
        f"postgresql://a:{REDACTED}@h"
    )


def test_a_password_anywhere_in_run_json_never_reaches_history_nor_the_database(tmp_path: Path) -> None:
    """Not only the command line: a run.json from elsewhere may name its inventory (or its
    profile, a tool version) with a URL holding a password; history prints the name."""
    run = tmp_path / "reports" / RUN.name
    shutil.copytree(RUN, run)
    url = f"postgresql://ci:{SECRET}@db.example.com/harness"
    info = json.loads((run / "run.json").read_text())
    info.update(inventory_name=url, profile=url, versions={"harness": url})
    (run / "run.json").write_text(json.dumps(info))
    db = tmp_path / "results.sqlite"
    run_cli(["results", "import", str(run.parent), "--results-db", str(db)]).clean((0,))
    outcome = run_cli(["history", "--results-db", str(db), "--no-plot"]).clean((0,))
    assert f"inventory postgresql://ci:{REDACTED}@db.example.com/harness" in outcome.stdout
    (run / "run.json").unlink()
    no_secret(SECRET, [outcome.stdout, outcome.stderr], [db])


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "--results-db", f"postgresql://ci:{SECRET}@{CLOSED}/h"],
        ["history", "--results-db", f"postgresql://ci:{SECRET[:6]} {SECRET[6:]}@{CLOSED}/h"],
        ["history", "--results-db", f"postgresql://ci:{SECRET[:6]}@{SECRET[6:]}@[::1/h"],
        ["results", "status", "--results-db", f"postgres://ci:{SECRET}@{CLOSED}/h"],
        ["metrics", str(RUN), "--pushgateway", f"http://u:{SECRET}@{CLOSED}/"],
        ["metrics", str(RUN), "--pushgateway", f"https://u:{SECRET}@bad host/"],
        ["metrics", str(RUN), "--pushgateway", f"http://:{SECRET}@/x"],
        ["metrics", str(RUN), "--pushgateway", f"ftp://u:{SECRET}@h/"],
    ],
)
def test_failing_urls_are_told_without_their_password(argv: list[str]) -> None:
    outcome = run_cli(argv).clean((2, 5))  # bad input, or a server that cannot be reached
    no_secret(SECRET, [outcome.stdout, outcome.stderr])
    no_secret(SECRET[:6], [outcome.stderr])
    assert REDACTED in outcome.stderr


# -- the fuzz target ----------------------------------------------------------------------------

_PASSWORD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/?#\\"), min_size=1, max_size=20
).map(lambda s: f"Q7{s}Z9")
_FORMS = [
    ("history", "--results-db", "postgresql://ci:{}@" + CLOSED + "/h"),
    ("metrics", str(RUN), "--pushgateway", "http://u:{}@" + CLOSED + "/"),
    ("metrics", str(RUN), "--pushgateway", "https://u:{}@bad host/"),
]


@FUZZ
@given(password=_PASSWORD, form=st.sampled_from(_FORMS))
def test_fuzz_url_passwords(tmp_path_factory: pytest.TempPathFactory, password: str, form: tuple[str, ...]) -> None:
    """Any password in a URL: never in a message, nor in a file written from the command line."""
    argv = [part.replace("{}", password) for part in form]
    outcome = run_cli(argv).clean((2, 5))
    no_secret(password, [outcome.stdout, outcome.stderr])
    tmp = tmp_path_factory.mktemp("secret")
    run = _leaky_run(tmp, password)
    run_cli(["results", "import", str(run.parent)]).clean((0,))  # report.html: the example above
    (run / "run.json").unlink()
    no_secret(password, files=[tmp / "reports"])
