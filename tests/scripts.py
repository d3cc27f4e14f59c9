"""Helpers for the tests of tools/ scripts: load one by its path (tools/ is a folder of
scripts, not a package), and check an independent generator's wire encoder."""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import (
    DecoderStats,
    Frame,
    FrameDecoder,
    Hello,
    Load,
    Piezo,
    cobs_decode,
    unwrap_t_us,
)

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def load_script(path: Path, name: str) -> ModuleType:
    """Import ``path`` as module ``name`` (registered, as dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def detect_model_l(seed: int, scenario: str, duration_s: float, out: Path) -> dict[str, Any]:
    """Make one cross-check model L recording in ``out``, detect it, and score it."""
    return detect_model("l", seed, scenario, duration_s, out)


def detect_model(
    model: str, seed: int, scenario: str, duration_s: float, out: Path
) -> dict[str, Any]:
    """Make a recording of cross-check model ``model`` ("l", "ag") in ``out``; detect, score it."""
    from hostapp.cli.detect import detect_recording

    gen = load_script(TOOLS / f"crosscheck_{model}" / f"make_recordings_{model}.py",
                      f"crosscheck_{model}_for_detect")
    score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_detect")
    bin_path, truth_path = gen.make_recording(seed, scenario, duration_s, out)
    result = detect_recording(bin_path)
    found: dict[str, Any] = score.score_one(
        score.read_truth(truth_path), score.DetectRun(result.events, 0, 1.0), tolerance_s=0.5
    )
    return found


def check_wire_encoder(gen: ModuleType) -> None:
    """A cross-check generator's own CRC and COBS follow contracts.md and our decoder reads them.

    ``gen`` has ``crc16_ccitt_false``, a second implementation
    ``crc16_ccitt_false_reference`` and ``cobs_encode``.
    """
    assert gen.crc16_ccitt_false(b"123456789") == 0x29B1
    assert gen.crc16_ccitt_false_reference(b"123456789") == 0x29B1
    rng = np.random.default_rng(7)
    samples = [b"", b"\x00", b"\x00\x00", bytes(range(1, 255)), bytes(range(1, 256)),
               b"\x01" * 254 + b"\x00", bytes(range(256))]
    samples += [rng.integers(0, 3, n).astype(np.uint8).tobytes() for n in (1, 9, 120, 254)]
    samples += [rng.integers(0, 256, n).astype(np.uint8).tobytes() for n in (5, 253, 254)]
    for data in samples:
        assert gen.crc16_ccitt_false(data) == gen.crc16_ccitt_false_reference(data)
        encoded = gen.cobs_encode(data)
        assert b"\x00" not in encoded
        assert cobs_decode(encoded) == data


def check_row_encoders(gen: ModuleType, *, delimited: bool = True) -> None:
    """A generator's encoders for many frames at once give, row by row, its one-frame ones' bytes.

    ``gen`` has ``crc16_rows`` and ``cobs_encode_rows`` (rows of equal
    length, as many frames of one kind are encoded together) besides the
    functions :func:`check_wire_encoder` asks for. ``delimited``: each
    encoded row ends in the frame's 0x00.
    """
    rng = np.random.default_rng(3)
    tail = b"\x00" if delimited else b""
    for length in (1, 2, 17, 34, 120, 234, 253):
        for zeros in (0.0, 0.05, 0.6):
            rows = np.where(rng.random((30, length)) < zeros, 0,
                            rng.integers(1, 256, (30, length))).astype(np.uint8)
            encoded, crcs = gen.cobs_encode_rows(rows), gen.crc16_rows(rows)
            for r in range(len(rows)):
                data = rows[r].tobytes()
                assert encoded[r].tobytes() == gen.cobs_encode(data) + tail
                assert int(crcs[r]) == gen.crc16_ccitt_false_reference(data)


def check_truth(
    truth: dict[str, Any], score: ModuleType, *, scenario: str, seed: int, duration_s: float
) -> None:
    """A generator's truth file is what ``tools/crosscheck/score.py`` reads, and consistent.

    Every event falls after the quiet first 4 s and before the end; each
    knocked-down cube has its knock-down and the throw that caused it.
    """
    assert score.TRUTH_KEYS <= truth.keys()
    assert truth["format"] == "towerear-crosscheck-truth/1"
    assert (truth["scenario"], truth["seed"], truth["duration_s"]) == (scenario, seed, duration_s)
    assert truth["cells"] in ("matched", "mixed")
    assert truth["landings"]
    for x in truth["landings"]:
        assert 4.0 <= x["t_first_impact"] <= x["t"] < duration_s
        assert 0 <= x["floor"] <= 7 and x["cubes"] == 1 and isinstance(x["knocked"], bool)
    for kind in ("knockdowns", "removals", "lifts", "closes", "knocks"):
        assert all(4.0 <= x["t"] < duration_s for x in truth[kind])
    n_knocked = sum(x["knocked"] for x in truth["landings"])
    assert n_knocked == len(truth["knockdowns"])
    assert sum(bool(x.get("caused_knockdown")) for x in truth["landings"]) == n_knocked


def check_same_seed_same_bytes(gen: ModuleType, tmp_path: Path) -> None:
    """A generator's ``make_recording`` gives the same bytes and truth for a seed, others not."""
    a, ta = gen.make_recording(7, "noisy", 10.0, tmp_path / "a")
    b, tb = gen.make_recording(7, "noisy", 10.0, tmp_path / "b")
    c, _ = gen.make_recording(8, "noisy", 10.0, tmp_path / "c")
    assert a.read_bytes() == b.read_bytes() and ta.read_text() == tb.read_text()
    assert a.read_bytes() != c.read_bytes()


def check_scored_perfect(truth: dict[str, Any], score: ModuleType) -> None:
    """The scorer accepts a truth file: a detector that says exactly it scores every landing."""
    perfect = [{"event": "landing", "t": x["t"], "t_decided": x["t"] + 0.3,
                "floor": x["floor"], "cubes": 1, "confidence": 1.0}
               for x in truth["landings"]]
    res = score.score_one(truth, score.DetectRun(perfect, 0, 1.0), tolerance_s=0.5)
    assert res["right"] == res["n_truth"] and res["knocked_found"] == res["n_knocked"]


def decode_in_odd_chunks(data: bytes, chunk: int = 3001) -> tuple[list[Frame], DecoderStats]:
    """Our decoder's frames and counters for ``data`` fed in odd chunks (frames cut anywhere)."""
    decoder = FrameDecoder()
    frames: list[Frame] = []
    for i in range(0, len(data), chunk):
        frames += decoder.feed(data[i:i + chunk])
    return frames, decoder.stats


def check_own_framing(gen: ModuleType, raw: bytes) -> None:
    """A generator's own COBS round-trips; each frame of ``raw`` is its ``frame``, CRC good.

    For generators that offer ``cobs_encode``, ``cobs_decode_own``,
    ``crc16_ccitt_false`` and ``frame(type, seq, payload)``.
    """
    rng = np.random.default_rng(5)
    for n in (0, 1, 9, 200, 253, 254, 300):
        data = bytes(rng.integers(0, 3, n, dtype=np.uint8))
        assert gen.cobs_decode_own(gen.cobs_encode(data)) == data
    chunks = raw.split(b"\x00")
    assert chunks[-1] == b""
    for chunk in chunks[:-1]:
        msg = gen.cobs_decode_own(chunk)
        assert gen.crc16_ccitt_false(msg[:-2]) == int.from_bytes(msg[-2:], "little")
        assert gen.frame(msg[0], int.from_bytes(msg[1:3], "little"), msg[3:-2]) == chunk + b"\x00"


def decode_clean(raw: bytes, label: str = "") -> list[Frame]:
    """The frames of an undamaged stream, fed in 4,093-byte chunks: no error of any kind.

    HELLO comes first with seq 0, a PIEZO message next (it starts stream
    time), and every seq follows the one before.
    """
    frames, stats = decode_in_odd_chunks(raw, 4093)
    assert stats.crc_errors == stats.framing_errors == stats.lost_messages == 0, label
    assert stats.unknown_types == stats.resets == 0, label
    assert isinstance(frames[0].msg, Hello) and frames[0].seq == 0
    assert isinstance(frames[1].msg, Piezo), "the first data message starts stream time"
    check_seqs_consecutive(frames)
    return frames


def stream_timed(frames: list[Frame]) -> tuple[list[tuple[float, Piezo]], list[tuple[float, Load]]]:
    """PIEZO and LOAD messages with their stream times (contracts.md section 2)."""
    data = [f.msg for f in frames if isinstance(f.msg, Piezo | Load)]
    t_us = unwrap_t_us(np.array([m.t_us for m in data], np.int64))
    stream = ((t_us - t_us[0]) / 1e6).tolist()
    piezos = [(s, m) for s, m in zip(stream, data, strict=True) if isinstance(m, Piezo)]
    loads = [(s, m) for s, m in zip(stream, data, strict=True) if isinstance(m, Load)]
    return piezos, loads


@dataclass
class DecodedStream:
    """A generator's recording read by our decoder (in odd chunks), with stream times."""

    frames: list[Frame]
    stats: DecoderStats
    load_t: np.ndarray  # stream time of every LOAD
    load_valid: np.ndarray  # its valid bits
    load_values: np.ndarray  # (M, 8) counts
    piezo_t: np.ndarray  # stream time of every sample set
    piezo: np.ndarray  # (N, 8) ADC codes

    @property
    def hello(self) -> Hello:
        return next(f.msg for f in self.frames if isinstance(f.msg, Hello))

    def piezo_window(self, t0: float, t1: float) -> np.ndarray:
        """The sample sets in [t0, t1), as floats."""
        return self.piezo[(self.piezo_t >= t0) & (self.piezo_t < t1)].astype(float)

    def fresh(self, ch: int) -> np.ndarray:
        """Which LOAD messages carry a fresh reading of ``ch``."""
        return (self.load_valid >> ch) & 1 == 1


def decode_stream(data: bytes) -> DecodedStream:
    """Decode a recording's bytes in odd chunks; sample sets timed at HELLO's piezo rate."""
    frames, stats = decode_in_odd_chunks(data)
    piezos, loads = stream_timed(frames)
    rate = next(f.msg for f in frames if isinstance(f.msg, Hello)).piezo_rate_hz
    return DecodedStream(
        frames, stats,
        np.array([s for s, _ in loads]),
        np.array([m.valid for _, m in loads], np.int64),
        np.array([m.values for _, m in loads], np.int64),
        np.concatenate([s + np.arange(len(m.samples)) / rate for s, m in piezos]),
        np.concatenate([m.samples for _, m in piezos]),
    )


class GeneratedRecording:
    """One recording a generator (``gen``) made, decoded, with its truth and tower.

    The generator's tower has per-channel ``offset`` (counts of the empty
    plate) and ``cpg`` (counts per gram).
    """

    def __init__(self, gen: ModuleType, score: ModuleType, seed: int, scenario: str,
                 duration: float, out: Path) -> None:
        self.seed, self.scenario, self.duration = seed, scenario, duration
        self.bin_path, truth_path = gen.make_recording(seed, scenario, duration, out)
        self.truth: dict[str, Any] = score.read_truth(truth_path)
        self.d = decode_stream(self.bin_path.read_bytes())
        self.tower = gen.make_tower(seed)

    def grams(self, ch: int, t0: float, t1: float) -> float:
        """Median load of ``ch`` over fresh readings in [t0, t1), grams above the empty plate."""
        sel = self.d.fresh(ch) & (self.d.load_t >= t0) & (self.d.load_t < t1)
        assert sel.sum() >= 5, (ch, t0, t1)
        return float((np.median(self.d.load_values[sel, ch]) - self.tower.offset[ch])
                     / self.tower.cpg[ch])


class SimulatedRecording:
    """A recording of a generator that offers ``simulate`` and ``render``, decoded.

    ``sc`` is the generator's scene, ``tw`` its tower (with ``offset`` and
    ``cpg``, the counts of an empty plate and per gram, per level).
    """

    def __init__(self, gen: ModuleType, seed: int, scenario: str, duration: float) -> None:
        self.seed = seed
        self.sc = gen.simulate(seed, scenario, duration)
        self.raw, self.truth = gen.render(self.sc)
        self.d: DecodedStream = decode_stream(self.raw)
        self.tw = self.sc.tw

    def grams(self, ch: int, t0: float, t1: float, least: int = 5) -> float:
        """Median load of ``ch`` over fresh readings in [t0, t1), grams above the empty plate."""
        sel = self.d.fresh(ch) & (self.d.load_t >= t0) & (self.d.load_t < t1)
        assert sel.sum() >= least, (ch, t0, t1)
        return float((np.median(self.d.load_values[sel, ch]) - self.tw.offset[ch])
                     / self.tw.cpg[ch])


def recordings_by_scenario(
    gen: ModuleType, seed: int, game_seed: int, durations: dict[str, float]
) -> dict[str, SimulatedRecording]:
    """A recording of each scenario of ``durations`` (games on tower ``game_seed``)."""
    return {sc: SimulatedRecording(gen, game_seed if sc == "game" else seed, sc, dur)
            for sc, dur in durations.items()}


def busy_spans(
    truth: dict[str, Any], *, before_release_s: float = 0.2, handling_s: float = 1.2,
    knock_keys: tuple[str, ...] = ("knocks", "touches"),
) -> list[tuple[float, float]]:
    """Spans of a truth in which something moves or touches the tower.

    Each throw from ``before_release_s`` before its release to just after its
    rest, each removal, each lift and closure ``handling_s`` before to after
    it, and the knocks (the truth's lists ``knock_keys``) until after they end.
    """
    out = [(x["t_release"] - before_release_s, x["t"] + 0.1) for x in truth["landings"]]
    out += [(x["t"] - 0.8, x["t"] + 0.3) for x in truth["removals"]]
    out += [(x["t"] - handling_s, x["t"] + 0.5) for x in truth["lifts"] + truth["closes"]]
    out += [(x["t"] - 0.05, x["t_end"] + 0.5) for key in knock_keys for x in truth[key]]
    return out


def quiet_except(
    busy: list[tuple[float, float]], t0: float, t1: float, own: tuple[float, float]
) -> bool:
    """Whether no span of ``busy`` (something moving the tower) but ``own`` overlaps [t0, t1]."""
    return not any(a < t1 and t0 < b and (a, b) != own for a, b in busy)


def table_knock_heard(
    gen: ModuleType, tower_seed: int, *, heard_over_s: float, louder: float
) -> tuple[DecodedStream, Any]:
    """A generator's table knock at 6 s into a 12 s noisy scene, decoded: ``(stream, tower)``.

    Checks that every disc jumps by ``louder`` times its idle spread within
    ``heard_over_s``, the base's at least as far as the top's, and that the
    knock leaves every level weighing what it did (``check_knock_weighs_nothing``).
    """
    tw = gen.make_tower(tower_seed)
    sc = gen.Scene(tw, 12.0, np.random.default_rng(1), "noisy")
    gen.table_knock(sc, 6.0)
    raw, truth = gen.render(sc)
    d = decode_stream(raw)
    before = d.piezo_window(5.0, 5.99)
    after = d.piezo_window(6.0, 6.0 + heard_over_s)
    jump = np.abs(after - np.median(before, axis=0)).max(axis=0)
    assert np.all(jump > louder * before.std(axis=0)) and jump[0] >= jump[7]
    check_knock_weighs_nothing(d, tw, truth["knocks"][0], before=(4.5, 5.9))
    return d, tw


def check_removals_weighed(
    rec: SimulatedRecording, *, before_s: tuple[float, float] = (1.0, 0.6),
    after_s: tuple[float, float] = (0.3, 0.6), slack_g: float = 0.03,
) -> None:
    """Each removal of a game takes its cubes' grams off the level the last lift laid open.

    The plate is read ``before_s`` (seconds before, from and to) and
    ``after_s`` (after) the removal.
    """
    assert rec.truth["removals"]
    for x in rec.truth["removals"]:
        lifts = [lf for lf in rec.truth["lifts"] if lf["t"] < x["t"]]
        assert max(lifts, key=lambda lf: lf["t"])["exposed"] == x["floor"]
        before = rec.grams(x["floor"], x["t"] - before_s[0], x["t"] - before_s[1], least=3)
        after = rec.grams(x["floor"], x["t"] + after_s[0], x["t"] + after_s[1], least=3)
        assert before - after == pytest.approx(x["mass_g"], abs=0.05 * x["mass_g"] + slack_g)


def check_landings_weighed(
    recs: dict[str, SimulatedRecording],
    quiet: Callable[[dict[str, Any], float, float, tuple[float, float]], bool],
    durations: dict[str, float], *, release_margin_s: float = 0.2, per_g: float = 0.02,
    least: int = 5,
) -> None:
    """Single throws and noisy rooms: a lone landing steps its own level by its cube alone.

    ``quiet(truth, t0, t1, own)``: nothing but the throw ``own`` (its
    release less ``release_margin_s`` to just after its rest) moves the
    tower in [t0, t1]. At least ``least`` landings are checked.
    """
    checked = 0
    for sc in ("single", "noisy"):
        r = recs[sc]
        for x in r.truth["landings"]:
            own = (x["t_release"] - release_margin_s, x["t"] + 0.1)
            t0, t1 = x["t_release"] - 0.6, x["t"] + 1.0
            if x["knocked"] or x.get("caused_knockdown") or t1 > durations[sc] \
                    or not quiet(r.truth, t0, t1, own):
                continue
            for ch in range(8):
                step = r.grams(ch, x["t"] + 0.3, x["t"] + 0.9) - r.grams(ch, t0, x["t_release"])
                want = x["mass_g"] if ch == x["floor"] else 0.0
                assert step == pytest.approx(want, abs=0.02 + per_g * want), (sc, x, ch)
            checked += 1
    assert checked >= least


def check_weights_add_up(sc: Any) -> None:
    """A scene's load changes (``sc.weights``: time, level, grams) sum to what its tower holds."""
    total = np.zeros(8)
    for _t, ch, grams in sc.weights:
        total[ch] += grams
    on = np.array([sum(c.mass_g for c in sc.tower[lv]) for lv in range(8)])
    np.testing.assert_allclose(total, on, atol=1e-9)


def check_knock_weighs_nothing(
    d: DecodedStream, tw: Any, knock: dict[str, Any], before: tuple[float, float]
) -> None:
    """Every level reads the grams of ``before`` again from 0.3 s after a knock ends."""
    def grams(ch: int, t0: float, t1: float) -> float:
        sel = d.fresh(ch) & (d.load_t >= t0) & (d.load_t < t1)
        return float((np.median(d.load_values[sel, ch]) - tw.offset[ch]) / tw.cpg[ch])

    for ch in range(8):
        after = grams(ch, knock["t_end"] + 0.3, knock["t_end"] + 1.5)
        assert after == pytest.approx(grams(ch, *before), abs=0.01), ch


def crc_valid_messages(data: bytes) -> list[bytes]:
    """The CRC-valid messages (type|seq|body) of a byte stream, damaged or not, in order."""
    out = []
    for chunk in data.split(b"\x00"):
        try:
            msg = cobs_decode(chunk) if chunk else b""
        except ValueError:  # a chunk cut by damage
            continue
        if len(msg) >= 5 and binascii.crc_hqx(msg[:-2], 0xFFFF) == int.from_bytes(msg[-2:],
                                                                                    "little"):
            out.append(bytes(msg[:-2]))
    return out


def message_t_us(msg: bytes) -> int | None:
    """A PIEZO's or LOAD's ``t_us`` (None for other types), from ``crc_valid_messages``."""
    return int.from_bytes(msg[3:7], "little") if msg[0] in (2, 3) else None


def check_lifted_levels_invalid(
    d: DecodedStream, truth: dict[str, Any], *, after_lift_s: float, fresh_least: float,
    back_within_s: float, back_least: float, before_close_s: float = 0.0,
) -> None:
    """While modules are lifted, the levels above the exposed one read invalid and zero.

    Over each lift (from ``after_lift_s`` after it to ``before_close_s``
    before its close) the levels up to the exposed one stay fresh in at
    least ``fresh_least`` of the readings; from 0.2 s after the close to
    ``back_within_s``, at least ``back_least`` of the readings are all valid.
    """
    for lift, close in zip(truth["lifts"], truth["closes"], strict=False):
        k = lift["exposed"]
        during = (d.load_t > lift["t"] + after_lift_s) & (d.load_t < close["t"] - before_close_s)
        assert during.sum() > 10
        for ch in range(8):
            fresh = d.fresh(ch)[during]
            if ch > k:
                assert not fresh.any() and np.all(d.load_values[during, ch] == 0)
            else:
                assert fresh.mean() >= fresh_least
        after = (d.load_t > close["t"] + 0.2) & (d.load_t < close["t"] + back_within_s)
        assert np.mean(d.load_valid[after] == 0xFF) >= back_least


def check_damaged_twin(
    gen: ModuleType, score: ModuleType, seed: int, duration_s: float, out: Path
) -> set[str]:
    """A damaged recording beside its clean twin; returns the kinds of its damage spans.

    The same scene (truths equal but for the damage); every message that got
    through is byte for byte one of the twin's; every one lost lies in a
    damage span; after a reboot the device sends the twin's data again, seq
    from 1 and its clock from zero (``t_us_after`` when the span gives it);
    the project's decoder reads it to the end and counts the damage.
    """
    bin_path, truth_path = gen.make_recording(seed, "damaged", duration_s, out)
    clean_path = out / f"damagedclean_t{seed}.bin"
    truth = score.read_truth(truth_path)
    clean_truth = score.read_truth(clean_path.with_suffix(".truth.json"))
    check_truth(truth, score, scenario="damaged", seed=seed, duration_s=duration_s)
    assert {k: v for k, v in truth.items() if k not in ("damage", "scenario")} == \
        {k: v for k, v in clean_truth.items() if k not in ("damage", "scenario")}
    spans = truth["damage"]
    clean = crc_valid_messages(clean_path.read_bytes())
    damaged = crc_valid_messages(bin_path.read_bytes())
    reboot = next((s for s in spans if s["kind"] == "reboot"), None)
    if reboot is not None:
        i_hello = max(i for i, m in enumerate(damaged) if m[0] == 1)
        after, damaged = damaged[i_hello + 1:], damaged[:i_hello]
        assert after[0][1:3] == (1).to_bytes(2, "little")
        first_t = message_t_us(next(m for m in after if m[0] in (2, 3)))
        assert first_t is not None and first_t < 2_000_000
        if "t_us_after" in reboot:
            assert first_t == reboot["t_us_after"]
        bodies = {m[7:] for m in clean if m[0] == 2}
        assert all(m[7:] in bodies for m in after if m[0] == 2)
    assert set(damaged) <= set(clean)
    t0 = message_t_us(next(m for m in clean if m[0] == 2))
    assert t0 is not None
    got = set(damaged)
    last_s = reboot["t_start"] if reboot is not None else np.inf
    for m in clean:
        t = message_t_us(m)
        if m in got or t is None:
            continue
        t_s = ((t - t0) % 2**32) / 1e6
        if t_s > last_s:
            continue
        assert any(s["t_start"] - 0.01 <= t_s <= s["t_end"] + 0.01 for s in spans), (seed, t_s)
    d = decode_stream(bin_path.read_bytes())
    assert d.stats.crc_errors + d.stats.framing_errors > 0
    return {s["kind"] for s in spans}


def check_extra_families_command_line(script: Path, out: Path) -> None:
    """The families beyond the usual four, as ``run_all.py --families`` asks for them.

    One tower: its long session (of ``--long-duration``), its damaged
    recording beside the clean twin, and its acoustic one.
    """
    proc = subprocess.run([sys.executable, str(script), "--out", str(out), "--towers", "1",
                           "--first-seed", "2", "--duration", "12", "--long-duration", "40",
                           "--scenarios", "long", "damaged", "acoustic"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{s}_t2.{e}" for s in ("long", "damaged", "damagedclean", "acoustic")
        for e in ("bin", "truth.json"))


def check_seqs_consecutive(frames: list[Frame]) -> None:
    """Every message's ``seq`` follows the one before (u16, wrapping)."""
    seqs = [f.seq for f in frames]
    assert all((b - a) % 65536 == 1 for a, b in zip(seqs, seqs[1:], strict=False))


def check_command_line(script: Path, score: ModuleType, out: Path, duration_s: float) -> None:
    """A generator run from the shell writes every (scenario, tower) pair the scorer can read."""
    proc = subprocess.run([sys.executable, str(script), "--out", str(out), "--towers", "2",
                           "--first-seed", "5", "--duration", str(duration_s), "--scenarios",
                           "single", "game"], capture_output=True, text=True, check=False,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"{s}_t{n}.{ext}" for s in ("single", "game") for n in (5, 6)
                           for ext in ("bin", "truth.json"))
    for truth in out.glob("*.truth.json"):
        score.read_truth(truth)


def check_workers_same_bytes(
    script: Path, score: ModuleType, tmp_path: Path, first_seed: int, duration_s: float,
    in_process: Callable[[list[str]], int] | None = None,
) -> None:
    """Two towers of quick series and games, made on one worker and on two: the same bytes.

    ``in_process``: the generator's ``main``, to make the one-worker set
    without a shell (the two-worker set is always made as the shell runs it).
    """
    digests = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        args = ["--out", str(out), "--towers", "2", "--first-seed", str(first_seed),
                "--duration", str(duration_s), "--scenarios", "rapid", "game",
                "--workers", workers]
        if workers == "1" and in_process is not None:
            assert in_process(args) == 0
        else:
            proc = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                                  text=True, timeout=120, check=False)
            assert proc.returncode == 0, proc.stderr
        names = sorted(p.name for p in out.iterdir())
        assert names == sorted(f"{sc}_t{s}{ext}" for s in (first_seed, first_seed + 1)
                               for sc in ("rapid", "game") for ext in (".bin", ".truth.json"))
        digests.append({n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in names})
        for truth in out.glob("*.truth.json"):
            score.read_truth(truth)
    assert digests[0] == digests[1]


def check_unknown_scenario_refused(script: Path, out: Path) -> None:
    """An unknown scenario: exit status 2, one line on stderr naming it, nothing written."""
    proc = subprocess.run([sys.executable, str(script), "--out", str(out), "--towers", "1",
                           "--duration", "10", "--scenarios", "single", "bogus"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "bogus" in proc.stderr
    assert not out.exists()


def check_game_follows_the_rules(truth: dict[str, Any], *, victims_counted: bool = False) -> None:
    """A generator's game truth (AG's layout): prologue first (two victims, two clues each),
    then turns clockwise, a lift per turn; every clue in a supply, on the sheet or thrown;
    cubes leave only the level laid open. ``victims_counted``: its turns say how many
    victims each found, and both were found."""
    game = truth["game"]
    players = game["players"]
    thrown = sorted((x for x in truth["landings"] if not x["knocked"]),
                    key=lambda x: x["t_release"])
    n_pro = 2 + 2 * len(players)
    assert [x["kind"] for x in thrown[:n_pro]] == ["victim"] * 2 + ["prologue"] * (n_pro - 2)
    assert [x["colour"] for x in thrown[2:n_pro]] == [p for p in players for _ in range(2)]
    assert all(x["t"] < truth["lifts"][0]["t"] for x in thrown[:n_pro])
    assert all(x["kind"] in ("throwback", "penalty") for x in thrown[n_pro:])
    turns = game["turns"]
    assert game["phase"] == "act2"
    assert [lf["exposed"] for lf in truth["lifts"]] == [t["floor"] for t in turns]
    who = [players.index(t["by"]) for t in turns]
    assert who[0] == 0
    assert all(b == (a + 1) % len(players) for a, b in zip(who, who[1:], strict=False))
    if victims_counted:
        assert sum(t["victims"] for t in turns) == 2
    for p in players:
        from_supply = sum(x["colour"] == p and x["kind"] in ("prologue", "penalty")
                          for x in thrown)
        assert game["supply"][p] + sum(game["sheet"][p]) + from_supply == 20
    for x in truth["removals"]:
        lift = max((lf for lf in truth["lifts"] if lf["t"] < x["t"]), key=lambda lf: lf["t"])
        assert x["floor"] == lift["exposed"]
