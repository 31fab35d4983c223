"""Every peer of a DRBD resource as one node sees it, and the quorum they make.

The pair under test is judged by its own connection (:meth:`ResourceState.toward`); this is
the rest of the resource: each peer with its connection, role and disk, the quorum setting
(``drbdsetup show --show-defaults``: what the kernel runs) and state, and how many peers the
node can lose before its writes stop (:func:`~harness.drbd.quorum.summarize_quorum`).  Two
read-only commands, named after the resource so the views of several resources share a round
trip.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final

from harness.drbd import commands
from harness.drbd.config import find_resources, parse_config
from harness.drbd.errors import DrbdOutputError
from harness.drbd.fold import resource_from_events2
from harness.drbd.layout import layout_of_show
from harness.drbd.quorum import QuorumSummary, quorum_setting, summarize_quorum
from harness.remote import CommandResult

__all__ = ["PeersPlan"]

_STATE: Final = "peers_state_"
_SHOW: Final = "peers_show_"


def _failed(result: CommandResult) -> str:
    return (result.stderr.strip() or f"exit {result.exit_code}").splitlines()[0]


@dataclass(frozen=True)
class PeersPlan:
    """The peers of ``resource`` on ``node``; ``diskless``: the peers without a disk by
    configuration (the inventory's tie-breakers), which DRBD does not always say."""

    node: str
    resource: str
    diskless: Collection[str] = ()

    @property
    def _key(self) -> str:
        return self.resource.encode().hex()

    def commands(self) -> dict[str, list[str]]:
        """The whole resource's state (every connection) and the settings it runs with."""
        return {
            _STATE + self._key: commands.events2_now_argv(self.resource),
            _SHOW + self._key: commands.show_defaults_argv(self.resource),
        }

    def read(self, results: Mapping[str, CommandResult]) -> QuorumSummary | None:
        """The summary from :meth:`commands`' results; None when the resource is not up here."""
        state_out, show_out = results[_STATE + self._key], results[_SHOW + self._key]
        where = f"{self.node}: {self.resource}"
        if not state_out.ok:
            raise DrbdOutputError(f"{where}: `drbdsetup events2 --now` failed: {_failed(state_out)}")
        try:
            state = resource_from_events2(state_out.stdout, self.resource)
        except DrbdOutputError as exc:
            raise DrbdOutputError(f"{where}: {exc}") from None
        if state is None:
            return None
        if not show_out.ok:
            raise DrbdOutputError(f"{where}: `drbdsetup show --show-defaults` failed: {_failed(show_out)}")
        blocks = find_resources(parse_config(show_out.stdout), self.resource)
        if not blocks:
            raise DrbdOutputError(f"{where}: `drbdsetup show --show-defaults` does not list the resource")
        layout = layout_of_show(tuple(s for block in blocks for s in block.block or ()))
        state = state.with_diskless(self.diskless)
        return summarize_quorum(state, quorum_setting(layout.resource_options), self.diskless)
