"""A run's first screen: what failed and why, before anything else, and where the rest is.

The end of a run prints it at the head of its terminal summary and writes it as
``summary.md`` (what a CI job summary shows): the cells that did not pass with their reasons,
the relative bounds that were not met, the baseline's verdict, anything that went wrong with
the run's outputs; then the count of cells (with how many were certified clean or disturbed, and
the calibration cells) and the files that hold the tables.  The tables
themselves (the comparison, every relative bound, the model's fit) are in those files, never
here: a run of a thousand table lines must not push its failures off the screen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.report.comparison import Comparison
from harness.report.formatting import verdict_text
from harness.report.header import result_summary, verdict_items
from harness.rules.bounds import BoundResult

__all__ = ["FirstScreen", "first_screen", "judgement_lines"]


def judgement_lines(judged: Sequence[tuple[str, BoundResult]]) -> list[str]:
    """Every relative bound, one line each (``PASS``/``FAIL``/``INCONCLUSIVE``, what, why)."""
    return [f"{result.verdict.upper():12} {label}: {result.reason}" for label, result in judged]


@dataclass(frozen=True)
class FirstScreen:
    """What the reader of a finished run needs first."""

    #: ``17 cells; 16 pass, 1 fail, 0 inconclusive``
    result: str
    #: (verdict, what, why) of every cell, test without a cell or relative bound that did not
    #: pass, failures first
    failed: tuple[tuple[str, str, str], ...]
    #: the baseline comparison's one line (``baseline main: REGRESSED: ...``), when asked for
    baseline: str | None
    #: what went wrong with the run's outputs (a metrics file not written, a baseline error)
    problems: tuple[str, ...]
    #: (file, what it holds), relative to the run directory
    files: tuple[tuple[str, str], ...]

    #: the run regressed against the baseline
    regressed: bool = False
    #: (what, line) beside the result: the cells' validity counts, the calibration cells
    notes: tuple[tuple[str, str], ...] = ()
    #: (cell, why) of every cell that regressed against the baseline
    regressions: tuple[tuple[str, str], ...] = ()

    @property
    def title(self) -> str:
        fails = sum(1 for verdict, *_ in self.failed if verdict.startswith("FAIL"))
        errors = sum(1 for verdict, *_ in self.failed if verdict.startswith("ERROR"))
        others = len(self.failed) - fails - errors
        parts = [f"{fails} failed"] if fails else []
        parts += [f"{errors} error{'s' if errors > 1 else ''}"] if errors else []
        parts += [f"{others} inconclusive"] if others else []
        parts += ["regressed against the baseline"] if self.regressed else []
        parts += (
            [f"{len(self.problems)} output problem{'s' if len(self.problems) > 1 else ''}"] if self.problems else []
        )
        return f"harness: {', '.join(parts)}" if parts else "harness: every cell and bound passed"

    def lines(self) -> list[str]:
        """The terminal's lines (under :attr:`title`)."""
        out = [f"{verdict} {what}: {why}" for verdict, what, why in self.failed]
        out += [line for line in (self.baseline,) if line]
        out += list(self.problems)
        out.append(f"result: {self.result}")
        out += [f"{name}: {line}" for name, line in self.notes]
        return out

    def markdown(self, run_id: str, exitstatus: int) -> str:
        """``summary.md``: the same, for a CI job summary."""
        status = "passed" if exitstatus == 0 else f"failed (exit {exitstatus})"
        out = [f"## Storage gate: {status}", "", f"Run `{run_id}`: {self.result}."]
        if self.notes:
            out += ["", *(f"- **{name}**: {_md(line)}" for name, line in self.notes)]
        if self.failed:
            out += ["", "### What did not pass", ""]
            out += [f"- **{verdict}** `{what}`: {_md(why)}" for verdict, what, why in self.failed]
        if self.baseline:
            out += ["", f"**{_md(self.baseline)}** (`baseline-compare.md`)"]
        if self.problems:
            out += ["", "### Problems with the run's outputs", ""] + [f"- {_md(p)}" for p in self.problems]
        out += ["", "### Files", ""] + [f"- `{name}`: {what}" for name, what in self.files]
        return "\n".join(out) + "\n"


_TAG_OPEN: Final = re.compile(r"<(?=[A-Za-z/!?])")


def _md(text: str) -> str:
    # a reason quotes nodes and tools: keep it from opening a table or a tag in the summary;
    # "145 IOPS < min 150 IOPS" stays as it reads, only a "<" that could start a tag is escaped
    return _TAG_OPEN.sub("&lt;", text.replace("|", "\\|").replace("\n", " "))


def first_screen(
    comparison: Comparison,
    judged: Sequence[tuple[str, BoundResult]],
    *,
    uncelled: Sequence[tuple[str, str, str]] = (),
    baseline: str | None = None,
    regressed: bool = False,
    regressions: Sequence[tuple[str, str]] = (),
    problems: Sequence[str] = (),
    files: Sequence[tuple[str, str]] = (),
) -> FirstScreen:
    """The first screen of a run whose cells are ``comparison`` and relative bounds ``judged``;
    ``uncelled``: tests that failed without a cell, ``(ERROR|FAIL, test id, message)``."""
    failed = [
        (verdict_text(c).upper(), c.key, c.verdict_reason or "(no reason recorded)") for c in comparison.not_passed
    ]
    bounds = [(r.verdict.upper(), label, r.reason) for label, r in judged if not r.passed]
    ordered = sorted([*failed, *uncelled, *bounds], key=lambda item: not item[0].startswith(("FAIL", "ERROR")))
    return FirstScreen(
        result_summary(comparison),
        tuple(ordered),
        baseline,
        tuple(problems),
        tuple(files),
        regressed,
        tuple(verdict_items(comparison)),
        tuple(regressions),
    )
