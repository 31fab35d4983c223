"""The transport to cluster nodes: SSH over fabric, below the inventory.

``command`` (Runner, CommandResult, render_command) · ``ssh`` (SshNode) · ``batch``
(run_batch, Shell) · ``detached`` (DetachedJob: a process left running on a node, under a
node-side deadline).  The failures it raises live in :mod:`harness.errors` and are handed on
here too, for callers that catch what the transport raises.
"""

from harness.errors import CommandFailed, CommandTimeout, ConnectionLost, HostKeyRefused
from harness.remote.batch import Shell, run_batch
from harness.remote.command import CommandResult, Runner, render_command
from harness.remote.detached import DetachedJob
from harness.remote.ssh import SshNode

__all__ = [
    "CommandFailed",
    "CommandResult",
    "CommandTimeout",
    "ConnectionLost",
    "DetachedJob",
    "HostKeyRefused",
    "Runner",
    "Shell",
    "SshNode",
    "render_command",
    "run_batch",
]
