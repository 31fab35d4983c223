"""The prediction wing on the measuring side: each pair's calibration cells
(:mod:`~harness.prediction.calibrate`) and the per-cell predictions made from them with the
sizing model (:mod:`~harness.prediction.cellmodel`)."""
