"""Inventories that reach the running lab as a cloud cluster, not as the lab.

The scenarios behave differently on an inventory without a ``lab:`` section: privileged
commands go through ``sudo -n`` as a non-root user, the key comes from an environment
variable, disruptive tests need ``--allow-disruptive`` and crash a node with sysrq, the
DRBD configuration is never changed, and the shapes vary (no scratch devices, only a
cross-AZ or only a same-AZ pair).  The lab's guests have what such a cluster has: a
``harness`` user with passwordless sudo, pinned host keys, and a kernel that comes back after
a panic (:mod:`harness.lab.panicreboot`).  These inventories name them that way, with AWS
instance and volume types from the catalog, so every CI run exercises the real-cluster path.

The guests' addresses live inside the lab's network namespace and the inventory has no
``netns:``, as a real one would not: run the harness inside it, the way a CI runner sits in
the cluster's VPC (``ip netns exec hlab pytest scenarios/ --inventory ...``).
"""

from __future__ import annotations

import copy
from typing import Any, Final, Literal

from harness.errors import ConfigError

__all__ = ["KEY_ENV", "SHAPES", "Shape", "posing_inventory"]

Shape = Literal["multi-az", "cross-az-only", "same-az-only"]
#: shape -> what it is like
SHAPES: Final[dict[str, str]] = {
    "multi-az": "both DRBD pairs, no scratch devices (like inventories/multi_az.yaml)",
    "cross-az-only": "only the cross-AZ pairs (DRBD and md-nbd), no scratch devices",
    "same-az-only": "only the same-AZ pairs (DRBD and md-nbd), with scratch devices for the disk studies",
}
KEY_ENV: Final = "HARNESS_SSH_KEY"
_USER: Final = "harness"
_INSTANCE: Final = "t3.medium"
_VOLUME: Final = "gp3:100GiB"
# settings of the lab inventory that describe the cluster's expectations, kept as they are; its
# validity thresholds are its one-CPU guests' (their run queue, their same-AZ pings), which the
# posing nodes are
_KEPT: Final = ("network_profiles", "workloads", "thresholds", "baseline_tolerances", "validity")


def _cloud_azs(lab_azs: list[str]) -> dict[str, str]:
    return {az: f"us-east-1{'abcdefgh'[i]}" for i, az in enumerate(sorted(set(lab_azs)))}


def posing_inventory(lab: dict[str, Any], shape: Shape, known_hosts: str) -> dict[str, Any]:
    """The inventory (plain data, ready for YAML) of ``shape`` for the lab inventory ``lab``."""
    if shape not in SHAPES:
        raise ConfigError(f"unknown shape {shape!r}; choose one of {', '.join(SHAPES)}")
    nodes: dict[str, Any] = lab.get("nodes") or {}
    pairs: dict[str, Any] = lab.get("pairs") or {}
    azs = _cloud_azs([str(n["az"]) for n in nodes.values()])

    def crosses(pair: dict[str, Any]) -> bool:
        return bool(nodes[pair["primary"]]["az"] != nodes[pair["secondary"]]["az"])

    def wanted(pair: dict[str, Any]) -> bool:
        # the multi-az shape is the shipped DRBD example's; a DataKeeper-style cluster's
        # md-nbd pairs ride in the narrower shapes
        if shape == "multi-az":
            return bool(pair.get("replication", "drbd") == "drbd")
        return crosses(pair) == (shape == "cross-az-only")

    chosen = {name: dict(p) for name, p in pairs.items() if wanted(p)}
    if not chosen:
        raise ConfigError(f"the lab inventory has no pair for shape {shape!r}")
    used = sorted({n for p in chosen.values() for n in (p["primary"], p["secondary"])})
    out_nodes: dict[str, Any] = {}
    for name in used:
        node = nodes[name]
        entry: dict[str, Any] = {
            "az": azs[str(node["az"])],
            "instance_type": _INSTANCE,
            "volume": _VOLUME,
            "hostname": name,
            "ssh": {
                "host": node["ssh"]["host"],
                "user": _USER,
                "sudo": True,
                "key_env": KEY_ENV,
                "known_hosts": known_hosts,
            },
            "replication": dict(node["replication"]),
        }
        if shape == "same-az-only" and node.get("scratch_devices"):
            entry["scratch_devices"] = list(node["scratch_devices"])
        out_nodes[name] = entry
    inventory: dict[str, Any] = {"name": f"lab-as-aws-{shape}", "nodes": out_nodes, "pairs": chosen}
    inventory.update({key: copy.deepcopy(lab[key]) for key in _KEPT if key in lab})
    return inventory
