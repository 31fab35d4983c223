"""The inventory schema: nodes, DRBD pairs, the embedded lab, impairment and workload profiles.

pydantic v2 models, all frozen and ``extra="forbid"`` so a misspelled key is an error that
names the key, never a silently ignored setting.  Names that become remote command arguments
(resources, interfaces, devices) are checked against tight patterns here, before any SSH
connection is opened; the remote side re-checks them (defence in depth).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from harness.errors import ConfigError
from harness.fields import (
    DRBD_DEVICE_PATTERN,
    IFACE_PATTERN,
    NBD_DEVICE_PATTERN,
    REPLICATED_DEVICE_PATTERN,
    RESOURCE_PATTERN,
    SCRATCH_DEVICE_PATTERN,
    AbsPath,
    Duration,
    FrozenModel,
    Rate,
    ReplicationProtocol,
    Size,
    reserved_resource_name,
)
from harness.fio.spec import WorkloadSpec
from harness.impair.profile import NetemProfile
from harness.inventory.plaintext import check_plain_text
from harness.remote.endpoints import endpoint, replication_ip
from harness.remote.spec import SshSpec
from harness.rules.bounds import check_band
from harness.rules.tolerance import TOLERANCES_JSON_SCHEMA, parse_tolerances
from harness.rules.validitythresholds import ValidityThresholds
from harness.units import GIB, MIB
from harness.userfiles.names import name_problem

__all__ = [
    "AzLinkSpec",
    "Inventory",
    "LabNodeSpec",
    "LabRoot",
    "LabSpec",
    "NetworkProfileSpec",
    "NodeSpec",
    "PairSpec",
    "ReplicationSpec",
    "ThresholdSpec",
]

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,30}$"


# a threshold: a bound of 0 (or less) passes everything, a maximum of 0 fails everything
Bound = Annotated[float, Field(gt=0)]
# compared as what it means, stored in one spelling (harness.remote.endpoints)
ReplicationIp = Annotated[str, BeforeValidator(replication_ip)]
Name = Annotated[StrictStr, Field(pattern=NAME_PATTERN)]


def _not_all(name: str) -> str:
    if reserved_resource_name(name):
        raise ValueError("'all' means every resource to drbdadm; name one resource")
    return name


def _path_name(name: str) -> str:
    problem = name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


class ReplicationSpec(FrozenModel):
    """The node's address and interface on the replication path (what tc shapes)."""

    ip: ReplicationIp
    iface: Annotated[StrictStr, Field(pattern=IFACE_PATTERN)]


class NodeSpec(FrozenModel):
    """One machine of the cluster."""

    az: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    instance_type: StrictStr | None = None
    volume: StrictStr | None = Field(None, description="volume for sizing, e.g. gp3:200GiB or io1:200GiB:8000")
    # `uname -n` is 1-64 characters (the kernel's nodename); an empty pin would check nothing
    hostname: Annotated[StrictStr, Field(pattern=r"^\S{1,64}$")] | None = Field(
        None, description="expected `uname -n`; a mismatch aborts (wrong cluster)"
    )
    machine_id: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{32}$")] | None = Field(
        None, description="expected /etc/machine-id (32 lowercase hex digits); a mismatch aborts (another machine)"
    )
    drbd_node_id: StrictInt | None = Field(
        None,
        ge=0,
        le=31,
        description="DRBD's node-id of this node in its resources (DRBD 9; on 8.4, which has none, the pin "
        "checks the address of the node's `on` section); a mismatch aborts",
    )
    ssh: SshSpec
    replication: ReplicationSpec
    scratch_devices: tuple[Annotated[StrictStr, Field(pattern=SCRATCH_DEVICE_PATTERN)], ...] = Field(
        (), description="raw devices the harness may overwrite for disk-only studies"
    )


class PairSpec(FrozenModel):
    """A replicated device between two nodes; the harness writes only to its device on the
    primary.  ``replication`` names the product: a DRBD resource (the default), or ``md-nbd``,
    an md RAID1 over a local leg and an NBD device exported by the peer (SIOS DataKeeper's
    architecture), whose ``resource`` is the array's name and ``port`` the export's."""

    primary: Name
    secondary: Name
    replication: Literal["drbd", "md-nbd"] = "drbd"
    resource: Annotated[StrictStr, Field(pattern=RESOURCE_PATTERN), AfterValidator(_not_all)]
    device: Annotated[StrictStr, Field(pattern=REPLICATED_DEVICE_PATTERN)]
    protocol: ReplicationProtocol = "C"
    port: StrictInt = Field(7789, ge=1, le=65535, description="TCP port of the replication (DRBD or the NBD export)")
    disk: Annotated[StrictStr, Field(pattern=r"^/dev/[A-Za-z0-9/_.-]{1,64}$")] | None = Field(
        None, description="md-nbd: each node's leg (the same path on both nodes)"
    )
    nbd: Annotated[StrictStr, Field(pattern=NBD_DEVICE_PATTERN)] = Field(
        "/dev/nbd0", description="md-nbd: the primary's NBD device connected to the peer's export"
    )
    nbd_timeout: StrictInt = Field(5, ge=1, le=600, description="md-nbd: nbd-client request timeout, seconds")
    # By default a fault shapes only this resource's port to the peer; `path` shapes
    # everything to the peer's address (other resources, corosync on it) and must be asked for
    shape: Literal["resource", "path"] = Field(
        "resource", description="what a fault shapes: the resource's port (default) or the whole path to the peer"
    )

    def shaped_port(self) -> int | None:
        """The port a fault on this pair is limited to; None: the whole path (``shape: path``)."""
        return None if self.shape == "path" else self.port

    @model_validator(mode="after")
    def _distinct(self) -> PairSpec:
        if self.primary == self.secondary:
            raise ValueError(f"primary and secondary are the same node {self.primary!r}")
        if self.replication == "drbd" and not re.match(DRBD_DEVICE_PATTERN, self.device):
            raise ValueError(f"a DRBD pair's device must be /dev/drbdN, got {self.device!r}")
        if self.replication == "md-nbd":
            if self.device != f"/dev/md/{self.resource}":
                raise ValueError(f"an md-nbd pair's device must be /dev/md/{self.resource}, got {self.device!r}")
            if self.disk is None:
                raise ValueError("an md-nbd pair needs `disk`: the leg on each node")
            if self.protocol == "B":
                raise ValueError("md-nbd replicates synchronously (protocol C) or asynchronously (A), not B")
        elif self.disk is not None:
            raise ValueError("`disk` is for md-nbd pairs; a DRBD resource names its disk in its own configuration")
        return self


class NetworkProfileSpec(FrozenModel):
    """Impairment of the replication path: added one-way delay on each selected node."""

    delay: Duration = 0.0
    jitter: Duration = 0.0
    loss_pct: float = Field(0.0, ge=0, le=100)
    rate: Rate | None = None
    direction: Literal["both", "primary", "secondary"] = "both"

    def to_netem(self, name: str) -> NetemProfile:
        return NetemProfile(
            name=name,
            delay_s=self.delay,
            jitter_s=self.jitter,
            loss_pct=self.loss_pct,
            rate_bits=self.rate,
            direction=self.direction,
        )


class ThresholdSpec(FrozenModel):
    """Pass/fail bounds.  Absolute bounds apply per cell; ratios compare cells in one run.

    Absolute bounds are keyed by a glob over ``<workload id>@<impairment>``, e.g.
    ``randwrite-4k-*@none`` (unimpaired 4k random writes) or ``write-1m-*@*``; the longest
    matching glob wins.
    """

    min_mib_s: dict[StrictStr, Bound] = Field(default_factory=dict, description="'workload@impairment' glob -> MiB/s")
    min_iops: dict[StrictStr, Bound] = Field(default_factory=dict, description="'workload@impairment' glob -> IOPS")
    max_p99_ms: dict[StrictStr, Bound] = Field(default_factory=dict, description="'workload@impairment' glob -> ms")
    # Minimum ratios: a multi-AZ pair cannot be asked to beat a same-AZ one, nor a replicated
    # write the disk alone; 0 passes everything.
    multi_az_vs_single_az: float | None = Field(None, gt=0, le=1)
    replicated_vs_local: float | None = Field(None, gt=0, le=1)
    latency_model_tolerance: float = Field(0.25, gt=0, le=1)
    rate_cap_band: Annotated[tuple[float, float], AfterValidator(check_band)] = Field(
        (0.8, 1.0), description="[low, high]: large writes through a rate cap land at low..high x the cap"
    )


class AzLinkSpec(FrozenModel):
    """The emulated distance between AZs in the embedded lab (netem on the router guest)."""

    delay: Duration = Field(0.001, ge=0, le=1.0, description="one-way delay added by the router")
    jitter: Duration = Field(0.0, ge=0, le=1.0)
    rate: Rate | None = None

    @model_validator(mode="after")
    def _netem_can_shape_it(self) -> AzLinkSpec:
        # the router applies it with netem: the same limits as any impairment (rate range, jitter)
        try:
            NetemProfile(name="az-link", delay_s=self.delay, jitter_s=self.jitter, rate_bits=self.rate)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self


#: A lab guest's root filesystem: the host's own (``host``) or a Debian release built with
#: debootstrap and cached (harness.lab.roots).
LabRoot = Literal["host", "bookworm", "bullseye", "trixie"]


class LabNodeSpec(FrozenModel):
    """What one lab node boots with, beyond what ``nodes:`` says of every cluster."""

    root: LabRoot = Field(
        "host", description="root filesystem: the host's own, or a Debian release built once and cached"
    )


class LabSpec(FrozenModel):
    """Present only in the embedded lab's inventory: `harness lab up` boots this."""

    netns: Annotated[StrictStr, Field(pattern=r"^[a-z][a-z0-9-]{0,14}$")] = "hlab"
    state_dir: AbsPath = Path("/run/harness-lab")
    guest_uid: StrictInt = Field(4242, ge=1000, le=65000, description="unprivileged host uid the guests run as")
    guest_memory: Size = Field(256 * MIB, ge=64 * MIB)
    disk_size: Size = Field(2 * GIB, ge=64 * MIB, description="sparse DRBD backing disk per node")
    extra_disks: StrictInt = Field(2, ge=0, le=8, description="additional raw scratch disks per node")
    disk_tmpfs_size: Size = Field(12 * GIB, ge=64 * MIB, description="cap on host RAM the disks may use")
    boot_timeout: Duration = Field(60.0, gt=0)
    host_latency_hold: StrictBool = Field(
        True,
        description="hold the host's CPU wake-up latency at 0 (/dev/cpu_dma_latency) while the lab is up: "
        "steadier small-write latency, at the cost of idle host CPU",
    )
    guest_timer_kick: StrictBool = Field(
        True,
        description="send every guest a SIGALRM every 50 ms: a UML guest that lost its timer expiry "
        "otherwise spins idle and never answers again (see harness.lab.timerkick)",
    )
    pin_pairs: StrictBool = Field(
        True,
        description="run both guests of a replication pair on one host CPU, pairs spread over the CPUs: "
        "a replicated write wakes its peer without a cross-CPU wake-up, and pairs measured at once do not "
        "compete for a CPU",
    )
    az_link: AzLinkSpec = AzLinkSpec()
    nodes: dict[Name, LabNodeSpec] = Field(
        default_factory=dict, description="per node: its root filesystem (default: the host's root)"
    )

    def root_of(self, node: str) -> LabRoot:
        """The root filesystem ``node`` boots (``host`` unless ``lab.nodes`` says otherwise)."""
        spec = self.nodes.get(node)
        return spec.root if spec is not None else "host"


class Inventory(FrozenModel):
    """A validated inventory.  Cross-field rules live in the validator below."""

    # the name becomes a directory (reports/baselines/<name>/) and part of file names
    name: Annotated[StrictStr, AfterValidator(_path_name)]
    production: StrictBool = Field(False, description="refuse disruptive scenarios unless overridden twice")
    lab: LabSpec | None = None
    nodes: dict[Name, NodeSpec] = Field(min_length=2)
    pairs: dict[Name, PairSpec] = Field(min_length=1)
    network_profiles: dict[Name, NetworkProfileSpec] = Field(default_factory=dict)
    workloads: dict[Name, dict[str, Any]] = Field(
        default_factory=dict, description="fio workloads by name (rw, bs or bsrange, numjobs, iodepth, size, ...)"
    )
    thresholds: ThresholdSpec = ThresholdSpec()
    # where a cell's validity certificate calls its window disturbed (harness.rules.validitythresholds)
    validity: ValidityThresholds = ValidityThresholds()
    baseline_tolerances: Annotated[
        dict[StrictStr, float | None], BeforeValidator(parse_tolerances), WithJsonSchema(TOLERANCES_JSON_SCHEMA)
    ] = Field(
        default_factory=dict,
        description="metric -> allowed change against a saved baseline, as a percentage: bw: 5% (a drop), "
        "clat_p99: 10% (a rise); off drops a default rule (defaults: bw 5%, iops 5%, clat_p99 10%)",
    )
    catalog: list[StrictStr] = Field(
        default_factory=list,
        description="sizing catalog files of your own (instance and volume types the built-in catalog lacks), "
        "relative to this inventory; they extend the built-in catalog for per-cell predictions",
    )

    @field_validator("workloads")
    @classmethod
    def _workloads_are_fio_jobs(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, data in value.items():
            if "name" in data:
                raise ValueError(f"workload {name!r}: the key is its name; remove `name:`")
            try:
                WorkloadSpec.from_mapping({"name": name, **data})
            except ConfigError as exc:
                raise ValueError(f"workload {name!r}: {exc}") from None
        return value

    @field_validator("network_profiles")
    @classmethod
    def _profiles_are_valid(cls, value: dict[str, NetworkProfileSpec]) -> dict[str, NetworkProfileSpec]:
        for name, spec in value.items():
            try:
                spec.to_netem(name)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return value

    def ssh_specs(self) -> dict[str, SshSpec]:
        """How to reach each node: what a connection pool needs of the inventory."""
        return {name: node.ssh for name, node in self.nodes.items()}

    def workload_specs(self) -> dict[str, WorkloadSpec]:
        return {name: WorkloadSpec.from_mapping({"name": name, **data}) for name, data in self.workloads.items()}

    def netem_profiles(self) -> dict[str, NetemProfile]:
        return {name: spec.to_netem(name) for name, spec in self.network_profiles.items()}

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any) -> Any:
        """Inventories hold references (key paths, env var names) as plain text, never secrets."""
        check_plain_text(data)
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Inventory:
        problems: list[str] = []
        endpoints: dict[tuple[str, int, str | None], str] = {}
        repl_ips: dict[str, str] = {}
        for name, node in self.nodes.items():
            key = (node.ssh.host, node.ssh.port, node.ssh.netns)
            if key in endpoints:
                problems.append(
                    f"nodes {endpoints[key]!r} and {name!r} have the same ssh endpoint {endpoint(*key[:2])}"
                )
            endpoints[key] = name
            if node.replication.ip in repl_ips:
                problems.append(
                    f"nodes {repl_ips[node.replication.ip]!r} and {name!r} share replication ip {node.replication.ip}"
                )
            repl_ips[node.replication.ip] = name
            if node.ssh.key is not None and node.ssh.key_env is not None:
                problems.append(f"node {name!r}: give ssh.key or ssh.key_env, not both")
        devices: dict[tuple[str, str], str] = {}
        resources: dict[tuple[str, str], str] = {}
        for pname, pair in self.pairs.items():
            for role in ("primary", "secondary"):
                node_name = getattr(pair, role)
                if node_name not in self.nodes:
                    problems.append(f"pair {pname!r}: {role} {node_name!r} is not a node (known: {sorted(self.nodes)})")
                    continue
                dkey = (node_name, pair.device)
                if dkey in devices:
                    problems.append(f"pairs {devices[dkey]!r} and {pname!r} both use {pair.device} on {node_name!r}")
                devices[dkey] = pname
                rkey = (node_name, pair.resource)
                if rkey in resources:
                    problems.append(f"pairs {resources[rkey]!r} and {pname!r} both use resource {pair.resource!r}")
                resources[rkey] = pname
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def placement(self, pair_name: str) -> Literal["same-az", "cross-az"]:
        pair = self.pairs[pair_name]
        same = self.nodes[pair.primary].az == self.nodes[pair.secondary].az
        return "same-az" if same else "cross-az"
