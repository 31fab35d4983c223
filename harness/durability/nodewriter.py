"""The tiny node-side writer of a trial's job: a POSIX shell loop around ``dd`` (lab nodes have
no python3, and fio cannot stamp the harness's sequence numbers), fed by the controller.

The controller streams, per write, one text line ``<seq> <block index>`` then the block's
``bs`` bytes (:func:`job_stream`); the node reads the line with ``read`` (which takes one byte
at a time from a pipe, so it never eats into the block), writes the block with one ``dd`` that
reads exactly ``bs`` bytes (``iflag=fullblock``), and prints the sequence number once ``dd``
has returned: the acknowledgement log, streamed back over SSH so it outlives a crashed node.
``oflag=direct`` bypasses the page cache; ``durable`` adds ``dsync`` so an acknowledged write
is also on stable storage (FUA or a flush), what a power-cut trial must check.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from harness.durability.oracle import AckLogError, WriterSpec
from harness.durability.stamp import block_bytes

__all__ = ["job_stream", "parse_acks", "writer_script"]


def writer_script(spec: WriterSpec, device: str, *, direct: bool = True, durable: bool = False) -> str:
    """The shell loop that writes ``spec``'s blocks from stdin to ``device`` and prints each
    write's sequence number as it completes."""
    flags = [f for f, on in (("direct", direct), ("dsync", durable)) if on]
    oflag = f" oflag={','.join(flags)}" if flags else ""
    dev = shlex.quote(device)
    return (
        "while read -r seq block; do "
        f'dd of={dev} bs={spec.bs} count=1 seek="$block" iflag=fullblock{oflag} conv=notrunc status=none '
        '|| exit 1; echo "$seq"; done'
    )


def job_stream(spec: WriterSpec, *, upto: int | None = None) -> Iterator[bytes]:
    """What the controller writes to the node's stdin, one write at a time, in sequence order."""
    for seq in range(spec.count if upto is None else min(upto, spec.count)):
        offset = spec.offset(seq)
        yield f"{seq} {offset // spec.bs}\n".encode() + block_bytes(spec.trial, seq, offset, spec.bs)


def parse_acks(text: str, spec: WriterSpec) -> list[int]:
    """The acknowledgement log from the writer's output; a line cut short by the crash (the
    last, with no newline) is not an acknowledgement the writer saw complete."""
    lines = text.split("\n")
    complete = lines[:-1]  # the text after the last newline never finished printing
    acks = []
    for number, line in enumerate(complete, 1):
        if not line.strip().isdigit():
            raise AckLogError(f"job {spec.job}: writer output line {number} is not a sequence number: {line[:40]!r}")
        acks.append(int(line))
    return acks
