"""DRBD for the harness: state, event streams, run validity, commands and the replication seam.

``events`` parses ``drbdsetup events2`` (8.4 and 9) and folds a stream into ``state``'s frozen
records (which also come from /proc/drbd and ``status --json``); ``validity`` judges a
measurement window from its event stream; ``commands`` holds the only argv lists the harness
runs against DRBD; ``replication`` is the seam scenarios use (DRBD or a plain device);
``config`` parses DRBD's configuration syntax (``drbdsetup show``, ``drbdadm dump``) and
``audit`` judges it for disruptive scenarios.  Dependencies point one way: errors <- state <-
events <- validity <- replication, commands <- replication, and errors <- config <- audit,
commands <- audit.
"""

from harness.drbd.commands import (
    FORBIDDEN_TOKENS,
    DrbdVersion,
    check_resource_name,
    parse_drbdadm_version,
    parse_proc_drbd_version,
)
from harness.drbd.errors import DrbdNotReady, DrbdOutputError
from harness.drbd.events import (
    Diff,
    Event,
    EventFold,
    fold_events,
    format_event,
    parse_event_line,
    parse_events,
    resource_from_events2,
)
from harness.drbd.replication import (
    DrbdReplication,
    EventWatch,
    NoReplication,
    PlainDeviceState,
    ReplicaStatus,
    Replication,
    WatchReport,
)
from harness.drbd.state import (
    Connection,
    Device,
    DrbdadmWords,
    PeerDevice,
    ProcDrbd,
    ProcDrbdMinor,
    ResourceState,
    SyncProgress,
    parse_proc_drbd,
    parse_status_json,
)
from harness.drbd.validity import RunWatch, Verdict, check_capture, check_events

__all__ = [
    "FORBIDDEN_TOKENS",
    "Connection",
    "Device",
    "Diff",
    "DrbdNotReady",
    "DrbdOutputError",
    "DrbdReplication",
    "DrbdVersion",
    "DrbdadmWords",
    "Event",
    "EventFold",
    "EventWatch",
    "NoReplication",
    "PeerDevice",
    "PlainDeviceState",
    "ProcDrbd",
    "ProcDrbdMinor",
    "ReplicaStatus",
    "Replication",
    "ResourceState",
    "RunWatch",
    "SyncProgress",
    "Verdict",
    "WatchReport",
    "check_capture",
    "check_events",
    "check_resource_name",
    "fold_events",
    "format_event",
    "parse_drbdadm_version",
    "parse_event_line",
    "parse_events",
    "parse_proc_drbd",
    "parse_proc_drbd_version",
    "parse_status_json",
    "resource_from_events2",
]
