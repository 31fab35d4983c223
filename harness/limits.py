"""How much of anything the harness reads: the one table of input limits.

Every reader of outside input checks these before it expands or converts anything (a YAML
alias, an Ansible host range, a number's digits), so a hostile or broken input costs at most a
bounded amount of time and memory and ends in one line naming the file, line or key and the
limit.  The README's "Input limits" table lists the same figures; change them here only.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_BONNIE_BYTES",
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_ECHO_CHARS",
    "MAX_ERROR_LINE_CHARS",
    "MAX_EXPANDED_CHARS",
    "MAX_FILE_BYTES",
    "MAX_HOSTS",
    "MAX_IN_FLIGHT",
    "MAX_KNOWN_HOSTS_LINE",
    "MAX_NAME_LEN",
    "MAX_NDJSON_BYTES",
    "MAX_NODES",
    "MAX_TIMESTAMP",
    "describe_bytes",
]

#: A file a user names (inventory, Ansible inventory or mapping, catalog, baseline metadata,
#: run.json, known_hosts).  The harness's own are kilobytes (the built-in sizing catalog about
#: 40 KiB); 4 MiB leaves room for an Ansible inventory of thousands of hosts and refuses
#: anything that would take the YAML parser minutes.
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
#: A run's samples or series (NDJSON): far more than any configuration file, still not the
#: whole memory.
MAX_NDJSON_BYTES: Final = 1024 * 1024 * 1024
#: bonnie++'s CSV output of one run (one line of about 300 bytes per ``-x`` repetition).
MAX_BONNIE_BYTES: Final = 1024 * 1024

#: Nesting of a YAML document, counted through aliases and merge keys: inventories and
#: catalogs nest five or six levels, an Ansible group tree two per level.
MAX_DEPTH: Final = 64
#: Nodes of a YAML document, as written and as aliases expand it (the built-in catalog has ~3,000).
MAX_NODES: Final = 100_000
#: Characters of a YAML document's scalars once its aliases are expanded: an anchor reused a
#: few times is fine, 5,000 copies of a 200 KB string (1 GB of text to validate) is not.
MAX_EXPANDED_CHARS: Final = 4 * MAX_FILE_BYTES

#: Hosts of an Ansible inventory, its host ranges (``db[01:99]``) counted before they expand.
MAX_HOSTS: Final = 100_000

#: Characters of one known_hosts line: an RSA key of 16,384 bits (the largest OpenSSH makes)
#: is a line of about 2,800; paramiko reads a key's numbers in time quadratic in their length.
MAX_KNOWN_HOSTS_LINE: Final = 16 * 1024

#: Digits of a number written as text (a size, rate, duration, port or count): 2**64 has 20,
#: and no figure the harness uses needs more than 30; more is an error, not an overflow.
MAX_DIGITS: Final = 30

#: I/Os in flight of one workload (numjobs x iodepth) the sizing model solves for: its
#: mean-value analysis takes time linear in them, and no device queues more than 64 Ki.
MAX_IN_FLIGHT: Final = 65_536

#: A name that becomes one path component (inventory, baseline, run, metric).
MAX_NAME_LEN: Final = 64

#: The latest Unix time a record may carry (9999-12-31T23:59:59Z, the end of what a datetime holds).
MAX_TIMESTAMP: Final = 253_402_300_799.0

#: Characters of one value (a run of non-blanks) an error message quotes; a longer value is
#: shown cut, with its length, so a 1 MB value is never a 1 MB error line.
MAX_ECHO_CHARS: Final = 200
#: Characters of one line of an error message (many short values, such as a list of names).
MAX_ERROR_LINE_CHARS: Final = 2_000


def describe_bytes(limit: int) -> str:
    """``4 MiB`` for a whole number of MiB, ``1024 bytes`` otherwise (for refusal messages)."""
    if limit % (1 << 30) == 0:
        return f"{limit >> 30} GiB"
    return f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit} bytes"
