"""Which DRBD resources a Pacemaker cluster manages, from its CIB.

Pacemaker running on a node matters to a disruptive test only for the DRBD resources it
manages: it promotes, demotes, fences or restarts those by itself when the test cuts or
crashes them.  A resource it does not manage is left alone by it and is not flagged for it.

The CIB's ``<resources>`` section (``cibadmin --query --scope resources``, read-only) lists
them: a primitive of ``class="ocf" provider="linbit" type="drbd"`` (the DRBD resource agent),
whose ``drbd_resource`` instance attribute names the DRBD resource, usually inside a
promotable ``<clone>`` (Pacemaker 2) or a ``<master>`` (Pacemaker 1).  A primitive may take
its class/provider/type from a ``<template>`` (``template="ID"``).  The format is that of the
samples in ``tests/data/pacemaker`` (sources in their SOURCES.md).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.drbd.errors import DrbdOutputError
from harness.remote import CommandResult
from harness.units import MIB

__all__ = ["CIB_RESOURCES_ARGV", "PacemakerView", "managed_drbd_resources", "pacemaker_view"]

#: read-only: the CIB's resources section as XML (no status, no constraints)
CIB_RESOURCES_ARGV: Final = ("cibadmin", "--query", "--scope", "resources")
#: a CIB far larger than any real resources section is refused before parsing
_MAX_CIB_BYTES: Final = 4 * MIB
_DRBD_AGENT: Final = ("ocf", "linbit", "drbd")
_CONTAINERS: Final = ("clone", "master", "group", "bundle")


def _agent(element: ET.Element, templates: dict[str, ET.Element]) -> tuple[str, str, str]:
    source = templates.get(element.get("template", ""), element)
    return (
        element.get("class") or source.get("class") or "",
        element.get("provider") or source.get("provider") or "",
        element.get("type") or source.get("type") or "",
    )


def _drbd_resource(primitive: ET.Element, templates: dict[str, ET.Element]) -> str | None:
    """The primitive's ``drbd_resource`` (its own, else its template's)."""
    for source in (primitive, templates.get(primitive.get("template", ""))):
        if source is None:
            continue
        for nvpair in source.findall("instance_attributes/nvpair"):
            if nvpair.get("name") == "drbd_resource" and nvpair.get("value"):
                return nvpair.get("value")
    return None


def managed_drbd_resources(xml_text: str) -> dict[str, str]:
    """DRBD resource name -> how Pacemaker manages it (``primitive WebData in clone
    WebData-clone``), from the XML ``cibadmin --query`` prints (the whole CIB or its
    ``<resources>`` section).  Raises :class:`DrbdOutputError` on anything unreadable."""
    if len(xml_text.encode()) > _MAX_CIB_BYTES:
        raise DrbdOutputError(f"the CIB is larger than {_MAX_CIB_BYTES // MIB} MiB")
    if "<!DOCTYPE" in xml_text or "<!ENTITY" in xml_text:
        # a CIB never declares entities; refusing them keeps expansion attacks out of the parser
        raise DrbdOutputError("the CIB declares a DOCTYPE or entities, which Pacemaker never writes")
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise DrbdOutputError(f"the CIB is not well-formed XML: {exc}") from None
    sections = [root] if root.tag == "resources" else root.findall(".//resources")
    if not sections:
        raise DrbdOutputError(f"no <resources> section in the CIB (root element <{root.tag}>)")
    managed: dict[str, str] = {}
    for section in sections:
        templates = {t.get("id", ""): t for t in section.iter("template")}
        owners = {
            child: container
            for container in section.iter()
            if container.tag in _CONTAINERS
            for child in container.iter("primitive")
        }
        for primitive in section.iter("primitive"):
            if _agent(primitive, templates) != _DRBD_AGENT:
                continue
            name = _drbd_resource(primitive, templates)
            if name is None:
                raise DrbdOutputError(f"DRBD primitive {primitive.get('id', '?')} names no drbd_resource")
            how = f"primitive {primitive.get('id', '?')}"
            owner = owners.get(primitive)
            if owner is not None:
                how += f" in {owner.tag} {owner.get('id', '?')}"
            managed[name] = how
    return managed


@dataclass(frozen=True)
class PacemakerView:
    """What a running Pacemaker means for the resources under test: ``managed`` the risk
    detail of each one it manages; ``unreadable`` why the CIB could not be read (then every
    resource may be managed: the audit fails closed); ``notes`` what is not a risk."""

    managed: dict[str, str]
    unreadable: str | None
    notes: list[str]


def pacemaker_view(evidence: str, cib: CommandResult, resources: Sequence[str]) -> PacemakerView:
    """Pacemaker runs (``evidence``, e.g. ``unit pacemaker is active``); ``cib`` is the answer
    to :data:`CIB_RESOURCES_ARGV`; ``resources`` the DRBD resources under test on the node."""
    try:
        if not cib.ok:
            raise DrbdOutputError((cib.stderr.strip() or f"exit {cib.exit_code}").splitlines()[0])
        managed = managed_drbd_resources(cib.stdout)
    except DrbdOutputError as exc:
        return PacemakerView({}, f"{evidence}; which DRBD resources it manages cannot be read ({exc})", [])
    found = {
        res: (
            f"Pacemaker manages {res} ({managed[res]}; {evidence}): it promotes, demotes, fences or "
            "restarts it by itself when the test cuts or crashes it"
        )
        for res in resources
        if res in managed
    }
    unmanaged = [res for res in resources if res not in managed]
    others = sorted(set(managed) - set(resources))
    elsewhere = ", ".join(others) or "no DRBD resource"
    notes = [f"Pacemaker runs ({evidence}) and manages {elsewhere}, not {', '.join(unmanaged)}"] if unmanaged else []
    return PacemakerView(found, None, notes)
