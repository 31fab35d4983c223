"""One measurement cell: guard, fault, fio, judge, record (:mod:`harness.cell.runner`).

Scenarios import what they use from here; each step lives in its own module.
"""

from harness.cell.record import NodeFacts
from harness.cell.result import CellResult
from harness.cell.runner import CellRunner
from harness.cell.spec import Annotator, CellContext, CellSpec, Mode

__all__ = ["Annotator", "CellContext", "CellResult", "CellRunner", "CellSpec", "Mode", "NodeFacts"]
