"""Which DRBD the running lab's nodes run, as ``harness lab status`` and the doctor say it.

Two facts: what the lab booted with (its state: the checked DRBD 9 modules, or the UML
kernel's own DRBD 8.4) and what each node's kernel reports now (``/proc/drbd``, read through
the replication seam).  They must agree: a node that reports another version than the lab
loaded runs something else than what the lab is measuring.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.errors import HarnessError
from harness.remote import Runner
from harness.replication import read_product_version, version_probe

__all__ = ["KERNEL_DRBD", "DrbdInUse", "read_drbd_in_use"]

#: what the lab runs without supplied modules
KERNEL_DRBD = "DRBD 8.4 (the UML kernel's own module)"


@dataclass(frozen=True)
class DrbdInUse:
    """The DRBD the lab booted with and the version each node reports (``unknown``: none read)."""

    booted: str | None
    versions: Mapping[str, str]

    @property
    def expected(self) -> str:
        """The version the nodes should report: the modules' (``DRBD 9.2.18 (...)``), else 8.4."""
        return self.booted.split()[1] if self.booted else "8.4"

    def mismatches(self) -> list[str]:
        """Nodes whose kernel reports another DRBD than the lab booted with, one line each."""
        want = self.expected
        return [
            f"node {node} runs DRBD {version}, the lab booted {self.describe_booted()}"
            for node, version in sorted(self.versions.items())
            if version != want and not version.startswith(want + ".")
        ]

    def describe_booted(self) -> str:
        return self.booted or KERNEL_DRBD

    def describe(self) -> str:
        by_version: dict[str, list[str]] = {}
        for node, version in sorted(self.versions.items()):
            by_version.setdefault(version, []).append(node)
        seen = "; ".join(f"{v} on {', '.join(nodes)}" for v, nodes in sorted(by_version.items()))
        return f"{self.describe_booted()}; /proc/drbd: {seen or 'not read'}"


def read_drbd_in_use(booted: str | None, conns: Mapping[str, Runner]) -> DrbdInUse:
    """Each node's DRBD version now, read in parallel (a node that cannot say reads ``unknown``)."""

    def one(name: str) -> tuple[str, str]:
        try:
            result = conns[name].run(version_probe(), timeout=15, check=False)
        except HarnessError:
            return name, "unknown"
        return name, read_product_version(result.stdout)

    with ThreadPoolExecutor(max_workers=max(1, len(conns))) as pool:
        return DrbdInUse(booted, dict(pool.map(one, sorted(conns))))
