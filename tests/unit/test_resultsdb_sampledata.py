"""A run's sample metadata split into what every sample shares and each distinct rest, and joined back."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.resultsdb.sampledata import joined, split
from harness.userfiles.jsonsafe import dumps

from .baseline_runs import SINGLE, load

_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["a", "b", "6.1.176"]))
_METADATA = st.lists(
    st.dictionaries(st.sampled_from(["pair", "kernel", "repeat", "run_id", "x"]), _VALUES), max_size=12
)


@given(_METADATA)
def test_every_sample_reads_back_as_written(metadata: list[dict[str, Any]]) -> None:
    parts = split(metadata)
    assert len(parts.ids) == len(metadata)
    for original, meta_id in zip(metadata, parts.ids, strict=True):
        assert joined(parts.common, parts.rests[meta_id]) == dict(sorted(original.items()))
    # each rest once, and none shares a key with the common part
    assert len({dumps(r, sort_keys=True) for r in parts.rests}) == len(parts.rests)
    assert all(not (r.keys() & parts.common.keys()) for r in parts.rests)


def test_a_recorded_runs_metrics_share_their_cells_metadata() -> None:
    """The recorded lab run: 17 cells, each metric of a cell with the same metadata."""
    samples = load(SINGLE)
    parts = split([s.metadata for s in samples])
    cells = {(s.cell, s.metadata.get("repeat")) for s in samples}
    assert len(parts.rests) == len(cells) < len(samples)
    assert parts.common["run_id"] == SINGLE
