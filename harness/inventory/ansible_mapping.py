"""The mapping file of an Ansible conversion (:mod:`harness.inventory.ansible`): what the
harness needs that Ansible does not know::

    ansible_inventory: hosts.yaml        # relative to the mapping file
    name: prod-multi-az                  # the harness inventory's name
    defaults:                            # for whatever a host's variables do not say
      az: us-east-1a
      replication_iface: ens6
      ssh: {known_hosts: /etc/harness/known_hosts, key_env: HARNESS_SSH_KEY}
    host_vars:                           # which Ansible host variable holds which harness field
      replication_ip: drbd_replication_ip
      az: ec2_az
    pairs:
      single-az: {hosts: [db-a1, db-a2], resource: scratch0, device: /dev/drbd100}
      multi-az: {group: drbd_cross_az, resource: scratch1, device: /dev/drbd101}
    harness:                             # any other inventory section, copied as is
      thresholds: {multi_az_vs_single_az: 0.5}

A harness field may never be mapped to a variable that holds a secret: the conversion copies
mapped values into the generated inventory, and ``ansible_become_password`` copied into
``hostname:`` is a password written to disk (while the conversion's notes say secrets are
not copied).  :mod:`harness.inventory.ansible_secrets` says which variables those are.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator, model_validator

from harness.inventory.ansible_secrets import is_secret_var

__all__ = [
    "MAPPING_KEY",
    "AnsibleMapping",
    "HostVarNames",
    "MappedPair",
    "NodeDefaults",
    "SshDefaults",
    "is_ansible_mapping",
]

#: The top-level key that marks a mapping file (so ``--inventory`` can take one directly).
MAPPING_KEY: Final = "ansible_inventory"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HostVarNames(_Model):
    """Which Ansible host variable holds each harness node field."""

    replication_ip: StrictStr = "harness_replication_ip"
    replication_iface: StrictStr = "harness_replication_iface"
    az: StrictStr = "harness_az"
    instance_type: StrictStr = "harness_instance_type"
    volume: StrictStr = "harness_volume"
    scratch_devices: StrictStr = "harness_scratch_devices"
    hostname: StrictStr = "harness_hostname"

    @field_validator("*")
    @classmethod
    def _not_a_secret(cls, variable: str) -> str:
        if is_secret_var(variable):
            raise ValueError(
                f"{variable} is a secret variable; the harness never copies secrets into an inventory — "
                "map this field to a variable that holds the plain value"
            )
        return variable


class SshDefaults(_Model):
    """SSH settings Ansible's variables do not give (``known_hosts``) or may leave out."""

    known_hosts: StrictStr = Field(description="pinned host keys (the harness refuses unknown keys)")
    user: StrictStr | None = Field(None, description="when a host has no ansible_user")
    port: StrictInt | None = Field(None, description="when a host has no ansible_port")
    key: StrictStr | None = Field(None, description="key file path when a host has no ansible_ssh_private_key_file")
    key_env: StrictStr | None = Field(None, description="env var with the key path, when no key file is known")
    sudo: StrictBool | None = Field(None, description="when a host has no ansible_become")
    connect_timeout: StrictStr | float | None = None


class NodeDefaults(_Model):
    """Values for every node whose host variables do not set them."""

    ssh: SshDefaults
    az: StrictStr | None = None
    replication_iface: StrictStr | None = None
    instance_type: StrictStr | None = None
    volume: StrictStr | None = None
    scratch_devices: tuple[StrictStr, ...] = ()


class MappedPair(_Model):
    """A DRBD pair: two hosts (primary first) or a group of exactly two, plus the resource."""

    hosts: tuple[StrictStr, StrictStr] | None = None
    group: StrictStr | None = None
    resource: StrictStr
    device: StrictStr
    protocol: StrictStr | None = None
    port: StrictInt | None = None

    @model_validator(mode="after")
    def _one_source(self) -> MappedPair:
        if (self.hosts is None) == (self.group is None):
            raise ValueError("give either hosts: [primary, secondary] or group: NAME (a group of two hosts)")
        return self


class AnsibleMapping(_Model):
    """The mapping file: how an Ansible inventory becomes a harness inventory."""

    ansible_inventory: StrictStr | None = Field(
        None, description="the Ansible inventory (YAML or INI), relative to this file"
    )
    name: StrictStr
    defaults: NodeDefaults
    host_vars: HostVarNames = HostVarNames()
    node_names: dict[StrictStr, StrictStr] = Field(
        default_factory=dict, description="Ansible host → harness node name, where the derived one will not do"
    )
    pairs: dict[StrictStr, MappedPair] = Field(min_length=1)
    harness: dict[StrictStr, Any] = Field(
        default_factory=dict, description="other harness inventory sections (thresholds, workloads, ...), as is"
    )

    @model_validator(mode="after")
    def _harness_owns_no_generated_keys(self) -> AnsibleMapping:
        clash = {"name", "nodes", "pairs", "lab"} & set(self.harness)
        if clash:
            raise ValueError(f"harness: may not set {sorted(clash)}; the conversion writes those")
        return self


def is_ansible_mapping(data: object) -> bool:
    """Whether loaded YAML is a mapping file rather than a harness inventory."""
    return isinstance(data, dict) and MAPPING_KEY in data
