"""The push to a real Pushgateway: Debian's ``prometheus-pushgateway`` (scripts/bootstrap
installs it), started by the test on 127.0.0.1 at a free port with no persistence file, then
read back from its own ``/metrics`` and parsed by prometheus_client's parser."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.export import PushError, RunMetrics, push_to_pushgateway
from harness.report.aggregate import aggregate_samples
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import read_samples

RUN = Path(__file__).parent.parent / "data" / "runs" / "20261121-110501-f674"
BINARY = "prometheus-pushgateway"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode("utf-8"))


@pytest.fixture(scope="module")
def gateway() -> Iterator[str]:
    binary = shutil.which(BINARY) or (f"/usr/bin/{BINARY}" if Path(f"/usr/bin/{BINARY}").exists() else None)
    if binary is None:
        pytest.fail(f"{BINARY} is not installed: run scripts/bootstrap (Debian package prometheus-pushgateway)")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [binary, f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                _get(f"{url}/-/ready")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr and proc.poll() is not None else ""
                    pytest.fail(f"{BINARY} did not become ready on {url}: {err[-500:]}")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _metrics() -> RunMetrics:
    cells = tuple(aggregate_samples(read_samples(RUN / "samples.ndjson")))
    return RunMetrics(cells, RunInfo(run_id="20261121-110501-f674", inventory_name="lab", exitstatus=0))


def test_pushed_metrics_come_back_from_the_gateway(gateway: str) -> None:
    metrics = _metrics()
    push_to_pushgateway(gateway, metrics)
    families = {f.name: f for f in text_string_to_metric_families(_get(f"{gateway}/metrics"))}
    bw = families["harness_replicated_write_bandwidth_bytes_per_second"]
    cells = [c for c in metrics.cells if c.scenario == "replicated_write"]
    assert len(bw.samples) == len(cells)
    for sample in bw.samples:
        assert sample.labels["job"] == "harness" and sample.labels["inventory"] == "lab"
        (cell,) = [c for c in cells if (c.pair, c.workload) == (sample.labels["pair"], sample.labels["workload"])]
        assert sample.value == pytest.approx((cell.median("bw") or 0) * 2**20)
    assert families["harness_run_info"].samples[0].labels["run_id"] == "20261121-110501-f674"


def test_a_second_push_replaces_the_group(gateway: str) -> None:
    metrics = _metrics()
    fewer = RunMetrics(tuple(c for c in metrics.cells if c.scenario != "replicated_write"), metrics.info)
    push_to_pushgateway(gateway, metrics)
    push_to_pushgateway(gateway, fewer)
    names = {f.name for f in text_string_to_metric_families(_get(f"{gateway}/metrics")) if f.samples}
    assert "harness_replicated_write_bandwidth_bytes_per_second" not in names
    assert "harness_latency_sweep_io_operations_per_second" in names


def test_an_unreachable_gateway_is_a_clear_error() -> None:
    with pytest.raises(PushError, match="could not be reached"):
        push_to_pushgateway(f"http://127.0.0.1:{_free_port()}", _metrics(), timeout=2)
