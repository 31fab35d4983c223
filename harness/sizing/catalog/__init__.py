"""The published cloud figures the model reasons with: ``catalog.yaml`` (AWS),
``catalog-gcp.yaml`` and ``catalog-azure.yaml``, the records that validate them, loading and
merging (:mod:`~harness.sizing.catalog.loader`) and provenance (:mod:`~harness.sizing.catalog.provenance`).
Nothing here computes performance."""
