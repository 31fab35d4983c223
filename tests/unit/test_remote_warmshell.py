"""The warm shell's framing: what a command printed comes back byte for byte, with its exit
code, whatever it printed (marks of other commands included), and nothing is taken as the end
before the end has arrived."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.remote.warmshell import Framing

FRAMING = Framing("0123456789abcdef")


def _shell_stdout(framing: Framing, printed: bytes, code: int) -> bytes:
    """What `sh` writes for the wrapped command: its output, then the mark after a newline."""
    return printed + f"\n{framing.mark}:{code}\n".encode()


def _shell_stderr(framing: Framing, printed: bytes) -> bytes:
    return printed + f"\n{framing.mark}\n".encode()


@given(st.binary(max_size=300), st.integers(0, 255))
def test_stdout_and_exit_code_come_back_exactly(printed: bytes, code: int) -> None:
    assert FRAMING.stdout_end(_shell_stdout(FRAMING, printed, code)) == (printed, code)


@given(st.binary(max_size=300))
def test_stderr_comes_back_exactly(printed: bytes) -> None:
    assert FRAMING.stderr_end(_shell_stderr(FRAMING, printed)) == printed


@given(st.binary(max_size=200), st.integers(0, 255), st.data())
def test_no_end_is_seen_before_the_whole_mark_arrived(printed: bytes, code: int, data: st.DataObject) -> None:
    whole = _shell_stdout(FRAMING, printed, code)
    cut = data.draw(st.integers(0, len(whole) - 1))
    assert FRAMING.stdout_end(whole[:cut]) is None
    err = _shell_stderr(FRAMING, printed)
    assert FRAMING.stderr_end(err[: data.draw(st.integers(0, len(err) - 1))]) is None


@given(st.binary(max_size=100), st.integers(0, 255))
def test_another_command_s_mark_in_the_output_is_only_output(printed: bytes, code: int) -> None:
    other = Framing("fedcba9876543210")
    spoof = _shell_stdout(other, printed, 7)
    assert FRAMING.stdout_end(spoof) is None
    assert FRAMING.stdout_end(_shell_stdout(FRAMING, spoof, code)) == (spoof, code)


def test_the_wrapped_command_reads_dev_null_and_reports_its_own_exit_code() -> None:
    text = FRAMING.wrap("sudo -n -- timeout --kill-after=5 10 cat").decode()
    assert text.startswith("{ sudo -n -- timeout --kill-after=5 10 cat\n} </dev/null; ")
    assert f"printf '\\n{FRAMING.mark}:%s\\n' $?;" in text
    assert text.endswith(f"printf '\\n{FRAMING.mark}\\n' >&2\n")


def test_every_framing_has_its_own_token() -> None:
    assert len({Framing().token for _ in range(50)}) == 50
