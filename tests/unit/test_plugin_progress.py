"""Run progress lines: counts, ETA from the median cell duration, formatting."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from harness.plugin.progress import RunProgress, format_eta


@given(st.floats(0, 10 * 86400))
def test_eta_text_round_trips_to_the_second(seconds: float) -> None:
    text = format_eta(seconds)
    m = re.fullmatch(r"(?:(\d+)h(\d\d)m|(?:(\d+)m(\d\d)s)|(\d+)s)", text)
    assert m is not None, text
    h, hm, m_, ms, s = m.groups()
    total = int(h) * 3600 + int(hm) * 60 if h else int(m_) * 60 + int(ms) if m_ else int(s)
    # hours drop the seconds; below an hour the text is exact to the rounded second
    assert abs(total - round(seconds)) < (60 if h else 1)


@given(durations=st.lists(st.floats(0.1, 600), min_size=1, max_size=20), workers=st.integers(1, 4))
def test_eta_is_the_median_duration_times_cells_left_over_workers(durations: list[float], workers: int) -> None:
    lines: list[str] = []
    progress = RunProgress(total=len(durations) + 3, workers=workers, say=lines.append)
    for i, d in enumerate(durations):
        progress.finished(f"cell{i}", d)
    assert len(lines) == len(durations)
    assert f"{len(durations)}/{len(durations) + 3} cells" in lines[-1]
    import statistics

    expected = format_eta(statistics.median(durations) * 3 / workers)
    assert lines[-1].endswith(f"ETA {expected}")


def test_the_last_cell_has_no_eta() -> None:
    lines: list[str] = []
    progress = RunProgress(total=1, say=lines.append)
    progress.finished("only", 2.0)
    assert "1/1 cells, last only 2.0 s" in lines[0] and "ETA" not in lines[0]
