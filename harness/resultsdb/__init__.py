"""The results database: every finished run's samples, provenance, verdicts and predictions.

SQLite by default (``reports/results.sqlite``), PostgreSQL for a team (``--results-db
postgresql://...``), one schema.  One concept per module:

* :mod:`~.schema`: the tables, as numbered migrations;
* :mod:`~.records`: a run going in (:class:`~.records.RunRecord`) and coming out (:class:`~.records.StoredRun`);
* :mod:`~.store`: the interface and the SQL both backends share; a run is written whole;
* :mod:`~.sqlite`, :mod:`~.postgres`: the two backends;
* :mod:`~.location`: what ``--results-db`` names, and opening it;
* :mod:`~.writer`: the end of a run's write (called by :mod:`harness.plugin.runend`);
* :mod:`~.importer`: existing ``reports/<run>/`` directories in;
* :mod:`~.queries`: a cell's history across runs, for ``harness history`` and the history gate.

NDJSON in ``reports/<run-id>/`` stays each run's own export; the database is built from the
same records.
"""
