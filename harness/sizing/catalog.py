"""The sizing catalog: published instance, volume and placement limits, validated and merged.

The model must only reason with figures somebody published (or that are marked as estimates),
so the numbers live in a data file (``catalog.yaml``) with a source and an as-of date per entry
rather than in code.  This module owns that file's schema (pydantic v2, ``extra="forbid"``,
frozen), loading it with duplicate-key rejection and ``file:line`` error messages, and merging a
user's own catalog (other clouds, on-prem hardware) over the built-in one.  It computes nothing
about performance; :mod:`harness.sizing.model` does.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import ConfigError

__all__ = [
    "BUILTIN_CATALOG",
    "Catalog",
    "CpuCredits",
    "Defaults",
    "Ebs",
    "Figure",
    "FixedVolume",
    "InstanceStore",
    "InstanceStoreVolume",
    "InstanceType",
    "IopsThroughputStep",
    "Latency",
    "Network",
    "PlacementEntry",
    "ProvisionedThroughput",
    "ProvisionedVolume",
    "Reference",
    "SizeScaledBurstVolume",
    "ThroughputBurstVolume",
    "ThroughputFromIops",
    "ThroughputTier",
    "VolumeType",
    "load_builtin_catalog",
    "load_catalog",
    "merge_catalog",
    "parse_catalog_text",
]

BUILTIN_CATALOG = "catalog.yaml"

_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)

PositiveFloat = Annotated[float, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
SourceList = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Frozen(BaseModel):
    """Base for every catalog record: unknown keys are typos, records never change, and every
    figure is finite (a `.inf` limit never binds and turns the model's output into Infinity)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Reference(_Frozen):
    """A source document that entries cite by id."""

    url: Annotated[str, Field(min_length=1)]
    title: str = ""


class Figure(_Frozen):
    """A single catalog-wide number with its provenance."""

    value: PositiveFloat
    estimate: bool = False
    note: str = ""
    sources: SourceList
    as_of: dt.date


class Defaults(_Frozen):
    """Catalog-wide figures that apply to every instance unless an entry overrides them."""

    single_flow_gbps: Figure
    network_burst_minutes: Figure
    ebs_burst_minutes: Figure


class DefaultsOverlay(_Frozen):
    """The ``defaults`` section of a user catalog: any subset of :class:`Defaults`."""

    single_flow_gbps: Figure | None = None
    network_burst_minutes: Figure | None = None
    ebs_burst_minutes: Figure | None = None


class PlacementEntry(_Frozen):
    """A named pair placement and the round-trip time the model assumes for it."""

    description: str = ""
    rtt_ms: NonNegativeFloat
    estimate: bool = False
    note: str = ""
    sources: SourceList
    as_of: dt.date


class Latency(_Frozen):
    """Typical per-I/O service time of a volume at low queue depth (4 KiB)."""

    write_ms: PositiveFloat
    read_ms: PositiveFloat
    estimate: bool = False
    note: str = ""


class _VolumeBase(_Frozen):
    """Fields every volume type has, whatever its performance model."""

    description: str = ""
    min_size_gib: PositiveFloat | None = None
    max_size_gib: PositiveFloat | None = None
    io_unit_kib: Annotated[int, Field(gt=0, description="largest I/O counted as one operation against the IOPS limit")]
    network_attached: bool = Field(
        default=True,
        description="reached over the instance's EBS link (or its NIC when not EBS-optimized); false for local disks",
    )
    latency: Latency
    sources: SourceList
    as_of: dt.date
    notes: list[str] = Field(default_factory=list)


class ThroughputTier(_Frozen):
    """A size band of a size-scaled volume's throughput cap (gp2)."""

    from_gib: PositiveFloat
    mib_s: PositiveFloat
    burst_mib_s: PositiveFloat | None = None


class SizeScaledBurstVolume(_VolumeBase):
    """IOPS proportional to size plus an I/O-credit burst bucket (gp2)."""

    model: Literal["size_scaled_burst"]
    iops_per_gib: PositiveFloat
    min_iops: PositiveFloat
    max_iops: PositiveFloat
    burst_iops: PositiveFloat
    burst_bucket_io_credits: PositiveFloat
    throughput_tiers: Annotated[list[ThroughputTier], Field(min_length=1)]

    @model_validator(mode="after")
    def _tiers_ascend(self) -> SizeScaledBurstVolume:
        starts = [tier.from_gib for tier in self.throughput_tiers]
        if starts != sorted(starts) or len(set(starts)) != len(starts):
            raise ValueError("throughput_tiers must have strictly ascending from_gib")
        return self


class ProvisionedThroughput(_Frozen):
    """Throughput provisioned separately from IOPS (gp3)."""

    kind: Literal["provisioned"]
    default_mib_s: PositiveFloat
    max_mib_s: PositiveFloat
    max_mib_s_per_iops: PositiveFloat


class IopsThroughputStep(_Frozen):
    """Up to ``up_to_iops`` provisioned IOPS, throughput is IOPS x ``kib_per_iops``, capped."""

    up_to_iops: PositiveFloat
    kib_per_iops: PositiveFloat
    max_mib_s: PositiveFloat


class ThroughputFromIops(_Frozen):
    """Throughput that follows from the provisioned IOPS (io1/io2)."""

    kind: Literal["from_iops"]
    steps: Annotated[list[IopsThroughputStep], Field(min_length=1)]


class ProvisionedVolume(_VolumeBase):
    """IOPS chosen at creation within per-GiB and absolute bounds; no burst (gp3, io1, io2)."""

    model: Literal["provisioned"]
    min_iops: PositiveFloat
    max_iops: PositiveFloat
    max_iops_per_gib: PositiveFloat
    max_iops_non_nitro: PositiveFloat | None = None
    default_iops: PositiveFloat | None = None
    throughput: Annotated[ProvisionedThroughput | ThroughputFromIops, Field(discriminator="kind")]


class ThroughputBurstVolume(_VolumeBase):
    """Throughput proportional to size with a throughput-credit bucket (st1)."""

    model: Literal["throughput_burst"]
    max_iops: PositiveFloat
    baseline_mib_s_per_tib: PositiveFloat
    burst_mib_s_per_tib: PositiveFloat
    max_mib_s: PositiveFloat
    bucket_tib_per_tib: PositiveFloat


class FixedVolume(_VolumeBase):
    """Fixed IOPS and throughput whatever the size (magnetic, or a user's on-prem array)."""

    model: Literal["fixed"]
    iops: PositiveFloat
    mib_s: PositiveFloat


class InstanceStoreVolume(_VolumeBase):
    """The instance's local disks; their limits come from the instance's ``instance_store``."""

    model: Literal["instance_store"]

    @model_validator(mode="after")
    def _local(self) -> InstanceStoreVolume:
        if self.network_attached:
            raise ValueError("an instance-store volume is local: set network_attached: false")
        return self


VolumeType = Annotated[
    SizeScaledBurstVolume | ProvisionedVolume | ThroughputBurstVolume | FixedVolume | InstanceStoreVolume,
    Field(discriminator="model"),
]


class Network(_Frozen):
    """Instance network bandwidth; each direction has its own allowance."""

    label: str = ""
    baseline_gbps: PositiveFloat
    burst_gbps: PositiveFloat | None = Field(default=None, description="None: no credit burst")
    burst_minutes: PositiveFloat | None = Field(default=None, description="None: catalog default")
    estimate: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _burst_above_baseline(self) -> Network:
        if self.burst_gbps is not None and self.burst_gbps < self.baseline_gbps:
            raise ValueError("burst_gbps must not be below baseline_gbps")
        return self


class Ebs(_Frozen):
    """Dedicated EBS bandwidth of an EBS-optimized instance (maximum = baseline when no burst)."""

    optimized: bool
    max_mbps: PositiveFloat | None = None
    max_iops: PositiveFloat | None = None
    baseline_mbps: PositiveFloat | None = None
    baseline_iops: PositiveFloat | None = None
    burst_minutes: PositiveFloat | None = None
    estimate: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Ebs:
        figures = (self.max_mbps, self.max_iops, self.baseline_mbps, self.baseline_iops)
        if not self.optimized:
            if any(value is not None for value in figures):
                raise ValueError("an instance that is not EBS-optimized has no EBS bandwidth figures")
            return self
        if self.max_mbps is None or self.max_iops is None:
            raise ValueError("an EBS-optimized instance needs max_mbps and max_iops")
        if self.baseline_mbps is not None and self.baseline_mbps > self.max_mbps:
            raise ValueError("baseline_mbps must not exceed max_mbps")
        if self.baseline_iops is not None and self.baseline_iops > self.max_iops:
            raise ValueError("baseline_iops must not exceed max_iops")
        return self

    @property
    def sustained_mbps(self) -> float:
        """Bandwidth after the burst allowance is spent (the maximum when there is no burst)."""
        if self.max_mbps is None:
            raise ValueError("not EBS-optimized")
        return self.baseline_mbps if self.baseline_mbps is not None else self.max_mbps

    @property
    def sustained_iops(self) -> float:
        """IOPS after the burst allowance is spent (the maximum when there is no burst)."""
        if self.max_iops is None:
            raise ValueError("not EBS-optimized")
        return self.baseline_iops if self.baseline_iops is not None else self.max_iops


class CpuCredits(_Frozen):
    """CPU credit figures of a burstable (T-family) instance; the model reports them as notes."""

    earned_per_hour: PositiveFloat
    baseline_per_vcpu_pct: PositiveFloat
    default_mode: Literal["standard", "unlimited"]


class InstanceStore(_Frozen):
    """Local NVMe disks and the 4 KiB IOPS AWS publishes for all of them together."""

    devices: Annotated[int, Field(gt=0)]
    device_size_gb: PositiveFloat
    read_iops_4k: PositiveFloat
    write_iops_4k: PositiveFloat


class InstanceType(_Frozen):
    """One instance type: size, network, EBS and CPU credit limits, with provenance."""

    family: str
    generation: Literal["current", "previous"] = "current"
    vcpu: Annotated[int, Field(gt=0)]
    memory_gib: PositiveFloat
    nitro: bool = Field(description="Nitro instances allow io1/io2 above 32,000 IOPS")
    network: Network
    ebs: Ebs
    cpu_credits: CpuCredits | None = None
    instance_store: InstanceStore | None = None
    sources: SourceList
    as_of: dt.date
    notes: list[str] = Field(default_factory=list)


class Catalog(_Frozen):
    """The merged catalog the model reads."""

    schema_version: Literal[1]
    references: dict[str, Reference] = Field(default_factory=dict)
    defaults: Defaults
    placements: dict[str, PlacementEntry]
    volume_types: dict[str, VolumeType]
    instance_types: dict[str, InstanceType]

    @model_validator(mode="after")
    def _sources_resolve(self) -> Catalog:
        for where, sources in _all_sources(self):
            for source in sources:
                if "://" not in source and source not in self.references:
                    raise ValueError(f"{where}: source {source!r} is neither a URL nor a reference id")
        return self

    def source_urls(self, sources: Iterable[str]) -> list[str]:
        """URLs for a list of source ids or URLs, in order."""
        return [source if "://" in source else self.references[source].url for source in sources]

    def instance(self, name: str) -> InstanceType:
        """The instance type called ``name``, or a ConfigError that suggests near names."""
        return _lookup(self.instance_types, name, "instance type")

    def volume(self, name: str) -> VolumeType:
        """The volume type called ``name``, or a ConfigError listing the known ones."""
        return _lookup(self.volume_types, name, "volume type")

    def placement(self, name: str) -> PlacementEntry:
        """The placement called ``name``, or a ConfigError listing the known ones."""
        return _lookup(self.placements, name, "placement")


class CatalogOverlay(_Frozen):
    """A user catalog file: the same sections as :class:`Catalog`, every one optional."""

    schema_version: Literal[1]
    references: dict[str, Reference] = Field(default_factory=dict)
    defaults: DefaultsOverlay | None = None
    placements: dict[str, PlacementEntry] = Field(default_factory=dict)
    volume_types: dict[str, VolumeType] = Field(default_factory=dict)
    instance_types: dict[str, InstanceType] = Field(default_factory=dict)


def _all_sources(catalog: Catalog) -> Iterable[tuple[str, Sequence[str]]]:
    defaults = catalog.defaults
    for name in ("single_flow_gbps", "network_burst_minutes", "ebs_burst_minutes"):
        figure: Figure = getattr(defaults, name)
        yield f"defaults.{name}", figure.sources
    for name, placement in catalog.placements.items():
        yield f"placements.{name}", placement.sources
    for name, volume in catalog.volume_types.items():
        yield f"volume_types.{name}", volume.sources
    for name, instance in catalog.instance_types.items():
        yield f"instance_types.{name}", instance.sources


def _lookup(table: Mapping[str, _T], name: str, what: str) -> _T:
    try:
        return table[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(table), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(sorted(table))}"
        raise ConfigError(f"unknown {what} {name!r}{hint}") from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys instead of silently keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConfigError(
                    f"{self.name}:{key_node.start_mark.line + 1}: duplicate key {key!r} (first at line {seen[key]})"
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _yaml_line(text: str, loc: Sequence[int | str]) -> int | None:
    """Line (1-based) of the value at pydantic location ``loc``, for error messages.

    Location parts that are not keys in the document (pydantic's tagged-union tags, or the
    name of a missing field) are skipped, so the line is that of the closest enclosing value.
    """
    try:
        node: yaml.Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((value for key, value in node.value if key.value == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            match = node.value[part]
        else:
            match = None
        if match is None:
            continue  # a union tag (e.g. "fixed") or a missing key: stay on the parent
        node = match
        line = match.start_mark.line + 1
    return line


def parse_catalog_text(text: str, origin: str) -> dict[str, Any]:
    """Parse catalog YAML (duplicate keys rejected) into plain data; errors name ``origin``."""
    loader = _UniqueKeyLoader(text)
    loader.name = origin
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{origin}:{mark.line + 1}" if mark is not None else origin
        raise ConfigError(f"{where}: invalid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{origin}: invalid YAML: {exc}") from exc
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: a catalog must be a mapping with schema_version: 1")
    return data


def _validate(model: type[_M], data: dict[str, Any], text: str, origin: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            loc = tuple(error["loc"])
            line = _yaml_line(text, [part for part in loc if not str(part).startswith("function-")])
            where = f"{origin}:{line}" if line is not None else origin
            path = ".".join(str(part) for part in loc)
            lines.append(f"{where}: {path}: {error['msg']}")
        raise ConfigError("invalid sizing catalog:\n  " + "\n  ".join(lines)) from exc


def load_builtin_catalog() -> Catalog:
    """The catalog shipped with the harness."""
    resource = resources.files("harness.sizing").joinpath(BUILTIN_CATALOG)
    text = resource.read_text(encoding="utf-8")
    origin = f"<builtin>/{BUILTIN_CATALOG}"
    return _validate(Catalog, parse_catalog_text(text, origin), text, origin)


def merge_catalog(base: Catalog, overlay: CatalogOverlay) -> Catalog:
    """``base`` with ``overlay``'s entries added; an overlay entry replaces the whole base entry.

    Entries are replaced whole, not field by field, so a user's on-prem type never inherits a
    stray AWS figure from a built-in entry of the same name.
    """
    defaults = base.defaults
    if overlay.defaults is not None:
        updates = {k: v for k, v in overlay.defaults.model_dump(exclude_none=True).items()}
        defaults = Defaults.model_validate({**base.defaults.model_dump(), **updates})
    merged = {
        "schema_version": 1,
        "references": {**base.references, **overlay.references},
        "defaults": defaults,
        "placements": {**base.placements, **overlay.placements},
        "volume_types": {**base.volume_types, **overlay.volume_types},
        "instance_types": {**base.instance_types, **overlay.instance_types},
    }
    try:
        return Catalog.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(f"merged sizing catalog is invalid: {exc}") from exc


def load_catalog(extra_files: Sequence[Path] = ()) -> Catalog:
    """The built-in catalog with each of ``extra_files`` merged over it, in order."""
    catalog = load_builtin_catalog()
    for path in extra_files:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read sizing catalog {path}: {exc.strerror or exc}") from exc
        overlay = _validate(CatalogOverlay, parse_catalog_text(text, str(path)), text, str(path))
        catalog = merge_catalog(catalog, overlay)
    return catalog
