"""Inventory: what the harness may touch, validated before any remote change."""

from harness.inventory.loader import inventory_json_schema, load_ansible_mapping, load_inventory, parse_inventory
from harness.inventory.models import Inventory

__all__ = ["Inventory", "inventory_json_schema", "load_ansible_mapping", "load_inventory", "parse_inventory"]
