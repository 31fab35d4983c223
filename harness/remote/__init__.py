"""The transport to cluster nodes: SSH over fabric, below the inventory.

``spec`` (SshSpec: how to reach a node) · ``command`` (Runner, CommandResult, render_command) ·
``ssh`` (SshNode) · ``batch`` (run_batch, Shell) · ``detached`` (DetachedJob: a process left
running on a node, under a node-side deadline) · ``replay`` (ReplayNode: a node that is a
recording of a live session) · ``recorder`` (RecordingNode, RecordingPool, Capture: how a
live session is recorded) · ``replayclock`` (ReplayClock: a replay's time, the session's) ·
``pool`` (ConnectionPool, and the Node and NodePool a recorded or replayed session stands in
for) · ``polling`` (poll pauses, and the clock a wait reads).  The failures it raises
(CommandFailed, CommandTimeout, ConnectionLost, HostKeyRefused) live in :mod:`harness.errors`.
"""

from harness.remote.batch import Shell, run_batch
from harness.remote.command import CommandResult, Runner, render_command
from harness.remote.detached import DetachedJob
from harness.remote.ssh import SshNode

__all__ = [
    "CommandResult",
    "DetachedJob",
    "Runner",
    "Shell",
    "SshNode",
    "render_command",
    "run_batch",
]
