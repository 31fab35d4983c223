"""What an impairment of the replication path is: delay, jitter, loss, a rate cap, and where.

A :class:`NetemProfile` is pure data, validated when it is built, plus the sizes that follow
from it (netem queue ``limit``, tbf ``burst`` and queue time); :mod:`harness.impair.lint`
holds it against DRBD's own timeouts.  It knows nothing about interfaces, addresses or ``tc`` syntax; see
:mod:`harness.impair.commands` for that.

**Delay semantics (read this once).**  ``delay_s`` is the *one-way* delay netem adds on the
egress of every node the profile applies to.  netem only delays what a node *sends*, so:

* ``direction="both"``: both nodes delay what they send to the peer, the round trip grows by
  ``2 * delay_s``;
* ``direction="primary"`` / ``"secondary"``: only that node's egress is delayed, the round
  trip grows by ``delay_s``.

:attr:`NetemProfile.added_rtt_s` gives the resulting round-trip growth and
:meth:`NetemProfile.from_rtt` builds a profile from the RTT you want to add.  ``jitter_s``,
``loss_pct`` and ``rate_bits`` are likewise per impaired egress.

**Jitter distribution.**  ``None`` and ``"uniform"`` both mean: no ``distribution`` argument,
so the kernel draws uniformly from ``delay ± jitter`` (sch_netem's ``tabledist()`` falls back
to uniform when no table was loaded).  tc-netem(8) claims the default is normal; the
iproute2 6.1 parser only loads a table when ``distribution`` is given, and Debian ships no
``uniform.dist`` (only normal, pareto, paretonormal, experimental), so ``distribution
uniform`` would fail.  Note that iproute2 never prints the distribution back, so it cannot
be verified by read-back.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, get_args

from harness.errors import ConfigError
from harness.units import UnitError, format_duration, format_rate_bits, parse_duration, parse_rate_bits

__all__ = [
    "BDP_HEADROOM",
    "DEFAULT_HZ",
    "DEFAULT_LINK_RATE_BITS",
    "DEFAULT_MTU",
    "NETEM_DEFAULT_LIMIT",
    "Direction",
    "Distribution",
    "NetemProfile",
    "Role",
    "finite_number",
]

Distribution = Literal["normal", "pareto", "paretonormal", "uniform"]
Direction = Literal["both", "primary", "secondary"]
Role = Literal["primary", "secondary"]

# netem's own default queue length (packets); a limit below it is never useful.
NETEM_DEFAULT_LIMIT = 1000
# Queue headroom over the bandwidth-delay product: netem's limit >= 1.5 * R * D / MTU packets,
# so netem does not tail-drop what the link can deliver into it while it holds the delay.
BDP_HEADROOM = 1.5
# Assumed line rate of the replication NIC when sizing netem's queue; a 10 Gbit/s guess
# over-sizes the queue for slower links, which costs nothing (the limit is a cap, not memory
# reserved up front), whereas under-sizing it tail-drops and measures TCP collapse.
DEFAULT_LINK_RATE_BITS = 10e9
DEFAULT_MTU = 1500
# The lab guests' kernel is built with CONFIG_HZ=100 (user-mode-linux config.gz); tbf needs
# at least one tick's worth of tokens (rate / HZ) or it cannot reach its rate.
DEFAULT_HZ = 100

# A single TCP flow needs about one round trip of queue at the bottleneck to fill it; the
# floor covers the base RTT of real (multi-AZ) links, which the profile does not know.
TBF_MIN_LATENCY_S = 0.02

# Bounds that keep every derived number inside what tc and the kernel can represent
# (netem ticks and tbf limits are 32-bit) while being far beyond any sensible experiment.
MAX_DELAY_S = 60.0
MAX_RATE_BITS = 100e9
MIN_RATE_BITS = 8e3  # 1 kB/s: tc converts to whole bytes per second
MIN_TIME_S = 1e-6  # tc's time unit is the microsecond
MIN_LOSS_PCT = 1e-6  # finer than netem's 2**-32 resolution is meaningless
_U32_MAX = 2**32 - 1

_NAME_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_DISTRIBUTIONS: tuple[str, ...] = get_args(Distribution)
_DIRECTIONS: tuple[str, ...] = get_args(Direction)


def finite_number(name: str, value: object) -> float:
    """``value`` as a float, refused with a ConfigError naming ``name`` unless a finite number."""
    # bool is an int subclass; "delay_s=True" is a bug, not one second.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ConfigError(f"{name} must be finite, got {value!r}")
    return number


@dataclass(frozen=True)
class NetemProfile:
    """A validated impairment of the replication path (see the module docstring for semantics).

    Raises :class:`~harness.errors.ConfigError` on construction for negative or non-finite
    values, ``jitter_s > delay_s``, ``loss_pct`` outside 0..100, a distribution without
    jitter, an unknown direction or distribution, or values beyond what tc can represent.
    """

    name: str
    delay_s: float = 0.0
    jitter_s: float = 0.0
    distribution: Distribution | None = None
    loss_pct: float = 0.0
    rate_bits: float | None = None
    direction: Direction = "both"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(
                f"impairment name must be 1-64 characters of letters, digits, '_', '.', '-' "
                f"(starting with a letter or digit), got {self.name!r}"
            )
        where = f"impairment {self.name!r}"
        delay = finite_number(f"{where}: delay_s", self.delay_s)
        jitter = finite_number(f"{where}: jitter_s", self.jitter_s)
        loss = finite_number(f"{where}: loss_pct", self.loss_pct)
        rate = None if self.rate_bits is None else finite_number(f"{where}: rate_bits", self.rate_bits)
        _check_times(where, delay, jitter)
        self._check_distribution(where, jitter)
        _check_loss(where, loss)
        if rate is not None and not MIN_RATE_BITS <= rate <= MAX_RATE_BITS:
            raise ConfigError(
                f"{where}: rate must be between {format_rate_bits(MIN_RATE_BITS)} and "
                f"{format_rate_bits(MAX_RATE_BITS)}, got {rate:g} bit/s"
            )
        if self.direction not in _DIRECTIONS:
            raise ConfigError(f"{where}: direction must be one of {', '.join(_DIRECTIONS)}, got {self.direction!r}")
        # Normalise ints to floats so equal profiles compare and hash equal.
        object.__setattr__(self, "delay_s", delay)
        object.__setattr__(self, "jitter_s", jitter)
        object.__setattr__(self, "loss_pct", loss)
        object.__setattr__(self, "rate_bits", rate)
        # Fail at build time, not at apply time, if the derived tbf sizes cannot be expressed.
        self.tbf_limit_bytes()

    def _check_distribution(self, where: str, jitter: float) -> None:
        if self.distribution is not None and self.distribution not in _DISTRIBUTIONS:
            raise ConfigError(
                f"{where}: distribution must be one of {', '.join(_DISTRIBUTIONS)} or unset, got {self.distribution!r}"
            )
        if self.distribution is not None and jitter == 0:
            # tc refuses it too: "distribution specified but no latency and jitter values".
            raise ConfigError(f"{where}: a jitter distribution needs a non-zero jitter")

    # -- constructors -----------------------------------------------------------------------

    @classmethod
    def from_rtt(
        cls,
        name: str,
        rtt_s: float,
        *,
        jitter_s: float = 0.0,
        distribution: Distribution | None = None,
        loss_pct: float = 0.0,
        rate_bits: float | None = None,
        direction: Direction = "both",
    ) -> NetemProfile:
        """A profile that adds ``rtt_s`` to the round trip: half on each egress for ``both``,
        all of it on one egress otherwise.  ``jitter_s`` stays per impaired egress."""
        rtt = finite_number(f"impairment {name!r}: rtt_s", rtt_s)
        if rtt < 0:
            raise ConfigError(f"impairment {name!r}: rtt_s must not be negative, got {rtt:g}")
        delay = rtt / 2 if direction == "both" else rtt
        return cls(
            name=name,
            delay_s=delay,
            jitter_s=jitter_s,
            distribution=distribution,
            loss_pct=loss_pct,
            rate_bits=rate_bits,
            direction=direction,
        )

    @classmethod
    def from_text(
        cls,
        name: str,
        *,
        delay: str | float = 0.0,
        jitter: str | float = 0.0,
        loss: str | float = 0.0,
        rate: str | None = None,
        distribution: Distribution | None = None,
        direction: Direction = "both",
    ) -> NetemProfile:
        """Build from the strings people write (``delay="20ms"``, ``loss="0.1%"``,
        ``rate="128mbit"``), using :mod:`harness.units`; unit errors become ConfigError."""
        where = f"impairment {name!r}"
        try:
            delay_s = parse_duration(delay)
            jitter_s = parse_duration(jitter)
            rate_bits = None if rate is None else parse_rate_bits(rate)
        except UnitError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        loss_pct = _parse_loss(where, loss)
        return cls(
            name=name,
            delay_s=delay_s,
            jitter_s=jitter_s,
            distribution=distribution,
            loss_pct=loss_pct,
            rate_bits=rate_bits,
            direction=direction,
        )

    # -- where it applies -------------------------------------------------------------------

    def applies_to(self, role: Role) -> bool:
        """Whether the node in ``role`` gets the impairment on its replication egress."""
        return self.direction in ("both", role)

    @property
    def impaired_directions(self) -> int:
        """How many one-way legs of the round trip are impaired (2 for ``both``)."""
        return 2 if self.direction == "both" else 1

    @property
    def added_rtt_s(self) -> float:
        """Mean round-trip growth: ``2 * delay_s`` for ``both``, ``delay_s`` otherwise."""
        return self.delay_s * self.impaired_directions

    @property
    def added_rtt_max_s(self) -> float:
        """Worst-case round-trip growth from netem alone: delay plus full jitter on each leg."""
        return (self.delay_s + self.jitter_s) * self.impaired_directions

    # -- derived sizes ----------------------------------------------------------------------

    def limit_packets(self, link_rate_bits: float = DEFAULT_LINK_RATE_BITS, mtu: int = DEFAULT_MTU) -> int:
        """netem ``limit`` (packets) for this profile: ``>= 1.5 * R * D / MTU``, at least 1000.

        ``D`` is the longest time a packet stays in netem (``delay + jitter``).  ``R`` is the
        rate packets can *arrive* at: the link rate, or the profile's rate if that is higher.
        The profile's rate alone is not enough because the harness shapes with tbf *after*
        netem, so netem sees the sender's line-rate bursts; occupancy is bounded by arrival
        rate times time in queue, and an over-sized limit costs nothing.
        """
        link = finite_number("link_rate_bits", link_rate_bits)
        if link <= 0:
            raise ConfigError(f"link_rate_bits must be positive, got {link_rate_bits!r}")
        _check_mtu(mtu)
        arrival_bits = max(link, self.rate_bits or 0.0)
        packets = math.ceil(BDP_HEADROOM * arrival_bits * (self.delay_s + self.jitter_s) / (8 * mtu))
        limit = max(NETEM_DEFAULT_LIMIT, packets)
        if limit > _U32_MAX:
            raise ConfigError(f"impairment {self.name!r}: netem limit {limit} does not fit in 32 bits")
        return limit

    def tbf_burst_bytes(self, hz: int = DEFAULT_HZ, mtu: int = DEFAULT_MTU) -> int | None:
        """tbf ``burst`` (bytes) for the rate cap, or None without one: one timer tick of
        tokens (``rate / HZ``), and never less than two full-size packets."""
        if self.rate_bits is None:
            return None
        _check_hz(hz)
        _check_mtu(mtu)
        return max(math.ceil(self.rate_bits / 8 / hz), 2 * mtu)

    @property
    def tbf_latency_s(self) -> float | None:
        """tbf queue time (its ``latency``), or None without a rate cap: about one round trip
        of the impaired path so one TCP flow can keep the cap busy, at least 20 ms."""
        if self.rate_bits is None:
            return None
        return max(TBF_MIN_LATENCY_S, self.added_rtt_max_s)

    def tbf_limit_bytes(self, hz: int = DEFAULT_HZ, mtu: int = DEFAULT_MTU) -> int | None:
        """The byte limit tc derives from ``latency`` (``rate * latency + burst``); checked to
        fit tbf's 32-bit field, because tc would silently wrap it."""
        burst = self.tbf_burst_bytes(hz, mtu)
        latency = self.tbf_latency_s
        if burst is None or latency is None or self.rate_bits is None:
            return None
        limit = math.ceil(self.rate_bits / 8 * latency) + burst
        if limit > _U32_MAX:
            raise ConfigError(
                f"impairment {self.name!r}: rate {format_rate_bits(self.rate_bits)} with "
                f"{format_duration(latency)} of queue needs {limit} bytes, beyond tbf's 32-bit limit"
            )
        return limit

    # -- presentation -----------------------------------------------------------------------

    def describe(self) -> str:
        """One line for logs and reports, e.g. ``wan: delay 1ms loss 0% rate 128mbit on both ...``."""
        parts = [f"delay {format_duration(self.delay_s)}" if self.delay_s else "delay 0"]
        if self.jitter_s:
            dist = self.distribution or "uniform"
            parts.append(f"jitter {format_duration(self.jitter_s)} {dist}")
        parts.append(f"loss {self.loss_pct:g}%")
        parts.append(f"rate {format_rate_bits(self.rate_bits)}" if self.rate_bits else "rate unlimited")
        rtt = format_duration(self.added_rtt_s)
        return f"{self.name}: {' '.join(parts)} on {self.direction} (added RTT {rtt})"

    def as_metadata(self) -> dict[str, object]:
        """Plain values for sample metadata and ledgers (JSON-serialisable)."""
        return {
            "name": self.name,
            "delay_s": self.delay_s,
            "jitter_s": self.jitter_s,
            "distribution": self.distribution,
            "loss_pct": self.loss_pct,
            "rate_bits": self.rate_bits,
            "direction": self.direction,
            "added_rtt_s": self.added_rtt_s,
        }


def _check_times(where: str, delay: float, jitter: float) -> None:
    if delay < 0 or jitter < 0:
        raise ConfigError(f"{where}: delay and jitter must not be negative (delay {delay}, jitter {jitter})")
    if delay > MAX_DELAY_S:
        raise ConfigError(f"{where}: delay {delay:g}s is beyond the {MAX_DELAY_S:g}s the harness allows")
    for label, value in (("delay", delay), ("jitter", jitter)):
        if 0 < value < MIN_TIME_S:
            # tc takes whole microseconds; a smaller value would silently become 0.
            raise ConfigError(f"{where}: {label} {value:g}s is below tc's resolution of 1us")
    if jitter > delay:
        # netem would clamp negative delays and reorder heavily; it is never what was meant.
        raise ConfigError(f"{where}: jitter ({jitter:g}s) must not exceed delay ({delay:g}s)")


def _check_loss(where: str, loss: float) -> None:
    if not 0 <= loss <= 100:
        raise ConfigError(f"{where}: loss_pct must be between 0 and 100, got {loss:g}")
    if 0 < loss < MIN_LOSS_PCT:
        raise ConfigError(f"{where}: loss_pct {loss:g} is below netem's resolution ({MIN_LOSS_PCT:g}%)")


def _parse_loss(where: str, loss: str | float) -> float:
    if isinstance(loss, str):
        text = loss.strip().removesuffix("%").strip()
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{where}: not a loss percentage: {loss!r} (expected e.g. 0.1%)") from None
    return finite_number(f"{where}: loss", loss)


def _check_mtu(mtu: int) -> None:
    # 68 is IPv4's minimum MTU; 65535 the largest an IPv4 packet can be.
    if isinstance(mtu, bool) or not isinstance(mtu, int) or not 68 <= mtu <= 65535:
        raise ConfigError(f"mtu must be an integer between 68 and 65535, got {mtu!r}")


def _check_hz(hz: int) -> None:
    if isinstance(hz, bool) or not isinstance(hz, int) or not 10 <= hz <= 10000:
        raise ConfigError(f"hz must be an integer between 10 and 10000, got {hz!r}")
