"""Fast checks of the blind cross-check model AO (tools/crosscheck_ao): game night with
music on the table (a speaker's kick drum and bass line through the table into every disc
and cell, vocals through the air, a phone's 217 Hz buzz, a USB ground hum, dancing, glasses
set down, fingers drumming along with the beat).

The bytes are read as the host reads them: the project's frame decoder (COBS and
CRC-16/CCITT-FALSE), then the message layouts of contracts.md unpacked in
tests/tools/blind_models.py, not with the generator's encoder."""

from __future__ import annotations

import dataclasses
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
    rendered,
    script_and_function_agree,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_ao" / "make_recordings_ao.py"

AO = load_script(SCRIPT, "make_recordings_ao_under_test")
SCORE = load_script(ROOT / "tools" / "crosscheck" / "score.py", "crosscheck_score_for_ao")
SEED = 1  # 2000 sets/s, 80 SPS, the speaker on the table
DURATIONS = {"single": 30.0, "rapid": 25.0, "noisy": 40.0, "game": 80.0}
SILENT = {"volume": [(0.0, 1.0, 0.0)], "gsm": [], "hum_hz": 0.0, "hum_lsb": 0.0,
          "hum_counts": 0.0, "dances": [], "air_lsb": 0.0, "low_cut_hz": 0.0}


@pytest.fixture(scope="module")
def recs() -> dict[str, Recording]:
    return {sc: rendered(AO, AO.simulate(SEED, sc, dur)) for sc, dur in DURATIONS.items()}


def _song(t0: float, t1: float, bpm: float, pattern: str = "four") -> Any:
    steps = {"four": [0, 4, 8, 12], "broken": [0, 3, 8, 10], "halftime": [0, 10],
             "ambient": []}[pattern]
    return AO.Song(t_start=t0, t_end=t1, bpm=bpm, pattern=pattern, kick_hz=55.0,
                   kick_decay_s=0.08, level=1.0, bass_root_hz=50.0, vocals=False, steps=steps)


def _bare(seed: int, duration: float, songs: list[Any], **over: Any) -> Any:
    """A scene with only the music given (no hum, no phone, nobody about, no throws)."""
    return AO.new_scene(seed, "single", duration, **{**SILENT, "songs": songs, **over})


def _band(x: np.ndarray, fs: float, lo: float, hi: float) -> np.ndarray:
    spec = np.fft.rfft(x - x.mean(axis=0), axis=0)
    f = np.fft.rfftfreq(len(x), 1 / fs)
    spec[(f < lo) | (f >= hi)] = 0
    return np.fft.irfft(spec, n=len(x), axis=0)


def _peak_hz(x: np.ndarray, fs: float, lo: float, hi: float) -> tuple[float, float]:
    """The strongest frequency in [lo, hi) and its height over the band's median."""
    spec = np.abs(np.fft.rfft((x - x.mean()) * np.hanning(len(x))))
    f = np.fft.rfftfreq(len(x), 1 / fs)
    band = (f >= lo) & (f < hi)
    i = int(np.argmax(spec[band]))
    return float(f[band][i]), float(spec[band][i] / np.median(spec[band]))


def _envelope(r: Recording, ch: int, t0: float, t1: float, hop_s: float = 0.01) -> np.ndarray:
    fs = r.d.hello["piezo_rate_hz"]
    x = r.d.piezo(t0, t1)[:, ch]
    x = np.abs(x - np.median(x))
    hop = int(hop_s * fs)
    return x[:len(x) // hop * hop].reshape(-1, hop).mean(axis=1)


def _grams(r: Recording, ch: int, t0: float, t1: float) -> float:
    tw = r.sc.tw
    return float((np.median(r.d.load(ch, t0, t1)) - tw.zero_counts[ch]) / tw.cpg[ch])


# -- wire ------------------------------------------------------------------------------------

def test_crc_and_cobs_follow_the_contract() -> None:
    assert AO.crc16(b"123456789") == 0x29B1 == crc16(b"123456789")
    rng = np.random.default_rng(1)
    for n in (0, 1, 5, 253, 254, 255, 300, 600):
        for x in (bytes(rng.integers(0, 256, n, dtype=np.uint8)),
                  bytes(rng.integers(1, 256, n, dtype=np.uint8)), b"\x00" * n):
            enc = AO.cobs_encode(x)
            assert b"\x00" not in enc and cobs_decode(enc) == x
    fr = AO.frame(0x03, 0x11234, b"\x00\x01\x02")  # seq wraps at 65536
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = cobs_decode(fr[:-1])
    assert msg[:3] == b"\x03\x34\x12" and int.from_bytes(msg[-2:], "little") == crc16(msg[:-2])
    assert AO._decodes(fr[:-1]) and not AO._decodes(fr[3:-1])


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
        assert all((b - a) % 2**32 == n * period
                   for a, b, n in zip(pz, pz[1:], d.pz_sizes, strict=False))
        assert set(d.pz_sizes[:-1]) == {tw.batch} and 1 <= d.pz_sizes[-1] <= 14
        steps = np.diff([t for typ, t in d.raw_t_us if typ == 3]) % 2**32 / 1e6
        assert np.allclose(steps, 1 / (tw.load_rate_hz * (1 + tw.hx_err)), atol=2e-6)
        assert d.raw_t_us[0][0] == 2 and d.pz_t[0] == 0.0  # stream time 0: the first PIEZO
        assert abs(d.pz_t[-1] - r.truth["duration_s"]) < 0.01
        for k in range(8):  # "0 where not valid"
            assert np.all(d.ld[(d.ld_valid >> k) & 1 == 0, k] == 0)
        assert len(r.raw) / r.truth["duration_s"] < 100_000  # within 1 Mbaud 8N1
        idle = np.median(d.piezo(0.5, 3.5), axis=0)  # biased at mid-scale
        np.testing.assert_allclose(idle, tw.bias, atol=1.5)
        assert d.pz.min() >= 0 and d.pz.max() <= 1023
        assert np.all(np.diff([u for u, _ in d.status]) == 1000), name
        if sess["start"] == "boot":
            assert d.msgs[0][:2] == (0x01, 0) and r.raw[0] != 0


def test_stream_time_starts_at_a_piezo_and_a_running_device_mid_frame() -> None:
    found = 0
    for seed in (*range(1, 9), 37, 38):  # 37, 38: 1000 sets/s, 8 and 14 sets a message
        r = rendered(AO, AO.new_scene(seed, "rapid", 15.0))
        sess = r.truth["session"]
        assert r.d.raw_t_us[0][0] == 2 and r.d.pz_t[0] == 0.0 < r.d.ld_t[0]  # PIEZO first
        if sess["start"] != "running":
            continue
        found += 1
        cut = sess["mid_frame_bytes"]
        assert r.raw.index(0) == cut - 1 and not AO._decodes(r.raw[:cut - 1])
        types = [m[0] for m in r.d.msgs]
        i = types.index(0x01)
        assert i == sess["messages_before_hello"] and 1 <= i <= 3 and types[i + 1] == 0x05
    assert found >= 1


def test_same_seed_same_bytes() -> None:
    a = AO.render(AO.simulate(3, "rapid", 16.0))
    b = AO.render(AO.simulate(3, "rapid", 16.0))
    c = AO.render(AO.simulate(4, "rapid", 16.0))
    assert a[0] == b[0] and a[1] == b[1]
    assert a[0] != c[0]


def test_towers_and_rooms_differ() -> None:
    towers = [AO.make_tower(s) for s in range(1, 41)]
    assert len({t.device_id for t in towers}) == 40
    assert {t.load_rate_hz for t in towers} == {10, 80}
    assert {t.piezo_rate_hz for t in towers} == {1000, 1600, 2000}
    for tw in towers:
        assert 0.35 <= tw.cube_g <= 0.75 and tw.p_stop[0] == 1
        assert np.all((tw.cpg > 16_500) & (tw.cpg < 27_000))  # 0.8-1.2 mV/V +-2 %, gain 128
    rooms = [AO.make_room(s, "game", 120.0) for s in range(1, 41)]
    assert {r.placement for r in rooms} == {"table", "laptop", "shelf", "sub"}
    for block in range(5):  # every set of 8 towers has every placement
        assert {AO.placement_of(s) for s in range(1 + 8 * block, 9 + 8 * block)} == {
            "table", "laptop", "shelf", "sub"}
    assert {r.hum_hz for r in rooms} == {0.0, 50.0, 60.0}
    songs = [s for r in rooms for s in r.songs]
    assert {s.pattern for s in songs} == {"four", "broken", "halftime", "ambient"}
    assert all(70 <= s.bpm <= 140 and 120 <= s.t_end - s.t_start <= 300 for s in songs)
    noisy = [AO.make_room(s, "noisy", 120.0) for s in range(1, 41)]
    assert all(len(r.volume) == 2 and r.volume[1][1] > r.volume[0][1] for r in noisy)
    assert np.mean([r.volume[0][1] for r in noisy]) > np.mean([r.volume[0][1] for r in rooms])


def test_command_line_writes_four_truths_per_tower(tmp_path: Path) -> None:
    proc, out1 = script_and_function_agree(
        SCRIPT, AO.main, ["--towers", "1", "--first-seed", "9", "--duration", "15"], tmp_path)
    assert proc.stderr.splitlines() == [f"{s}_t9" for s in AO.SCENARIOS]
    truths = sorted(p.name for p in out1.glob("*.truth.json"))
    assert truths == [f"{s}_t9.truth.json" for s in ("game", "noisy", "rapid", "single")]


@pytest.mark.parametrize(("args", "says"), BAD_COMMAND_LINES)
def test_bad_command_line_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         args: list[str], says: str) -> None:
    assert_refused_in_one_line(AO.main, args, says, tmp_path, capsys)


def test_an_uncreatable_or_unwritable_folder_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_an_unusable_folder_is_one_line(AO.main, tmp_path, capsys)


def test_bad_command_line_from_the_shell(tmp_path: Path) -> None:
    assert_the_shell_gets_one_line(SCRIPT, tmp_path)


# -- the truth -----------------------------------------------------------------------------------

def test_truth_is_what_the_scorer_reads(recs: dict[str, Recording], tmp_path: Path) -> None:
    truths = {name: r.truth for name, r in recs.items()}
    assert_truth_is_what_the_scorer_reads(SCORE, truths, "AO", SEED, DURATIONS, tmp_path)


def test_truth_times_are_ordered_and_knockdowns_land_lower(recs: dict[str, Recording]) -> None:
    knocked = 0
    more = [AO.render(AO.simulate(seed, "rapid", 40.0))[1] for seed in (2, 3)]
    for tr in [r.truth for r in recs.values()] + more:
        q = tr["quiet_until"]
        assert [x["t"] for x in tr["landings"]] == sorted(x["t"] for x in tr["landings"])
        for x in tr["landings"]:
            assert q <= x["t_release"] <= x["t_first_impact"] <= x["t_on_plate"] <= x["t"]
            assert x["t"] < tr["duration_s"] - 0.5 and ("knocked_from" in x) == x["knocked"]
        assert all(x["t"] >= q for x in tr["knocks"] + tr["lifts"])
        for k in tr["knockdowns"]:
            [land] = [x for x in tr["landings"] if x["knocked"] and x["fid"] == k["fid"]
                      and abs(x["t_release"] - k["t"]) < 1e-4]
            assert land["knocked_from"] == k["from"] > land["floor"] == k["to"]
            [by] = [x for x in tr["landings"] if not x["knocked"] and x["fid"] == k["by_fid"]]
            assert by["caused_knockdown"]
            knocked += 1
    assert knocked >= 1


def test_a_game_follows_the_rules(recs: dict[str, Recording]) -> None:
    tr = recs["game"].truth
    g = tr["game"]
    players, n = g["players"], len(g["players"])
    throws = sorted((x for x in tr["landings"] if not x["knocked"]), key=lambda x: x["t_release"])
    kinds = [x["kind"] for x in throws]
    assert kinds[:2] == ["victim", "victim"] and kinds[2:2 + 2 * n] == ["prologue"] * (2 * n)
    first = players.index(g["victims_by"])
    assert [x["colour"] for x in throws[2:2 + 2 * n]] == [
        players[(first + i) % n] for i in range(n) for _ in range(2)]
    assert all(k in ("throwback", "penalty") for k in kinds[2 + 2 * n:])
    turns = g["turns"]
    assert turns and len(tr["lifts"]) == len(tr["closes"]) == len(turns)
    start = players.index(turns[0]["who"])
    for i, (turn, lift, close) in enumerate(zip(turns, tr["lifts"], tr["closes"], strict=True)):
        assert turn["who"] == players[(start + i) % n]
        assert lift["exposed"] == close["exposed"] == turn["floor"] and lift["t"] < close["t"]
        rem = [x for x in tr["removals"] if lift["t"] < x["t"] < close["t"]]
        assert all(x["floor"] == turn["floor"] for x in rem)
        assert sum(x["cubes"] for x in rem) == turn["removed"] == sum(turn["found"].values())
        assert not any(lift["t"] < x["t_release"] < close["t"] for x in throws)
        if turn["action"] == "inspect":
            assert turn["penalties"] == (0 if turn["victims"] else 1)
    for p in players:  # every clue in the supply, on the sheet, or thrown from the supply
        from_supply = sum(x["colour"] == p and x["kind"] in ("prologue", "penalty")
                          for x in throws)
        assert g["supply"][p] + sum(g["sheet"][p]) + from_supply == 20


def test_lifted_levels_read_invalid_and_removals_take_their_weight(
        recs: dict[str, Recording]) -> None:
    r = recs["game"]
    d, tr = r.d, r.truth
    assert tr["lifts"] and tr["removals"]
    for lift, close in zip(tr["lifts"], tr["closes"], strict=True):
        k = lift["exposed"]
        during = (d.ld_t > lift["t"] + 0.02) & (d.ld_t < close["t"])
        for ch in range(8):
            fresh = (d.ld_valid[during] >> ch) & 1
            assert np.all(fresh == (0 if ch > k else 1)), (lift, ch)
        after = (d.ld_t > close["t"] + 0.1) & (d.ld_t < close["t"] + 1.0)
        assert np.all(d.ld_valid[after] == 0xFF)
    for x in tr["removals"]:
        before = _grams(r, x["floor"], x["t"] - 1.2, x["t"] - 0.55)
        after = _grams(r, x["floor"], x["t"] + 0.3, x["t"] + 0.6)
        assert before - after == pytest.approx(x["mass_g"], abs=0.05)


def test_a_lone_landing_steps_its_own_level_by_one_cube(recs: dict[str, Recording]) -> None:
    checked = 0
    for name in ("single", "noisy"):
        r = recs[name]
        tr = r.truth
        busy = [(x["t_release"], x["t"]) for x in tr["landings"]]
        busy += [(k["t"], k["t_end"]) for k in tr["knocks"]]
        for x in tr["landings"]:
            t0, t1 = x["t_release"] - 0.6, x["t"] + 1.0
            own = (x["t_release"], x["t"])
            if x["knocked"] or x.get("caused_knockdown") or t1 > tr["duration_s"] or any(
                    a < t1 and t0 < b and (a, b) != own for a, b in busy):
                continue
            for ch in range(8):
                step = _grams(r, ch, x["t"] + 0.3, x["t"] + 0.9) - \
                    _grams(r, ch, t0, x["t_release"])
                want = x["mass_g"] if ch == x["floor"] else 0.0
                assert step == pytest.approx(want, abs=0.03), (name, x["t"], ch)
            checked += 1
    assert checked >= 3


# -- the music in the bytes ----------------------------------------------------------------------

def test_the_kick_drums_tempo_is_in_the_base_discs_envelope() -> None:
    for bpm in (123.0, 92.0):
        r = rendered(AO, _bare(1, 20.0, [_song(-10.0, 100.0, bpm)], kick_ms2=0.15))
        env = _envelope(r, 0, 2.0, 19.0)
        f, height = _peak_hz(env, 100.0, 0.8, 3.0)
        assert f == pytest.approx(bpm / 60, abs=0.07) and height > 8, (bpm, f, height)
    ambient = rendered(AO, _bare(1, 20.0, [_song(-10.0, 100.0, 92.0, "ambient")],
                                 kick_ms2=0.15))
    _, height = _peak_hz(_envelope(ambient, 0, 2.0, 19.0), 100.0, 0.8, 3.0)
    assert height < 8  # no drums: no beat in the envelope


def test_the_music_fades_with_level_and_a_shelf_speaker_is_faint() -> None:
    table = rendered(AO, _bare(2, 12.0, [_song(-10.0, 100.0, 120.0)], kick_ms2=0.15,
                               placement="table"))
    fs = table.d.hello["piezo_rate_hz"]
    rms = _band(table.d.piezo(1.0, 11.0), fs, 30, 150).std(axis=0)
    assert np.all(np.diff(rms) < 0.02 * rms[0]) and rms[7] < 0.6 * rms[0]
    assert rms[0] > 5 * table.sc.tw.pz_noise[0] / np.sqrt(8)  # the bass band stands out
    shelf = rendered(AO, _bare(2, 12.0, [_song(-10.0, 100.0, 120.0)], kick_ms2=0.008,
                               placement="shelf"))
    assert _band(shelf.d.piezo(1.0, 11.0), fs, 30, 150).std(axis=0)[0] < 0.15 * rms[0]
    laptop = rendered(AO, _bare(2, 12.0, [_song(-10.0, 100.0, 120.0)], kick_ms2=0.15,
                                placement="laptop", low_cut_hz=150.0))
    low = _band(laptop.d.piezo(1.0, 11.0), fs, 30, 80).std(axis=0)[0]
    assert low < 0.1 * _band(table.d.piezo(1.0, 11.0), fs, 30, 80).std(axis=0)[0]


def test_a_gap_between_songs_is_quiet_and_the_volume_goes_up() -> None:
    songs = [_song(-30.0, 7.0, 128.0), _song(10.0, 200.0, 100.0, "broken")]
    r = rendered(AO, _bare(3, 24.0, songs, kick_ms2=0.3,
                           volume=[(0.0, 1.0, 0.0), (15.0, 2.5, 0.5)]))
    fs = r.d.hello["piezo_rate_hz"]
    x = _band(r.d.piezo(0.0, 24.0)[:, 0], fs, 30, 150)
    t = np.arange(len(x)) / fs

    def rms(a: float, b: float) -> float:
        return float(x[(t >= a) & (t < b)].std())

    assert rms(7.6, 9.6) < 0.2 * min(rms(2.0, 6.5), rms(10.5, 14.5))
    assert rms(16.5, 23.5) / rms(10.5, 14.5) == pytest.approx(2.5, rel=0.3)
    assert r.truth["music"]["gaps"] == [[7.0, 10.0]]


def test_cells_feel_the_music_as_a_fraction_of_a_cube_averaged_away_at_10_sps() -> None:
    def spread(rate: int, kick: float) -> float:
        sc = _bare(1, 12.0, [_song(-10.0, 100.0, 120.0)], kick_ms2=kick)
        sc.tw = dataclasses.replace(sc.tw, load_rate_hz=rate, ld_noise=1e-6)
        r = rendered(AO, sc)
        return float(r.d.load(0, 1.0, 11.0).std() / sc.tw.cpg[0])

    loud80, quiet80, loud10 = spread(80, 0.3), spread(80, 0.0), spread(10, 0.3)
    cube = AO.make_tower(1).cube_g
    assert quiet80 < 0.005 < loud80 < 0.5 * cube  # felt, a fraction of a cube
    assert loud10 < 0.5 * loud80  # a 100 ms conversion averages most of it away


def test_table_drumming_is_in_rhythm_and_is_a_knock() -> None:
    sc = _bare(4, 16.0, [_song(-5.0, 100.0, 96.0, "ambient")], kick_ms2=0.0)
    AO.drumming(sc, 5.0, 13.0)
    r = rendered(AO, sc)
    [k] = r.truth["knocks"]
    assert k["kind"] == "drumming" and len(k["taps"]) >= 8
    grid = (np.array(k["taps"]) - (-5.0)) / k["step_s"]
    assert np.all(np.abs(grid - np.round(grid)) * k["step_s"] < 0.03)  # on the song's grid
    assert k["step_s"] == pytest.approx(60 / 96 / round(60 / 96 / k["step_s"]), abs=1e-4)
    fs = r.d.hello["piezo_rate_hz"]
    x = np.abs(r.d.piezo(0.0, 16.0)[:, 0] - r.sc.tw.bias[0])
    thr = 6 * x[: int(4 * fs)].std() + 3
    onsets: list[float] = []
    for i in np.flatnonzero(x > thr):
        if not onsets or i / fs - onsets[-1] > 0.06:
            onsets.append(i / fs)
    assert len(onsets) >= 0.8 * len(k["taps"])
    for o in onsets:  # every onset the disc heard is a tap of the truth
        assert min(abs(o - t) for t in k["taps"]) < 0.01
    loud = np.abs(r.d.piezo(5.0, 13.0) - r.sc.tw.bias).max(axis=0)
    assert loud[0] > loud[7]  # through the base: strongest at the ground floor


def test_a_phone_buzzes_at_217_hz_and_usb_hum_reaches_discs_and_cells() -> None:
    sc = _bare(5, 16.0, [], gsm=[(4.0, 9.0)], gsm_lsb=5.0, hum_hz=50.0, hum_lsb=2.0,
               hum_counts=60.0)
    r = rendered(AO, sc)
    fs = r.d.hello["piezo_rate_hz"]
    f, h = _peak_hz(r.d.piezo(4.2, 8.8)[:, 3], fs, 150, 300)
    assert f == pytest.approx(216.7, abs=1.0) and h > 20
    _, h_after = _peak_hz(r.d.piezo(10.0, 15.0)[:, 3], fs, 200, 235)
    assert h_after < h / 4
    f, h = _peak_hz(r.d.piezo(10.0, 15.0)[:, 6], fs, 30, 150)
    assert f == pytest.approx(50.0, abs=0.5) and h > 20
    tw = r.sc.tw
    rate = tw.load_rate_hz * (1 + tw.hx_err)
    folded = abs(50.0 - round(50.0 / rate) * rate)
    f, h = _peak_hz(r.d.load(2, 1.0, 15.0), rate, 1.0, rate / 2)
    assert f == pytest.approx(folded, abs=0.3) and h > 5  # aliased by the HX711's rate
