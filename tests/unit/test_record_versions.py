"""Per-node tool versions in a sample's provenance (harness.cell.record, harness.probes.toolversions),
from recorded outputs: a pair whose nodes run different releases says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from harness.cell.record import Recorder
from harness.remote.pool import ConnectionPool
from tests.doubles import LAB, Answer, FakePool, FakeRunner, data


def _node(name: str, *, tc: str, iperf3: str, ping: Answer, ssh: str) -> FakeRunner:
    return FakeRunner(
        name,
        batch={
            "fio": Answer(data("fio/fio-3.33-version.txt")),
            "kernel": Answer("6.1.176\n"),
            "drbd": Answer(data("drbd/84-proc-drbd-connected.txt")),
            "os": Answer(data("lab_userland/os-release.bullseye")),
            "v_tc": Answer(data(tc)),
            "v_iperf3": Answer(data(iperf3)),
            "v_ping": ping,
            "v_ssh": Answer(stderr=data(ssh)),
        },
    )


def test_each_node_records_the_tools_it_runs() -> None:
    a1 = _node(
        "a1",
        tc="versions/tc-V-iproute2-5.10.txt",
        iperf3="versions/iperf3-3.9-version.txt",
        ping=Answer(data("ping/iputils-20210202-V.txt")),
        ssh="versions/openssh-8.4p1-ssh-V.txt",
    )
    a2 = _node(
        "a2",
        tc="versions/tc-V-iproute2-6.15.txt",
        iperf3="versions/iperf3-3.18-version.txt",
        ping=Answer(stderr=data("versions/busybox-1.37.0-ping-V.txt"), rc=1),
        ssh="versions/openssh-9.2p1-ssh-V.txt",
    )
    pool = cast(ConnectionPool, FakePool({"a1": a1, "a2": a2}))
    none = cast(Any, None)
    recorder = Recorder(LAB, run_id="r", run_dir=Path("."), pool=pool, store=none, ledger=none, progress=lambda _: None)
    assert recorder.facts("a1").tools == "iproute2-5.9.0 · iperf3 3.9 · iputils 20210202 · OpenSSH_8.4p1"
    assert recorder.facts("a2").tools == "iproute2-6.15.0 · iperf3 3.18 · busybox 1.37.0 · OpenSSH_9.2p1"
    assert recorder.facts("a1").fio_version == "fio-3.33"
