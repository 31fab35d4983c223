"""The PostgreSQL results store against a real server: the same store contract as SQLite.

The module starts its own PostgreSQL from Debian's ``postgresql`` package (scripts/bootstrap
installs it): ``initdb`` in a fresh directory and ``postgres`` listening on a unix socket only
(``listen_addresses=''``, so nothing opens a TCP port), as an unprivileged user — PostgreSQL
refuses to run as root, and ``./run tests`` runs as root on CI, so both are started through
``setpriv`` as ``nobody``.  Each test gets a new database; the server is stopped at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from harness.errors import InfraError
from harness.resultsdb.location import ResultsDb, results_db
from tests.unit.resultsdb_contract import StoreContract

_PORT = 5432  # only names the socket file (.s.PGSQL.5432) in the private socket directory
_USER = "harness"


def _bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        pytest.fail("PostgreSQL is not installed: run scripts/bootstrap (Debian package postgresql)")
    return found[-1].parent


def _as_server_user(home: Path) -> Callable[[list[str]], list[str]]:
    """Prefix a command so it runs unprivileged (as ``nobody`` when we are root)."""
    if os.geteuid() != 0:
        return lambda argv: argv
    nobody = pwd.getpwnam("nobody")
    shutil.chown(home, nobody.pw_uid, nobody.pw_gid)
    prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups", "--"]
    return lambda argv: prefix + argv


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A running PostgreSQL; yields the libpq URL of its ``postgres`` database."""
    bindir = _bindir()
    # Not under pytest's tmp_path: its parents are root-only (0700), which nobody cannot pass.
    home = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    run_as = _as_server_user(home)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    data, sockets = home / "data", home / "sockets"
    subprocess.run(run_as(["mkdir", str(sockets)]), check=True)
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", _USER, "--auth=trust", "-E", "UTF8", "--no-sync"]
    subprocess.run(run_as(initdb), check=True, env=env, capture_output=True)
    postgres = [
        str(bindir / "postgres"),
        "-D", str(data),
        "-k", str(sockets),
        "-p", str(_PORT),
        "-c", "listen_addresses=",
        "-c", "fsync=off",
    ]  # fmt: skip
    log = (home / "server.log").open("w")
    proc = subprocess.Popen(run_as(postgres), env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"postgresql://{_USER}@/postgres?host={sockets}&port={_PORT}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(url, connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"PostgreSQL did not start: {(home / 'server.log').read_text()[-2000:]}")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()  # SIGTERM: smart shutdown once clients are gone
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def db(server: str, request: pytest.FixtureRequest) -> Iterator[ResultsDb]:
    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50]
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    location = results_db(server.replace("/postgres?", f"/{name}?"), Path("unused"))
    assert location is not None and location.url is not None
    yield location
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


class TestPostgresStore(StoreContract):
    pass


def test_a_server_that_is_not_there_is_infrastructure_trouble(server: str) -> None:
    url = server.replace(f"port={_PORT}", "port=1")  # no socket file of that number
    with pytest.raises(InfraError, match="cannot connect to the results database"):
        ResultsDb(url=url).open()


def test_a_password_never_reaches_a_message() -> None:
    db = ResultsDb(url="postgresql://ci:s3cret-pass@/nowhere?host=/nonexistent&port=1")
    with pytest.raises(InfraError) as caught:
        db.open()
    assert "s3cret-pass" not in str(caught.value) and "ci:***redacted***@" in str(caught.value)
    assert "s3cret-pass" not in db.describe()
