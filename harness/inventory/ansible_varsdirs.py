"""``group_vars/`` and ``host_vars/`` beside an Ansible inventory file, read as Ansible reads them.

Ansible's ``host_group_vars`` plugin looks, for every group and host of the inventory, in the
directories ``group_vars/`` and ``host_vars/`` next to the inventory file for a file named after
it (no extension, ``.yml``, ``.yaml`` or ``.json``) or a directory of that name, whose files it
reads in name order (hidden files and editor backups ``~`` skipped, subdirectories too).  Each
file holds a mapping of variables; a later file's variable replaces an earlier one's.  Files of
groups or hosts the inventory does not have are not read, as in Ansible.  How they rank against
the inventory file's own vars is :mod:`harness.inventory.ansible_groups`'.

The files are bounded and parsed like the inventory (a YAML mapping, Ansible's tags known), so
a secret in them is left out by the conversion just the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

from harness.errors import ConfigError
from harness.limits import MAX_HOSTS
from harness.userfiles.userfile import read_config_text

__all__ = ["VARS_DIRS", "read_vars_dir"]

#: The directories, beside the inventory file, Ansible reads variables from.
VARS_DIRS: Final = ("group_vars", "host_vars")
_EXTENSIONS: Final = ("", ".yml", ".yaml", ".json")

#: Parses one file's text (``source`` names it in errors).
Parse = Callable[[str, str], Any]


def _dir_files(directory: Path, budget: list[int]) -> list[Path]:
    found: list[Path] = []
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if entry.name.startswith(".") or entry.name.endswith("~"):
            continue
        if entry.is_dir():
            found += _dir_files(entry, budget)
        elif entry.suffix in _EXTENSIONS:
            found.append(entry)
        budget[0] -= 1
        if budget[0] < 0:
            raise ConfigError(f"{directory}: more than {MAX_HOSTS} files; the harness refuses it")
    return found


def _files(base: Path, name: str, budget: list[int]) -> list[Path]:
    found: list[Path] = []
    for ext in _EXTENSIONS:
        path = base / f"{name}{ext}"
        if path.is_dir():
            found += _dir_files(path, budget)
        elif path.is_file():
            found.append(path)
    return found


def read_vars_dir(base: Path, names: Iterable[str], parse: Parse) -> dict[str, dict[str, Any]]:
    """Per name (of ``names``: the inventory's groups or hosts) with files under ``base``, the
    variables of its files merged in order; ``{}`` when ``base`` is no directory."""
    if not base.is_dir():
        return {}
    out: dict[str, dict[str, Any]] = {}
    budget = [MAX_HOSTS]
    for name in names:
        merged: dict[str, Any] = {}
        for path in _files(base, name, budget):
            data = parse(read_config_text(path, f"Ansible {base.name} file"), str(path))
            if data is None:
                continue
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: expected a mapping of variables, got {type(data).__name__}")
            merged.update({str(k): v for k, v in data.items()})
        if merged:
            out[name] = merged
    return out
