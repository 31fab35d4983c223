"""The doubles' mutation detector, on which every "nothing mutating was sent" assertion of the
reliability tests rests."""

from __future__ import annotations

import shlex

from harness.impair.commands import apply_commands, teardown_commands
from harness.impair.profile import NetemProfile
from tests.doubles import (
    Answer,
    FakeRunner,
    forbidden,
    mutations,
)


def test_the_mutation_detector_sees_real_mutations() -> None:
    """The "nothing mutating was sent" assertions below are only worth something if this holds."""
    node = FakeRunner("a1", scripts=[("", Answer())])
    for argv in [*apply_commands(NetemProfile("p", delay_s=0.001), "vec1", "10.213.1.12"), *teardown_commands("vec1")]:
        node.run_script(shlex.join(argv), timeout=1)
    node.run_script("tc -j qdisc show dev vec1; cat /run/harness/lock/owner.json; kill -0 42", timeout=1)
    assert len(mutations(node)) == 4  # prio, netem, filter added; root deleted; the reads are not
    node.calls.append("drbdadm connect --discard-my-data r0")
    assert len(mutations(node)) == 5 and forbidden(node) == ["drbdadm connect --discard-my-data r0"]
