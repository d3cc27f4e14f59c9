"""Fast checks of the blind cross-check model AN (tools/crosscheck_an): the family's kit
played at sea, on a ferry or in a yacht's saloon (heave from an irregular sea on every
load cell in proportion to its load; roll, pitch, heel and tacks: the tilt's cosine,
off-axis loading, cubes that creep and cubes by a hole that topple in with no throw; the
diesel, hull slams, footsteps, a child's bump, a door's cold air; hands steadying the
tower; the ship's 50/60 Hz generators or a power bank; devices already running).

The bytes are read as the host reads them: the project's frame decoder (COBS and
CRC-16/CCITT-FALSE), then the message layouts of contracts.md unpacked in
tests/tools/blind_models.py, not with the generator's encoder."""

from __future__ import annotations

import dataclasses
import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import cobs_decode, crc16
from tests.scripts import load_script
from tests.tools.blind_models import (
    BAD_COMMAND_LINES,
    Recording,
    assert_an_unusable_folder_is_one_line,
    assert_refused_in_one_line,
    assert_the_shell_gets_one_line,
    assert_truth_is_what_the_scorer_reads,
    perfect_events,
    rendered,
    script_and_function_agree,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_an" / "make_recordings_an.py"

AN = load_script(SCRIPT, "make_recordings_an_under_test")
SCORE = load_script(ROOT / "tools" / "crosscheck" / "score.py", "crosscheck_score_for_an")
SEED = 1  # 2000 sets/s, 80 SPS; rapid on a yacht; noisy and game open on running devices
DURATIONS = {"single": 30.0, "rapid": 25.0, "noisy": 40.0, "game": 80.0}
QUIET = {"people": False, "power": "powerbank", "mains_hz": 0.0}  # nothing but the sea


def _rec(sc: Any) -> Recording:
    return rendered(AN, sc)


@pytest.fixture(scope="module")
def recs() -> dict[str, Recording]:
    return {sc: _rec(AN.simulate(SEED, sc, dur)) for sc, dur in DURATIONS.items()}


def _bare(seed: int, duration: float, **over: Any) -> Any:
    """A scene at sea with nobody about and no supply hum (``over`` fixes the ship)."""
    return AN.new_scene(seed, "single", duration, **{**QUIET, **over})


def _still(sc: Any) -> Any:
    """The same scene in a flat calm: no heave, no tilt, no engine."""
    sh = sc.ship
    sh.heave, sh.roll, sh.pitch = (np.zeros_like(sh.t) for _ in range(3))
    sh.roll_dd, sh.pitch_dd, sh.engine_ms2 = np.zeros_like(sh.t), np.zeros_like(sh.t), 0.0
    AN.finish_motion(sh)
    return sc


def _tower(sc: Any, **over: Any) -> None:
    sc.tw = dataclasses.replace(sc.tw, **over)


def _peak_hz(x: np.ndarray, fs: float, lo: float, hi: float) -> tuple[float, float]:
    """The strongest frequency in [lo, hi) and its height over the band's median."""
    spec = np.abs(np.fft.rfft((x - x.mean()) * np.hanning(len(x))))
    f = np.fft.rfftfreq(len(x), 1 / fs)
    band = (f >= lo) & (f < hi)
    i = int(np.argmax(spec[band]))
    return float(f[band][i]), float(spec[band][i] / np.median(spec[band]))


def _grams(r: Recording, ch: int, t0: float, t1: float, still: bool = False
           ) -> tuple[np.ndarray, np.ndarray]:
    """Channel ``ch``'s readings in grams (less the zero), divided by the specific force
    the model says the cell felt then unless ``still``; and their times."""
    tw, sh, d = r.sc.tw, r.sc.ship, r.d
    sel = (d.ld_t >= t0) & (d.ld_t < t1) & ((d.ld_valid >> ch) & 1 == 1)
    g = (d.ld[sel, ch] - tw.zero_counts[ch]) / tw.cpg[ch]
    if not still:
        felt = (sh.n0 + sh.fu * tw.off_axis[ch, 0] + sh.fv * tw.off_axis[ch, 1])
        g = g / np.interp(d.ld_t[sel], sh.t, felt)
    return g, d.ld_t[sel]


def _step(r: Recording, ch: int, t_before: float, t_after: float, span: float = 0.5,
          still: bool = False) -> float:
    a, _ = _grams(r, ch, t_before - span, t_before, still)
    b, _ = _grams(r, ch, t_after, t_after + span, still)
    return float(np.median(b) - np.median(a))


# -- wire ------------------------------------------------------------------------------------

def test_crc_and_cobs_follow_the_contract() -> None:
    assert AN.crc16(b"123456789") == 0x29B1 == crc16(b"123456789")
    rng = np.random.default_rng(1)
    for n in (0, 1, 5, 253, 254, 255, 300, 600):
        for x in (bytes(rng.integers(0, 256, n, dtype=np.uint8)),
                  bytes(rng.integers(1, 256, n, dtype=np.uint8)), b"\x00" * n):
            enc = AN.cobs_encode(x)
            assert b"\x00" not in enc and cobs_decode(enc) == x
            assert AN.crc16(x) == crc16(x)
    fr = AN.frame(0x03, 0x11234, b"\x00\x01\x02")  # seq wraps at 65536
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = cobs_decode(fr[:-1])
    assert msg[:3] == b"\x03\x34\x12" and int.from_bytes(msg[-2:], "little") == crc16(msg[:-2])
    assert AN._decodes(fr[:-1]) and not AN._decodes(fr[3:-1])


def test_streams_decode_clean(recs: dict[str, Recording]) -> None:
    for name, r in recs.items():
        tw, d, sess = r.sc.tw, r.d, r.truth["session"]
        assert d.damaged <= (sess["start"] == "running"), name  # at most the cut frame
        assert d.hello == {"proto": 1, "fw": tw.fw, "n_piezo": 8, "n_load": 8,
                           "piezo_rate_hz": tw.piezo_rate_hz, "load_rate_hz": tw.load_rate_hz,
                           "adc_bits": 10, "device_id": tw.device_id}
        seqs = np.array([m[1] for m in d.msgs])
        assert np.all(np.diff(seqs) % 65536 == 1) and seqs[0] == sess["seq_first"], name
        pz = [t for typ, t in d.raw_t_us if typ == 2]
        period = 1_000_000 // tw.piezo_rate_hz
        gaps = [(b - a) % 2**32 - n * period
                for a, b, n in zip(pz, pz[1:], d.pz_sizes, strict=False)]
        assert not any(gaps), name  # every set once, in order
        assert set(d.pz_sizes[:-1]) == {tw.batch} and 1 <= d.pz_sizes[-1] <= 14
        ld = [t for typ, t in d.raw_t_us if typ == 3]
        steps = np.diff(ld) % 2**32 / 1e6
        assert np.allclose(steps, 1 / (tw.load_rate_hz * (1 + tw.hx_err)), atol=2e-6)
        assert d.raw_t_us[0][0] == 2 and d.ld_t[0] > 0  # stream time 0: the first PIEZO
        stamps = np.array([t for _, t in d.raw_t_us], dtype=np.int64)
        assert np.all((np.diff(stamps) % 2**32) < 2**31)  # never back, across types
        for k in range(8):  # "0 where not valid"
            assert np.all(d.ld[(d.ld_valid >> k) & 1 == 0, k] == 0)
        assert d.pz_t[0] == 0.0 and abs(d.pz_t[-1] - r.truth["duration_s"]) < 0.01
        assert len(r.raw) / r.truth["duration_s"] < 100_000  # within 1 Mbaud 8N1
        idle = np.median(d.piezo(0.5, 3.5), axis=0)  # biased at mid-scale
        np.testing.assert_allclose(idle, tw.bias, atol=1.5)
        assert d.pz.min() >= 0 and d.pz.max() <= 1023
        assert np.all(np.diff([u for u, _ in d.status]) == 1000), name
        if sess["start"] == "boot":
            assert d.msgs[0][:2] == (0x01, 0) and r.raw[0] != 0


def test_a_running_device_mid_frame_late_hello_and_clock_wrap() -> None:
    """Sessions that open on a running device: the recording starts inside a frame, HELLO
    and the ACK of the laptop's GET_INFO come after 1-3 messages; the clock may wrap."""
    wrapped = 0
    for seed, scenario in ((1, "noisy"), (1, "game"), (6, "rapid"), (8, "rapid"), (2, "rapid")):
        r = _rec(AN.simulate(seed, scenario, 20.0))
        sess = r.truth["session"]
        assert sess["start"] == "running" and sess["mid_frame_bytes"] >= 3
        assert r.raw.index(0) == sess["mid_frame_bytes"] - 1 and r.raw[0] != 0
        assert not AN._decodes(r.raw[:sess["mid_frame_bytes"] - 1])
        types = [m[0] for m in r.d.msgs]
        i = types.index(0x01)
        assert i == sess["messages_before_hello"] and 1 <= i <= 3 and types[i + 1] == 0x05
        assert r.d.msgs[i + 1][2] == struct.pack("<BHB", 0x81, 0, 0)
        if sess["clock_wraps_at_s"] is not None:
            wrapped += 1
            for typ in (0x02, 0x03):
                stamps = [t for ty, t in r.d.raw_t_us if ty == typ]
                drops = [(a, b) for a, b in zip(stamps, stamps[1:], strict=False) if b < a]
                assert len(drops) == 1 and drops[0][0] > 2**32 - 200_000
        assert np.all(np.diff(r.d.pz_t) > 0) and abs(r.d.pz_t[-1] - 20.0) < 0.01
        up = r.d.status[0][0] / 1000 - sess["uptime_us0"] / 1e6  # uptime goes on
        assert 0 < up <= 1.0
    assert wrapped >= 2


def test_towers_differ_within_the_contract() -> None:
    towers = [AN.make_tower(s) for s in range(1, 41)]
    assert len({t.device_id for t in towers}) == 40
    assert {t.load_rate_hz for t in towers} == {10, 80}
    assert {t.piezo_rate_hz for t in towers} == {1000, 1600, 2000}
    assert {t.batch for t in towers} == {5, 8, 10, 14} and {t.clock for t in towers} == {
        "crystal", "resonator"}
    for tw in towers:  # 8 conversions fit one set period
        assert 8 * tw.adc_skew_s < 1 / tw.piezo_rate_hz
        assert np.all((tw.f_modes[:, 0] > 250) & (tw.f_modes[:, 0] < 950))  # card plates
        assert np.all((tw.q_modes[:, 0] >= 9) & (tw.q_modes[:, 0] <= 22))
        assert np.all(np.diff(tw.f_modes, axis=1) > 0)
        assert 0.35 * 0.95 <= tw.cube_g <= 0.75 and np.all(tw.plate_g < 16)
        assert np.all((tw.cpg > 16_000) & (tw.cpg < 26_000))  # 0.8-1.2 mV/V, gain 128
        assert tw.p_stop[0] == 1 and np.all(tw.p_stop[1:] < 0.5)
    assert AN.make_tower(3).figures() == AN.make_tower(3).figures()
    json.dumps(towers[0].figures())


def test_same_seed_same_bytes() -> None:
    a = AN.render(AN.simulate(3, "rapid", 16.0))
    b = AN.render(AN.simulate(3, "rapid", 16.0))
    c = AN.render(AN.simulate(4, "rapid", 16.0))
    assert a[0] == b[0] and a[1] == b[1]
    assert a[0] != c[0]


def test_command_line_writes_four_truths_per_tower(tmp_path: Path) -> None:
    proc, out1 = script_and_function_agree(
        SCRIPT, AN.main, ["--towers", "1", "--first-seed", "9", "--duration", "15"], tmp_path)
    assert proc.stderr.splitlines() == [f"{s}_t9" for s in AN.SCENARIOS]
    truths = sorted(p.name for p in out1.glob("*.truth.json"))
    assert truths == [f"{s}_t9.truth.json" for s in ("game", "noisy", "rapid", "single")]


@pytest.mark.parametrize(("args", "says"), BAD_COMMAND_LINES)
def test_bad_command_line_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         args: list[str], says: str) -> None:
    assert_refused_in_one_line(AN.main, args, says, tmp_path, capsys)


def test_an_uncreatable_or_unwritable_folder_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_an_unusable_folder_is_one_line(AN.main, tmp_path, capsys)


def test_bad_command_line_from_the_shell(tmp_path: Path) -> None:
    assert_the_shell_gets_one_line(SCRIPT, tmp_path)


# -- the truth -----------------------------------------------------------------------------------

def test_truth_is_what_the_scorer_reads(recs: dict[str, Recording], tmp_path: Path) -> None:
    truths = {name: r.truth for name, r in recs.items()}
    assert_truth_is_what_the_scorer_reads(SCORE, truths, "AN", SEED, DURATIONS, tmp_path)


def test_truth_times_are_ordered_and_the_start_is_quiet(recs: dict[str, Recording]) -> None:
    for r in recs.values():
        tr = r.truth
        q = tr["quiet_until"]
        assert 4.0 <= q <= 6.5
        assert [x["t"] for x in tr["landings"]] == sorted(x["t"] for x in tr["landings"])
        for x in tr["landings"]:
            assert q <= x["t_release"] <= x["t_first_impact"] <= x["t_on_plate"] <= x["t"]
            assert x["t"] < tr["duration_s"] - 0.5
            assert ("knocked_from" in x) == x["knocked"]
            assert x["kind"] in ("slid", "knocked") if x["knocked"] else "style" in x
        assert all(x["t"] >= q for x in tr["knocks"] + tr["lifts"])
        by = {x["fid"] for x in tr["landings"] if x.get("caused_knockdown")}
        assert by <= {k["by_fid"] for k in tr["knockdowns"] if k["cause"] == "strike"}
        for k in tr["knockdowns"]:  # each knocked-down or slid cube lands once, lower down
            [land] = [x for x in tr["landings"] if x["knocked"] and x["fid"] == k["fid"]
                      and abs(x["t_release"] - k["t"]) < 1e-6]
            assert land["knocked_from"] == k["from"] > land["floor"] == k["to"]
            assert (k["by_fid"] is None) == (k["cause"] == "slide") == (land["kind"] == "slid")


def test_a_game_follows_the_rules(recs: dict[str, Recording]) -> None:
    tr = recs["game"].truth
    g = tr["game"]
    n = len(g["players"])
    assert 3 <= n <= 5 and g["phase"] in ("act1", "act2", "over")
    throws = [x for x in tr["landings"] if not x["knocked"]]
    kinds = [x["kind"] for x in throws]
    assert kinds[:2] == ["victim", "victim"] and kinds[2:2 + 2 * n] == ["prologue"] * (2 * n)
    assert all(x["colour"] == "red" and x["who"] == g["victims_by"] for x in throws[:2])
    first = g["players"].index(g["victims_by"])
    order = [g["players"][(first + i) % n] for i in range(n) for _ in range(2)]
    assert [x["who"] for x in throws[2:2 + 2 * n]] == order
    assert all(x["colour"] == x["who"] for x in throws[2:2 + 2 * n])
    assert g["turns"] and len(tr["lifts"]) == len(tr["closes"]) == len(g["turns"])
    start = g["players"].index(g["turns"][0]["who"])
    act2 = False
    for i, turn in enumerate(g["turns"]):  # clockwise; Act II once both victims are found
        assert turn["who"] == g["players"][(start + i) % n]
        assert turn["phase"] == ("act2" if act2 else "act1")
        if turn["phase"] == "act1":
            assert turn["action"] == "inspect"
            assert turn["penalties"] == (0 if turn["victims"] else 1)
        else:
            assert turn["action"] in ("suspect", "cover")
        act2 = act2 or sum(t["victims"] for t in g["turns"][:i + 1]) >= 2
    for lift, close, turn in zip(tr["lifts"], tr["closes"], g["turns"], strict=True):
        assert lift["exposed"] == close["exposed"] == turn["floor"] and lift["t"] < close["t"]
        rem = [x for x in tr["removals"] if lift["t"] < x["t"] < close["t"]]
        assert all(x["floor"] == lift["exposed"] for x in rem)
        assert sum(x["cubes"] for x in rem) == turn["removed"]
        assert sum(turn["found"].values()) == turn["removed"]
        if not turn.get("cut_by_end"):
            assert turn["thrown_back"] == turn["removed"] - turn["victims"]
        assert not any(lift["t"] < x["t_release"] < close["t"] for x in throws)
        found = turn["found"]
        if turn["action"] == "cover":
            assert turn["penalties"] == int(found.get(turn["who"], 0) == 0)
        elif turn["action"] == "suspect":
            ground = turn["floor"] == 0 and found.get(turn["who"], 0) == 0
            assert turn["penalties"] == (len(turn["suspects"]) if ground else
                                         sum(found.get(p, 0) == 0 for p in turn["suspects"]))
    assert set(g["crime_scenes"]) == {t["floor"] for t in g["turns"] if t["victims"]}
    thrown = {p: sum(x.get("who") == p and x["kind"] in ("prologue", "penalty")
                     for x in throws) for p in g["players"]}
    for p in g["players"]:  # 20 each: supply + thrown from it + put on the sheet
        assert g["supply"][p] + thrown[p] + sum(g["sheet"][p]) == 20
    assert sum(k == "throwback" for k in kinds) == sum(t["thrown_back"] for t in g["turns"])


# -- the sea in the bytes ----------------------------------------------------------------------

def test_the_sea_states_give_the_figures_the_readme_states() -> None:
    for seed in range(1, 9):
        for scenario in AN.SCENARIOS:
            sc = AN.new_scene(seed, scenario, 60.0, people=False)
            sh = sc.ship
            vert = sh.n0 - np.cos(sh.roll) * np.cos(sh.pitch)
            (lo, hi), (r_lo, r_hi) = AN.SEA_STATES[sh.sea]
            assert 0.75 * lo < np.std(vert) < 1.3 * hi, (seed, scenario)
            f = np.fft.rfftfreq(len(vert), 1 / AN.MOTION_HZ)
            spec = np.abs(np.fft.rfft(vert - vert.mean())) ** 2
            assert 0.08 <= np.sum(f * spec) / np.sum(spec) <= 0.3  # wave periods 3-12 s
            if not sh.tacks:  # (a tack swings the heel from side to side)
                roll = sh.roll - np.mean(sh.roll)
                assert 0.7 * r_lo < np.degrees(np.std(roll)) < 1.4 * r_hi, (seed, scenario)
                spec = np.abs(np.fft.rfft(roll)) ** 2
                assert 0.03 <= f[np.argmax(spec)] <= 0.22  # periods 4.5-30 s
            assert (sh.sea == "rough") == (scenario == "noisy")
            assert (sh.engine_hz == 0) == (sh.mode == "sailing")
            assert sh.engine_hz == 0 or 15 <= sh.engine_hz <= 35
            assert (sh.mains_hz, sh.power) in ((50.0, "ship50"), (60.0, "ship60"),
                                               (0.0, "powerbank"))


def test_heave_moves_every_cell_together_by_its_own_load() -> None:
    """A ferry in a moderate sea, nobody about, no engine: every cell reads its plate and
    cubes times the specific force, so all eight swing slowly together, each by its own
    load; six grams of cubes on level 3 make its swing grow in proportion."""
    empty = _bare(3, 60.0, vessel="ferry", sea="moderate", engine_ms2=0.0)
    loaded = _bare(3, 60.0, vessel="ferry", sea="moderate", engine_ms2=0.0)
    loaded.steps.append((0.0, 3, 6.0))
    a, b = _rec(empty), _rec(loaded)
    tw = empty.tw
    fs = tw.load_rate_hz
    sos = AN.signal.butter(2, [0.05, 0.5], btype="band", fs=fs, output="sos")

    def slow(r: Recording, ch: int) -> np.ndarray:
        return AN.signal.sosfiltfilt(sos, _grams(r, ch, 0, 60, still=True)[0])[5 * fs:-5 * fs]

    swings = np.array([slow(a, k) for k in range(8)])
    vert = a.truth["ship"]["measured"]["vert_rms_g"]
    assert 0.012 <= vert <= 0.025
    np.testing.assert_allclose(np.std(swings, axis=1), tw.plate_g * vert, rtol=0.25)
    assert np.all(np.corrcoef(swings)[0] > 0.95)  # together
    ratio = np.std(slow(b, 3)) / np.std(swings[3])
    assert ratio == pytest.approx((tw.plate_g[3] + 6.0) / tw.plate_g[3], rel=0.08)
    f = np.fft.rfftfreq(swings.shape[1], 1 / fs)
    spec = np.abs(np.fft.rfft(swings[0])) ** 2
    assert 0.08 <= np.sum(f * spec) / np.sum(spec) <= 0.3


def test_tilt_reads_as_its_cosine_and_loads_the_bar_cells_off_axis() -> None:
    """The boat rolls 12 degrees at 0.1 Hz and nothing else moves: each reading follows
    plate x (cos of the tilt + the cell's off-axis share of the lateral force)."""
    sc = _still(_bare(4, 30.0, vessel="ferry", sea="calm"))
    sh, tw = sc.ship, sc.tw
    sh.roll = math.radians(12.0) * np.sin(2 * np.pi * 0.1 * sh.t)
    AN.finish_motion(sh)
    r = _rec(sc)
    for ch in range(8):
        g, t = _grams(r, ch, 4.0, 24.0, still=True)  # two periods of the roll
        felt = np.interp(t, sh.t, sh.n0 + sh.fu * tw.off_axis[ch, 0] + sh.fv * tw.off_axis[ch, 1])
        assert np.std(g - tw.plate_g[ch] * felt) < 0.01  # grams
        g = g - g.mean()
        cos_part = np.mean(g * np.cos(2 * np.pi * 0.2 * t)) * 2  # the cosine's 0.2 Hz
        # cos(A sin wt) = 1 - A^2/4 + A^2/4 cos 2wt + ...
        assert cos_part == pytest.approx(tw.plate_g[ch] * math.radians(12) ** 2 / 4, rel=0.15)
        side = np.mean(g * np.sin(2 * np.pi * 0.1 * t)) * 2
        lateral = tw.off_axis[ch, 0] * math.sin(sh.psi) + tw.off_axis[ch, 1] * math.cos(sh.psi)
        assert side == pytest.approx(tw.plate_g[ch] * math.sin(math.radians(12)) * lateral,
                                     abs=0.006)


def test_the_diesel_on_every_disc_and_cell() -> None:
    sc = _bare(4, 20.0, vessel="ferry", sea="calm", engine_ms2=0.3)
    off = _rec(_bare(4, 20.0, vessel="ferry", sea="calm", engine_ms2=0.0))
    r = _rec(sc)
    fe, fs = sc.ship.engine_hz, sc.tw.piezo_rate_hz
    for ch in range(8):
        f, height = _peak_hz(r.d.piezo(1.0, 20.0)[:, ch], fs, 10.0, 40.0)
        assert f == pytest.approx(fe, rel=0.02) and height > 20
        f, height = _peak_hz(r.d.piezo(1.0, 20.0)[:, ch], fs, 1.7 * fe, 2.3 * fe)
        assert f == pytest.approx(2 * fe, rel=0.02)  # a harmonic
        assert _peak_hz(off.d.piezo(1.0, 20.0)[:, ch], fs, 10.0, 40.0)[1] < 8
    assert sc.tw.load_rate_hz == 80 and fe < 40
    f, height = _peak_hz(_grams(r, 2, 1.0, 20.0, still=True)[0], 80, 10.0, 39.0)
    assert f == pytest.approx(fe, rel=0.02) and height > 10


def test_a_slam_is_felt_by_every_sensor_at_once() -> None:
    def scene() -> Any:
        return _bare(5, 20.0, vessel="ferry", sea="calm", engine_ms2=0.0)

    sc = scene()
    knock, jolted = AN.slam(np.random.default_rng(3), sc.ship, sc.tw, 10.0)
    AN.finish_motion(sc.ship)
    sc.knocks.append(knock)
    sc.impacts += jolted
    r, calm = _rec(sc), _rec(scene())
    diff = r.d.pz - calm.d.pz
    assert np.abs(diff[r.d.pz_t < 9.999]).max() == 0
    sel = (r.d.pz_t >= 10.0) & (r.d.pz_t < 10.1)
    assert np.all(np.abs(diff[sel]).max(axis=0) >= 3)  # every disc at once
    whip = next(j for j in sc.ship.jolts if j.kind == "whip")
    t = r.d.ld_t
    after = (t > 10.0) & (t < 13.0)
    swing = np.array([np.ptp((r.d.ld[after, k] - calm.d.ld[after, k]) / sc.tw.cpg[k])
                      for k in range(8)])
    # the hull's whipping moves each cell by its own load
    np.testing.assert_allclose(swing, sc.tw.plate_g * 2 * whip.amp / AN.G, rtol=0.45)
    assert np.corrcoef(swing, sc.tw.plate_g)[0, 1] > 0.9
    assert r.truth["knocks"][0]["kind"] == "slam" and r.truth["ship"]["slams"]


def _near_hole_scene(seed: int, duration: float, heel_deg: float, near: float) -> Any:
    """Two cubes thrown onto level 7 (every one by the hole when ``near`` is 1), then the
    boat heels ``heel_deg`` for 5 s from 14 s."""
    sc = _still(_bare(seed, duration, vessel="ferry", sea="calm"))
    stop = sc.tw.p_stop.copy()
    stop[7] = 1.0
    _tower(sc, p_stop=stop, p_near=near)
    sh = sc.ship
    ramp = np.clip(np.minimum(sh.t - 14.0, 19.0 - sh.t), 0.0, 1.0)
    sh.roll = math.radians(heel_deg) * ramp
    AN.finish_motion(sh)
    for t in (6.0, 9.0):
        sc.advance(t)
        sc.throw(t, sc.new_cube("blue"), "drop")
    return sc


def test_a_cube_by_a_hole_topples_in_when_the_boat_heels_with_no_throw() -> None:
    """Both cubes rest on level 7 by its hole; the boat heels 20 degrees: each topples in
    and lands lower with no throw. The truth lists each as a knocked-down cube with no
    thrower (kind slid), the weight moves down in the readings, and a perfect detector
    scores it right."""
    sc = _near_hole_scene(6, 30.0, 20.0, 1.0)
    sh = sc.ship
    i = int(16.0 * AN.MOTION_HZ)
    for c in sc.resting(7):  # their holes lie downhill
        c.toward = math.atan2(sh.fv[i], sh.fu[i])
    sc.advance(30.0)
    r = _rec(sc)
    tr = r.truth
    slid = [x for x in tr["landings"] if x["knocked"]]
    assert len(slid) == 2 and all(x["kind"] == "slid" and x["knocked_from"] == 7 > x["floor"]
                                  for x in slid)
    assert all(14.0 < x["t_release"] < 16.0 for x in slid)
    assert not any(x.get("caused_knockdown") for x in tr["landings"])
    assert [k["cause"] for k in tr["knockdowns"]] == ["slide", "slide"]
    assert all(k["by_fid"] is None for k in tr["knockdowns"])
    assert tr["ship"]["slides"] == tr["knockdowns"]
    for ch in range(8):
        want = sum(x["mass_g"] * ((x["floor"] == ch) - (ch == 7)) for x in slid)
        assert _step(r, ch, 13.5, 21.0) == pytest.approx(want, abs=0.03), ch
    res = SCORE.score_one(tr, SCORE.DetectRun(perfect_events(tr), 0, 1.0), tolerance_s=0.5)
    assert res["n_truth"] == 2 and res["n_knocked"] == 2 == res["knocked_found"]
    assert res["game_right"] == 2 and res["false"] == 0


def test_resting_cubes_creep_a_little_without_landing() -> None:
    """Away from the hole, cubes only creep when the heel beats their friction: a few mg
    off-centre in the reading, a faint scrape, no landing."""
    sc = _near_hole_scene(6, 26.0, 24.0, 0.0)
    assert math.sin(math.radians(24.0)) > sc.tw.mu_eff
    sc.advance(26.0)
    r = _rec(sc)
    shifts = r.truth["ship"]["shifts"]
    assert shifts and all(s["level"] == 7 and abs(s["grams"]) < 0.015 for s in shifts)
    assert all(14.0 < s["t"] < 19.0 for s in shifts)
    assert len(r.truth["landings"]) == 2 + len(r.truth["knockdowns"])
    moved = sum(s["grams"] for s in shifts) - sum(
        x["mass_g"] for x in r.truth["landings"] if x["knocked"])
    assert _step(r, 7, 13.5, 21.0) == pytest.approx(moved, abs=0.01)


def test_throws_on_a_moving_floor_are_less_sure() -> None:
    """More throws clip the entry in a rough sea than in a calm one, and some miss."""
    clipped, missed = {}, {}
    for sea in ("calm", "rough"):
        n = clips = misses = 0
        for seed in range(1, 5):
            sc = AN.new_scene(seed, "rapid", 120.0, people=False, sea=sea)
            AN.play_throws(sc)
            n += sum(not x["knocked"] for x in sc.landings)
            clips += sum(any(i[3] == "entry" for i in x["impacts"]) for x in sc.landings)
            misses += sum(k["kind"] == "miss" for k in sc.knocks)
        clipped[sea], missed[sea] = clips / n, misses / n
    assert clipped["rough"] > 1.5 * clipped["calm"] and missed["rough"] > missed["calm"]
    assert 0.1 < clipped["calm"] < 0.25 and missed["rough"] < 0.06


# -- people, the supply, the air -----------------------------------------------------------------

def test_a_hand_steadying_the_tower_presses_its_levels() -> None:
    sc = _still(_bare(2, 14.0, vessel="ferry", sea="calm"))
    sc.hand(8.0, 2.0, [5, 6])
    r, calm = _rec(sc), _rec(_still(_bare(2, 14.0, vessel="ferry", sea="calm")))
    [k] = r.truth["knocks"]
    assert k["kind"] == "hand" and k["levels"] == [5, 6] and k["t_end"] == 10.0
    grams = {p["level"]: p["grams"] for p in sc.presses}
    for ch in range(8):
        lean = float(np.median(_grams(r, ch, 8.5, 9.5, still=True)[0])
                     - np.median(_grams(calm, ch, 8.5, 9.5, still=True)[0]))
        assert lean == pytest.approx(grams.get(ch, 0.0), rel=0.15, abs=0.005), ch
    after = _grams(r, 5, 11.0, 12.0, still=True)[0] - _grams(calm, 5, 11.0, 12.0, still=True)[0]
    assert abs(np.median(after)) < 0.005


def test_lifted_levels_read_invalid_until_closed(recs: dict[str, Recording]) -> None:
    r = recs["game"]
    d, tw = r.d, r.sc.tw
    assert r.truth["lifts"]
    period = 1 / (tw.load_rate_hz * (1 + tw.hx_err))
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        k = lift["exposed"]
        sel = (d.ld_t > lift["t"] + 0.002) & (d.ld_t < close["t"])
        assert sel.sum() >= 20
        v = d.ld_valid[sel]
        assert np.all(v & (0xFF << (k + 1)) & 0xFF == 0)
        assert np.all(v & ((1 << (k + 1)) - 1) == (1 << (k + 1)) - 1)
        back = (d.ld_t > close["t"] + 4 * period + 0.06) & (d.ld_t < close["t"] + 0.8)
        assert np.all(d.ld_valid[back] == 0xFF)
        x = d.piezo(lift["t"] + 0.1, close["t"] - 0.05)  # lifted discs hang off the bias
        if k < 7:
            assert np.all(np.abs(np.median(x[:, k + 1:], axis=0) - 512) < 3)
    lifted = [u for u in d.status if u[0] / 1000 > r.truth["session"]["uptime_us0"] / 1e6
              + r.truth["closes"][0]["t"] + 1]
    assert lifted and lifted[0][1] > 0  # STATUS counts the readings the lifted cells missed


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Recording]) -> None:
    r = recs["game"]
    assert r.truth["removals"]
    for rm in r.truth["removals"]:
        k = rm["floor"]
        press = [p for p in r.sc.presses if p["level"] == k and abs(p["t1"] - rm["t"]) < 1e-5]
        t_press = press[0]["t0"]
        # the sea moves the readings: divide by the specific force the cell felt; after,
        # until the next finger (the hand holding the lower floors stays on longer)
        nxt = min([p["t0"] for p in r.sc.presses if p["level"] == k
                   and rm["t"] < p["t0"] < rm["t"] + 0.4] + [rm["t"] + 0.4])
        before = _grams(r, k, t_press - 0.35, t_press - 0.05)[0]
        after = _grams(r, k, rm["t"] + 0.1, nxt - 0.02)[0]
        got = float(np.mean(after) - np.mean(before))  # (the engine's tone averages out)
        assert got == pytest.approx(-rm["mass_g"], abs=0.06), rm


@pytest.mark.parametrize(("power", "mains"), [("ship50", 50.0), ("ship60", 60.0)])
def test_the_ships_supply_hums_with_its_generators_frequency(power: str, mains: float) -> None:
    """The generators' 50 or 60 Hz, wandering a little, on the piezo lines (and its third
    harmonic) and in the cell wiring, where 80 readings/s fold it to |f - 80| Hz; a power
    bank brings none."""
    def scene(p: str, hz: float) -> Any:
        return _bare(4, 20.0, vessel="yacht", sea="calm", mode="sailing", engine_hz=0.0,
                     power=p, mains_hz=hz)
    sc = scene(power, mains)
    r, bank = _rec(sc), _rec(scene("powerbank", 0.0))
    fs = sc.tw.piezo_rate_hz
    for ch in (0, 5):
        f, height = _peak_hz(r.d.piezo(1.0, 20.0)[:, ch], fs, 40.0, 70.0)
        assert abs(f - mains) < 0.6 and height > 10
        f, _ = _peak_hz(r.d.piezo(1.0, 20.0)[:, ch], fs, 2.8 * mains, 3.2 * mains)
        assert abs(f - 3 * mains) < 1.8
        assert _peak_hz(bank.d.piezo(1.0, 20.0)[:, ch], fs, 40.0, 70.0)[1] < 8
    f, height = _peak_hz(_grams(r, 1, 1.0, 20.0, still=True)[0], 80, 12.0, 39.0)
    assert abs(f - abs(mains - 80)) < 0.8 and height > 10


def test_a_door_to_the_deck_lets_in_cold_air_and_the_zeros_drift() -> None:
    sc = _still(_bare(2, 60.0, vessel="ferry", sea="calm"))
    sc.people["doors"].append({"t": 10.0, "t_end": 40.0, "delta_c": -6.0, "bang": False})
    r = _rec(sc)
    tw = sc.tw
    for ch in range(8):
        drift = _step(r, ch, 9.0, 38.0, 1.0, still=True)
        # the air falls 6 C in 3 s; the cell follows with its lag (27 s later on average)
        cell = -6.0 * (1 - math.exp(-27.0 / tw.temp_tau_s[ch]))
        assert drift == pytest.approx(tw.temp_coef[ch] * cell, rel=0.25, abs=0.004), ch
    assert any(abs(tw.temp_coef[ch] * 6.0) > 0.05 for ch in range(8))


def test_rapid_series_keep_their_spacing(recs: dict[str, Recording]) -> None:
    lands = [x for x in recs["rapid"].truth["landings"] if not x["knocked"]]
    series: dict[int, list[float]] = {}
    for x in lands:
        series.setdefault(x["series"], []).append(x["t_release"])
    assert len(series) >= 2
    for rel in series.values():
        gaps = np.diff(rel)
        assert np.all((gaps >= 0.3 - 1e-9) & (gaps <= 3.8)), gaps  # 0.3-0.8 s, or a rethrow
        assert np.mean((gaps >= 0.3) & (gaps <= 0.8 + 1e-9)) >= 0.75


def test_noisy_is_a_rough_sea_with_people_about(recs: dict[str, Recording]) -> None:
    single, noisy = recs["single"].truth, recs["noisy"].truth
    assert noisy["ship"]["sea"] == "rough" and single["ship"]["sea"] != "rough"
    assert noisy["ship"]["measured"]["vert_rms_g"] > 0.03 > single["ship"]["measured"][
        "vert_rms_g"]
    assert len(noisy["knocks"]) > len(single["knocks"])
    assert len(noisy["ship"]["footsteps"]) >= 3 and noisy["ship"]["slams"]
    assert noisy["ship"]["engine_ms2"] >= 0.2
