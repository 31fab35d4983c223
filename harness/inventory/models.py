"""The inventory schema: nodes, DRBD pairs, the embedded lab, impairment and workload profiles.

pydantic v2 models, all frozen and ``extra="forbid"`` so a misspelled key is an error that
names the key, never a silently ignored setting.  Names that become remote command arguments
(resources, interfaces, devices) are checked against tight patterns here, before any SSH
connection is opened; the remote side re-checks them (defence in depth).
"""

from __future__ import annotations

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
    IFACE_PATTERN,
    SCRATCH_DEVICE_PATTERN,
    Duration,
    FrozenModel,
    Rate,
)
from harness.fio.spec import WorkloadSpec
from harness.impair.profile import NetemProfile
from harness.inventory.labspec import AzLinkSpec, LabNodeSpec, LabRoot, LabSpec
from harness.inventory.pairs import NAME_PATTERN, Name, PairSpec, PeerSpec, pair_problems
from harness.inventory.plaintext import check_plain_text
from harness.remote.endpoints import endpoint, replication_ip
from harness.remote.spec import SshSpec
from harness.rules.bounds import check_band
from harness.rules.tolerance import TOLERANCES_JSON_SCHEMA, parse_tolerances
from harness.rules.validitythresholds import ValidityThresholds
from harness.userfiles.names import name_problem

__all__ = [
    "NAME_PATTERN",
    "AzLinkSpec",
    "Inventory",
    "LabNodeSpec",
    "LabRoot",
    "LabSpec",
    "NetworkProfileSpec",
    "NodeSpec",
    "PairSpec",
    "PeerSpec",
    "ReplicationSpec",
    "ThresholdSpec",
]


# a threshold: a bound of 0 (or less) passes everything, a maximum of 0 fails everything
Bound = Annotated[float, Field(gt=0)]
# compared as what it means, stored in one spelling (harness.remote.endpoints)
ReplicationIp = Annotated[str, BeforeValidator(replication_ip)]


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
        # the lab's DRBD 9 pairs join `pairs` when the lab runs DRBD 9: checked together now
        lab_pairs = self.lab.drbd9_pairs if self.lab is not None else {}
        problems += [
            f"pair {p!r} is in both `pairs:` and `lab.drbd9_pairs:`" for p in sorted(set(self.pairs) & set(lab_pairs))
        ]
        node_ids = {name: node.drbd_node_id for name, node in self.nodes.items()}
        problems += pair_problems({**self.pairs, **lab_pairs}, node_ids)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def with_pairs(self, extra: dict[str, PairSpec]) -> Inventory:
        """The same inventory with ``extra`` pairs after its own (the lab's DRBD 9 pairs, which
        this inventory's validation has already checked against its nodes and pairs)."""
        unknown = sorted(set(extra) - set(self.lab.drbd9_pairs if self.lab is not None else ()))
        if unknown:
            raise ConfigError(f"pairs {unknown} are not among the inventory's lab.drbd9_pairs")
        return self.model_copy(update={"pairs": {**self.pairs, **extra}})

    def placement(self, pair_name: str) -> Literal["same-az", "cross-az"]:
        pair = self.pairs[pair_name]
        same = self.nodes[pair.primary].az == self.nodes[pair.secondary].az
        return "same-az" if same else "cross-az"
