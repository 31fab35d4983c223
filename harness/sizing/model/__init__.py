"""The prediction: a scenario's limits assembled, its latency bound, the phases of a run as
credit buckets drain, and the answer (:func:`harness.sizing.model.predict.predict`) with the pair's cost."""
