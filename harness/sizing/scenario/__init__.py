"""The sizing question (:mod:`~harness.sizing.scenario.question`) and the text forms a user
writes it in (:mod:`~harness.sizing.scenario.notation`)."""
