"""What a volume delivers at a user's size and IOPS choice, per cloud's performance model; the
entry point is :func:`harness.sizing.volumes.rules.volume_performance`."""
