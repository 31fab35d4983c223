"""Rate of the replication path, measured with one iperf3 TCP flow between the pair's replication
addresses (DRBD 8.4 replicates over one TCP connection per peer, so one flow is what it gets).

The server runs on the secondary bound to its replication address on a port of its own, for
one test only (``-1``), as a :class:`~harness.remote.DetachedJob` with a pid file and a node-side
deadline, so the cleanup stops exactly the session we started and never another iperf3 on the
node, and a server whose client never comes does not listen forever.
"""

from __future__ import annotations

import json
import math
import time

from harness.errors import InfraError
from harness.probes.rtt import ping_argv
from harness.remote import CommandResult, DetachedJob, Runner
from harness.remote.polling import backoff

__all__ = ["IPERF_PORT", "has_iperf3", "measure_path_rate", "parse_iperf3_bits"]

#: far from DRBD's usual 7788+ and iperf3's default 5201, so it collides with neither
IPERF_PORT = 5299
_PIDFILE = "/run/harness-iperf3.pid"
#: how long an iperf3 server may take to listen once started (on the lab's UML guests ~0.2 s)
SERVER_START_S = 5.0


def _stderr_message(stderr: str) -> str:
    """iperf3's own words on stderr, without its ``iperf3: error - `` prefix (the last 300 characters)."""
    lines = [line.strip().removeprefix("iperf3: ").removeprefix("error - ") for line in stderr.splitlines()]
    return "; ".join(line for line in lines if line)[-300:]


def parse_iperf3_bits(text: str, stderr: str = "") -> float:
    """Bits per second the receiver saw, from ``iperf3 -J`` output (the same keys from 3.7 to 3.18).

    Refuses, with what iperf3 said, anything that is not a positive measured rate: its own
    ``error`` object; an empty ``end`` (iperf 3.9 leaves the error out of the JSON and
    prints it on ``stderr``, which is then the message); a rate of 0 bit/s, which iperf3 reports
    as a result when the path carried nothing and which would otherwise surface much later as
    an invalid calibration.
    """
    said = _stderr_message(stderr)
    try:
        data, _ = json.JSONDecoder().raw_decode(text.lstrip())
    except ValueError as exc:
        raise InfraError(f"iperf3 printed no JSON ({exc})" + (f": {said}" if said else "")) from None
    if not isinstance(data, dict):
        raise InfraError("iperf3 output not understood: not a JSON object")
    start = data.get("start")
    version = start.get("version") if isinstance(start, dict) else None
    # "iperf 3.12" -> "iperf3 3.12"
    who = f"iperf3 {version.removeprefix('iperf ')}" if isinstance(version, str) else "iperf3"
    if "error" in data:
        # iperf3 3.7 starts the text with "error - " ("error - unable to connect to server:
        # Connection refused"), 3.18 does not; the message already says it is an error
        raise InfraError(f"{who}: {str(data['error']).removeprefix('error - ')}")
    end = data.get("end")
    if isinstance(end, dict) and not end:
        if said:
            raise InfraError(f"{who}: {said}")
        raise InfraError(f"{who} printed no result (empty 'end': iperf 3.9 prints its error only on stderr)")
    try:
        received = end["sum_received"]  # type: ignore[index]
        bits = float(received["bits_per_second"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InfraError(f"iperf3 output not understood: no end.sum_received.bits_per_second ({exc!r})") from None
    if not math.isfinite(bits) or bits <= 0:
        moved = received.get("bytes")
        seconds = received.get("seconds")
        raise InfraError(
            f"{who} measured {0.0 if bits == 0 else bits:g} bit/s ({moved} bytes received in {seconds} s): "
            "the replication path carried nothing during the test; check the link and any impairment left on it"
        )
    return bits


def has_iperf3(node: Runner) -> bool:
    return node.run(["sh", "-c", "command -v iperf3"], timeout=15, check=False).exit_code == 0


def measure_path_rate(primary: Runner, secondary: Runner, peer_ip: str, *, seconds: int = 3) -> float:
    """Bits per second from ``primary`` to ``peer_ip`` (the secondary's replication address)."""
    ping_argv(peer_ip)  # validates the address before it reaches a command line
    # detached, but under a node-side deadline: a server whose client never comes (the harness
    # died in between) must not listen forever
    server = DetachedJob.of_argv(
        ["iperf3", "-s", "-1", "-B", peer_ip, "-p", str(IPERF_PORT)], deadline_s=seconds + 60, pid_file=_PIDFILE
    )
    server.start(secondary, timeout=20)
    client = ["iperf3", "-c", peer_ip, "-p", str(IPERF_PORT), "-t", str(seconds), "-O", "1", "-J"]
    try:
        # the server starts in the background: the client retries while it is not yet
        # listening (refused), as long as a server can take to start
        listening_by = time.monotonic() + SERVER_START_S
        for pause in backoff(0.5, first_s=0.1):
            time.sleep(pause)
            out = primary.run(client, timeout=seconds + 30, check=False)
            if out.exit_code == 0 or not _refused(out) or time.monotonic() > listening_by:
                break
        if out.exit_code != 0 and not out.stdout.strip():
            raise InfraError(f"{primary.name}: iperf3 client exited {out.exit_code}: {out.stderr.strip()[-300:]}")
        return parse_iperf3_bits(out.stdout, out.stderr)
    finally:
        server.stop(secondary, grace_s=None, timeout=15)


#: what the client says when no server listens: 3.7-3.18 end the message so, except 3.9,
#: which loses the reason and says only that its control message could not be sent
_REFUSED = ("Connection refused", "unable to send control message: Bad file descriptor")


def _refused(out: CommandResult) -> bool:
    """The client found no server listening."""
    return any(text in out.stdout or text in out.stderr for text in _REFUSED)
