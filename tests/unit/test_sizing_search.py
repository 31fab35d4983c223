"""``harness sizing search``: the requirement's text forms, exactness against brute force on
generated queries, worked examples checked by hand from the catalog, and its one-line errors."""

from __future__ import annotations

import argparse
import json
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli.sizing import add_arguments, run
from harness.errors import ConfigError
from harness.sizing.catalog.loader import Catalog, load_catalog
from harness.sizing.scenario.question import VolumeSpec
from harness.sizing.search.engine import SearchResult, brute_force, search
from harness.sizing.search.predicate import evaluate
from harness.sizing.search.requirement import SearchRequirement, build_requirement, placed
from harness.sizing.search.space import Candidate, SearchSpace

INSTANCES = (
    "t3.medium",
    "m6i.xlarge",
    "i4i.large",
    "c5.large",
    "m4.large",
    "n2-standard-2",
    "n2-standard-8",
    "Standard_D4s_v5",
    "Standard_D8s_v5",
)


@cache
def catalog() -> Catalog:
    return load_catalog()


def sizing(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    return run(parser.parse_args(list(argv)))


# --- the requirement's text forms -------------------------------------------------------------


@given(st.integers(1, 10**7))
def test_an_iops_rate_reads_back_its_number(iops: int) -> None:
    requirement = build_requirement(rate=f"{iops}iops")
    assert (requirement.rate.kind, requirement.rate.value) == ("iops", iops)


@given(st.integers(1, 10**5), st.sampled_from([("MB/s", 1e6), ("MiB/s", 2**20)]))
def test_a_byte_rate_is_bytes_per_second(number: int, unit: tuple[str, float]) -> None:
    requirement = build_requirement(rate=f"{number}{unit[0]}")
    assert requirement.rate.kind == "bw"
    assert requirement.rate.value == pytest.approx(number * unit[1])


@given(st.integers(1, 5000), st.integers(0, 200), st.integers(1, 64), st.integers(1, 64))
def test_the_floor_is_the_rate_with_headroom_and_the_latency_target(p99_us: int, pct: int, jobs: int, qd: int) -> None:
    requirement = build_requirement(
        rate="1000iops", p99_latency=f"{p99_us}us", headroom_pct=pct, numjobs=jobs, iodepth=qd
    )
    assert requirement.need == pytest.approx(1000 * (1 + pct / 100))
    assert requirement.floor_iops() == pytest.approx(max(requirement.need, jobs * qd / (p99_us * 1e-6)))


@given(st.sampled_from(["0", "0s", "5s", "2m"]))
def test_an_rpo_of_zero_allows_protocol_c_only_and_more_allows_all(rpo: str) -> None:
    requirement = build_requirement(rate="1iops", rpo=rpo)
    assert requirement.protocols == (("C",) if rpo in ("0", "0s") else ("C", "B", "A"))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rate": "15000furlongs"}, "--rate '15000furlongs': unknown rate unit"),
        ({"rate": "-15000iops"}, "--rate IOPS must be positive"),
        ({"rate": "-40MB/s"}, "--rate '-40MB/s'"),
        ({"rate": "1iops", "clouds": "aws,oracle"}, "--cloud 'aws,oracle': unknown cloud oracle"),
        ({"rate": "1iops", "p99_latency": "-5ms"}, "--p99 '-5ms'"),
        ({"rate": "1iops", "protocol": "C", "rpo": "0"}, "give one"),
    ],
)
def test_a_bad_requirement_is_refused_in_one_line(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        build_requirement(**options)  # type: ignore[arg-type]
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_placement_no_cloud_has_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"--placement 'moon-base': no placement of that name"):
        placed(catalog(), build_requirement(rate="1iops", placement="moon-base"), explicit=False)


def test_a_placement_of_one_cloud_is_impossible_on_another_named_one() -> None:
    requirement = build_requirement(rate="1iops", placement="cross-az", clouds="aws,gcp")
    # both clouds know the zone word; a placement that only AWS names is impossible on gcp
    assert placed(catalog(), requirement, explicit=True).clouds == ("aws", "gcp")
    aws_only = build_requirement(rate="1iops", placement="gcp/cross-zone", clouds="aws,gcp")
    with pytest.raises(ConfigError, match="impossible on aws: it exists on gcp only"):
        placed(catalog(), aws_only, explicit=True)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rate", "15000furlongs"], "unknown rate unit"),
        (["--rate=-15000iops"], "must be positive"),
        (["--rate", "1iops", "--cloud", "oracle"], "unknown cloud oracle"),
        (["--rate", "1iops", "--placement", "gcp/cross-zone", "--cloud", "aws"], "impossible on aws"),
    ],
)
def test_the_command_exits_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert sizing("search", *argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert err.count("\n") == 0
    assert err.startswith("harness sizing: error: ")


# --- exact against brute force -----------------------------------------------------------------


def _same(a: SearchResult, b: SearchResult) -> None:
    def key(result: SearchResult) -> tuple[object, ...]:
        return tuple((v.candidate, v.cost.total, v.margin) for v in result.hits), tuple(
            (v.candidate, v.cost.total, v.margin) for v in result.front
        )

    assert key(a) == key(b)
    assert a.searched == b.searched


@st.composite
def queries(draw: st.DrawFn) -> tuple[SearchRequirement, SearchSpace, int]:
    kind = draw(st.sampled_from(["iops", "MB/s"]))
    value = draw(st.integers(50, 40000)) if kind == "iops" else draw(st.integers(5, 600))
    safety = draw(st.sampled_from([{"protocol": "C"}, {"protocol": "A"}, {"rpo": "0"}, {"rpo": "3s"}]))
    requirement = build_requirement(
        rate=f"{value}{kind}",
        bs=draw(st.sampled_from(["4k", "16k", "64k", "1m"])),
        rw=draw(st.sampled_from(["randwrite", "write"])),
        numjobs=draw(st.integers(1, 4)),
        iodepth=draw(st.sampled_from([1, 2, 8, 32])),
        placement=draw(st.sampled_from(["same-zone", "cross-zone", "rtt=0.4ms", "rtt=5ms"])),
        p99_latency=draw(st.sampled_from([None, "2ms", "5ms", "20ms"])),
        mean_latency=draw(st.sampled_from([None, "3ms"])),
        duration=draw(st.sampled_from([None, "10m", "2h"])),
        headroom_pct=draw(st.sampled_from([0.0, 20.0])),
        **safety,
    )
    space = SearchSpace(
        sizes_gib=tuple(draw(st.sets(st.sampled_from([16, 128, 512, 4096]), min_size=1, max_size=2))),
        iops=tuple(draw(st.sets(st.sampled_from([3000, 8000, 16000, 40000]), min_size=1, max_size=2))),
        mib_s=tuple(draw(st.sets(st.sampled_from([125, 500, 1000]), min_size=1, max_size=2))),
        max_stripes=draw(st.integers(1, 3)),
        instance_types=frozenset(draw(st.sets(st.sampled_from(INSTANCES), min_size=1, max_size=3))),
    )
    return requirement, space, draw(st.integers(1, 4))


@settings(max_examples=120, deadline=None)
@given(queries())
def test_the_search_returns_what_brute_force_returns(query: tuple[SearchRequirement, SearchSpace, int]) -> None:
    requirement, space, top = query
    _same(search(catalog(), requirement, space, top), brute_force(catalog(), requirement, space, top))


# --- worked by hand from the catalog ----------------------------------------------------------


def test_gcp_15k_iops_cross_zone_is_five_small_hyperdisks_on_n4_standard_2() -> None:
    """15,000 4 KiB random-write IOPS at QD32, protocol C across zones, p99 under 5 ms, on GCP.

    From catalog-gcp.yaml: n4-standard-2 is $0.0907/h (Karpenter's recorded us-central1 table)
    with a 15,000 IOPS per-VM Hyperdisk cap; N4 takes Hyperdisk only.  Hyperdisk Balanced
    includes 3,000 IOPS and 140 MiB/s (the grid's floor is 3,000 IOPS at 125 MiB/s) at
    $0.08/GiB-month; the grid's smallest size is 8 GiB.  Four give 12,000 IOPS (short), five
    15,000, so volume and VM cap bind together at margin 0.  Cost a month: instances
    2 x 0.0907 x 730 = $132.42; volumes 2 nodes x 5 x 8 GiB x 0.08 = $6.40 (no IOPS or MiB/s
    above what is included); transfer 15,000 x 4,096 B/s = 61.44 MB/s x 2,628,000 s =
    161,464.32 GB x $0.01 (the sender's egress only) = $1,614.64.  Total $1,753.46, below the
    $1,772.76 of three 16 GiB pd-ssd on n2-standard-2, the answer before N4 was in the catalog.
    At the cap, 32 in flight take 32 / 15,000 = 2.13 ms each, below 5 ms.
    """
    requirement = build_requirement(
        rate="15000iops", iodepth=32, placement="cross-zone", p99_latency="5ms", clouds="gcp"
    )
    best = search(catalog(), requirement, SearchSpace(), 1).hits[0]
    assert best.candidate == Candidate("gcp", "n4-standard-2", VolumeSpec("hyperdisk-balanced", 8, 3000, 125, 5), "C")
    assert best.cost.instances == pytest.approx(132.422)
    assert best.cost.volumes == pytest.approx(6.4)
    assert best.cost.transfer == pytest.approx(1614.6432)
    assert best.margin == pytest.approx(0.0, abs=1e-9)
    assert best.mean_latency_s == pytest.approx(32 / 15000)


def test_gcp_15k_iops_on_n2_is_still_three_small_pd_ssd() -> None:
    """The same requirement with N2 alone (no Hyperdisk on N2): n2-standard-2 at $0.097118/h with
    a 15,000 IOPS VM disk cap; pd-ssd gives 6,000 + 30 IOPS/GiB at $0.17/GiB-month.  16 GiB:
    6,480 IOPS; two give 12,960 (short), three 19,440, so the VM cap binds at 15,000.  Instances
    2 x 0.097118 x 730 = $141.79; volumes 2 x 3 x 16 x 0.17 = $16.32."""
    requirement = build_requirement(
        rate="15000iops", iodepth=32, placement="cross-zone", p99_latency="5ms", clouds="gcp"
    )
    space = SearchSpace(instance_types=frozenset({"n2-standard-2", "n2-standard-4", "n2-standard-8", "n2-standard-16"}))
    best = search(catalog(), requirement, space, 1).hits[0]
    assert best.candidate == Candidate("gcp", "n2-standard-2", VolumeSpec("pd-ssd", 16, None, None, 3), "C")
    assert best.cost.instances == pytest.approx(141.79228)
    assert best.cost.volumes == pytest.approx(16.32)


def test_a_stripe_of_four_gp3_volumes_gives_four_times_the_iops_and_price() -> None:
    """4 x gp3 100 GiB at 4,000 IOPS on m6i.xlarge, same AZ, 4 KiB QD64.

    catalog.yaml: gp3 $0.08/GiB-month and $0.005 per IOPS-month above 3,000: one volume is
    100 x 0.08 + 1,000 x 0.005 = $13, the stripe $52, the pair's $104.  The stripe allows
    4 x 4,000 = 16,000 IOPS, but m6i.xlarge's EBS link sustains 6,000 IOPS after its burst:
    the steady state is held to 6,000 (the EBS IOPS limit binds).
    """
    requirement = build_requirement(rate="5000iops", iodepth=64, placement="same-zone", clouds="aws")
    verdict = evaluate(
        Candidate("aws", "m6i.xlarge", VolumeSpec("gp3", 100, 4000, 125, 4), "C"), requirement, catalog()
    )
    assert verdict.cost.volumes == pytest.approx(104.0)
    assert verdict.prediction.limit("primary.volume.iops").iops == pytest.approx(16000)
    assert verdict.prediction.sustained_iops == pytest.approx(6000)
    assert verdict.prediction.phases[-1].bottleneck == "primary.ebs.iops"
    assert verdict.meets and verdict.margin == pytest.approx(0.2)


def test_the_json_answer_splits_the_cost(capsys: pytest.CaptureFixture[str]) -> None:
    code = sizing(
        "search",
        "--rate",
        "15000iops",
        "--iodepth",
        "32",
        "--placement",
        "cross-zone",
        "--p99",
        "5ms",
        "--cloud",
        "gcp",
        "--top",
        "1",
        "--json",
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    best = payload["matches"][0]
    assert best["volume"] == "5xhyperdisk-balanced:8GiB:3000:125"
    parts = best["cost_usd_month"]
    assert parts["total"] == pytest.approx(parts["instances"] + parts["volumes"] + parts["transfer"])
    assert best["p99_source"].startswith("model")
    assert payload["pareto"][0]["volume"] == best["volume"]
