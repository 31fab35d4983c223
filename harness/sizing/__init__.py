"""Pre-sales sizing: a catalog of published cloud limits and a model that names the binding one.

The rooms, each standing only on those listed before it:

* ``catalog``: the published figures: the YAML files (AWS, Google Cloud, Azure), their records,
  loading and merging a user's own catalog, which cloud a name belongs to, and where each figure
  comes from;
* ``scenario``: the question: workload, nodes, volumes, placement, calibration, and their text forms;
* ``volumes``: what a volume of a catalog type delivers at the size and IOPS a user chose;
* ``limits``: every limit on the write path (storage, network, TCP, CPU), built by one builder,
  and the closed loop of synchronous writes that queue at them;
* ``model``: the prediction: the limits assembled, the latency bound, the phases as credit
  buckets drain, the answer and the pair's cost;
* ``answer``: which instance types meet a requirement, and the answer in table and words.

The ``harness sizing`` command itself is :mod:`harness.cli.sizing` (with :mod:`harness.cli.catalog`).
"""
