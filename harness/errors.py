"""Error types shared across the harness, each with the exit code the CLI uses for it.

Exit codes of the ``harness`` command (the README's table; tests/unit/test_exit_codes.py
checks every row against a real invocation): 1 checked and not good (a verdict, not an
error), 2 bad input or configuration, 3 refused by a safety or preflight check before anything
changed, 5 infrastructure trouble (SSH, a node, the lab), 70 internal error (a bug: an
exception that is none of these), 130 interrupted.
"""

from __future__ import annotations

from typing import Final

from harness.redact import redact

#: An exception the harness did not expect (``EX_SOFTWARE`` of sysexits.h): never 1, which is
#: a verdict ("regressed"), so a crash cannot pass for a result.
INTERNAL_ERROR_EXIT_CODE: Final = 70


class HarnessError(Exception):
    """Base class: a failure the harness can explain in one message.

    The message is redacted when the error is made: errors quote what was refused (an
    Ansible variable, a node's stderr), and whoever prints, logs or re-raises the error (the
    CLI, pytest's usage error, a JUnit message) then never sees a secret inside it.
    """

    exit_code = 5

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ConfigError(HarnessError):
    """Bad input: inventory, command-line option or lab configuration."""

    exit_code = 2


class RefusedError(HarnessError):
    """A safety or preflight check refused to go on; nothing was changed."""

    exit_code = 3


class InfraError(HarnessError):
    """The environment failed: a node, the lab, a missing package."""

    exit_code = 5
