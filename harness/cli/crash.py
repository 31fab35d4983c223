"""What the ``harness`` command does with an exception nobody expected: a bug, reported as one.

A failure the harness can explain is a :class:`~harness.errors.HarnessError` with its own exit
code.  Anything else would print a traceback and exit 1, which the README gives to "not met /
regressed", so a CI gate could read a crash as a verdict.  So it exits with
:data:`~harness.errors.INTERNAL_ERROR_EXIT_CODE`, says so in one line, and keeps the full
traceback (redacted: tracebacks quote arguments and file contents) in a file for the bug report.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
import traceback

from harness.errors import INTERNAL_ERROR_EXIT_CODE
from harness.redact import redact

__all__ = ["report_internal_error"]


def _write_traceback(text: str) -> str | None:
    # mkstemp: a fresh file only this user can read, never a name someone could have planted;
    # the temporary directory (TMPDIR) exists wherever the harness can run at all
    with contextlib.suppress(OSError):
        fd, path = tempfile.mkstemp(prefix="harness-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        return path
    return None


def report_internal_error(exc: Exception) -> int:
    """Print one line about ``exc``, save its traceback, and return the internal-error exit code."""
    text = redact(
        f"harness {' '.join(sys.argv[1:])}\n"
        f"python {platform.python_version()} on {platform.platform()}\n\n" + "".join(traceback.format_exception(exc))
    )
    path = _write_traceback(text)
    if path is None:  # no writable temporary directory: the traceback goes to stderr instead
        sys.stderr.write(text)
    where = path or "the lines above"
    message = redact(" ".join(str(exc).split())) or "(no message)"  # one line, whatever the exception held
    print(f"harness: internal error: {type(exc).__name__}: {message} (traceback in {where})", file=sys.stderr)
    return INTERNAL_ERROR_EXIT_CODE
