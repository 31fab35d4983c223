"""What a crashed run can leave on a node, found read-only, and removed only when asked.

The node-side records under ``/run/harness/<run-id>/`` say what the harness did: fault
records (``faults/*.json``) with their dead-man pid files, fio and event-watcher pid files.
Beside them we look for the harness's reserved qdisc handle on every interface (a fault
whose record was lost) and for the cluster lock.  Only objects that are provably the
harness's are ever touched: the reserved root handle, process sessions recorded in our pid
files, our own lock.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal

from harness.impair.commands import ROOT_MAJOR, format_handle
from harness.remote import Runner
from harness.remote.nodefiles import MD_PREFIX, NODE_ROOT
from harness.runfiles.runid import validate_run_id

__all__ = ["Leftover", "find_leftovers", "parse_listing", "remove_leftovers"]

Kind = Literal["fault", "qdisc", "fio", "watcher", "lock", "md", "mount"]
_KINDS = ("fault", "qdisc", "fio", "watcher", "lock", "md", "mount")
HANDLE = format_handle(ROOT_MAJOR)  # "4842:"

# One line per finding: KIND <tab> RUN-ID <tab> DETAIL.  Shell builtins only where possible.
_LIST_SCRIPT = f"""
root={NODE_ROOT}
for f in $root/*/faults/*.json; do [ -e "$f" ] || continue; r=${{f#$root/}}; r=${{r%%/*}};
  printf 'fault\\t%s\\t%s\\n' "$r" "$f"; done
for p in $root/*/fio-*.pid $root/*/events-*.log.pid; do [ -e "$p" ] || continue; r=${{p#$root/}}; r=${{r%%/*}};
  base=${{p%.pid}}; case $p in *events-*) k=watcher; rc=;; *) k=fio; rc=$base.rc;; esac;
  [ -n "$rc" ] && [ -s "$rc" ] && continue; read pid < "$p";
  if kill -0 "$pid" 2>/dev/null; then printf '%s\\t%s\\t%s %s\\n' "$k" "$r" "$pid" "$p"; fi; done
for d in /sys/class/net/*; do i=${{d##*/}};
  tc qdisc show dev "$i" root 2>/dev/null | grep -q "qdisc [a-z_]* {HANDLE} root" &&
  printf 'qdisc\\t-\\t%s\\n' "$i"; done
if [ -d $root/lock ]; then o=$(cat $root/lock/owner.json 2>/dev/null); printf 'lock\\t-\\t%s\\n' "$o"; fi
for m in /dev/md/{MD_PREFIX}*; do [ -L "$m" ] && printf 'md\\t-\\t%s\\n' "$m"; done
while read -r _ _ _ _ mp _; do case $mp in $root/*) r=${{mp#$root/}}; r=${{r%%/*}};
  printf 'mount\\t%s\\t%s\\n' "$r" "$mp";; esac; done < /proc/self/mountinfo
true
"""


@dataclass(frozen=True)
class Leftover:
    node: str
    kind: Kind
    run_id: str | None
    detail: str

    def describe(self) -> str:
        run = f" (run {self.run_id})" if self.run_id else ""
        return f"{self.node}: {self.kind}{run}: {self.detail}"


def parse_listing(node: str, text: str) -> list[Leftover]:
    out: list[Leftover] = []
    for line in text.splitlines():
        kind, _, rest = line.partition("\t")
        run, _, detail = rest.partition("\t")
        if kind not in _KINDS:
            continue
        out.append(Leftover(node, kind, None if run in ("-", "") else run, detail.strip()))  # type: ignore[arg-type]
    return out


def find_leftovers(node: Runner, *, run_id: str | None = None) -> list[Leftover]:
    """Harness objects on ``node`` (read-only).  With ``run_id``, only that run's records
    (a reserved qdisc or lock of unknown run is always reported)."""
    if run_id is not None:
        validate_run_id(run_id)
    found = parse_listing(node.name, node.run_script(_LIST_SCRIPT, timeout=30).stdout)
    return [f for f in found if run_id is None or f.run_id in (None, run_id)]


def _undo(item: Leftover) -> str:
    if item.kind == "fault":
        fault = shlex.quote(item.detail)
        pid_file = shlex.quote(item.detail.removesuffix(".json") + ".deadman")
        # stop the switch, then the fault's own recorded interface (read from its record)
        return (
            f"if [ -e {pid_file} ]; then read p < {pid_file}; case $p in systemd:*) "
            f"systemctl stop ${{p#systemd:}}.timer ${{p#systemd:}}.service 2>/dev/null;; "
            f'*) pkill -TERM -s "$p" 2>/dev/null;; esac; rm -f {pid_file}; fi; '
            f'i=$(sed -n \'s/.*"iface": "\\([A-Za-z0-9_.-]*\\)".*/\\1/p\' {fault}); '
            f'[ -n "$i" ] && tc qdisc del dev "$i" root handle {HANDLE} 2>/dev/null; rm -f {fault}'
        )
    if item.kind == "qdisc":
        return f"tc qdisc del dev {shlex.quote(item.detail)} root handle {HANDLE}"
    if item.kind in ("fio", "watcher"):
        pid, _, pid_file = item.detail.partition(" ")
        qpid = shlex.quote(pid)
        return f"pkill -TERM -s {qpid}; sleep 1; pkill -KILL -s {qpid}; rm -f {shlex.quote(pid_file)}"
    if item.kind == "md":
        # our array (harness- name): stop it and wipe its members, which were scratch devices
        md = shlex.quote(item.detail)
        return (
            f'k=$(readlink -f {md}); k=${{k##*/}}; members=""; for s in /sys/block/$k/slaves/*; do '
            f'[ -e "$s" ] && members="$members /dev/${{s##*/}}"; done; mdadm --stop {md}; '
            f'for d in $members; do mdadm --zero-superblock "$d"; wipefs -a -q "$d"; done; rm -f {md}'
        )
    if item.kind == "mount":
        mp = shlex.quote(item.detail)
        return f'src=$(findmnt -rn -o SOURCE {mp}); umount {mp} || umount -l {mp}; [ -n "$src" ] && wipefs -a -q "$src"'
    return f"rm -rf {NODE_ROOT}/lock"


def remove_leftovers(node: Runner, items: list[Leftover], *, break_lock: bool = False) -> list[str]:
    """Undo each item; the lock only with ``break_lock``.  Returns what was done."""
    done: list[str] = []
    for item in items:
        if item.node != node.name or (item.kind == "lock" and not break_lock):
            continue
        node.run_script(_undo(item) + "; true", timeout=60, check=False)
        done.append(f"removed {item.describe()}")
    return done
