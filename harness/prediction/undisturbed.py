"""Calibration cells measured in a disturbed window are left out and measured again, once.

A calibration's figures are the model's inputs for every later cell of the pair: a local write
time or a capacity measured while the host was busy would make every prediction of the run (and
of later runs that reuse it) wrong in the same direction.  So a calibration cell whose validity
certificate names a disturbance is left out, with its reason, and measured again; if the second
one is disturbed as well it is used (there is nothing better), and the calibration says so and is
not kept for later runs (:func:`harness.prediction.calibrate.calibrate_pair`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness.cell import CellResult
from harness.progress import Progress

__all__ = ["UndisturbedCells"]


def _disturbance(result: CellResult) -> str | None:
    certificate = result.certificate
    return certificate.reason if certificate is not None and certificate.disturbed else None


class UndisturbedCells:
    """The calibration cells of one pair, and what was left out of them."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        #: one line per cell left out or used although disturbed
        self.left_out: list[str] = []
        #: a cell was disturbed twice and used: the calibration is not for keeping
        self.used_disturbed = False

    def run(self, names: Sequence[str], measure: Callable[[], list[CellResult]]) -> list[CellResult]:
        """``measure()`` (the cells ``names``, in order); again once when any was disturbed."""
        results = measure()
        disturbed = [(name, why) for name, r in zip(names, results, strict=True) if (why := _disturbance(r))]
        if not disturbed:
            return results
        for name, why in disturbed:
            self.left_out.append(f"{name}: disturbed ({why}), measured again")
            self.progress(f"calibration: {name} left out, disturbed: {why}; measuring it again")
        results = measure()
        for name, r in zip(names, results, strict=True):
            why = _disturbance(r)
            if why is not None:
                self.used_disturbed = True
                self.left_out.append(f"{name}: disturbed again ({why}), used")
        return results
