"""Saved baselines and the comparison of a run against one (the CI gate: slower than before, or not).

Split like pytest-benchmark's storage / compare / display, one concept per module; the
tolerance rules they judge with are :mod:`harness.rules.tolerance`, below the inventory that parses them:

* :mod:`~harness.baseline.compare`: reference cells × current cells → verdict per cell (pure);
* :mod:`~harness.baseline.intervals`: the same for cells repeated until their medians'
  intervals were tight (``--repeat auto``): interval against interval (pure);
* :mod:`~harness.baseline.markdown`: the comparison as Markdown for a pull request;
* :mod:`~harness.baseline.store`: ``reports/baselines/<inventory>/<name>/`` on disk;
* :mod:`~harness.baseline.refs`: what ``RUN_OR_BASELINE`` on the command line refers to;
* :mod:`~harness.baseline.gate`: compare, write ``baseline-compare.md``, exit code (CLI and plugin);
* :mod:`~harness.cli.baseline`: ``harness compare`` and ``harness baseline list|show|save``.

Nothing is re-exported here on purpose: importing one module of the package must not pull the
report and storage code in with it.
"""
