"""The embedded lab's section of an inventory (``lab:``): what `harness lab up` boots.

Only the lab's inventory has one.  Besides the guests' sizes and the emulated distance between
AZs it says which DRBD the guests run: the UML kernel's own DRBD 8.4, or DRBD 9 modules the
user built for that kernel (``drbd_modules``, or the ``HARNESS_LAB_DRBD_MODULES`` environment
variable, checked before boot by :mod:`harness.lab.drbd9`), and the pairs the lab brings up
only then (``drbd9_pairs``: resources of three nodes need DRBD 9).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from harness.errors import ConfigError
from harness.fields import AbsPath, Duration, FrozenModel, Rate, Size
from harness.impair.profile import NetemProfile
from harness.inventory.pairs import Name, PairSpec
from harness.units import GIB, MIB

__all__ = ["AzLinkSpec", "LabNodeSpec", "LabRoot", "LabSpec"]


class AzLinkSpec(FrozenModel):
    """The emulated distance between AZs in the embedded lab (netem on the router guest)."""

    delay: Duration = Field(0.001, ge=0, le=1.0, description="one-way delay added by the router")
    jitter: Duration = Field(0.0, ge=0, le=1.0)
    rate: Rate | None = None

    @model_validator(mode="after")
    def _netem_can_shape_it(self) -> AzLinkSpec:
        # the router applies it with netem: the same limits as any impairment (rate range, jitter)
        try:
            NetemProfile(name="az-link", delay_s=self.delay, jitter_s=self.jitter, rate_bits=self.rate)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self


#: A lab guest's root filesystem: the host's own (``host``) or a Debian release built with
#: debootstrap and cached (harness.lab.roots).
LabRoot = Literal["host", "bookworm", "bullseye", "trixie"]


class LabNodeSpec(FrozenModel):
    """What one lab node boots with, beyond what ``nodes:`` says of every cluster."""

    root: LabRoot = Field(
        "host", description="root filesystem: the host's own, or a Debian release built once and cached"
    )


class LabSpec(FrozenModel):
    """Present only in the embedded lab's inventory: `harness lab up` boots this."""

    netns: Annotated[StrictStr, Field(pattern=r"^[a-z][a-z0-9-]{0,14}$")] = "hlab"
    state_dir: AbsPath = Path("/run/harness-lab")
    guest_uid: StrictInt = Field(4242, ge=1000, le=65000, description="unprivileged host uid the guests run as")
    guest_memory: Size = Field(256 * MIB, ge=64 * MIB)
    disk_size: Size = Field(2 * GIB, ge=64 * MIB, description="sparse DRBD backing disk per node")
    extra_disks: StrictInt = Field(2, ge=0, le=8, description="additional raw scratch disks per node")
    disk_tmpfs_size: Size = Field(12 * GIB, ge=64 * MIB, description="cap on host RAM the disks may use")
    boot_timeout: Duration = Field(60.0, gt=0)
    host_latency_hold: StrictBool = Field(
        True,
        description="hold the host's CPU wake-up latency at 0 (/dev/cpu_dma_latency) while the lab is up: "
        "steadier small-write latency, at the cost of idle host CPU",
    )
    guest_timer_kick: StrictBool = Field(
        True,
        description="send every guest a SIGALRM every 50 ms: a UML guest that lost its timer expiry "
        "otherwise spins idle and never answers again (see harness.lab.timerkick)",
    )
    pin_pairs: StrictBool = Field(
        True,
        description="run both guests of a replication pair on one host CPU, pairs spread over the CPUs: "
        "a replicated write wakes its peer without a cross-CPU wake-up, and pairs measured at once do not "
        "compete for a CPU",
    )
    az_link: AzLinkSpec = AzLinkSpec()
    drbd_modules: AbsPath | None = Field(
        None,
        description="directory of DRBD 9 modules (drbd.ko, drbd_transport_tcp.ko, ...) built for the lab's "
        "linux.uml; HARNESS_LAB_DRBD_MODULES overrides it; none: the UML kernel's own DRBD 8.4",
    )
    drbd9_pairs: dict[Name, PairSpec] = Field(
        default_factory=dict,
        description="pairs the lab brings up only on DRBD 9 (a resource of three nodes, a diskless tie-breaker); "
        "on DRBD 8.4 they are left out",
    )
    nodes: dict[Name, LabNodeSpec] = Field(
        default_factory=dict, description="per node: its root filesystem (default: the host's root)"
    )

    def root_of(self, node: str) -> LabRoot:
        """The root filesystem ``node`` boots (``host`` unless ``lab.nodes`` says otherwise)."""
        spec = self.nodes.get(node)
        return spec.root if spec is not None else "host"
