"""The clouds' zone-redundant volumes as comparators: what each carries, with its sources.

Sources (harness/sizing/catalog/zone-redundant.yaml): Google's Hyperdisk Balanced High
Availability page ("up to 100,000 IOPS and 2,400 MiB/s of throughput for a single Hyperdisk
Balanced High Availability volume"; an older copy says 1,200 MiB/s, hence unverified) and
Microsoft's ZRS deployment page (its Japanese edition: ZRS on Premium SSD and Standard SSD only,
not on Premium SSD v2 or Ultra Disks).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.sizing.model.zonal import compare, load_zone_redundant


def _verdicts(iops: float, mib_s: float, cloud: str | None = None) -> dict[str, str]:
    return {row.name: row.verdict for row in compare(iops, mib_s, cloud)}


def test_15000_iops_of_4_kib_fits_hyperdisk_balanced_ha_and_not_premium_ssd_v2_zrs() -> None:
    # 15,000 x 4 KiB = 58.6 MiB/s
    verdicts = _verdicts(15000, 15000 * 4096 / 2**20)
    assert verdicts["gcp/hyperdisk-balanced-high-availability"] == "meets"
    assert verdicts["azure/premium-ssd-v2-zrs"] == "refused"
    assert verdicts["gcp/regional-pd"] == "unknown"


def test_the_per_volume_iops_limit_refuses_and_says_so() -> None:
    (row,) = [row for row in compare(120000, 100) if row.name == "gcp/hyperdisk-balanced-high-availability"]
    assert (row.verdict, row.reason) == ("refused", "120,000 IOPS is above its 100,000 per volume")


def test_every_entry_names_sources_and_conflicting_figures_stay_unverified() -> None:
    table = load_zone_redundant()
    assert all(volume.sources for volume in table.values())
    assert not table["gcp/hyperdisk-balanced-high-availability"].verified
    assert not table["azure/premium-ssd-v2-zrs"].exists


def test_one_cloud_at_a_time() -> None:
    assert set(_verdicts(1000, 10, "azure")) == {"azure/premium-ssd-zrs", "azure/premium-ssd-v2-zrs"}


@given(st.floats(0, 1e6), st.floats(0, 1e5), st.floats(0, 1e6), st.floats(0, 1e5))
def test_a_volume_that_meets_a_rate_meets_every_smaller_one(
    iops: float, mib_s: float, less_iops: float, less: float
) -> None:
    big = _verdicts(iops, mib_s)
    small = _verdicts(min(iops, less_iops), min(mib_s, less))
    assert all(small[name] == "meets" for name, verdict in big.items() if verdict == "meets")


def test_a_negative_rate_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^a required rate must not be negative, got -1 IOPS and 0 MiB/s$"):
        compare(-1, 0)
