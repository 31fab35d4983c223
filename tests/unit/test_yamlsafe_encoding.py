"""Files in another encoding than UTF-8 are refused with the place and the cause (a
Latin-1 or UTF-16 inventory would otherwise end in a UnicodeDecodeError traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import ConfigError
from harness.userfiles.userfile import read_config_text


def test_utf16_names_the_byte_order_mark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("name: lab\n", encoding="utf-16")
    assert main(["inventory", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:1:1: not UTF-8: byte 0xff at offset 0") and "UTF-16 byte-order mark" in err


@given(head=st.text(alphabet="abc: \n", max_size=40), bad=st.sampled_from([b"\xe9", b"\xff", b"\x80", b"\xc3("]))
def test_the_first_bad_byte_is_located(tmp_path_factory: pytest.TempPathFactory, head: str, bad: bytes) -> None:
    path = tmp_path_factory.mktemp("enc") / "f.yaml"
    path.write_bytes(head.encode() + bad + b"\n")
    with pytest.raises(ConfigError) as info:
        read_config_text(path)
    column = len(head) - head.rfind("\n")  # 1-based: rfind is -1 on the first line
    line = head.count("\n") + 1
    assert f":{line}:{column}: not UTF-8: byte 0x{bad[0]:02x} at offset {len(head)}" in str(info.value)
