"""A real headless Chromium (Debian's ``chromium-headless-shell``, which scripts/bootstrap installs)
laying out an HTML page at a given window size, and the geometry of what it drew.

:func:`layout` adds a script to a copy of the page that, once the page and its images have
loaded, writes the bounding boxes of every element with an ``id`` and of every verdict cell
(with the right edge of the box that scrolls it) into the DOM, which ``--dump-dom`` prints.  A
test that needs it skips, saying so, only when neither Chromium is installed.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

__all__ = ["Box", "Layout", "layout", "screenshot"]

_BINARIES: Final = ("chromium-headless-shell", "chromium")

_GEOMETRY_JS: Final = """
window.addEventListener('load', () => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const out = {viewport: [innerWidth, innerHeight], ids: {}, verdicts: []};
  for (const el of document.querySelectorAll('[id]')) out.ids[el.id] = box(el);
  for (const td of document.querySelectorAll('td[class^="verdict-"]')) {
    const scroller = td.closest('.scroll');
    out.verdicts.push({cell: box(td), scroller: scroller ? box(scroller) : null, text: td.textContent});
  }
  out.overflowing = [...document.querySelectorAll('.scroll')]
    .filter((el) => el.closest('#first-screen') && el.scrollWidth > el.clientWidth + 1)
    .map((el) => el.textContent.slice(0, 80));
  const pre = document.createElement('pre');
  pre.id = 'harness-geometry';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
"""

_OUT: Final = re.compile(r'<pre id="harness-geometry">(.*?)</pre>', re.S)


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    #: every element with an id
    ids: dict[str, Box]
    #: (verdict cell, the box that scrolls it, its text)
    verdicts: list[tuple[Box, Box | None, str]]
    #: the start of each table of the first screen wider than its box
    overflowing: list[str]


def _chromium() -> str:
    for name in _BINARIES:
        found = shutil.which(name)
        if found is not None:
            return found
    pytest.skip(
        "no headless Chromium on PATH: scripts/bootstrap installs Debian's chromium-headless-shell, "
        "which failed or has not run"
    )


def _argv(width: int, height: int) -> list[str]:
    return [
        _chromium(),
        "--no-sandbox",  # the tests run as root, which Chromium's sandbox refuses
        "--disable-gpu",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
        "--virtual-time-budget=10000",  # the load event, images decoded, before the page is taken
    ]


def screenshot(page: Path, width: int, height: int, png: Path) -> tuple[int, int]:
    """A ``width``×``height`` screenshot of ``page`` into ``png``; returns the PNG's size."""
    argv = [*_argv(width, height), f"--screenshot={png}", page.as_uri()]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert png.is_file(), f"Chromium exited {done.returncode} without a screenshot: {done.stderr[-2000:]}"
    head = png.read_bytes()[:24]  # the PNG signature, then the IHDR chunk: width, height
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def layout(page: Path, width: int, height: int, workdir: Path) -> Layout:
    """``page`` as Chromium lays it out in a ``width``×``height`` window."""
    probed = workdir / f"probed-{page.name}"
    text = page.read_text(encoding="utf-8")
    probed.write_text(text.replace("</body>", f"<script>{_GEOMETRY_JS}</script></body>"), encoding="utf-8")
    argv = [*_argv(width, height), "--dump-dom", probed.as_uri()]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    found = _OUT.search(done.stdout)
    assert found is not None, f"Chromium exited {done.returncode} without the page's geometry: {done.stderr[-2000:]}"
    data = json.loads(html.unescape(found.group(1)))
    verdicts = [
        (Box(*v["cell"]), None if v["scroller"] is None else Box(*v["scroller"]), v["text"]) for v in data["verdicts"]
    ]
    vw, vh = data["viewport"]
    return Layout(vw, vh, {k: Box(*b) for k, b in data["ids"].items()}, verdicts, data["overflowing"])
