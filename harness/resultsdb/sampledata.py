"""A run's sample metadata stored once: what every sample of the run shares, and each distinct rest.

A sample's metadata repeats its run's (inventory, versions, run id, scenario, ...) and its cell's
(pair, workload, verdict, ...): a cell's dozen metrics carry the same object.  The database keeps
the keys every sample of a run has with one value in ``runs.sample_metadata``, each distinct rest
once in ``sample_metadata``, and each sample only the number of its rest (``samples.meta_id``).
:func:`split` and :func:`joined` are exact inverses: a sample reads back with the metadata it was
written with.  :func:`move_into_tables` is the migration of a database that kept the whole object
in every sample row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.resultsdb.cursor import Cursor, Placeholders
from harness.userfiles.jsonsafe import dumps, loads

__all__ = ["SplitMetadata", "joined", "move_into_tables", "split"]


@dataclass(frozen=True)
class SplitMetadata:
    #: the keys every sample has, with the one value they all have
    common: dict[str, Any]
    #: each distinct rest, numbered by its place here
    rests: list[dict[str, Any]]
    #: each sample's number of its rest
    ids: list[int]


def _text(value: Any) -> str:
    return dumps(value, sort_keys=True)


def split(metadata: Sequence[Mapping[str, Any]]) -> SplitMetadata:
    """The run's samples' metadata (in their order) as what they share and each distinct rest."""
    common: dict[str, Any] = {}
    if metadata:
        first = metadata[0]
        common = {k: v for k, v in first.items() if all(k in m and _text(m[k]) == _text(v) for m in metadata[1:])}
    numbers: dict[str, int] = {}
    rests: list[dict[str, Any]] = []
    ids = []
    for m in metadata:
        rest = {k: v for k, v in m.items() if k not in common}
        key = _text(rest)
        if key not in numbers:
            numbers[key] = len(rests)
            rests.append(rest)
        ids.append(numbers[key])
    return SplitMetadata(common, rests, ids)


def joined(common: Mapping[str, Any], rest: Mapping[str, Any]) -> dict[str, Any]:
    """A sample's metadata from its run's common part and its own rest, keys in order."""
    return dict(sorted({**common, **rest}.items()))


def _metadata(run_id: str, seq: int, meta: Any) -> dict[str, Any]:
    try:
        value = loads(meta) if isinstance(meta, str) else meta
    except ValueError as exc:
        raise ValueError(f"run {run_id}, sample {seq}: metadata is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"run {run_id}, sample {seq}: metadata is not an object")
    return value


def move_into_tables(cur: Cursor, q: Placeholders) -> None:
    """Every run's samples' ``metadata`` column into ``runs.sample_metadata`` and ``sample_metadata``,
    then the column dropped; inside the migration's transaction, so it happens whole or not at all.
    A row it cannot move is a ValueError naming the run and the sample."""
    cur.execute("SELECT run_id FROM runs ORDER BY run_id")
    for (run_id,) in cur.fetchall():
        cur.execute(q("SELECT seq, metadata FROM samples WHERE run_id = ? ORDER BY seq"), (run_id,))
        rows = cur.fetchall()
        parts = split([_metadata(run_id, seq, meta) for seq, meta in rows])
        cur.execute(q("UPDATE runs SET sample_metadata = ? WHERE run_id = ?"), (_text(parts.common), run_id))
        cur.executemany(
            q("INSERT INTO sample_metadata (run_id, meta_id, metadata) VALUES (?, ?, ?)"),
            [(run_id, i, _text(rest)) for i, rest in enumerate(parts.rests)],
        )
        cur.executemany(
            q("UPDATE samples SET meta_id = ? WHERE run_id = ? AND seq = ?"),
            [(meta_id, run_id, seq) for (seq, _), meta_id in zip(rows, parts.ids, strict=True)],
        )
    cur.execute("ALTER TABLE samples DROP COLUMN metadata")
