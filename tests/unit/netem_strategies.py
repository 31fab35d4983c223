"""Hypothesis strategies for impairment profiles, shared by the impair tests."""

from __future__ import annotations

from hypothesis import strategies as st

from harness.impair.profile import Direction, Distribution, NetemProfile

DIRECTIONS: tuple[Direction, ...] = ("both", "primary", "secondary")
DISTRIBUTIONS: tuple[Distribution | None, ...] = (None, "normal", "pareto", "paretonormal", "uniform")


@st.composite
def profiles(draw: st.DrawFn) -> NetemProfile:
    delay_us = draw(st.integers(min_value=0, max_value=500_000))
    jitter_us = draw(st.integers(min_value=0, max_value=delay_us))
    distribution = draw(st.sampled_from(DISTRIBUTIONS)) if jitter_us else None
    loss = draw(st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=100)))
    rate = draw(st.one_of(st.none(), st.floats(min_value=8e3, max_value=10e9)))
    direction = draw(st.sampled_from(DIRECTIONS))
    return NetemProfile(
        "p",
        delay_s=delay_us / 1e6,
        jitter_s=jitter_us / 1e6,
        distribution=distribution,
        loss_pct=loss,
        rate_bits=rate,
        direction=direction,
    )
