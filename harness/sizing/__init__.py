"""Pre-sales sizing: a catalog of published cloud limits and a model that names the binding one.

``catalog`` loads and validates the limits (data in ``catalog.yaml``; its records are
``records``, ``volume_types`` and ``instance_types``), ``model`` predicts throughput, IOPS and
latency of a replicated (or plain) volume from them (its docstring maps the parts, from
``inputs`` to ``search``), ``explain`` turns a prediction into a table and plain language, and
``cli`` is the ``harness sizing`` command.
"""

from harness.sizing.catalog import Catalog, load_builtin_catalog, load_catalog
from harness.sizing.inputs import Calibration, NodeSpec, Scenario, VolumeSpec, Workload
from harness.sizing.model import predict
from harness.sizing.prediction import Prediction

__all__ = [
    "Calibration",
    "Catalog",
    "NodeSpec",
    "Prediction",
    "Scenario",
    "VolumeSpec",
    "Workload",
    "load_builtin_catalog",
    "load_catalog",
    "predict",
]
