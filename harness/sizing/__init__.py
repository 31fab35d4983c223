"""Pre-sales sizing: a catalog of published cloud limits and a model that names the binding one.

``catalog`` loads and validates the limits (data in ``catalog.yaml``, ``catalog-gcp.yaml`` and
``catalog-azure.yaml``; its records are ``records``, ``volume_base``, ``volume_types`` (AWS),
``gcp_disks``, ``azure_disks`` and ``instance_types``; ``provenance`` says where each figure comes
from), ``model`` predicts throughput, IOPS and latency of a replicated (or plain) volume from
them (its docstring maps the parts, from ``inputs`` to ``search``), ``cost`` prices the pair,
``explain`` turns a prediction into a table and plain language, and ``cli`` (with
``catalog_cli``) is the ``harness sizing`` command.
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
