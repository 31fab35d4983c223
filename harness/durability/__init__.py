"""What each replication configuration can lose: randomized crash trials, the oracle of
acknowledged writes, the loss bound of asynchronous modes, a failing trial's minimal case,
power cuts replayed from a dm-log-writes log, and the durability map they add up to.

Every module here is pure (no node, no lab): the scenario that runs the trials hands them
what it read from the nodes."""
