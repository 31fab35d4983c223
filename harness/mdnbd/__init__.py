"""md RAID1 over NBD: the replication architecture SIOS DataKeeper for Linux uses."""
