"""What the reliability tests share: the smallest inventory, recorded node answers for preflight
and the device guard, and the builders of nodes and runners that answer with them."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import paramiko
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.drbd.replication import BACKING_PROBE, DEVICE_PROBE
from harness.errors import (
    HarnessError,
)
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory
from harness.remote import SshNode
from harness.remote.pool import ConnectionPool
from harness.remote.spec import SshSpec
from harness.safety.preflight import Finding, PreflightReport, run_preflight
from tests.doubles import (
    DRBDADM_VERSION,
    LAB,
    SH_DEV,
    SH_LL_DEV,
    Answer,
    FakePool,
    FakeRunner,
    data,
)

RUN_ID = "20261121-101500-ab12"


OTHER_RUN_ID = "20261121-094500-cd34"


#: The lab's DRBD device size: `size:2097052` KiB in the recorded events2 snapshots.
DRBD0_BYTES = 2097052 * 1024


#: `tc -V` as Debian 12's iproute2 6.1.0 printed it on the CI machine (the lab guests run 6.1.0 too).
TC_VERSION = "tc utility, iproute2-6.1.0, libbpf 1.1.2\n"


#: The smallest valid inventory with the lab's node and pair names (line numbers matter).
MINI = """\
name: mini
nodes:
  a1:
    az: az-a
    ssh: {host: 10.213.0.11, key: /run/harness-lab/keys/lab_key, known_hosts: /run/harness-lab/known_hosts}
    replication: {ip: 10.213.1.11, iface: vec1}
  a2:
    az: az-a
    ssh: {host: 10.213.0.12, key: /run/harness-lab/keys/lab_key, known_hosts: /run/harness-lab/known_hosts}
    replication: {ip: 10.213.1.12, iface: vec1}
pairs:
  single-az:
    primary: a1
    secondary: a2
    resource: single-az
    device: /dev/drbd0
"""


def ip_addr_line(iface: str, ip: str) -> str:
    # constructed: the shape of `ip -o -4 addr show dev X` (iproute2)
    return f"3: {iface}    inet {ip}/24 brd {ip.rsplit('.', 1)[0]}.255 scope global {iface}\\       valid_lft forever\n"


def device_probe(**changes: Answer) -> dict[str, Answer]:
    """Answers of probe_device for the lab's healthy, unused /dev/drbd0 on a1 (recorded sh-dev,
    sh-ll-dev and size; the sysfs/builtin probes print nothing when there is nothing)."""
    answers = {
        "realpath": Answer(f"{SH_DEV}\n"),
        "isblock": Answer(),
        "size": Answer(f"{DRBD0_BYTES}\n"),
        "mounts": Answer(),
        "holders": Answer(),
        "parts": Answer(),
        "blkid": Answer(rc=2),  # blkid -p exits 2 when it finds no signature
        DEVICE_PROBE: Answer(f"{SH_DEV}\n"),
        BACKING_PROBE: Answer(f"{SH_LL_DEV}\n"),
    }
    answers.update(changes)
    return answers


#: `systemctl` where systemd is not PID 1, as it failed on the CI machine (the lab's guests boot
#: without systemd too).
NO_SYSTEMD = Answer(
    rc=1,
    stderr="System has not been booted with systemd as init system (PID 1). Can't operate.\n"
    "Failed to connect to bus: Host is down",
)


#: constructed: `ps -e -o pid=,comm=` (procps) on a lab guest: init, sshd and DRBD's kernel
#: threads, whose names the kernel cuts at 15 characters.
GUEST_PROCESSES = "    1 sh\n    2 kthreadd\n  412 sshd\n  431 drbd_w_single-a\n  433 drbd_r_single-a\n"


#: recorded on a lab guest (no Pacemaker installed): the audit's CIB probe
NO_CIBADMIN = Answer(rc=127, stderr="cibadmin: not installed")


def audit_answers(
    show: str = "drbd/84-drbdsetup-show-defaults-lab.txt", dump: str = "drbd/84-drbdadm-dump-lab.txt"
) -> dict[str, Answer]:
    """A node's answers to the config audit of its one resource (harness.drbd.audit.AuditPlan),
    by default the lab's own (recorded on a1)."""
    return {
        "audit_units": NO_SYSTEMD,
        "audit_processes": Answer(GUEST_PROCESSES),
        "audit_cib": NO_CIBADMIN,
        "audit_show_single_2daz": Answer(data(show)),
        "audit_dump_single_2daz": Answer(data(dump)),
    }


#: `drbdsetup show` recorded on each lab guest (harness.safety.sharedpath.PROBES)
SHOW_ALL = {
    "a1": "drbd/84-drbdsetup-show.txt",
    "a2": "drbd/84-drbdsetup-show-a2.txt",
    "b1": "drbd/84-drbdsetup-show-b1-multi-az.txt",
}


def lab_node(name: str, *, events: str = "drbd/84-events2-now-primary-connected.txt", **changes: Answer) -> FakeRunner:
    """A lab guest for preflight: recorded versions, qdiscs, DRBD state; clean and unlocked."""
    spec = LAB.nodes[name]
    batch = {
        "hostname": Answer(f"{name}\n"),  # the lab's guests are named after their nodes
        "fio": Answer(data("fio/fio-3.33-version.txt")),
        "product": Answer(DRBDADM_VERSION),
        "tc": Answer(TC_VERSION),
        # harness.probes.toolversions.PROBES, recorded on the lab (tests/data/versions/SOURCES.md)
        "v_iperf3": Answer(data("versions/iperf3-3.12-version.txt")),
        "v_ping": Answer(data("ping/iputils-20221126-V.txt")),
        "v_ssh": Answer(stderr=data("versions/openssh-9.2p1-ssh-V.txt")),
        "v_os": Answer(data("versions/os-release-pretty-name-debian12.txt")),
        "v_psched": Answer(data("tc/versions/proc-net-psched.txt")),
        "netem": Answer(),
        "tbf": Answer(),
        "addr": Answer(ip_addr_line(spec.replication.iface, spec.replication.ip)),
        "qdisc": Answer(data("tc/lab/default-root.json")),
        # constructed: $SSH_CONNECTION = client ip, port, server ip (management bridge), port
        "sshconn": Answer(f"10.213.0.1 40022 {spec.ssh.host} 22\n"),
        # recorded, so the offset to this host's clock is large: preflight warns, never blocks
        "clock": Answer(data("versions/date-epoch-ns-lab.txt")),
        **device_probe(),
        **audit_answers(),
        "state": Answer(data(events)),
        # recorded a1 -> a2 (harness.probes.reach.reach_argv)
        "reach": Answer(data("ping/iputils-20221126-reach-reply.txt")),
        # recorded `drbdsetup show` (every resource) on the lab; no corosync.conf on the guests
        "path_drbd": Answer(data(SHOW_ALL.get(name, SHOW_ALL["a1"]))),
        "path_corosync": Answer(),
        # the cell's validity window (harness.cell.certificate): a recorded print of the pressure
        # snippet without PSI, as the lab's guest kernel has none (tests/data/pressure/README.md)
        "pressure": Answer(data("pressure/no-psi/quiet-before.txt")),
    }
    batch.update(changes)
    return FakeRunner(
        name,
        batch=batch,
        scripts=[("/faults/*.json", Answer()), ("owner.json 2>/dev/null ||", Answer())],
    )


def preflight(nodes: dict[str, FakeRunner | HarnessError], inv: Inventory = LAB) -> PreflightReport:
    return run_preflight(inv, cast(ConnectionPool, FakePool(nodes)), pairs=["single-az"])


def finding(report: PreflightReport, node: str, check: str) -> Finding:
    return next(f for f in report.findings if f.node == node and f.check == check)


def new_key() -> tuple[paramiko.PKey, str]:
    pem = (
        Ed25519PrivateKey.generate()
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
        .decode()
    )
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pem)), pem


def client_spec(tmp: Path, port: int, known_hosts: str | None, **kwargs: object) -> tuple[SshSpec, str]:
    _, pem = new_key()
    key = tmp / "id_ed25519"
    key.write_text(pem)
    key.chmod(0o600)
    kh = tmp / "known_hosts"
    if known_hosts is not None:
        kh.write_text(known_hosts)
    spec = SshSpec.model_validate(
        {"host": "127.0.0.1", "port": port, "key": str(key), "known_hosts": str(kh), "connect_timeout": "5s", **kwargs}
    )
    return spec, pem


@dataclass
class _FabricResult:
    exited: int
    stdout: str
    stderr: str


@dataclass
class FakeConnection:
    """Stands in for fabric's Connection inside SshNode: records commands, replies or raises."""

    reply: _FabricResult | BaseException
    commands: list[str] = field(default_factory=list)
    is_connected: bool = True
    closed: bool = False

    def run(self, command: str, timeout: float) -> _FabricResult:
        self.commands.append(command)
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply

    def close(self) -> None:
        self.closed = True
        self.is_connected = False


def sudo_node(tmp_path: Path, reply: _FabricResult | BaseException) -> tuple[SshNode, FakeConnection]:
    spec, _ = client_spec(tmp_path, 22, "", user="ci", sudo=True)
    node = SshNode("n1", spec)
    conn = FakeConnection(reply)
    node._conn = conn
    return node, conn


#: constructed: a real node's answers to SysrqCrasher.prepare (kernel.panic 0 is the kernel's
#: default; 10 is what `sysctl kernel.panic=10` sets; kexec_crash_loaded 0: no kdump kernel).
def crash_node(
    name: str, *, panic: str = "10", kexec: str = "0", trigger: str = "writable", boot: str = ""
) -> FakeRunner:
    return FakeRunner(
        name,
        batch={
            "trigger": Answer(f"{trigger}\n" if trigger else "", rc=0 if trigger else 1),
            "sysrq": Answer("0\n"),  # keyboard sysrq off: does not matter for /proc/sysrq-trigger
            "panic": Answer(f"{panic}\n"),
            "kexec": Answer(f"{kexec}\n"),
            "boot_id": Answer(boot or "6f1c2f1e-3a4b-4c5d-8e9f-0a1b2c3d4e5f\n"),
        },
        scripts=[("/proc/sysrq-trigger", Answer())],
    )


QDISC_T = NetemProfile("t", delay_s=0.001, rate_bits=128e6)  # what made tests/data/tc/lab/harness-t-*.json


PEER = "10.213.1.12"


QSHOW = ("tc", "-j", "qdisc", "show", "dev", "vec1")


FSHOW = ("tc", "-j", "filter", "show", "dev", "vec1", "parent", "4842:")


def tc_node(qdiscs: list[str], filters: list[str]) -> FakeRunner:
    return FakeRunner(
        "a1",
        argv={QSHOW: [Answer(data(f"tc/{q}")) for q in qdiscs], FSHOW: [Answer(data(f"tc/{f}")) for f in filters]},
        scripts=[("", Answer())],
    )
