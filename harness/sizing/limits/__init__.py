"""The limits on a replicated write's path and their credit buckets (:mod:`~harness.sizing.limits.limit`
is the vocabulary and the one builder), per resource: storage, network, TCP transport, CPU; and
the closed loop of synchronous writes through the limits that queue them."""
