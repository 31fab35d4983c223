"""Which Debian mirror the lab builds its guest roots from: the one the host's apt uses.

The lab host is a Debian machine that reaches Debian's archive (and often nothing else), so
the roots come from the same URI as the host's own packages: ``/etc/apt/sources.list`` (one
line per source) and ``/etc/apt/sources.list.d/*.sources`` (deb822 stanzas).  The first
``deb`` source of the main archive wins; security and backports archives are skipped because
they do not carry a whole release.  ``HARNESS_LAB_MIRROR`` overrides it.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["MIRROR_ENV", "host_mirror", "mirror_serves", "parse_deb822_sources", "parse_sources_list"]

MIRROR_ENV = "HARNESS_LAB_MIRROR"
# Archives that are not a whole release: a root cannot be bootstrapped from them.
_PARTIAL_ARCHIVE = re.compile(r"security|backports|updates|ports|snapshot|debug|nodesource|cloud\.google", re.I)


def _usable(uri: str, suites: list[str]) -> bool:
    if not uri.startswith(("http://", "https://")) or _PARTIAL_ARCHIVE.search(uri):
        return False
    # a Debian archive lists release suites (bookworm, bookworm-updates); 'nodistro' and the
    # like are third-party repositories
    return any(re.fullmatch(r"[a-z]+(-updates)?", s) and s != "nodistro" for s in suites)


def parse_sources_list(text: str) -> list[str]:
    """Mirror URIs of the ``deb`` lines of a one-line-style sources.list, in order."""
    found: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        words = line.split()
        if len(words) < 3 or words[0] != "deb":
            continue
        rest = words[1:]
        if rest[0].startswith("["):  # options: [arch=amd64 signed-by=...]
            while rest and not rest[0].endswith("]"):
                rest = rest[1:]
            rest = rest[1:]
        if len(rest) >= 2 and _usable(rest[0], [rest[1]]):
            found.append(rest[0].rstrip("/"))
    return found


def parse_deb822_sources(text: str) -> list[str]:
    """Mirror URIs of the enabled ``Types: deb`` stanzas of a deb822 ``.sources`` file, in order."""
    found: list[str] = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line[:1].isspace():
                continue
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes").lower() == "no":
            continue
        suites = fields.get("suites", "").split()
        found += [uri.rstrip("/") for uri in fields.get("uris", "").split() if _usable(uri, suites)]
    return found


def host_mirror(apt_dir: Path = Path("/etc/apt")) -> str | None:
    """The Debian mirror of the host's apt sources (or ``$HARNESS_LAB_MIRROR``); None if none."""
    override = os.environ.get(MIRROR_ENV)
    if override:
        return override.rstrip("/")
    found: list[str] = []
    one_line = apt_dir / "sources.list"
    if one_line.is_file():
        found += parse_sources_list(one_line.read_text(errors="replace"))
    parts = apt_dir / "sources.list.d"
    if parts.is_dir():
        for path in sorted(parts.iterdir()):
            if path.suffix == ".sources":
                found += parse_deb822_sources(path.read_text(errors="replace"))
            elif path.suffix == ".list":
                found += parse_sources_list(path.read_text(errors="replace"))
    return found[0] if found else None


def mirror_serves(mirror: str, suite: str, timeout: float = 15.0) -> str | None:
    """None when ``mirror`` serves ``suite`` (its Release file answers), else why not."""
    url = f"{mirror}/dists/{suite}/Release"
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        return f"{url} answered HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return f"{url} is unreachable ({getattr(exc, 'reason', exc)})"
    return None if status == 200 else f"{url} answered HTTP {status}"
