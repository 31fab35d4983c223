"""Which cloud an instance, volume or placement belongs to, and names qualified by it.

The catalog holds AWS, Google Cloud and Azure side by side; each entry says its ``cloud``.  A
user names an entry plainly (``n2-standard-4``) or qualified (``gcp/n2-standard-4``); a pair's
volume must be of its instance's cloud; and the AWS placement names ``same-az`` / ``cross-az``
mean the same-zone / cross-zone placement of the instance's cloud (``gcp/same-zone``, ...).
"""

from __future__ import annotations

from harness.errors import ConfigError

__all__ = ["CLOUDS", "DEFAULT_VOLUMES", "bare_name", "placement_for", "same_cloud"]

CLOUDS = ("aws", "gcp", "azure")

#: the volume a pair gets when the user names none, per cloud
DEFAULT_VOLUMES = {"aws": "gp3:100GiB", "gcp": "pd-balanced:100GiB", "azure": "premium-ssd:128GiB"}

_ZONE_WORDS = {"same-az": "same-zone", "cross-az": "cross-zone", "same-zone": "same-zone", "cross-zone": "cross-zone"}


def bare_name(name: str) -> tuple[str | None, str]:
    """``("gcp", "n2-standard-4")`` for ``gcp/n2-standard-4``; ``(None, name)`` when unqualified."""
    cloud, slash, rest = name.partition("/")
    if slash and cloud in CLOUDS:
        return cloud, rest
    return None, name


def placement_for(placement: str, cloud: str) -> str:
    """The catalog key of ``placement`` for a pair in ``cloud`` (AWS keeps its own names)."""
    if cloud == "aws" or "/" in placement:
        return placement
    word = _ZONE_WORDS.get(placement)
    return f"{cloud}/{word}" if word is not None else placement


def same_cloud(what: str, name: str, cloud: str, expected: str) -> None:
    """Refuse a volume or peer of another cloud than the primary instance's."""
    if cloud != expected:
        raise ConfigError(f"{what} {name!r} is on {cloud}, but the instance is on {expected}")
