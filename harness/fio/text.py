"""How fio spells numbers and sizes in option values, ids and messages (pure text)."""

from __future__ import annotations

from harness.units import GIB, KIB, MIB, TIB

__all__ = ["fio_number_text", "fio_size_text"]


def fio_size_text(n: int) -> str:
    """Compact fio-style size for ids and messages: ``4096 -> '4k'``, ``1048576 -> '1m'``.

    Uses the largest power-of-1024 unit that divides ``n`` exactly, so the text is lossless
    (fio reads ``4k`` as 4096 with its default ``kb_base=1024``).
    """
    for suffix, factor in (("t", TIB), ("g", GIB), ("m", MIB), ("k", KIB)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)


def fio_number_text(x: float) -> str:
    """Plain decimal text for fio option values: ``50000000.0 -> '50000000'``, ``99.9 -> '99.9'``.

    ``f"{x:g}"`` would print ``5e+07``, which fio does not read back as the same number.
    """
    return f"{x:.6f}".rstrip("0").rstrip(".")
