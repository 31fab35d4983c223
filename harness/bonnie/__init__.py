"""bonnie++, the disk studies' second engine: its command line, its CSV line, and its samples.

:mod:`~harness.bonnie.command` builds the node command, :mod:`~harness.bonnie.result` reads
bonnie++'s CSV (format 1.97/1.98, bonnie++ 1.97 to 2.00) into :class:`~harness.bonnie.result.BonnieResult`, and
:mod:`~harness.bonnie.samples` turns one result into the per-phase metric values the disk
study records.  Pure: nothing here talks to a node.
"""

from harness.bonnie.command import job_for_memory, meminfo_total_kib
from harness.bonnie.result import PHASES, BonnieOutputError, BonnieResult, parse_bonnie_csv
from harness.bonnie.samples import BONNIE_ENGINE, bonnie_values

__all__ = [
    "BONNIE_ENGINE",
    "PHASES",
    "BonnieOutputError",
    "BonnieResult",
    "bonnie_values",
    "job_for_memory",
    "meminfo_total_kib",
    "parse_bonnie_csv",
]
