"""Error types shared across the harness, each with the exit code the CLI uses for it.

Exit codes (also documented in the README): 2 bad input or configuration, 3 refused by a
safety or preflight check before anything changed, 4 a measurement failed its bounds,
5 infrastructure trouble (SSH, a node, the lab), 130 interrupted.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base class: a failure the harness can explain in one message."""

    exit_code = 5


class ConfigError(HarnessError):
    """Bad input: inventory, command-line option or lab configuration."""

    exit_code = 2


class RefusedError(HarnessError):
    """A safety or preflight check refused to go on; nothing was changed."""

    exit_code = 3


class InfraError(HarnessError):
    """The environment failed: a node, the lab, a missing package."""

    exit_code = 5
