"""The single- vs multi-AZ bars keep their x labels apart at the report's width.

A full lab run measures four pairs (the DRBD pairs ``single-az`` and ``multi-az`` and their
md-nbd twins, as inventories/lab.yaml names them) side by side in panels a third of the figure
wide.  The cells are the recorded run's (tests/data/runs); the md-nbd twins are its DRBD cells
under the twins' names, every value as measured.
"""

from __future__ import annotations

from harness.report.aggregate import aggregate_samples
from harness.report.plot_data import placement_groups
from harness.report.plots.bars import draw_placement, placement_height
from harness.report.plots.canvas import new_figure, x_labels_overlap
from harness.runfiles.samples import Sample

from .baseline_runs import SINGLE, load, relabelled


def _four_pairs() -> list[Sample]:
    drbd = [s for s in load(SINGLE) if s.metadata.get("scenario") == "replicated_write"]
    twins = [
        *relabelled([s for s in drbd if s.metadata.get("pair") == "single-az"], pair="single-az-md-nbd"),
        *relabelled([s for s in drbd if s.metadata.get("pair") == "multi-az"], pair="multi-az-md-nbd"),
    ]
    return [*drbd, *relabelled(twins, replication="md-nbd")]


def test_four_pairs_names_do_not_run_into_each_other() -> None:
    groups = placement_groups(aggregate_samples(_four_pairs()), "bw")
    assert {len(g.bars) for g in groups} == {4}
    with new_figure(placement_height(groups)) as fig:
        axes = draw_placement(fig, groups, "bw")
        fig.draw_without_rendering()
        crowded = [ax.get_title() for ax in axes if x_labels_overlap(fig, ax)]
    assert crowded == []


def test_two_short_names_stay_level() -> None:
    groups = placement_groups(aggregate_samples(load(SINGLE)), "bw")
    with new_figure(placement_height(groups)) as fig:
        axes = draw_placement(fig, groups, "bw")
        fig.draw_without_rendering()
        assert all(label.get_rotation() == 0 for ax in axes for label in ax.get_xticklabels())
