"""What the sizing model predicts for one measured cell, fed with the pair's own calibration.

Every replicated or disconnected write cell gets a predicted bandwidth and IOPS, the
measured/predicted ratio and the limit the model says binds, so a table shows at once whether
a cell ran at what its parts allow, and if not, that something the model does not know about
held it back.  The model is :mod:`harness.sizing.model.predict`; the calibration replaces the
catalog's figures with the pair's measured disk latency, bandwidth and IOPS, the path's RTT and rate,
the replication overhead and the replicated IOPS capacity (:mod:`harness.prediction.calibrate`).  What
the cell itself measured stands in where it is more exact: its RTT under the impairment and,
for a block size range, the mean block size fio issued.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from harness.cell import CellRunner, CellSpec
from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.fio.profiles import Profile
from harness.fio.spec import WorkloadSpec
from harness.inventory.loader import locate
from harness.inventory.models import Inventory
from harness.prediction.calibrate import CALIBRATION_SCENARIO, PairCalibration, calibrate_pair
from harness.prediction.calstore import CalibrationStore
from harness.probes.rtt import RttStats
from harness.sizing.catalog.loader import Catalog, load_catalog
from harness.sizing.model.predict import predict
from harness.sizing.model.prediction import Prediction
from harness.sizing.scenario.notation import parse_volume
from harness.sizing.scenario.question import Calibration, Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.volumes.rules import volume_performance
from harness.units import MIB

__all__ = [
    "CellPrediction",
    "CellPredictor",
    "check_node_types",
    "inventory_catalog",
    "model_rtt_ms",
    "model_workload",
    "predict_cell",
]

#: the volume assumed for a node whose inventory entry names none (the calibration replaces
#: its figures; only its type has to exist in the catalog)
DEFAULT_VOLUME = "gp3"


@dataclass(frozen=True)
class CellPrediction:
    bw_mib_s: float
    iops: float
    latency_ms: float
    bottleneck: str  # the binding limit's key, e.g. "latency", "replication.path"
    bottleneck_label: str  # what a person reads, e.g. "measured replication path"
    detail: str  # how the binding limit's value came about

    def annotation(self, measured_bw_mib_s: float) -> tuple[dict[str, float], dict[str, Any]]:
        """Metric values (``predicted_bw``, ``predicted_iops``, ``model_ratio`` = measured /
        predicted bandwidth) and metadata (the bottleneck) for the cell's samples."""
        ratio = measured_bw_mib_s / self.bw_mib_s if self.bw_mib_s > 0 else float("nan")
        values = {"predicted_bw": self.bw_mib_s, "predicted_iops": self.iops, "model_ratio": ratio}
        meta = {"bottleneck": self.bottleneck_label, "bottleneck_key": self.bottleneck, "model_detail": self.detail}
        return values, meta


def inventory_catalog(inventory: Inventory, inventory_path: Path) -> Catalog:
    """The built-in catalog extended by the inventory's own catalog files, after checking that
    it knows every node's instance type and volume (see :func:`check_node_types`)."""
    catalog = load_catalog([inventory_path.parent / name for name in inventory.catalog])
    check_node_types(inventory, inventory_path, catalog)
    return catalog


def check_node_types(inventory: Inventory, inventory_path: Path, catalog: Catalog) -> None:
    """ConfigError naming file, line and key of every node whose ``instance_type`` the catalog
    lacks (with the near names) or whose ``volume`` does not parse, names an unknown type, or is
    one the provider refuses (size out of range, IOPS beyond the type's ratio).

    Run by ``harness inventory check`` and before a pytest run changes anything: otherwise a
    typo surfaces only at the first predicted cell, after the pair's calibration already
    disconnected DRBD.
    """
    problems: list[str] = []
    for name, node in inventory.nodes.items():
        instance = None
        if node.instance_type is not None:
            try:
                instance = catalog.instance(node.instance_type)
            except ConfigError as exc:
                problems.append(f"{locate(inventory_path, ('nodes', name, 'instance_type'))}: {exc}")
        if node.volume is not None:
            try:
                spec = parse_volume(node.volume, option="")
                volume = catalog.volume(spec.type)
                if instance is not None:
                    volume_performance(spec.type, volume, spec, instance)
            except ConfigError as exc:
                problems.append(f"{locate(inventory_path, ('nodes', name, 'volume'))}: {exc}")
    if len(problems) == 1:
        raise ConfigError(problems[0])
    if problems:
        raise ConfigError("nodes the sizing catalog cannot model:\n  " + "\n  ".join(problems))


def model_workload(workload: WorkloadSpec, issued_bs: int | None = None) -> Workload:
    """The model's view of an fio job.  A ``bsrange`` counts as its mean block size:
    ``issued_bs`` when the cell measured it (bytes / I/Os), else the range's midpoint.

    Why measured first: fio draws sizes uniformly in multiples of the lower bound, but with
    its random map on (the default) it shortens an I/O that overlaps blocks already written
    this pass, so a 4k-32k random write issued 13.6 KiB on average, not 18 (fio 3.33,
    measured on the lab) -- and the replicated IOPS a cell reaches depend on that size."""
    bs = workload.bs
    if workload.bs_max is not None:
        steps = workload.bs_max // workload.bs
        bs = issued_bs if issued_bs is not None and issued_bs > 0 else workload.bs * (steps + 1) // 2
    rwmix = workload.rwmixread if workload.rwmixread is not None else 50
    return Workload(workload.rw, bs, workload.numjobs, workload.iodepth, rwmix)


def _volume(text: str | None) -> VolumeSpec:
    return parse_volume(text) if text else VolumeSpec(DEFAULT_VOLUME)


def _calibration(cal: PairCalibration, spec: CellSpec, rtt_ms: float | None) -> Calibration:
    path_bits = cal.path_mbit * 1e6 if cal.path_mbit is not None else None
    impairment = spec.impairment
    if impairment is not None and impairment.rate_bits is not None:
        path_bits = min(path_bits, impairment.rate_bits) if path_bits is not None else impairment.rate_bits
    if rtt_ms is None or rtt_ms <= 0:
        rtt_ms = cal.rtt_ms + (impairment.added_rtt_s * 1e3 if impairment is not None else 0.0)
    overhead = cal.overhead_ms
    return Calibration(
        local_write_latency_s=cal.local_write_ms / 1e3,
        local_bandwidth=cal.local_mib_s * MIB if cal.local_mib_s is not None else None,
        local_iops=cal.local_capacity_iops,
        rtt_s=rtt_ms / 1e3,
        path_rate_bits=path_bits,
        replication_overhead_s=overhead / 1e3 if overhead is not None else None,
        replicated_iops=cal.replicated_capacity_iops,
        # a fixed cap, not a share of the path: the loss is DRBD's CPU per request, and under a
        # narrower path (a tbf cap) DRBD fills the path (measured: 95 % of 128 Mbit/s)
        replicated_bandwidth=cal.replicated_mib_s * MIB if cal.replicated_mib_s is not None else None,
        replicated_bandwidth_rtt_s=(
            cal.replicated_mib_s_rtt_ms / 1e3 if cal.replicated_mib_s_rtt_ms is not None else None
        ),
        tcp_window_bytes=cal.tcp_window_bytes,
        label=f"calibration of {cal.pair}",
    )


def model_rtt_ms(spec: CellSpec, calibration: PairCalibration, measured: RttStats | None) -> float | None:
    """The round trip a cell is predicted at: an impaired cell's own (the fault's delay on top
    of the path, as measured), an unimpaired cell's the calibration's path RTT.  Unimpaired,
    a cell's ten pings differ from the calibration's only by noise, which at the lab's
    sub-0.1 ms round trips is as large as the RTT itself; the cell's RTT is still reported."""
    if spec.impairment is None:
        return calibration.path_rtt_ms
    return measured.median_ms if measured is not None and measured.median_ms > 0 else None


def predict_cell(
    inventory: Inventory,
    catalog: Catalog,
    spec: CellSpec,
    calibration: PairCalibration,
    *,
    rtt_ms: float | None = None,
    protocol: str | None = None,
    issued_bs: int | None = None,
) -> CellPrediction:
    """The model's answer for ``spec`` on its pair.  ``rtt_ms``: the RTT the cell measured
    (else the calibration's plus what the impairment adds); ``issued_bs``: the mean block
    size the cell issued (see :func:`model_workload`).  Raises ConfigError when the
    inventory names types the catalog lacks."""
    if not spec.workload.is_write:
        raise ConfigError(f"{spec.id}: predictions cover write workloads only")
    pair = inventory.pairs[spec.pair]
    primary, secondary = inventory.nodes[pair.primary], inventory.nodes[pair.secondary]
    for name, node in ((pair.primary, primary), (pair.secondary, secondary)):
        if node.instance_type is None:
            raise ConfigError(f"node {name} names no instance_type (needed for predictions)")
    assert primary.instance_type is not None and secondary.instance_type is not None
    # the protocol the cell ran: a scenario may switch it for the cell (scenarios/test_protocols.py)
    chosen = protocol or spec.protocol or pair.protocol
    if chosen not in get_args(ReplicationProtocol):
        raise ConfigError(f"{spec.id}: unknown DRBD protocol {chosen!r}")
    scenario = Scenario(
        primary=SizedNode(primary.instance_type, _volume(primary.volume)),
        peer=SizedNode(secondary.instance_type, _volume(secondary.volume)),
        workload=model_workload(spec.workload, issued_bs),
        replicate=spec.mode == "replicated",
        placement=inventory.placement(spec.pair),
        protocol=chosen,  # type: ignore[arg-type]  # checked above
        calibration=_calibration(calibration, spec, rtt_ms),
    )
    return _summarise(predict(scenario, catalog))


def _summarise(prediction: Prediction) -> CellPrediction:
    binding = prediction.binding
    return CellPrediction(
        bw_mib_s=prediction.bw / MIB,
        iops=prediction.iops,
        latency_ms=prediction.latency_s * 1e3,
        bottleneck=binding.key,
        bottleneck_label=binding.label,
        detail=binding.detail,
    )


def _issued_bs(values: dict[str, float]) -> int | None:
    """Mean bytes per I/O the cell issued (its MiB/s over its IOPS), when it did any I/O."""
    iops, bw = values.get("iops", 0.0), values.get("bw", 0.0)
    return round(bw * MIB / iops) if iops > 0 and bw > 0 else None


class CellPredictor:
    """Calibrates each pair once (before its first predicted cell) and predicts its cells.

    A cell is predicted when it writes, is not itself a calibration or a data-loss oracle
    (verify jobs), and the catalog knows the inventory's instance and volume types; otherwise
    :meth:`annotate` adds nothing and :attr:`skipped` says why (once per reason).
    """

    def __init__(
        self,
        runner: CellRunner,
        profile: Profile,
        catalog: Catalog | None,
        *,
        why_not: str = "",
        store: CalibrationStore | None = None,
    ) -> None:
        self.runner = runner
        self.profile = profile
        self.catalog = catalog
        self.store = store  # calibrations kept across runs (None: measure in every run)
        self.skipped: dict[str, str] = {} if catalog is not None else {"*": why_not or "no catalog"}

    def wants(self, spec: CellSpec) -> bool:
        return (
            self.catalog is not None
            and spec.scenario != CALIBRATION_SCENARIO
            and spec.workload.is_write
            and spec.workload.verify is None
            and spec.pair not in self.skipped
        )

    def before(self, spec: CellSpec) -> None:
        """Calibrate the cell's pair if it was not yet (these are cells of their own)."""
        if self.wants(spec):
            calibrate_pair(self.runner, spec.pair, self.profile, full=True, store=self.store)

    def annotate(
        self, spec: CellSpec, rtt: RttStats | None, values: dict[str, float]
    ) -> tuple[dict[str, float], dict[str, Any]]:
        """The cell runner's :data:`~harness.cell.Annotator`: prediction values and metadata."""
        if not self.wants(spec) or self.catalog is None:
            return {}, {}
        calibration = calibrate_pair(self.runner, spec.pair, self.profile, full=True, store=self.store)
        try:
            prediction = predict_cell(
                self.runner.inventory,
                self.catalog,
                spec,
                calibration,
                rtt_ms=model_rtt_ms(spec, calibration, rtt),
                issued_bs=_issued_bs(values),
            )
        except ConfigError as exc:
            self.skipped[spec.pair] = str(exc)
            self.runner.progress(f"no predictions for {spec.pair}: {exc}")
            return {}, {}
        values, meta = prediction.annotation(values["bw"])
        meta["calibration"] = calibration.source
        return values, meta
