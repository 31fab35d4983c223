"""The sizing catalog: published instance, volume and placement limits, validated and merged.

The model must only reason with figures somebody published (or that are marked as estimates),
so the numbers live in a data file (``catalog.yaml``) with a source and an as-of date per entry
rather than in code.  This module owns the catalog as a whole: its sections, name lookup with
did-you-mean, loading the file with duplicate-key rejection and ``file:line`` error messages,
and merging a user's own catalog (other clouds, on-prem hardware) over the built-in one.  The
records it holds are :mod:`~harness.sizing.catalog.records`, :mod:`~harness.sizing.catalog.volume_types`
and :mod:`~harness.sizing.catalog.instance_types`.  It computes nothing about performance;
:mod:`harness.sizing.model.predict` does.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from harness.errors import ConfigError, invalid
from harness.sizing.catalog.clouds import bare_name, placement_for, same_cloud
from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.records import CatalogRecord, Defaults, DefaultsOverlay, Figure, PlacementEntry, Reference
from harness.sizing.catalog.volume_types import VolumeType
from harness.userfiles.userfile import read_config_text
from harness.userfiles.yamlguard import compose_guarded
from harness.userfiles.yamlsafe import construct_yaml_text

__all__ = [
    "BUILTIN_CATALOG",
    "Catalog",
    "CatalogOverlay",
    "load_builtin_catalog",
    "load_catalog",
    "merge_catalog",
    "parse_catalog_text",
]

BUILTIN_CATALOG = "catalog.yaml"
#: the other clouds' entries, each in its own file with its own references
BUILTIN_CLOUD_CATALOGS = ("catalog-gcp.yaml", "catalog-azure.yaml")

_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)


class Catalog(CatalogRecord):
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

    def placement_on(self, name: str, cloud: str) -> PlacementEntry:
        """The placement ``name`` means for a pair on ``cloud`` (a zone word is that cloud's own),
        refused when it is another cloud's (a region pair of AWS for an Azure pair)."""
        entry = self.placement(placement_for(name, cloud))
        same_cloud("placement", name, entry.cloud, cloud)
        return entry


class CatalogOverlay(CatalogRecord):
    """A user catalog file: the same sections as :class:`Catalog`, every one optional."""

    schema_version: Literal[1]
    references: dict[str, Reference] = Field(default_factory=dict)
    defaults: DefaultsOverlay | None = None
    placements: dict[str, PlacementEntry] = Field(default_factory=dict)
    volume_types: dict[str, VolumeType] = Field(default_factory=dict)
    instance_types: dict[str, InstanceType] = Field(default_factory=dict)


def _all_sources(catalog: Catalog) -> Iterable[tuple[str, Sequence[str]]]:
    defaults = catalog.defaults
    for name in Defaults.model_fields:
        figure: Figure = getattr(defaults, name)
        yield f"defaults.{name}", figure.sources
    sections: tuple[tuple[str, Mapping[str, PlacementEntry | VolumeType | InstanceType]], ...] = (
        ("placements", catalog.placements),
        ("volume_types", catalog.volume_types),
        ("instance_types", catalog.instance_types),
    )
    for section, entries in sections:
        for name, entry in entries.items():
            yield f"{section}.{name}", entry.sources
            for field, override in entry.figure_sources.items():
                yield f"{section}.{name}.{field}", override.sources


def _lookup(table: Mapping[str, _T], name: str, what: str) -> _T:
    if name in table:
        return table[name]
    cloud, bare = bare_name(name)
    entry = table.get(bare)
    if cloud is not None and entry is not None and getattr(entry, "cloud", "aws") == cloud:
        return entry
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
    try:  # text the catalog's loader has read already, within its bounds
        node = compose_guarded(yaml.SafeLoader, text, "<catalog>", finite=False)[1]
    except ConfigError:
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
    # the harness's bounded loader: depth, size, aliases, keys, and every number finite
    data = construct_yaml_text(text, origin, _UniqueKeyLoader, finite=True)
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
        raise ConfigError(invalid("sizing catalog", lines)) from exc


@functools.cache  # a third of a second to validate, and the same for the whole process
def load_builtin_catalog() -> Catalog:
    """The catalog shipped with the harness: AWS, with Google Cloud's and Azure's types merged in."""
    resource = resources.files("harness.sizing.catalog").joinpath(BUILTIN_CATALOG)
    text = resource.read_text(encoding="utf-8")
    origin = f"<builtin>/{BUILTIN_CATALOG}"
    catalog = _validate(Catalog, parse_catalog_text(text, origin), text, origin)
    for name in BUILTIN_CLOUD_CATALOGS:
        extra = resources.files("harness.sizing.catalog").joinpath(name).read_text(encoding="utf-8")
        where = f"<builtin>/{name}"
        catalog = merge_catalog(catalog, _validate(CatalogOverlay, parse_catalog_text(extra, where), extra, where))
    return catalog


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
        text = read_config_text(path, "sizing catalog")
        overlay = _validate(CatalogOverlay, parse_catalog_text(text, str(path)), text, str(path))
        catalog = merge_catalog(catalog, overlay)
    return catalog
