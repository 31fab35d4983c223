"""Replication-aware HA storage test harness."""
