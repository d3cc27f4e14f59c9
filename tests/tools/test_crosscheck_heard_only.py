"""Recordings heard without their load cells: copies with the LOAD messages taken out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from hostapp.protocol.codec import encode_frame
from hostapp.protocol.decoder import FrameDecoder
from hostapp.protocol.messages import Hello, Load, Message, Piezo, Status
from tests.scripts import TOOLS, load_script

heard_only = load_script(TOOLS / "crosscheck" / "heard_only.py", "crosscheck_heard_only")
run_all = load_script(TOOLS / "crosscheck" / "run_all.py", "crosscheck_run_all_heard")


def _stream() -> bytes:
    """HELLO, then PIEZO and LOAD in turn, a STATUS, a damaged frame and a cut last one."""
    piezo = Piezo(t_us=1000, samples=np.full((10, 8), 512, dtype=np.uint16))
    load = Load(t_us=1500, valid=0xFF, values=np.arange(8, dtype=np.int32) * 1000)
    messages: list[Message] = [Hello(), piezo, load, piezo, load, Status(uptime_ms=1), piezo]
    frames = [encode_frame(m, seq) for seq, m in enumerate(messages)]
    broken = bytearray(encode_frame(load, 7))
    broken[4] ^= 0x40  # a bit flipped: its CRC fails
    return b"".join(frames) + bytes(broken) + encode_frame(piezo, 8)[:-3]


@pytest.mark.parametrize("say_no_cells", [True, False])
def test_every_message_but_load_is_kept_and_numbered_without_gaps(say_no_cells: bool) -> None:
    frames = FrameDecoder().feed(heard_only.without_load(_stream(), say_no_cells=say_no_cells))
    assert [type(f.msg).__name__ for f in frames] == ["Hello", "Piezo", "Piezo", "Status", "Piezo"]
    assert [f.seq for f in frames] == [0, 1, 2, 3, 4]
    hello = frames[0].msg
    assert isinstance(hello, Hello)
    assert hello.n_load == (0 if say_no_cells else 8)
    assert hello.n_piezo == 8 and hello.piezo_rate_hz == Hello().piezo_rate_hz
    piezo = frames[1].msg
    assert isinstance(piezo, Piezo) and piezo.t_us == 1000


def test_run_all_scores_each_model_heard_without_its_load_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--sets", str(tmp_path), "--tag", "t", "--models", "A", "--towers", "1",
            "--ranges", "1", "--duration", "30", "--jobs", "1", "--heard-only"]
    assert run_all.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:4] for line in lines[1:3]] == [
        ["A", "1-1", "heard", "rapid"], ["A", "1-1", "heard", "single"]]
    copies = sorted((tmp_path / "a1h").glob("*.bin"))
    assert [c.name for c in copies] == ["rapid_t1.bin", "single_t1.bin"]
    for copy in copies:
        original = tmp_path / "a1" / copy.name
        assert 0 < copy.stat().st_size < original.stat().st_size
        out = copy.with_suffix(".t.jsonl").read_text()
        events = [json.loads(line) for line in out.splitlines()]
        landings = [e for e in events if e["event"] == "landing"]
        assert landings and {e["source"] for e in landings} == {"acoustic"}
    single = next(line for line in lines if " heard single " in line)
    assert float(re.search(r"right +([\d.]+) %", single).group(1)) >= 80.0  # type: ignore[union-attr]
