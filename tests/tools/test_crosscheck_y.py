"""Fast checks of the blind cross-check model Y (tools/crosscheck_y): a worn cardboard tower
at children's game night (ledge plates, damp thuds, tired contacts, brown-outs)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import FrameDecoder, Hello, Load, Piezo, Status
from tests.scripts import (
    TOOLS,
    check_row_encoders,
    check_scored_perfect,
    check_truth,
    check_unknown_scenario_refused,
    check_wire_encoder,
    check_workers_same_bytes,
    decode_stream,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_y" / "make_recordings_y.py"
Y = load_script(SCRIPT, "make_recordings_y")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_y")
DUR = 30.0
SEED = 3
BROWN_SEED = 1  # its ATmega's brown-out detector is fused at 4.3 V


@pytest.fixture(scope="module")
def recordings() -> dict[str, tuple[bytes, dict[str, Any]]]:
    return {sc: Y.generate(SEED, sc, DUR) for sc in Y.SCENARIOS}


@pytest.fixture(scope="module")
def game_world() -> tuple[Any, bytes, dict[str, Any]]:
    """A game with inspections, on a kit whose contacts chatter and whose cubes shift."""
    w, raw, truth = Y.simulate(4, "game", 75.0)
    assert truth["lifts"] and truth["removals"] and truth["shifts"] and not truth["damage"]
    return w, raw, truth


@pytest.fixture(scope="module")
def game(game_world: tuple[Any, bytes, dict[str, Any]]) -> tuple[bytes, dict[str, Any]]:
    return game_world[1], game_world[2]


@pytest.fixture(scope="module")
def brownout_game() -> tuple[bytes, dict[str, Any]]:
    raw, truth = Y.generate(BROWN_SEED, "game", 60.0)
    assert truth["damage"], "the 4.3 V kit browns out when many modules are put back"
    return raw, truth


def _frames(raw: bytes) -> tuple[list[Any], Any]:
    dec = FrameDecoder()
    frames: list[Any] = []
    for i in range(0, len(raw), 3001):
        frames += dec.feed(raw[i:i + 3001])
    return frames, dec.stats


def _grams(d: Any, tw: Any, ch: int, t0: float, t1: float) -> float:
    sel = d.fresh(ch) & (d.load_t >= t0) & (d.load_t < t1)
    assert sel.sum() >= 5, (ch, t0, t1)
    return float((np.median(d.load_values[sel, ch]) - tw.offset[ch]) / tw.cpg[ch])


# -- wire ---------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract() -> None:
    check_wire_encoder(Y)
    check_row_encoders(Y)
    rng = np.random.default_rng(2)
    for n in (0, 1, 7, 200, 254):
        data = bytes(rng.integers(0, 3, n, dtype=np.uint8))
        assert Y.cobs_decode_own(Y.cobs_encode(data)) == data
    # Every frame of a recording (encoded many at once) is the one-frame encoder's.
    raw, _ = Y.generate(2, "single", 6.0)
    chunks = raw.split(b"\x00")
    assert chunks[0] == b"" and chunks[-1] == b""
    for chunk in chunks[1:-1]:
        msg = Y.cobs_decode_own(chunk)
        assert Y.frame(msg[0], int.from_bytes(msg[1:3], "little"), msg[3:-2]) == chunk + b"\x00"


def test_streams_decode_clean(recordings: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    for sc, (raw, truth) in recordings.items():
        frames, stats = _frames(raw)
        assert raw[:1] == b"\x00", "setup() opens with a delimiter"
        assert stats.crc_errors == stats.framing_errors == stats.lost_messages == 0, sc
        assert stats.unknown_types == stats.resets == 0 and not truth["damage"]
        assert isinstance(frames[0].msg, Hello) and frames[0].seq == 0
        assert all((b.seq - a.seq) % 65536 == 1 for a, b in zip(frames, frames[1:],
                                                                 strict=False))
        h = frames[0].msg
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits, h.piezo_rate_hz) == (1, 8, 8, 10, 2000)
        assert h.load_rate_hz == round(truth["tower"]["load_rate_hz"])
        assert isinstance(frames[1].msg, Piezo), "the first data message is a PIEZO"
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        assert sum(len(m.samples) for m in pz) == int(DUR * 2000)
        st = np.array([m.t_us for m in pz], np.int64)
        assert np.all(np.diff(st) == 500 * np.array([len(m.samples) for m in pz[:-1]]))
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        rate = truth["tower"]["load_rate_hz"]
        assert abs(len(loads) - (DUR - 0.06) * rate) <= 2
        assert len([f for f in frames if isinstance(f.msg, Status)]) == int(DUR)


def test_idle_tower_is_quiet(recordings: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    tw = Y.make_tower(SEED)
    for raw, truth in recordings.values():
        d = decode_stream(raw)
        q = d.piezo_t < truth["quiet_s"] - 0.1
        pz = d.piezo[q].astype(float)
        assert np.all(np.abs(pz.mean(axis=0) - tw.piezo_bias) < 0.3)
        assert np.all(np.abs(pz.std(axis=0) - np.hypot(tw.piezo_noise, 0.29)) < 0.15)
        lq = d.load_t < truth["quiet_s"] - 0.1
        noise = d.load_values[lq].std(axis=0)
        assert np.all(np.abs(noise / tw.load_noise - 1) < 0.25)
        assert np.all(np.abs(d.load_values[lq].mean(axis=0) - tw.offset) < 3 * tw.load_noise)


# -- determinism, command line, truth ------------------------------------------------


def test_determinism_and_kit_from_seed() -> None:
    a = Y.generate(11, "noisy", 10.0)
    assert a == Y.generate(11, "noisy", 10.0)
    assert Y.generate(12, "noisy", 10.0)[0] != a[0]
    assert Y.generate(11, "single", 10.0)[1]["tower"] == a[1]["tower"]


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 10)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")


def test_truth_is_what_the_scorer_reads(recordings: dict[str, tuple[bytes, dict[str, Any]]],
                                        game: tuple[bytes, dict[str, Any]]) -> None:
    for sc, (_raw, truth) in recordings.items():
        check_truth(truth, SCORE, scenario=sc, seed=SEED, duration_s=DUR)
        check_scored_perfect(truth, SCORE)
        assert truth["model"] == "Y" and truth["tower"]["ledge_levels"]
        last = DUR - Y.end_free_s(DUR)
        assert all(x["t_release"] <= last for x in truth["landings"] if not x["knocked"])
        for x in truth["landings"]:
            assert x["t_first_impact"] <= x["t_on_floor"] < x["t"]
    check_truth(game[1], SCORE, scenario="game", seed=4, duration_s=75.0)


# -- physics ------------------------------------------------------------------------------


def test_ledge_share_and_creep_in_the_bytes() -> None:
    """A cube beside the ledge weighs its share, creeping away; on the far side all of it."""
    tw = Y.make_tower(SEED)
    lv = int(np.argmax(tw.creep_frac))
    plain = next(x for x in range(8) if tw.share_near[x] == 1.0)
    assert tw.share_near[lv] < 0.75 and tw.creep_frac[lv] >= 0.04
    w = Y.World(tw, np.random.default_rng(1), 90.0, kids=False)
    near, far, other = w.new_cube("blue"), w.new_cube("gray"), w.new_cube("white")
    w._put(near, lv, -1.0, 5.0, 5.0)
    w._put(other, plain, -1.0, 6.0, 6.0)
    w._put(far, lv, 1.0, 60.0, 60.0)
    raw, damage = Y.build_stream(w, 90.0, np.random.default_rng(2))
    assert not damage
    d = decode_stream(raw)
    g = [_grams(d, tw, lv, a, a + 0.8) for a in (4.0, 5.3, 58.8, 60.3, 89.0)]
    assert g[0] == pytest.approx(0.0, abs=0.003)
    assert g[1] == pytest.approx(near.mass_g * tw.share_near[lv], rel=0.02)
    expect = near.stint.load_g(59.2)
    assert g[2] == pytest.approx(expect, abs=0.003)
    assert g[1] - g[2] > 0.004, "the share creeps to the ledge"
    assert g[3] - g[2] == pytest.approx(far.mass_g, rel=0.03), "the far side: all of it"
    assert _grams(d, tw, plain, 7.0, 8.0) - _grams(d, tw, plain, 4.0, 5.0) == pytest.approx(
        other.mass_g, rel=0.02)


def test_landings_step_by_their_share(recordings: dict[str, tuple[bytes, dict[str, Any]]]
                                      ) -> None:
    tw = Y.make_tower(SEED)
    checked = shares = 0
    for sc in ("single", "rapid", "noisy"):
        raw, truth = recordings[sc]
        d = decode_stream(raw)
        busy = truth["landings"] + [{"t": k["t"], "floor": k["from_floor"]}
                                    for k in truth["knockdowns"]]
        for ld in truth["landings"]:
            f = ld["floor"]
            near = [e for e in busy if e is not ld and e["floor"] == f
                    and abs(e["t"] - ld["t"]) < 2.0]
            knock = [k for k in truth["knocks"] if k["t"] - 1.5 < ld["t"] + 1.0
                     and k["t_end"] + 1.5 > ld["t_first_impact"] - 0.5]
            if near or knock or ld["t"] > DUR - 1.2:
                continue
            step = _grams(d, tw, f, ld["t"] + 0.3, ld["t"] + 0.9) - _grams(
                d, tw, f, ld["t_first_impact"] - 0.5, ld["t_first_impact"] - 0.05)
            assert step == pytest.approx(ld["load_g"], abs=0.01), ld
            assert ld["load_g"] == pytest.approx(ld["mass_g"] * ld["share"], abs=1e-3)
            checked += 1
            shares += ld["share"] < 0.95
    assert checked >= 5 and shares >= 1


def test_damp_plates_thud_and_loose_discs_hear_little() -> None:
    tw = Y.make_tower(SEED)
    w = Y.World(tw, np.random.default_rng(1), 12.0, kids=False)
    for lv in range(8):
        w.impacts.append(Y.Impact(4.0 + lv, lv, 6e-4, 0.0, 0.0012))
    raw, _ = Y.build_stream(w, 12.0, np.random.default_rng(2))
    d = decode_stream(raw)
    for lv in range(8):
        x = d.piezo_window(4.0 + lv - 0.01, 4.0 + lv + 0.3)[:, lv] - tw.piezo_bias[lv]
        peak = np.abs(x).max()
        assert peak == pytest.approx(6e-4 * tw.piezo_gain[lv], rel=0.2, abs=2.0)
        if lv in tw.deaf:
            assert peak < 15
            continue
        i = int(np.argmax(np.abs(x)))
        seg = x[max(0, i - 10):i + 200]
        spec = np.abs(np.fft.rfft(seg - seg.mean(), 2048))
        f = np.fft.rfftfreq(2048, 1 / 2000)[np.argmax(spec)]
        assert f == pytest.approx(tw.mode_f[lv, 0], rel=0.2), "a low thud, not a click"
        assert f < 400
        assert np.sqrt(np.mean(x[i + 80:i + 120] ** 2)) < 0.12 * peak, "dead within 40 ms"
    assert len(tw.deaf) >= 1


def test_bounce_outs_sound_on_the_table_but_weigh_nothing() -> None:
    tw = Y.make_tower(8)
    w = Y.World(tw, np.random.default_rng(5), 1.0, kids=True)
    results = [w.throw(0.0, w.new_cube("blue"), "t") for _ in range(400)]
    out = sum(r is None for r in results)
    assert 0.01 * 400 <= out <= 0.2 * 400
    floors = np.bincount([r["floor"] for r in results if r is not None], minlength=8)
    assert np.all(floors > 0) and floors[0] < 0.2 * floors.sum()
    # In the bytes: the table hears it through the base, no cell weighs it.
    found = 0
    for seed in (8, 13, 3):
        raw, truth = Y.generate(seed, "rapid" if seed == 3 else "game", 60.0)
        d = decode_stream(raw)
        tw = Y.make_tower(seed)
        for bo in truth["bounce_outs"]:
            t0, t1 = bo["t_rim"] - 0.3, bo["t_table"] + 0.8
            if any(x["t_first_impact"] - 0.6 < t1 and x["t"] + 0.6 > t0
                   for x in truth["landings"]):
                continue
            x = d.piezo_window(bo["t_table"] - 0.002, bo["t_table"] + 0.05)[:, 0]
            assert np.abs(x - tw.piezo_bias[0]).max() > 4 * tw.piezo_noise[0] + 1
            for ch in range(8):
                step = _grams(d, tw, ch, t1, t1 + 0.4) - _grams(d, tw, ch, t0 - 0.4, t0)
                assert abs(step) < 0.01
            found += 1
    assert found >= 1


def test_lifts_open_contacts_hum_and_chatter(game: tuple[bytes, dict[str, Any]]) -> None:
    raw, truth = game
    tw = Y.make_tower(4)
    d = decode_stream(raw)
    period = 1 / truth["tower"]["load_rate_hz"]
    gaps = []
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        assert close["exposed"] == lift["exposed"] and close["t"] > lift["t"] + 1
        gaps += [(lift["t"], close["t"], lift["exposed"])]
        gaps += [(a, b, close["exposed"]) for a, b in close["chatter"]]
    checked = 0
    for i, t in enumerate(d.load_t):
        expect = 0xFF
        for a, b, k in gaps:
            if abs(t - a) < 0.001 or abs(t - b - 4 * period) < 0.001:
                expect = -1
                break
            if a < t < b + 4 * period:
                expect &= (1 << (k + 1)) - 1
        if expect >= 0:
            assert d.load_valid[i] == expect, (t, d.load_valid[i], expect)
            checked += 1
    assert checked > 0.99 * len(d.load_t)
    assert sum(len(c["chatter"]) for c in truth["closes"]) >= 2
    # Lifted discs float: mains hum of their own size; connected ones stay quiet.
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        sel = (d.piezo_t > lift["t"] + 0.5) & (d.piezo_t < close["t"] - 0.05)
        tt = d.piezo_t[sel]
        for ch in range(8):
            x = d.piezo[sel, ch].astype(float)
            tch = tt + ch / 16000
            amp = 2 * np.abs(np.mean((x - x.mean()) * np.exp(-2j * np.pi * 50 * tch)))
            if ch > k:
                assert amp == pytest.approx(tw.hum_open[ch], rel=0.2, abs=0.5)
            else:
                assert amp < 0.8


def test_removals_shifts_and_fall_outs_in_the_bytes(
        game_world: tuple[Any, bytes, dict[str, Any]]) -> None:
    w, raw, truth = game_world
    tw = Y.make_tower(4)
    d = decode_stream(raw)
    for rm in truth["removals"]:
        f = rm["floor"]
        later = [r["t"] for r in truth["removals"] if r["floor"] == f and r["t"] > rm["t"]]
        t_after = min([rm["t"] + 0.8] + [x - 0.1 for x in later])
        drop = _grams(d, tw, f, rm["t_touch"] - 0.5, rm["t_touch"] - 0.05) - _grams(
            d, tw, f, rm["t"] + 0.25, t_after)
        assert drop == pytest.approx(rm["load_g"], abs=0.012), rm
    moved = crept = 0
    for close, lift in zip(truth["closes"], truth["lifts"], strict=True):
        for lv in range(lift["exposed"] + 1, 8):
            shifted = sum(s["delta_g"] for s in truth["shifts"] if s["t"] == close["t"]
                          and s["floor"] == lv)
            fell = [f for f in truth["fall_outs"]
                    if lift["t"] < f["t"] < close["t"] and f["from_floor"] == lv]
            tc, eps = close["t"], 1e-6
            assert w.expected_g(lv, tc + eps) - w.expected_g(lv, tc - eps) == pytest.approx(
                shifted, abs=2e-4)
            for f in fell:
                assert w.expected_g(lv, f["t"] + eps) - w.expected_g(lv, f["t"] - eps) == \
                    pytest.approx(-f["load_g"], abs=2e-4)
            delta = shifted - sum(f["load_g"] for f in fell)
            landed = [x for x in truth["landings"] if x["floor"] == lv
                      and close["t"] < x["t_first_impact"] < close["t"] + 1.6]
            if landed:
                continue
            t0, t1 = lift["t"] - 0.35, close["t"] + 0.7
            before = _grams(d, tw, lv, t0 - 0.25, t0 + 0.25)
            after = _grams(d, tw, lv, t1 - 0.2, t1 + 0.2)
            model = w.expected_g(lv, t1) - w.expected_g(lv, t0)
            assert after - before == pytest.approx(model, abs=0.006), (lv, close)
            moved += abs(delta) > 0.03
            crept += model - delta < -0.003  # the rest crept away to the ledge
    assert moved >= 1 and crept >= 1


def test_table_knocks_shake_but_weigh_nothing(
        recordings: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    raw, truth = recordings["noisy"]
    tw = Y.make_tower(SEED)
    d = decode_stream(raw)
    assert truth["knocks"]
    for kn in truth["knocks"]:
        t0, t1 = kn["t"], kn["t_end"]
        if any(x["t_first_impact"] - 1.0 < t1 + 1.0 and x["t"] + 1.0 > t0 - 0.6
               for x in truth["landings"]) or t1 + 1.4 > DUR:
            continue
        x = d.piezo_window(t0 - 0.01, t1 + 0.1)[:, 0]
        assert np.abs(x - tw.piezo_bias[0]).max() > 3
        shaken = 0.0
        for ch in range(8):
            step = _grams(d, tw, ch, t1 + 0.8, t1 + 1.3) - _grams(d, tw, ch, t0 - 0.6, t0 - 0.1)
            assert abs(step) < 0.01
            win = d.fresh(ch) & (d.load_t > t0) & (d.load_t < t1 + 0.4)
            dev = (d.load_values[win, ch] - np.median(d.load_values[win, ch])) / tw.cpg[ch]
            shaken = max(shaken, float(np.abs(dev).max()))
        assert shaken > 0.03


def test_game_follows_the_rules(game: tuple[bytes, dict[str, Any]]) -> None:
    _raw, truth = game
    throws = [x for x in truth["landings"] if not x["knocked"]]
    kinds = [x["kind"] for x in throws]
    assert kinds[:2] == ["victim", "victim"] and {x["colour"] for x in throws[:2]} == {"red"}
    n_pro = kinds.count("prologue")
    assert n_pro >= 6 and n_pro % 2 == 0
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        rem = [r for r in truth["removals"] if lift["t"] < r["t"] < close["t"]]
        assert all(r["floor"] == lift["exposed"] for r in rem)
        assert not [x for x in throws if lift["t"] < x["t_release"] < close["t"]]
        after = [x for x in throws if x["t_release"] > close["t"]]
        assert not after or after[0]["kind"].startswith(("throw_back", "penalty"))
        back = sum(r["cubes"] for r in rem) - sum(c == "red" for r in rem for c in r["colours"])
        back += sum(1 for f in truth["fall_outs"] if lift["t"] < f["t"] < close["t"])
        nxt = [x["t"] for x in truth["lifts"] if x["t"] > close["t"]]
        until = nxt[0] if nxt else math.inf
        thrown = [x for x in throws if close["t"] < x["t_release"] < until
                  and x["kind"].startswith("throw_back")]
        assert len(thrown) == back or not nxt


def test_brownout_reboots_as_the_truth_says(brownout_game: tuple[bytes, dict[str, Any]]
                                            ) -> None:
    raw, truth = brownout_game
    tw = Y.make_tower(BROWN_SEED)
    assert truth["tower"]["bod_fuse_v"] == 4.3
    frames, stats = _frames(raw)
    spans = truth["damage"]
    assert stats.resets == len(spans) and stats.lost_messages == 0
    assert stats.crc_errors + stats.framing_errors == sum(s["cut_frame"] for s in spans)
    closes = {c["t"]: c for c in truth["closes"]}
    assert sum(c["brownout"] for c in closes.values()) == len(spans)
    hellos = [i for i, f in enumerate(frames) if isinstance(f.msg, Hello)]
    assert len(hellos) == len(spans) + 1
    shift = 0.0
    t0_us = frames[1].msg.t_us
    for span, i in zip(spans, hellos[1:], strict=True):
        assert frames[i].seq == 0 and frames[i + 1].seq == 1
        assert isinstance(frames[i + 1].msg, Piezo)
        assert frames[i + 1].msg.t_us == span["t_us_after"] < 100_000
        before = [f.msg for f in frames[:i] if isinstance(f.msg, Piezo | Load)]
        if shift == 0.0:
            last_world = max((m.t_us - t0_us) / 1e6 for m in before)
        else:
            last_world = max(m.t_us / 1e6 for m in before[-400:]) + shift
        assert last_world + span["gap_s"] == pytest.approx(span["t_end"], abs=2e-6)
        assert 0.066 < span["t_end"] - span["t_start"] < 0.14
        assert any(abs(span["t_start"] - c) < 0.003 for c in closes)
        shift = span["t_end"] - span["t_us_after"] / 1e6
        # The bias dividers recharge after the dip: every disc reads low at first.
        first = frames[i + 1].msg.samples.astype(float)
        k = closes[min(closes, key=lambda c: abs(c - span["t_start"]))]["exposed"]
        assert np.all(first.mean(axis=0)[:k + 1] < tw.piezo_bias[:k + 1] - 2)
    # The scorer joins the truth the way the bytes tell it (no stream time jumps back).
    joined = SCORE.as_the_bytes_tell(truth)
    late = [x for x in joined["landings"] if x["t"] > spans[0]["t_end"]]
    orig = [x for x in truth["landings"] if x["t"] > spans[0]["t_end"]]
    assert late and all(a["t"] < b["t"] for a, b in zip(late, orig, strict=True))
