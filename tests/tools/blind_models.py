"""What the blind models' tests share: their recordings rendered and read back, a perfect
detector, and how a generator's command line answers.

The framing is the host's own (``hostapp.protocol.FrameDecoder``: one
implementation per language); the message layouts of contracts.md are
unpacked here, apart from the host's codec, so that a test of a generator
checks its bytes against the contract and not against our reading of it.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import FrameDecoder


@dataclass
class Stream:
    """A decoded recording: messages in order, and the sensor data in stream seconds."""

    msgs: list[tuple[int, int, bytes]] = field(default_factory=list)
    bad_frames: list[int] = field(default_factory=list)  # indices of frames that failed
    damaged: int = 0  # frames the host's decoder found damaged (COBS, CRC, cut)
    hello: dict[str, Any] = field(default_factory=dict)
    raw_t_us: list[tuple[int, int]] = field(default_factory=list)  # (type, t_us) in order
    pz_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pz: np.ndarray = field(default_factory=lambda: np.zeros((0, 8)))
    pz_sizes: list[int] = field(default_factory=list)
    ld_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ld_valid: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    ld: np.ndarray = field(default_factory=lambda: np.zeros((0, 8)))
    status: list[tuple[int, int]] = field(default_factory=list)  # (uptime_ms, load_timeouts)

    def piezo(self, t0: float, t1: float) -> np.ndarray:
        return self.pz[(self.pz_t >= t0) & (self.pz_t < t1)]

    def load(self, ch: int, t0: float, t1: float) -> np.ndarray:
        """Channel ``ch``'s valid readings in ``[t0, t1)``, counts."""
        sel = (self.ld_t >= t0) & (self.ld_t < t1) & ((self.ld_valid >> ch) & 1 == 1)
        return self.ld[sel, ch]

    def load_g(self, ch: int, t0: float, t1: float, cpg: float) -> np.ndarray:
        """The same in grams, for a cell of ``cpg`` counts per gram."""
        return self.load(ch, t0, t1) / cpg


def decode_stream(raw: bytes) -> Stream:
    """A recording's messages, framed by the host's decoder, with its sensor data read."""
    s = Stream()
    assert raw.endswith(b"\x00"), "the stream ends with a delimiter"
    decoder = FrameDecoder()  # contracts.md's COBS and CRC, as the host reads them
    s.msgs = [(typ, seq, bytes(body)) for typ, seq, body in decoder.feed_raw(raw)]
    s.damaged = decoder.stats.damaged_frames
    assert all(3 + len(body) + 2 <= 254 for _, _, body in s.msgs)
    return read_messages(s)


def read_messages(s: Stream) -> Stream:
    """Fill ``s``'s HELLO, sensor data and STATUS from its messages (``s.msgs``)."""
    hellos = [body for typ, _, body in s.msgs if typ == 0x01]
    assert len(hellos) == 1 and len(hellos[0]) == 19
    f = struct.unpack_from("<BBBBBBHHB", hellos[0])
    s.hello = {"proto": f[0], "fw": f[1:4], "n_piezo": f[4], "n_load": f[5],
               "piezo_rate_hz": f[6], "load_rate_hz": f[7], "adc_bits": f[8],
               "device_id": hellos[0][11:19]}
    pz_t, pz_x, ld_t, ld_v, ld_x = [], [], [], [], []
    t0: int | None = None
    last: int | None = None
    wraps = 0
    for typ, _, body in s.msgs:
        if typ == 0x04:
            up, _, _, timeouts, _, _ = struct.unpack("<IHHHBB", body)
            s.status.append((up, timeouts))
            continue
        if typ not in (0x02, 0x03):
            continue
        t_us = struct.unpack_from("<I", body)[0]
        s.raw_t_us.append((typ, t_us))
        if last is not None and t_us < last and last - t_us > 2**31:
            wraps += 1
        last = t_us
        u = t_us + wraps * 2**32
        if t0 is None:
            t0 = u
        if typ == 0x02:
            n = body[4]
            assert 1 <= n <= 14 and len(body) == 5 + 16 * n
            pz_t.append((u - t0) / 1e6 + np.arange(n) / s.hello["piezo_rate_hz"])
            pz_x.append(np.frombuffer(body[5:], "<u2").reshape(n, 8))
            s.pz_sizes.append(n)
        else:
            assert len(body) == 5 + 24
            vals = []
            for k in range(8):
                v = int.from_bytes(body[5 + 3 * k:8 + 3 * k], "little")
                vals.append(v - 2**24 if v >= 2**23 else v)
            ld_t.append((u - t0) / 1e6)
            ld_v.append(body[4])
            ld_x.append(vals)
    s.pz_t = np.concatenate(pz_t)
    s.pz = np.concatenate(pz_x).astype(float)
    s.ld_t = np.array(ld_t)
    s.ld_valid = np.array(ld_v, int)
    s.ld = np.array(ld_x, float).reshape(-1, 8)
    return s


def perfect_events(truth: dict[str, Any]) -> list[dict[str, Any]]:
    """What a perfect detector would print for this truth."""
    ev: list[dict[str, Any]] = []
    for x in truth["landings"]:
        e = {"event": "landing", "t": x["t"], "t_decided": x["t"] + 0.3, "floor": x["floor"],
             "cubes": 1, "confidence": 1.0}
        if x["knocked"]:
            e["knocked_from"] = x["knocked_from"]
        ev.append(e)
    ev += [{"event": "lift", "t": x["t"], "t_decided": x["t"] + 0.1, "exposed": x["exposed"]}
           for x in truth["lifts"]]
    ev += [{"event": "closed", "t": x["t"], "t_decided": x["t"] + 0.1} for x in truth["closes"]]
    ev += [{"event": "removal", "t": x["t"], "t_decided": x["t"] + 0.2, "floor": x["floor"],
            "cubes": x["cubes"], "confidence": 1.0} for x in truth["removals"]]
    ev += [{"event": "disturbance", "t": x["t"], "t_decided": x["t"] + 0.1}
           for x in truth["knocks"]]
    return sorted(ev, key=lambda e: e["t_decided"])


def exit_and_stderr(main: Callable[[list[str]], int], argv: list[str],
                    capsys: Any) -> tuple[int | str | None, str]:
    """A generator's exit code for ``argv`` (argparse's own exit too) and its stderr."""
    try:
        code: int | str | None = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@dataclass
class Recording:
    """A scene rendered: the scene, its bytes, its truth, and the stream read back."""

    sc: Any
    raw: bytes
    truth: dict[str, Any]
    d: Stream


def rendered(model: Any, scene: Any,
             decode: Callable[[bytes], Stream] = decode_stream) -> Recording:
    """``model.render(scene)``, read back by ``decode``."""
    raw, truth = model.render(scene)
    return Recording(scene, raw, truth, decode(raw))


def script_and_function_agree(script: Path, main: Callable[[list[str]], int], args: list[str],
                              tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run a generator as a script and as a function with ``args`` (less ``--out``).

    Both must succeed and write the same bytes, every recording with its
    truth; returns the script's process and the folder it wrote.
    """
    out1, out2 = tmp_path / "a", tmp_path / "b"
    proc = subprocess.run([sys.executable, str(script), "--out", str(out1), *args],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert main(["--out", str(out2), *args]) == 0
    for p in out1.iterdir():  # the script and the function write the same bytes
        assert p.read_bytes() == (out2 / p.name).read_bytes()
        if p.suffix == ".bin":
            assert p.with_name(p.name.replace(".bin", ".truth.json")).exists()
    return proc, out1


def assert_the_shell_gets_one_line(script: Path, tmp_path: Path) -> None:
    """An unknown scenario from the shell: exit 2, one line naming it, nothing written."""
    proc = subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "o"),
                           "--scenarios", "long"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "unknown scenario 'long'" in proc.stderr and not (tmp_path / "o").exists()


def assert_an_unusable_folder_is_one_line(main: Callable[[list[str]], int], tmp_path: Path,
                                          capsys: Any) -> None:
    """An ``--out`` that cannot be made (a file in the way), then a recording that cannot be
    written (a folder in its place): exit 2 and one line each."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["--out", str(blocker / "o"), "--duration", "15"]) == 2
    err = capsys.readouterr().err
    assert "cannot create" in err and err.count("\n") == 1
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "single_t1.bin").mkdir()  # a folder where the recording should go
    assert main(["--out", str(ro), "--towers", "1", "--duration", "15",
                 "--scenarios", "single"]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and err.count("\n") == 1


# Arguments a generator's command line must refuse, and what its one line says.
BAD_COMMAND_LINES = [
    (["--scenarios", "single", "bogus"], "unknown scenario 'bogus'"),
    (["--towers", "0"], "--towers must be at least 1"),
    (["--duration", "5"], "--duration must be at least 15 seconds"),
    (["--towers", "many"], "invalid int value"),
    (["--duration", "nan"], "--duration must be at least 15 seconds"),
    (["--duration", "inf"], "--duration must be at least 15 seconds"),
    (["--duration", "soon"], "invalid float value"),
    (["--first-seed", "-1"], "--first-seed must not be negative"),
]


def assert_refused_in_one_line(main: Callable[[list[str]], int], args: list[str], says: str,
                               tmp_path: Path, capsys: Any) -> None:
    """``args`` (one of ``BAD_COMMAND_LINES``): exit 2, one line with ``says``, nothing written."""
    out = tmp_path / "o"
    code, err = exit_and_stderr(main, ["--out", str(out), *args], capsys)
    assert code == 2 and says in err and err.count("\n") == 1, err
    assert not out.exists()


def assert_truth_is_what_the_scorer_reads(score: Any, truths: dict[str, dict[str, Any]],
                                          model: str, seed: int,
                                          durations: dict[str, float], tmp_path: Path) -> None:
    """Each scenario's truth read by the scorer (``score``: tools/crosscheck/score.py).

    A perfect detector scores every throw, knock-down, lift, close, removal and
    knock right (single throws and games one throw at a time, as the game takes
    them); one that tells nothing scores nothing; a truth without lifts is refused.
    """
    for name, truth in truths.items():
        path = tmp_path / f"{name}_t{seed}.truth.json"
        path.write_text(json.dumps(truth))
        doc = score.read_truth(path)
        assert doc["format"] == "towerear-crosscheck-truth/1" and doc["model"] == model
        assert (doc["scenario"], doc["seed"], doc["duration_s"]) == (name, seed, durations[name])
        for kind in score.TRUTH_EVENT_KINDS:
            assert all(isinstance(x["t"], float) for x in doc[kind])
        assert all(x["cubes"] == 1 and 0 <= x["floor"] <= 7 for x in doc["landings"])
        res = score.score_one(doc, score.DetectRun(perfect_events(doc), 0, 1.0), tolerance_s=0.5)
        n_throws = sum(not x["knocked"] for x in doc["landings"])
        assert res["right"] == res["cubes_right"] == res["n_truth"] == n_throws > 0
        assert res["false"] == 0 and res["knocked_found"] == res["n_knocked"]
        assert res["game_right"] + res["game_wrong"] == n_throws and res["game_by_hand"] == 0
        if name in ("single", "game"):  # one throw at a time: the game takes each for its own
            assert res["game_right"] == n_throws
        assert res["lifts_exposed_right"] == res["lifts"]
        assert res["closes_found"] == res["closes"]
        assert res["removals_right"] == res["removals"]
        assert res["knocks_flagged"] == res["knocks"]
        # a detector that misses everything scores nothing: the check can fail
        none = score.score_one(doc, score.DetectRun([], 0, 1.0), tolerance_s=0.5)
        assert none["right"] == 0 and none["missed"] == n_throws
    bad = tmp_path / "bad.truth.json"
    bad.write_text(json.dumps({k: v for k, v in truths["single"].items() if k != "lifts"}))
    with pytest.raises(ValueError, match="lacks lifts"):
        score.read_truth(bad)
