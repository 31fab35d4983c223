"""Inventory: what the harness may touch, validated before any remote change."""

from harness.inventory.loader import inventory_json_schema, load_ansible_mapping, load_inventory, parse_inventory
from harness.inventory.models import (
    AzLinkSpec,
    Inventory,
    LabSpec,
    NetworkProfileSpec,
    NodeSpec,
    PairSpec,
    ReplicationSpec,
    ThresholdSpec,
)

__all__ = [
    "AzLinkSpec",
    "Inventory",
    "LabSpec",
    "NetworkProfileSpec",
    "NodeSpec",
    "PairSpec",
    "ReplicationSpec",
    "ThresholdSpec",
    "inventory_json_schema",
    "load_ansible_mapping",
    "load_inventory",
    "parse_inventory",
]
