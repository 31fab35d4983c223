"""Passwords in URLs never leave: not in run.json, report.html, a saved baseline, the results
database, nor in what ``--results-db`` and ``--pushgateway`` say when they fail.  The servers
are never reached: PostgreSQL and the Pushgateway are pointed at 127.0.0.1 port 1, where nothing
listens (the tests that start real servers are in tests/integration).  The run is the recorded
lab run tests/data/runs/20261121-110501-f674 with its command line as an older harness wrote it,
password and all.  The fuzz targets build URLs of every part (scheme, a user named like a secret,
a password of any character RFC 3986 lets userinfo hold, host, port, path, query; the ``//``
missing or misspelt): the redactors keep all of a URL but its password, every command that takes
one (``--results-db``, ``--pushgateway``) tells it so, and any password written in run.json
reaches no file."""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.redact import REDACTED, is_secret_name, redact, redact_url
from harness.runfiles.runinfo import RunInfo
from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import FUZZ, fuzz, no_secret, probe, run_cli, unchanged

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"
RUN = RUNS / "20261121-110501-f674"
HISTORY = RUNS / "history-lab4"
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
        # a user named like a secret: its host and path were redacted with the password
        ("https://x-access-token:SECRET@github.com/o/r.git", f"https://x-access-token:{REDACTED}@github.com/o/r.git"),
        ("postgresql://db_pw:SECRET@db:5432/h?sslmode=require", f"postgresql://db_pw:{REDACTED}@db:5432/h?sslmode=require"),
        # a quote in the password (RFC 3986 allows it): redact() left the password whole
        ("postgresql://ci:SE'CRET@db/h", f"postgresql://ci:{REDACTED}@db/h"),
    ],
)  # fmt: skip
def test_a_urls_password_reads_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "SECRET" not in redact(f"error: {url.replace(' ', '')} refused")
    assert redact(f"error: {url} refused") == f"error: {shown} refused" or " " in url or url.count("@") > 1


@pytest.mark.parametrize(
    ("word", "shown"),
    [
        ("postgresql:/ci:SECRET@db/h", f"postgresql:{REDACTED}@db/h"),
        ("postgresql//ci:SECRET@db/h", f"postgresql//ci:{REDACTED}@db/h"),
        ("ci:SECRET@db://x", f"ci:{REDACTED}@db://x"),
        ("user@host", "user@host"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ],
)
def test_a_url_whose_slashes_went_missing_reads_redacted(word: str, shown: str) -> None:
    assert redact_url(word) == shown


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
        # the `//` misspelt: was opened as an SQLite file of that name, quoted whole
        ["history", "--results-db", f"postgresql:/ci:{SECRET}@{CLOSED}/h"],
        ["results", "status", "--results-db", f"postgresql//ci:{SECRET}@{CLOSED}/h"],
        ["history", "--results-db", f"ci:{SECRET}@db://x"],
        ["metrics", str(RUN), "--pushgateway", f"http:/u:{SECRET}@{CLOSED}/"],
        # an @ in the password, and a character no host name holds after it: was exit 70 (UnicodeError)
        ["history", "--results-db", f"postgresql://ci:{SECRET[:6]}@\ufff9{SECRET[6:]}@{CLOSED}/h"],
    ],
)
def test_failing_urls_are_told_without_their_password(argv: list[str]) -> None:
    outcome = run_cli(argv).clean((2, 5))  # bad input, or a server that cannot be reached
    no_secret(SECRET, [outcome.stdout, outcome.stderr])
    no_secret(SECRET[:6], [outcome.stderr])
    assert REDACTED in outcome.stderr


def test_a_host_name_no_resolver_can_encode_is_bad_input() -> None:
    """A label of 70 characters: the resolver's UnicodeError was an internal error."""
    line = run_cli(["history", "--results-db", f"postgresql://ci@{'a' * 70}:1/h"]).refusal()
    assert line.endswith("not a host name: encoding with 'idna' codec failed (UnicodeError: label too long)")


# -- the fuzz targets ---------------------------------------------------------------------------

_UNRESERVED = string.ascii_letters + string.digits + "-._~"
_USER = st.text(_UNRESERVED, max_size=8) | st.sampled_from(["x-access-token", "oauth2", "db_pw", "token", "pgpass"])
#: A password as userinfo may hold it unencoded (RFC 3986: sub-delimiters, ``:``, ``%`` escapes);
#: its ``!`` is in no user, host or path the strategies make, so it is found only where it leaked.
_URL_PASSWORD = st.text(_UNRESERVED + "!$&'()*+,;=:%", max_size=16).map(lambda s: f"Q7!{s}Z9")
_SCHEMES = ["postgresql", "postgres", "http", "https", "sqlite", "ftp"]
#: Hosts that answer at once: nothing listens on port 1, and no name is looked up.
_CLOSED = st.sampled_from(["127.0.0.1:1", "[::1]:1"])
_HOSTS = _CLOSED | st.sampled_from(["db", "db.example.com"])
_PATH = st.tuples(
    st.sampled_from(["", "/", "/harness", "/a/b/", "//x"]), st.sampled_from(["", "?sslmode=require", "?a=b&c=d", "#f"])
).map("".join)


@st.composite
def url(draw: st.DrawFn, hosts: st.SearchStrategy[str] = _HOSTS) -> tuple[str, str, str]:
    """(a URL with a password, the password, the URL as every message must show it)."""
    scheme, user, password = draw(st.sampled_from(_SCHEMES)), draw(_USER), draw(_URL_PASSWORD)
    rest = draw(hosts) + draw(_PATH)
    return f"{scheme}://{user}:{password}@{rest}", password, f"{scheme}://{user}:{REDACTED}@{rest}"


@fuzz(200)  # a regular expression or two: microseconds
@given(parts=url(), context=st.sampled_from(["{}", "error: {} refused", "'{}'", "--results-db={}", "({})", "{}, then"]))
@surface("URL redaction (redact_url, redact)")
def test_fuzz_url_redaction(parts: tuple[str, str, str], context: str) -> None:
    """Any URL, alone or in a message: the password redacted, every other character kept."""
    written, password, shown = parts
    with probe():
        alone, within = redact_url(written), redact(context.format(written))
    no_secret(password, [alone, within])
    assert (alone, within) == (shown, context.format(shown))


@st.composite
def mangled_url(draw: st.DrawFn) -> tuple[str, str, str | None]:
    """A URL of :func:`url` to a closed port, or one whose ``//`` (or scheme) went missing, with
    its password and how it must be shown (``None``: any way without the password)."""
    written, password, shown = draw(url(_CLOSED))
    scheme, _, rest = written.partition("://")
    broken = draw(st.sampled_from([None, None, f"{scheme}:/", f"{scheme}//", ""]))
    return (written, password, shown) if broken is None else (broken + rest, password, None)


_COMMANDS = [
    ("history", "--results-db", "{}", "--no-plot"),
    ("results", "status", "--results-db", "{}"),
    ("results", "import", str(HISTORY), "--results-db", "{}"),
    ("compare", "history:3", str(HISTORY / "20261125-120534-2874"), "--results-db", "{}", "--no-write"),
    ("metrics", str(RUN), "--pushgateway", "{}"),
]


@FUZZ
@given(parts=mangled_url(), command=st.sampled_from(_COMMANDS), joined=st.booleans())
@surface("URLs: --results-db, --pushgateway")
def test_fuzz_url_options(parts: tuple[str, str, str | None], command: tuple[str, ...], joined: bool) -> None:
    """Any URL an option is given: a refusal (2) or an unreachable server (5) that shows the URL
    with its password redacted and the rest as written; nothing written."""
    written, password, shown = parts
    argv = [part.replace("{}", written) for part in command]
    if joined:  # --results-db=URL: one word
        at = argv.index(written)
        argv[at - 1 : at + 1] = [f"{argv[at - 1]}={written}"]
    with unchanged(RUN, HISTORY):
        outcome = run_cli(argv).clean((2, 5))
    no_secret(password, [outcome.stdout, outcome.stderr])
    if shown is not None and "--results-db" in command and not written.startswith(("postgresql://", "postgres://")):
        shown = written.split("://")[0] + "://..."  # a scheme the harness does not open: named, nothing more
    assert shown is None or shown in outcome.stderr, outcome.stderr


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
@surface("URL passwords in run.json: report, database")
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
