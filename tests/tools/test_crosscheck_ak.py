"""Fast checks of the blind cross-check model AK (tools/crosscheck_ak): a Mord im Arosa
tournament in a convention hall (neighbouring towers thumping through the shared trestle
table, PA music and announcements, a forklift, ground loops on long USB cables, towers
built by different teams, fast players, sessions opened on a running device).

The bytes are read as the host reads them: the project's frame decoder (COBS and
CRC-16/CCITT-FALSE, checked against contracts.md's vectors in tests/hostapp/protocol),
then the message layouts of contracts.md unpacked here, not with the generator's
encoder."""

from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import signal

from hostapp.protocol import FrameDecoder, cobs_decode, crc16
from tests.scripts import load_script
from tests.tools.blind_models import (
    Recording,
    Stream,
    assert_the_shell_gets_one_line,
    exit_and_stderr,
    perfect_events,
    read_messages,
    rendered,
    script_and_function_agree,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_ak" / "make_recordings_ak.py"


AK = load_script(SCRIPT, "make_recordings_ak_under_test")
SCORE = load_script(ROOT / "tools" / "crosscheck" / "score.py", "crosscheck_score_for_ak")
SEED = 13  # 2000 sets/s in batches of 14, HX711s at 80 SPS, mixed 500/100 g cells
DURATIONS = {"single": 25.0, "rapid": 25.0, "noisy": 30.0, "game": 90.0}

# -- the stream, read by the host's own decoder -------------------------------------------

def decode(raw: bytes) -> Stream:
    s = Stream()
    frames = raw.split(b"\x00")
    assert frames[-1] == b"", "the stream ends with a delimiter"
    decoder = FrameDecoder()  # contracts.md's COBS and CRC, as the host reads them
    for i, enc in enumerate(frames[:-1]):
        damaged = decoder.stats.damaged_frames
        got = decoder.feed_raw(enc + b"\x00")
        if not got or decoder.stats.damaged_frames != damaged:
            s.bad_frames.append(i)
            continue
        [(typ, seq, body)] = got
        assert 3 + len(body) + 2 <= 254
        s.msgs.append((typ, seq, body))
    return read_messages(s)


def _rec(sc: Any) -> Recording:
    return rendered(AK, sc, decode)


@pytest.fixture(scope="module")
def recs() -> dict[str, Recording]:
    return {sc: _rec(AK.simulate(SEED, sc, dur)) for sc, dur in DURATIONS.items()}


def _bare(seed: int, duration: float, **over: Any) -> Any:
    """A scene with nothing in it but what the test adds (no hall, no murmur)."""
    tw = AK.make_tower(seed)
    if over:
        tw = dataclasses.replace(tw, **over)
    return AK.Scene(tw, "single", duration, np.random.default_rng(5), murmur=False)


def _band_rms(x: np.ndarray, fs: float, lo: float, hi: float) -> float:
    spec = np.fft.rfft((x - x.mean()) * np.hanning(len(x)))
    f = np.fft.rfftfreq(len(x), 1 / fs)
    return float(np.sqrt(np.sum(np.abs(spec[(f >= lo) & (f < hi)]) ** 2)))


# -- wire ------------------------------------------------------------------------------------


def test_crc_and_cobs_follow_the_contract() -> None:
    assert AK.crc16_ccitt_false(b"123456789") == 0x29B1 == crc16(b"123456789")
    rng = np.random.default_rng(1)
    for n in (0, 1, 5, 253, 254, 255, 300, 600):
        data = bytes(rng.integers(0, 256, n, dtype=np.uint8))
        runs = bytes(rng.integers(1, 256, n, dtype=np.uint8))  # long runs without a zero
        for x in (data, runs, b"\x00" * n):
            enc = AK.cobs_encode(x)
            assert b"\x00" not in enc and cobs_decode(enc) == x
            assert AK.crc16_ccitt_false(x) == crc16(x)
    fr = AK.frame(0x03, 0x1234, b"\x00\x01\x02")
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = cobs_decode(fr[:-1])
    assert msg[:3] == b"\x03\x34\x12"
    assert int.from_bytes(msg[-2:], "little") == crc16(msg[:-2])


def test_streams_decode_clean(recs: dict[str, Recording]) -> None:
    for name, r in recs.items():
        tw, d = r.sc.tw, r.d
        # only a recording opened on a running device starts inside a frame
        assert d.bad_frames == ([0] if r.sc.start == "running" else []), name
        assert d.hello == {"proto": 1, "fw": tw.fw, "n_piezo": 8, "n_load": 8,
                           "piezo_rate_hz": tw.piezo_rate_hz, "load_rate_hz": tw.load_rate_hz,
                           "adc_bits": 10, "device_id": tw.device_id}
        seqs = np.array([m[1] for m in d.msgs])
        assert np.all(np.diff(seqs) % 65536 == 1)  # +1 per message, wrapping
        assert seqs[0] == r.truth["session"]["seq_first"]
        pz = [(t, n) for (typ, t), n in zip([x for x in d.raw_t_us if x[0] == 2], d.pz_sizes,
                                            strict=True)]
        period = 1_000_000 // tw.piezo_rate_hz
        for (ta, na), (tb, _) in zip(pz, pz[1:], strict=False):  # every set once, in order
            assert (tb - ta) % 2**32 == na * period
        assert set(d.pz_sizes[:-1]) == {tw.batch}
        for k in range(8):  # "0 where not valid"
            assert np.all(d.ld[(d.ld_valid >> k) & 1 == 0, k] == 0)
        assert abs(d.pz_t[-1] - r.truth["duration_s"]) < 0.01
        assert len(r.raw) / r.truth["duration_s"] < 100_000  # within 1 Mbaud 8N1
        idle = np.median(d.piezo(0.5, 3.5), axis=0)  # biased at mid-scale
        np.testing.assert_allclose(idle, tw.bias, atol=1.5)
        ups = [u for u, _ in d.status]
        assert np.all(np.diff(ups) == 1000)


def test_a_running_device_mid_frame_clock_wrap_and_late_hello(recs: dict[str, Recording]) -> None:
    """The single session of tower 13 was opened on a running device whose clock wraps."""
    r = recs["single"]
    sess = r.truth["session"]
    assert sess["start"] == "running" and sess["seq_first"] != 0
    assert sess["clock_wraps_at_s"] is not None and 5 <= sess["clock_wraps_at_s"] < 25
    types = [m[0] for m in r.d.msgs]
    i = types.index(0x01)
    assert 1 <= i <= 3 and types[i + 1] == 0x05  # HELLO, then ACK of GET_INFO
    assert r.d.msgs[i + 1][2] == struct.pack("<BHB", 0x81, 0, 0)
    assert types[0] == 0x02  # stream time 0 is the first PIEZO's first set
    for typ in (0x02, 0x03):  # each kind's stamps rise, and wrap once
        stamps = [t for ty, t in r.d.raw_t_us if ty == typ]
        drops = [(a, b) for a, b in zip(stamps, stamps[1:], strict=False) if b < a]
        assert len(drops) == 1 and drops[0][0] > 2**32 - 20_000 and drops[0][1] < 20_000
    assert np.all(np.diff(r.d.pz_t) > 0)
    assert abs(r.d.pz_t[-1] - r.truth["duration_s"]) < 0.01


def test_a_fresh_device_starts_with_hello_seq_0(recs: dict[str, Recording]) -> None:
    fresh = [r for r in recs.values() if r.sc.start != "running"]
    assert fresh
    for r in fresh:
        assert r.d.msgs[0][:2] == (0x01, 0)
        assert r.d.raw_t_us[0][1] < 300_000 and r.d.status[0][0] == 1000


def test_truth_times_follow_the_device_clock() -> None:
    """Tower 22 runs on a ceramic resonator 0.27 % fast and its session wraps the clock:
    the truth is in stream seconds, so strikes late in the recording line up with it."""
    sc = AK.simulate(22, "single", 70.0)
    r = _rec(sc)
    assert abs(sc.tw.clock_err) > 2e-3 and r.truth["session"]["clock_wraps_at_s"]
    base = np.median(r.d.piezo(0.5, 3.5), axis=0)
    errs = []
    for x in r.truth["landings"]:
        if x["t"] < 45 or x["knocked"]:
            continue
        t, lv = next((i[0], i[1]) for i in x["impacts"] if i[3] == "plate")
        sel = (r.d.pz_t > t - 0.05) & (r.d.pz_t < t + 0.05)
        y = np.abs(r.d.pz[sel, lv] - base[lv])
        errs.append(r.d.pz_t[sel][np.argmax(y > max(8.0, 0.3 * y.max()))] - t)
    assert len(errs) >= 5
    assert np.all(np.abs(errs) < 0.004)  # 0.27 % of 60 s would be 160 ms


# -- determinism, command line, truth ----------------------------------------------------------


def test_same_seed_same_bytes() -> None:
    a = AK.render(AK.simulate(3, "rapid", 14.0))
    b = AK.render(AK.simulate(3, "rapid", 14.0))
    c = AK.render(AK.simulate(4, "rapid", 14.0))
    assert a[0] == b[0] and a[1] == b[1]
    assert a[0] != c[0]


def test_command_line_writes_four_truths_per_tower(tmp_path: Path) -> None:
    proc, out1 = script_and_function_agree(
        SCRIPT, AK.main, ["--towers", "2", "--first-seed", "9", "--duration", "12"],
        tmp_path)
    truths = sorted(p.name for p in out1.glob("*.truth.json"))
    assert len(truths) == 8 and "single_t9.truth.json" in truths and "game_t10.truth.json" in truths


@pytest.mark.parametrize(("args", "says"), [
    (["--scenarios", "single", "bogus"], "unknown scenario 'bogus'"),
    (["--towers", "0"], "--towers must be at least 1"),
    (["--duration", "5"], "--duration must be at least 12 seconds"),
    (["--towers", "many"], "invalid int value"),
    (["--duration", "nan"], "--duration must be at least 12 seconds"),
])
def test_bad_command_line_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         args: list[str], says: str) -> None:
    out = tmp_path / "o"
    code, err = exit_and_stderr(AK.main, ["--out", str(out), *args], capsys)
    assert code == 2 and says in err and err.count("\n") == 1, err
    assert not out.exists() or not any(out.iterdir())


def test_bad_command_line_from_the_shell(tmp_path: Path) -> None:
    assert_the_shell_gets_one_line(SCRIPT, tmp_path)


def test_truth_is_what_the_scorer_reads(recs: dict[str, Recording], tmp_path: Path) -> None:
    for name, r in recs.items():
        path = tmp_path / f"{name}_t{SEED}.truth.json"
        path.write_text(json.dumps(r.truth))
        doc = SCORE.read_truth(path)
        assert doc["format"] == "towerear-crosscheck-truth/1" and doc["model"] == "AK"
        assert (doc["scenario"], doc["seed"], doc["duration_s"]) == (name, SEED, DURATIONS[name])
        assert doc["cells"] in ("matched", "mixed")
        for kind in SCORE.TRUTH_EVENT_KINDS:
            assert all(isinstance(x["t"], float) for x in doc[kind])
        assert all(x["cubes"] == 1 and 0 <= x["floor"] <= 7 for x in doc["landings"])
        res = SCORE.score_one(doc, SCORE.DetectRun(perfect_events(doc), 0, 1.0), tolerance_s=0.5)
        n_throws = sum(not x["knocked"] for x in doc["landings"])
        assert res["right"] == res["cubes_right"] == res["n_truth"] == n_throws > 0
        assert res["false"] == 0 and res["knocked_found"] == res["n_knocked"]
        assert res["game_right"] + res["game_wrong"] == n_throws and res["game_by_hand"] == 0
        if name == "game":  # one throw at a time: the game takes each for its own
            assert res["game_right"] == n_throws
        assert res["lifts_exposed_right"] == res["lifts"]
        assert res["closes_found"] == res["closes"]
        assert res["removals_right"] == res["removals"]
        assert res["knocks_flagged"] == res["knocks"]
    bad = tmp_path / "bad.truth.json"
    bad.write_text(json.dumps({k: v for k, v in recs["single"].truth.items() if k != "lifts"}))
    with pytest.raises(ValueError, match="lacks lifts"):
        SCORE.read_truth(bad)


def test_truth_times_are_ordered_and_the_start_is_quiet(recs: dict[str, Recording]) -> None:
    for r in recs.values():
        tr = r.truth
        q = tr["quiet_until"]
        assert 4.0 <= q <= 6.6
        for x in tr["landings"]:
            assert q <= x["t_release"] <= x["t_first_impact"] <= x["t_on_plate"] <= x["t"]
            assert x["t"] < tr["duration_s"]
            assert ("knocked_from" in x) == x["knocked"]
        busy = tr["knocks"] + tr["neighbours"] + tr["hall"]["announcements"] \
            + tr["hall"]["vehicles"] + tr["lifts"]
        assert all(x["t"] >= q for x in busy)
        by = {x["fid"] for x in tr["landings"] if x.get("caused_knockdown")}
        assert by == {k["by_fid"] for k in tr["knockdowns"]}


def test_a_game_follows_the_rules(recs: dict[str, Recording]) -> None:
    tr = recs["game"].truth
    g = tr["game"]
    n = len(g["players"])
    assert 3 <= n <= 6 and g["phase"] == "act2"
    kinds = [x["kind"] for x in tr["landings"]]
    assert kinds[:2] == ["victim", "victim"] and kinds[2:2 + 2 * n] == ["prologue"] * (2 * n)
    found = 0
    for i, turn in enumerate(g["turns"]):
        assert turn["who"] == g["players"][(g["players"].index(g["turns"][0]["who"]) + i) % n] \
            or found >= 2  # clockwise (Act II starts after the finder of the second victim)
        if turn["phase"] == "act1":
            found += turn["victims"]
            assert turn["penalties"] == (0 if turn["victims"] else 1)
        elif turn["action"] == "suspect" and not turn.get("ground_floor_case"):
            assert turn["penalties"] == sum(v == 0 for v in turn["placed"].values())
    assert found == 2 and sorted(g["crime_scenes"]) == g["crime_scenes"]
    assert len(tr["lifts"]) == len(tr["closes"]) == len(g["turns"])
    for lift, close in zip(tr["lifts"], tr["closes"], strict=True):
        assert lift["exposed"] == close["exposed"] and lift["t"] < close["t"]
    assert all(lf["t"] < rm["t"] for rm in tr["removals"]
               for lf in tr["lifts"][-1:] if rm["t"] > lf["t"])
    thrown = {p: sum(x.get("who") == p and x["kind"] in ("prologue", "penalty")
                     for x in tr["landings"]) for p in g["players"]}
    on_sheet = {p: sum(v) for p, v in g["sheet"].items()}
    for p in g["players"]:  # 20 each: supply + thrown from it + put on the sheet
        assert g["supply"][p] + thrown[p] + on_sheet[p] == 20
    throwbacks = sum(k == "throwback" for k in kinds)
    assert throwbacks == sum(t["removed"] - t.get("victims", 0) for t in g["turns"]) \
        + len(tr["fallouts"])


# -- what the sensors say ---------------------------------------------------------------------


def _isolated(tr: dict[str, Any], t: float, before: float, after: float) -> bool:
    times = [i[0] for x in tr["landings"] for i in x["impacts"]] + [x["t"] for x in tr["landings"]]
    times += [x["t"] for k in ("knocks", "lifts", "closes", "removals") for x in tr[k]]
    return not any(t - before < u < t + after for u in times if abs(u - t) > 1e-6)


def test_landings_step_their_own_level_by_the_cube_mass(recs: dict[str, Recording]) -> None:
    checked = 0
    for name in ("single", "rapid", "noisy"):
        r = recs[name]
        cpg = r.sc.tw.cpg
        for x in r.truth["landings"]:
            t = x["t"]
            if x["knocked"] or not _isolated(r.truth, x["t_first_impact"], 1.2, 0.0) \
                    or not _isolated(r.truth, t, 0.0, 1.0):
                continue
            for ch in range(8):
                step = np.median(r.d.load_g(ch, t + 0.35, t + 0.9, cpg[ch])) \
                    - np.median(r.d.load_g(ch, x["t_first_impact"] - 1.0,
                                           x["t_first_impact"] - 0.1, cpg[ch]))
                want = x["mass_g"] if ch == x["floor"] else 0.0
                assert step == pytest.approx(want, abs=0.06), (name, t, ch)
            checked += 1
    assert checked >= 5


def test_lifted_levels_read_invalid_until_closed(recs: dict[str, Recording]) -> None:
    r = recs["game"]
    d = r.d
    assert any(x["exposed"] < 7 for x in r.truth["lifts"])
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        k = lift["exposed"]
        sel = (d.ld_t > lift["t"] + 0.02) & (d.ld_t < close["t"])
        assert sel.sum() >= 20
        v = d.ld_valid[sel]
        assert np.all(v & (0xFF << (k + 1)) & 0xFF == 0)  # modules k+1..7 are off
        assert np.all(v & ((1 << (k + 1)) - 1) == (1 << (k + 1)) - 1)
        assert np.all(d.ld[sel][:, k + 1:] == 0)
        back = (d.ld_t > close["t"] + 0.25) & (d.ld_t < close["t"] + 0.8)
        assert np.all(d.ld_valid[back] == 0xFF)
    assert d.status[-1][1] == sum(7 - x["exposed"] for x in r.truth["lifts"]
                                  if x["t"] < d.ld_t[-1] - 1)


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Recording]) -> None:
    r = recs["game"]
    cpg = r.sc.tw.cpg
    assert r.truth["removals"]
    for rm in r.truth["removals"]:
        k = rm["floor"]
        press = [x for x in r.sc.presses if abs(r.sc.st(x[1]) - rm["t"]) < 1e-3]
        t_press = r.sc.st(press[0][0])
        before = np.median(r.d.load_g(k, t_press - 0.5, t_press - 0.05, cpg[k]))
        after = np.median(r.d.load_g(k, rm["t"] + 0.25, rm["t"] + 0.6, cpg[k]))
        assert after - before == pytest.approx(-rm["mass_g"], abs=0.07)


def test_neighbour_thumps_are_common_mode_and_weigh_nothing() -> None:
    """Tower 1's neighbour 0.66 m along the table throws four cubes: every piezo hears
    low thumps, no load cell moves, and nothing lands on our tower."""
    sc = _bare(1, 14.0, gl_lsb=0.0, gl_spike=0.0)  # no ground loop: the table alone
    assert sc.tw.neighbours[0]["distance_m"] < 0.7
    for i, t in enumerate((7.0, 7.55, 8.2)):
        sc.neighbour_throw(t, 0, hand=2 if i == 1 else 1)
    r = _rec(sc)
    fs = sc.tw.piezo_rate_hz
    assert not r.truth["landings"]
    quiet, thump = r.d.piezo(3.0, 6.5), r.d.piezo(7.0, 9.0)
    lo_q, lo_t, hi_t = (np.array([_band_rms(x[:, ch], fs, lo, hi) / np.sqrt(len(x))
                                  for ch in range(8)])
                        for x, lo, hi in ((quiet, 30, 250), (thump, 30, 250),
                                          (thump, 300, fs / 2)))
    assert np.sum(lo_t > 1.5 * lo_q) >= 5
    loud = int(np.argmax(lo_t))
    assert lo_t[loud] > 2 * hi_t[loud]  # low thumps, not the plates' ring
    sos = signal.butter(2, [30, 250], btype="band", fs=fs, output="sos")
    corr = np.corrcoef(signal.sosfiltfilt(sos, thump, axis=0).T)
    assert corr.min() > 0.35  # the same table wave on all eight: common mode
    dev = np.abs(thump - np.median(quiet, axis=0)).max(axis=0)
    assert dev.min() > 0.1 * dev.max() and dev.max() > 10
    for ch in range(8):
        step = np.median(r.d.load_g(ch, 9.5, 13.5, sc.tw.cpg[ch])) - np.median(
            r.d.load_g(ch, 3.0, 6.5, sc.tw.cpg[ch]))
        assert abs(step) < 0.01
    # an own landing, by contrast, is loudest on one or two levels
    own = _bare(1, 14.0, gl_lsb=0.0, gl_spike=0.0)
    own.throw(7.0, own.new_cube("blue"), style="hard")
    r2 = _rec(own)
    lv = r2.truth["landings"][0]["floor"]
    dev2 = np.abs(r2.d.piezo(7.0, 7.6) - np.median(r2.d.piezo(3.0, 6.5), axis=0)).max(axis=0)
    assert dev2[lv] > 5 * np.median(dev)
    assert np.median(r2.d.load_g(lv, 9.0, 13.0, own.tw.cpg[lv])) - np.median(
        r2.d.load_g(lv, 3.0, 6.5, own.tw.cpg[lv])) > 0.3


def test_pa_music_puts_bass_on_every_piezo() -> None:
    """A four-on-the-floor kick and a bass line (41-110 Hz) through floor and table."""
    tw = AK.make_tower(SEED)
    spectra = {}
    for on in (False, True):
        sc = _bare(SEED, 16.0, gl_lsb=0.0, gl_spike=0.0)
        if on:
            sc.music.append({"t": 0.0, "t_end": sc.dur, "bpm": 120.0, "kick_ms2": 0.2,
                             "bass_ms2": 0.1, "root_hz": 45.0, "seed": 3})
        x = _rec(sc).d.piezo(2.0, 14.0)
        spectra[on] = [(_band_rms(x[:, c], tw.piezo_rate_hz, 40, 120),
                        _band_rms(x[:, c], tw.piezo_rate_hz, 300, 900)) for c in range(8)]
        if on:  # the kicks come every beat (0.5 s at 120 bpm)
            env = np.abs(x[:, 3] - x[:, 3].mean())
            env = np.convolve(env, np.ones(100) / 100, mode="same")
            spec = np.fft.rfft(env - env.mean(), 2 * len(env))
            ac = np.fft.irfft(np.abs(spec) ** 2)[: len(env)]
            lag = int(0.5 * tw.piezo_rate_hz)
            assert ac[lag] > 0.3 * ac[0] and ac[lag] > 2 * ac[lag // 2]
    bass = np.array([spectra[True][c][0] / spectra[False][c][0] for c in range(8)])
    assert np.all(bass > 4) and np.median(bass) > 8  # the bass band, on every level
    for c in range(8):
        assert spectra[True][c][1] < 1.5 * spectra[False][c][1]  # not the plates' band


def test_a_forklift_rumbles_past() -> None:
    sc = _bare(SEED, 30.0, gl_lsb=0.0, gl_spike=0.0)
    sc.vehicles.append({"t": 8.0, "t_peak": 15.0, "t_end": 22.0, "kind": "forklift",
                        "peak_ms2": 0.2, "seed": 4})
    r = _rec(sc)
    fs = sc.tw.piezo_rate_hz

    def rumble(t0: float) -> float:
        x = r.d.piezo(t0, t0 + 2.0)
        return float(np.mean([_band_rms(x[:, c], fs, 15, 70) for c in range(8)]))

    before, rising, peak, falling, after = (rumble(t) for t in (3.0, 10.0, 14.0, 18.0, 25.0))
    assert peak > 3 * before and peak > 3 * after
    assert before < rising < peak and peak > falling > after


def test_the_ground_loop_hums_on_every_pin_alike() -> None:
    """Tower 5's long cable: 50 Hz and harmonics, the same phase on all eight pins."""
    sc = _bare(5, 12.0)
    tw = sc.tw
    assert tw.gl_lsb > 3
    x = _rec(sc).d.piezo(1.0, 11.0)
    fs = tw.piezo_rate_hz
    spec = np.fft.rfft((x - x.mean(axis=0)) * np.hanning(len(x))[:, None], axis=0)
    f = np.fft.rfftfreq(len(x), 1 / fs)
    i50 = int(np.argmin(np.abs(f - 50 * (1 + tw.clock_err))))
    line = spec[i50 - 3:i50 + 4]
    k = np.argmax(np.abs(line).sum(axis=1))
    amp, ph = np.abs(line[k]), np.angle(line[k])
    assert amp.min() > 0.8 * amp.max()  # common mode
    assert np.ptp(np.unwrap(ph)) < 0.3  # within the ADC's channel skew
    noise = np.median(np.abs(spec[(f > 60) & (f < 90)]), axis=0)
    assert np.all(amp > 50 * noise)
    for h in (3,):  # the 150 Hz harmonic stands out too
        ih = int(np.argmin(np.abs(f - 50 * h * (1 + tw.clock_err))))
        assert np.all(np.abs(spec[ih - 3:ih + 4]).max(axis=0) > 10 * noise)


def test_rapid_series_and_handfuls(recs: dict[str, Recording]) -> None:
    for name in ("rapid", "noisy"):
        lands = [x for x in recs[name].truth["landings"] if not x["knocked"]]
        series: dict[int, list[dict[str, Any]]] = {}
        for x in lands:
            if "series" in x:
                series.setdefault(x["series"], []).append(x)
        assert series
        for xs in series.values():
            rel = sorted(x["t_release"] for x in xs if x.get("handful") is None
                         or x["t_release"] == min(y["t_release"] for y in xs
                                                  if y.get("handful") == x["handful"]))
            gaps = np.diff(rel)
            assert np.all((gaps >= 0.3 * 0.995) & (gaps <= 0.8 * 1.005)), gaps
    hands: dict[int, list[float]] = {}
    for x in recs["rapid"].truth["landings"]:
        if x.get("handful") is not None:
            hands.setdefault(x["handful"], []).append(x["t_release"])
    assert hands and all(2 <= len(v) <= 4 for v in hands.values())
    assert all(np.ptp(v) <= 0.041 for v in hands.values())


def test_a_bump_is_felt_by_every_sensor_and_lands_nothing() -> None:
    sc = _bare(SEED, 14.0)
    sc.throw(6.0, sc.new_cube("gray"), style="drop")
    sc.bump(9.0)
    r = _rec(sc)
    tw = sc.tw
    assert [k["t"] for k in r.truth["knocks"]] == [sc.st(9.0)] and len(r.truth["landings"]) == 1
    quiet = r.d.piezo(2.0, 5.5)
    base = np.median(quiet, axis=0)
    shock = np.abs(r.d.piezo(9.0, 9.4) - base).max(axis=0)
    assert np.all(shock > 5 * np.abs(quiet - base).max(axis=0)) and shock.max() > 50
    for ch in range(8):
        g = r.d.load_g(ch, 8.0, 12.5, tw.cpg[ch])
        t = r.d.ld_t[(r.d.ld_t >= 8.0) & (r.d.ld_t < 12.5) & ((r.d.ld_valid >> ch) & 1 == 1)]
        before, shake, after = (np.median(g[t < 8.9]), np.abs(g[(t > 9.0) & (t < 9.7)]
                                                               - np.median(g[t < 8.9])).max(),
                                np.median(g[t > 11.0]))
        assert shake > 0.05 and abs(after - before) < 0.03, ch


def test_a_loose_disc_hits_twice() -> None:
    """Tower 9's level-5 disc is loose: a strike on its plate gives a second hit."""
    out = {}
    for loose in (5, -1):
        sc = _bare(9, 10.0, loose=loose)
        sc.impacts.append(AK.Impact(6.0, 5, 1.2, "plate", 0.6, (1.0, 0.6, 0.4, 0.3)))
        x = _rec(sc).d
        base = np.median(x.piezo(2.0, 5.5)[:, 5])
        sel = (x.pz_t >= 6.0) & (x.pz_t < 6.04)
        out[loose] = x.pz[sel, 5] - base
    tw = AK.make_tower(9)
    assert tw.loose == 5
    diff = np.abs(out[5] - out[-1])
    late = int(tw.loose_gap_ms * 1e-3 * tw.piezo_rate_hz)
    assert diff[:late].max() < 0.2 * diff.max()  # the first hit is the same
    assert diff.max() > 0.3 * np.abs(out[-1]).max()  # then the slap


def test_towers_differ_as_teams_built_them() -> None:
    towers = [AK.make_tower(s) for s in range(1, 17)]
    assert len({t.device_id for t in towers}) == 16
    assert {t.load_rate_hz for t in towers} == {10, 80}
    assert len({t.piezo_rate_hz for t in towers}) >= 2 and len({t.batch for t in towers}) >= 4
    assert {t.cells for t in towers} == {"matched", "mixed"}
    assert len({c for t in towers for c in t.capacity_g}) >= 3
    assert {t.clock for t in towers} == {"crystal", "resonator"}
    assert 0 < sum(t.loose >= 0 for t in towers) < 16
    for t in towers:
        assert 3.5 <= t.glue_ratio <= 4.5
        if t.loose < 0:  # glue alone: the levels' sensitivities span the glue ratio
            assert t.sens.max() / t.sens.min() == pytest.approx(t.glue_ratio)
    gl = [t.gl_lsb for t in towers]
    assert max(gl) > 5 * min(gl)
    assert AK.make_tower(3).figures() == AK.make_tower(3).figures()
    json.dumps(towers[0].figures())


def test_load_offsets_creep_after_power_on() -> None:
    """Tower 12 (500 g cells) just plugged in, in a hall warming up: converters and cells
    warm up with their own time constants, so each channel's offset creeps its own way;
    the same tower after hours in a steady hall holds still."""
    tw = AK.make_tower(12)
    creep = {}
    for fresh in (True, False):
        sc = _bare(12, 100.0, walk_g=np.zeros(8))
        sc.age_s = 0.0 if fresh else 1e6
        sc.warm_c_per_h = 5.0 if fresh else 0.0
        sc.draughts = []
        d = _rec(sc).d
        creep[fresh] = np.array([[np.median(d.load_g(c, t, t + 8, tw.cpg[c]))
                                  - np.median(d.load_g(c, 1, 9, tw.cpg[c])) for c in range(8)]
                                 for t in (45, 90)])
    mid, end = creep[True]
    assert np.abs(end).max() > 0.03
    assert np.all(np.abs(creep[False]) < 0.2 * np.abs(end).max())
    assert np.std(end) > 0.3 * np.abs(end).mean()  # not a common shift
    big = np.abs(end) > 0.5 * np.abs(end).max()
    assert np.all(np.sign(mid[big]) == np.sign(end[big]))  # a creep, not noise
