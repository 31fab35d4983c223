"""A device too small for the run's profile: the refusal says which profile fits its disks (the
lab's 2 GiB DRBD device refused every `standard` cell without saying that `quick` fits)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import RefusedError
from harness.fio.profiles import PROFILES, profile_hint
from harness.fio.spec import WorkloadSpec
from harness.safety.device import guard_replicated_device
from harness.units import MIB
from tests.doubles import FakeRunner, recorded_replication
from tests.unit.reliability.support import DRBD0_BYTES, device_probe

BASE = WorkloadSpec(name="w", rw="randwrite", bs=4096, numjobs=4, iodepth=8, size=64 * MIB, offset_increment=64 * MIB)


def test_the_refusal_names_the_profile_that_fits_the_device() -> None:
    node = FakeRunner("a1", batch=device_probe())
    standard = PROFILES["standard"].apply(BASE)
    quick = PROFILES["quick"].apply(BASE).footprint_bytes
    with pytest.raises(RefusedError) as caught:
        guard_replicated_device(
            node,
            recorded_replication(node),
            needed_bytes=standard.footprint_bytes,
            fits=lambda size: profile_hint(standard, size),
        )
    assert (
        f"is {DRBD0_BYTES} bytes, smaller than the {standard.footprint_bytes} bytes the job writes "
        f"(--profile quick fits (its job writes {quick} bytes))"
    ) in str(caught.value)


@given(st.integers(1, 64 << 30))
def test_every_profile_named_fits_and_every_other_does_not(capacity: int) -> None:
    hint = profile_hint(BASE, capacity) or ""
    for name, profile in PROFILES.items():
        fits = profile.apply(BASE).footprint_bytes <= capacity
        assert (f"--profile {name} fits" in hint) == fits
    assert (hint == "") == all(p.apply(BASE).footprint_bytes > capacity for p in PROFILES.values())
