"""Load an inventory file into a validated :class:`Inventory`, with file:line errors."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from harness.errors import ConfigError, invalid
from harness.inventory.ansible import AnsibleMapping, Conversion, convert, is_ansible_mapping, load_ansible_inventory
from harness.inventory.models import Inventory
from harness.userfiles.jsonsafe import dumps
from harness.userfiles.yamlsafe import LoadedYaml, load_yaml_file, load_yaml_text

__all__ = ["inventory_json_schema", "load_ansible_mapping", "load_inventory", "locate", "parse_inventory"]


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that holds the key at the end of ``loc`` (None when not a model)."""
    node: Any = Inventory
    for part in loc[:-1]:
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(str(part))
            if field is None:
                return None
            node = field.annotation
        elif get_origin(node) in (dict, Mapping):
            node = get_args(node)[1]
        elif get_origin(node) in (list, tuple, Sequence):
            node = get_args(node)[0]
        else:
            return None
        while get_origin(node) in (Union, UnionType):  # Optional[Model]: the model
            models = [a for a in get_args(node) if isinstance(a, type) and issubclass(a, BaseModel)]
            node = models[0] if len(models) == 1 else None
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def _unknown_key(loc: tuple[Any, ...]) -> str:
    """``unknown key``, the closest known name when one is close, and the names allowed there."""
    model = _model_at(loc)
    if model is None:
        return "unknown key (misspelled?)"
    allowed = sorted(name for name in model.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key ({hint}allowed here: {', '.join(allowed)})"


def _format_errors(loaded: LoadedYaml, exc: ValidationError, what: str = "inventory") -> str:
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        line = loaded.line_of(loc)
        where = f"{loaded.source}:{line}" if line else loaded.source
        key = ".".join(str(p) for p in loc) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = _unknown_key(loc)
        elif err["type"] == "value_error":
            # our own validators' sentences, without pydantic's "Value error, " in front
            msg = str(err.get("ctx", {}).get("error", msg))
        lines.append(f"{where}: {key}: {msg}")
    return invalid(what, lines)


def _validate(loaded: LoadedYaml) -> Inventory:
    if not isinstance(loaded.data, dict):
        raise ConfigError(f"{loaded.source}: the inventory must be a mapping at the top level")
    # Top-level `x-...` keys hold YAML anchors to reuse (as in docker-compose); nothing else
    # is ignored.
    data = {k: v for k, v in loaded.data.items() if not k.startswith("x-")}
    try:
        return Inventory.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(loaded, exc)) from None


def load_inventory(path: Path) -> Inventory:
    """Read and validate ``path``.  Raises ConfigError naming file, line and key.

    ``path`` may also be an Ansible mapping file (a top-level ``ansible_inventory:`` key): the
    inventory is then converted from the Ansible inventory it names, in memory.
    """
    loaded = load_yaml_file(path, "inventory")
    if is_ansible_mapping(loaded.data):
        return load_ansible_mapping(path, loaded=loaded)[1]
    return _validate(loaded)


def load_ansible_mapping(
    path: Path, ansible_inventory: Path | None = None, *, loaded: LoadedYaml | None = None
) -> tuple[Conversion, Inventory]:
    """Convert the Ansible inventory a mapping file describes, and validate the result.

    ``ansible_inventory`` overrides the mapping's ``ansible_inventory:`` (relative paths in the
    mapping are relative to the mapping file).
    """
    loaded = loaded or load_yaml_file(path, "Ansible mapping")
    if not isinstance(loaded.data, dict):
        raise ConfigError(f"{loaded.source}: the mapping must be a mapping at the top level")
    try:
        mapping = AnsibleMapping.model_validate(loaded.data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(loaded, exc, "Ansible mapping")) from None
    if ansible_inventory is None:
        if mapping.ansible_inventory is None:
            raise ConfigError(f"{path}: name the Ansible inventory (ansible_inventory: hosts.yaml)")
        ansible_inventory = path.parent / mapping.ansible_inventory
    ansible = load_ansible_inventory(ansible_inventory)
    # a value refused here may stand in either file (a host's ansible_port, a pair's group): name both
    source = f"{path} (converted from {ansible_inventory})"
    try:
        conversion = convert(mapping, ansible)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return conversion, _validate(LoadedYaml(data=conversion.data, source=source))


def locate(path: Path, loc: tuple[str | int, ...]) -> str:
    """``path:line: a.b.c`` for the value at ``loc`` of an inventory file, for errors found after
    loading (an Ansible mapping's values come from its Ansible inventory: ``path: a.b.c``)."""
    key = ".".join(str(p) for p in loc)
    try:
        loaded = load_yaml_file(path)
    except ConfigError:
        return f"{path}: {key}"
    line = None if is_ansible_mapping(loaded.data) else loaded.line_of(loc)
    return f"{path}:{line}: {key}" if line else f"{path}: {key}"


def parse_inventory(text: str, source: str = "<string>") -> Inventory:
    """Validate inventory text (tests and tools that generate inventories)."""
    return _validate(load_yaml_text(text, source))


def inventory_json_schema() -> str:
    """JSON Schema of the inventory, for editors (yaml-language-server)."""
    schema: dict[str, Any] = Inventory.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "HA storage harness inventory"
    return dumps(schema, indent=2, sort_keys=True)
