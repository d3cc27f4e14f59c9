"""Fast checks of the blind cross-check model AL (tools/crosscheck_al): a years-old family
kit in a damp holiday cabin (soft, sagging, creaking card; a half-detached disc, a cracked
solder joint, replacement load cells; cubes of two editions; children, pets, a wood stove,
rain; a laptop on battery with a cheap USB-serial adapter).

The bytes are read as the host reads them: the project's frame decoder (COBS and
CRC-16/CCITT-FALSE, checked against contracts.md's vectors in tests/hostapp/protocol),
then the message layouts of contracts.md unpacked here, not with the generator's
encoder. Every flaw the truth lists is looked for in the decoded bytes."""

from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import cobs_decode, crc16
from tests.scripts import load_script
from tests.tools.blind_models import (
    Recording,
    Stream,
    assert_the_shell_gets_one_line,
    decode_stream,
    exit_and_stderr,
    perfect_events,
    rendered,
    script_and_function_agree,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_al" / "make_recordings_al.py"


AL = load_script(SCRIPT, "make_recordings_al_under_test")
SCORE = load_script(ROOT / "tools" / "crosscheck" / "score.py", "crosscheck_score_for_al")
SEED = 4  # loose disc on level 3, cracked joint on cell 1 (spikes and dropouts),
# replacement cells on levels 3 and 6 wired the other way round, 80 SPS, 2000 sets/s
DURATIONS = {"single": 25.0, "rapid": 25.0, "noisy": 30.0, "game": 80.0}

# -- the stream, read by the host's own decoder -------------------------------------------


def _rec(sc: Any) -> Recording:
    return rendered(AL, sc)


@pytest.fixture(scope="module")
def recs() -> dict[str, Recording]:
    return {sc: _rec(AL.simulate(SEED, sc, dur)) for sc, dur in DURATIONS.items()}


def _bare(seed: int, duration: float, **over: Any) -> Any:
    """A scene with nothing in it but what the test adds (no stove, rain, pets, hands)."""
    tw = AL.make_tower(seed)
    if over:
        tw = dataclasses.replace(tw, **over)
    return AL.Scene(tw, "single", duration, np.random.default_rng(5))


def _band_rms(x: np.ndarray, fs: float, lo: float, hi: float) -> float:
    spec = np.fft.rfft((x - x.mean()) * np.hanning(len(x)))
    f = np.fft.rfftfreq(len(x), 1 / fs)
    return float(np.sqrt(np.sum(np.abs(spec[(f >= lo) & (f < hi)]) ** 2)))


def _step(d: Stream, ch: int, t_before: float, t_after: float, span: float = 0.45) -> float:
    return float(np.median(d.load(ch, t_after, t_after + span))
                 - np.median(d.load(ch, t_before - span, t_before)))


# -- wire ------------------------------------------------------------------------------------


def test_crc_and_cobs_follow_the_contract() -> None:
    assert AL.crc16_ccitt_false(b"123456789") == 0x29B1 == crc16(b"123456789")
    rng = np.random.default_rng(1)
    for n in (0, 1, 5, 253, 254, 255, 300, 600):
        data = bytes(rng.integers(0, 256, n, dtype=np.uint8))
        runs = bytes(rng.integers(1, 256, n, dtype=np.uint8))  # long runs without a zero
        for x in (data, runs, b"\x00" * n):
            enc = AL.cobs_encode(x)
            assert b"\x00" not in enc and cobs_decode(enc) == x == AL.cobs_decode(enc)
            assert AL.crc16_ccitt_false(x) == crc16(x)
    rows = rng.integers(0, 256, (50, 233), dtype=np.uint8)
    rows[rng.random(rows.shape) < 0.2] = 0
    rows[0] = 0
    rows[1] = 7
    crcs = AL.crc16_rows(rows)
    for row, enc, c in zip(rows, AL.cobs_rows(rows), crcs, strict=True):  # vectorised = plain
        assert enc.tobytes() == AL.cobs_encode(row.tobytes()) + b"\x00"
        assert int(c) == crc16(row.tobytes())
    fr = AL.frame(0x03, 0x1234, b"\x00\x01\x02")
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = cobs_decode(fr[:-1])
    assert msg[:3] == b"\x03\x34\x12" and int.from_bytes(msg[-2:], "little") == crc16(msg[:-2])


def test_streams_decode_clean(recs: dict[str, Recording]) -> None:
    for name, r in recs.items():
        tw, d, sess = r.sc.tw, r.d, r.truth["session"]
        # damage only where the session or the truth's stalls put it
        assert d.damaged == len(r.truth["damage"]), name
        assert (r.raw[0] == 0) == sess["glitch_byte"]
        assert d.hello == {"proto": 1, "fw": tw.fw, "n_piezo": 8, "n_load": 8,
                           "piezo_rate_hz": tw.piezo_rate_hz, "load_rate_hz": tw.load_rate_hz,
                           "adc_bits": 10, "device_id": tw.device_id}
        seqs = np.array([m[1] for m in d.msgs])
        steps = np.diff(seqs) % 65536
        assert np.sum(steps != 1) == len(r.truth["damage"])  # +1 per message but at stalls
        assert seqs[0] == sess["seq_first"]
        pz = [t for typ, t in d.raw_t_us if typ == 2]
        period = 1_000_000 // tw.piezo_rate_hz
        gaps = [(b - a) % 2**32 - n * period for a, b, n in zip(pz, pz[1:], d.pz_sizes,
                                                                 strict=False)]
        assert sum(g != 0 for g in gaps) <= len(r.truth["damage"])  # every set once, in order
        assert all(g >= 0 for g in gaps)
        assert set(d.pz_sizes[:-1]) == {tw.batch}
        for k in range(8):  # "0 where not valid"
            assert np.all(d.ld[(d.ld_valid >> k) & 1 == 0, k] == 0)
        assert abs(d.pz_t[-1] - r.truth["duration_s"]) < 0.01
        assert len(r.raw) / r.truth["duration_s"] < 100_000  # within 1 Mbaud 8N1
        idle = np.median(d.piezo(0.5, 3.5), axis=0)  # biased at mid-scale
        np.testing.assert_allclose(idle, tw.bias, atol=1.5)
        ups = np.diff([u for u, _ in d.status])
        assert np.all((ups == 1000) | (ups == 2000)), name  # once a second (a stall may eat one)


def test_a_running_device_mid_frame_clock_wrap_and_late_hello() -> None:
    """Tower 21's single session: the laptop opened the port on a running device whose
    clock wraps during the recording."""
    r = _rec(AL.simulate(21, "single", 30.0))
    sess = r.truth["session"]
    assert sess["start"] == "running" and sess["mid_frame_bytes"] > 0
    assert r.d.damaged == len(r.truth["damage"])  # the cut first frame is not counted
    assert r.raw.index(0) == sess["mid_frame_bytes"] - 1 and not is_whole(
        r.raw[:sess["mid_frame_bytes"] - 1])
    assert sess["clock_wraps_at_s"] is not None and 5 <= sess["clock_wraps_at_s"] < 30
    types = [m[0] for m in r.d.msgs]
    i = types.index(0x01)
    assert i == sess["messages_before_hello"] and 1 <= i <= 3 and types[i + 1] == 0x05
    assert r.d.msgs[i + 1][2] == struct.pack("<BHB", 0x81, 0, 0)
    assert types[0] == 0x02  # stream time 0 is the first PIEZO's first set
    for typ in (0x02, 0x03):  # each kind's stamps rise, and wrap once
        stamps = [t for ty, t in r.d.raw_t_us if ty == typ]
        drops = [(a, b) for a, b in zip(stamps, stamps[1:], strict=False) if b < a]
        assert len(drops) == 1 and drops[0][0] > 2**32 - 20_000 and drops[0][1] < 20_000
    assert np.all(np.diff(r.d.pz_t) > 0)
    assert abs(r.d.pz_t[-1] - 30.0) < 0.01
    # the truth's strikes line up with the bytes after the wrap (stream time = device clock)
    base = np.median(r.d.piezo(0.5, 3.5), axis=0)
    errs = []
    for x in r.truth["landings"]:
        if x["knocked"] or x["t"] < sess["clock_wraps_at_s"]:
            continue
        t, lv = next((i[0], i[1]) for i in x["impacts"] if i[3] == "plate")
        sel = (r.d.pz_t > t - 0.05) & (r.d.pz_t < t + 0.05)
        y = np.abs(r.d.pz[sel, lv] - base[lv])
        if y.max() > 30:
            errs.append(r.d.pz_t[sel][np.argmax(y > 0.3 * y.max())] - t)
    assert len(errs) >= 2 and np.all(np.abs(errs) < 0.004)


def is_whole(enc: bytes) -> bool:
    try:
        msg = cobs_decode(enc)
    except ValueError:
        return False
    return len(msg) >= 5 and int.from_bytes(msg[-2:], "little") == crc16(msg[:-2])


def test_a_fresh_device_starts_with_hello_seq_0(recs: dict[str, Recording]) -> None:
    fresh = [r for r in recs.values() if r.truth["session"]["start"] != "running"]
    assert {r.truth["session"]["start"] for r in fresh} == {"plugged", "dtr"}
    for r in fresh:
        assert r.d.msgs[0][:2] == (0x01, 0)
        assert r.d.raw_t_us[0][1] < 300_000 and r.d.status[0][0] == 1000
    glitched = [r for r in fresh if r.truth["session"]["glitch_byte"]]
    assert glitched and all(r.raw[0] == 0 for r in glitched)  # a DTR reset's stray 0x00


def test_a_usb_stall_loses_bytes_where_the_truth_says() -> None:
    sc = _bare(SEED, 14.0, cracked=-1)
    sc.stalls.append({"t": 8.0, "lost_s": 0.3})
    r = _rec(sc)
    [dmg] = r.truth["damage"]
    assert dmg["kind"] == "usb_stall" and 7.99 <= dmg["t_start"] < dmg["t_end"] <= 8.32
    assert r.d.damaged == 1
    seqs = np.array([m[1] for m in r.d.msgs])
    [gap] = np.nonzero(np.diff(seqs) % 65536 != 1)[0]
    assert np.diff(seqs)[gap] % 65536 > 30  # 0.3 s of messages never came
    t = r.d.pz_t
    [hole] = np.nonzero(np.diff(t) > 0.01)[0]
    assert dmg["t_start"] - 0.01 < t[hole] and t[hole + 1] < dmg["t_end"] + 0.01
    clean = _rec(_bare(SEED, 14.0, cracked=-1))
    assert len(clean.raw) - len(r.raw) > 0.25 * 36_000  # bytes lost at ~36 kB/s
    assert r.d.hello == clean.d.hello


# -- determinism, command line, truth ----------------------------------------------------------


def test_same_seed_same_bytes() -> None:
    a = AL.render(AL.simulate(3, "rapid", 13.0))
    b = AL.render(AL.simulate(3, "rapid", 13.0))
    c = AL.render(AL.simulate(5, "rapid", 13.0))
    assert a[0] == b[0] and a[1] == b[1]
    assert a[0] != c[0]


def test_command_line_writes_four_truths_per_tower(tmp_path: Path) -> None:
    proc, out1 = script_and_function_agree(
        SCRIPT, AL.main, ["--towers", "1", "--first-seed", "9", "--duration", "12"],
        tmp_path)
    truths = sorted(p.name for p in out1.glob("*.truth.json"))
    assert truths == [f"{s}_t9.truth.json" for s in ("game", "noisy", "rapid", "single")]


@pytest.mark.parametrize(("args", "says"), [
    (["--scenarios", "single", "bogus"], "unknown scenario 'bogus'"),
    (["--towers", "0"], "--towers must be at least 1"),
    (["--duration", "5"], "--duration must be at least 12 seconds"),
    (["--towers", "many"], "invalid int value"),
    (["--duration", "nan"], "--duration must be at least 12 seconds"),
    (["--duration", "soon"], "invalid float value"),
    (["--first-seed", "-1"], "--first-seed must not be negative"),
])
def test_bad_command_line_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         args: list[str], says: str) -> None:
    out = tmp_path / "o"
    code, err = exit_and_stderr(AL.main, ["--out", str(out), *args], capsys)
    assert code == 2 and says in err and err.count("\n") == 1, err
    assert not out.exists() or not any(out.iterdir())


def test_an_uncreatable_folder_is_one_line(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert AL.main(["--out", str(blocker / "o"), "--duration", "12"]) == 2
    err = capsys.readouterr().err
    assert "cannot create" in err and err.count("\n") == 1


def test_bad_command_line_from_the_shell(tmp_path: Path) -> None:
    assert_the_shell_gets_one_line(SCRIPT, tmp_path)


def test_truth_is_what_the_scorer_reads(recs: dict[str, Recording], tmp_path: Path) -> None:
    for name, r in recs.items():
        path = tmp_path / f"{name}_t{SEED}.truth.json"
        path.write_text(json.dumps(r.truth))
        doc = SCORE.read_truth(path)
        assert doc["format"] == "towerear-crosscheck-truth/1" and doc["model"] == "AL"
        assert (doc["scenario"], doc["seed"], doc["duration_s"]) == (name, SEED, DURATIONS[name])
        assert doc["cells"] == "mixed" and r.sc.tw.replaced  # replacement cells on this tower
        for kind in SCORE.TRUTH_EVENT_KINDS:
            assert all(isinstance(x["t"], float) for x in doc[kind])
        assert all(x["cubes"] == 1 and 0 <= x["floor"] <= 7 for x in doc["landings"])
        res = SCORE.score_one(doc, SCORE.DetectRun(perfect_events(doc), 0, 1.0), tolerance_s=0.5)
        kept, _ = SCORE.without_damage(doc, SCORE.DetectRun([], 0, 1.0))
        n_throws = sum(not x["knocked"] for x in kept["landings"])
        assert res["right"] == res["cubes_right"] == res["n_truth"] == n_throws > 0
        assert res["false"] == 0 and res["knocked_found"] == res["n_knocked"]
        assert res["game_right"] + res["game_wrong"] == n_throws and res["game_by_hand"] == 0
        if name in ("single", "game"):  # one throw at a time: the game takes each for its own
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
            assert x["kind"] in ("tipped", "knocked") if x["knocked"] else "style" in x
        busy = tr["knocks"] + tr["lifts"] + [{"t": d["t_start"]} for d in tr["damage"]]
        assert all(x["t"] >= q for x in busy)
        by = {x["fid"] for x in tr["landings"] if x.get("caused_knockdown")}
        assert by == {k["by_fid"] for k in tr["knockdowns"] if k["cause"] == "strike"}
        for k in tr["knockdowns"]:  # each knocked-down cube lands once, below where it was
            [land] = [x for x in tr["landings"] if x["knocked"] and x["fid"] == k["fid"]
                      and x["t_release"] == k["t"]]
            assert land["knocked_from"] == k["from"] > land["floor"] == k["to"]
            assert (k["by_fid"] is None) == (k["cause"] != "strike")


def test_a_game_follows_the_rules(recs: dict[str, Recording]) -> None:
    tr = recs["game"].truth
    g = tr["game"]
    n = len(g["players"])
    assert 3 <= n <= 5 and g["phase"] in ("act1", "act2") and 1 <= len(g["children"]) < n
    throws = [x for x in tr["landings"] if not x["knocked"]]
    kinds = [x["kind"] for x in throws]
    assert kinds[:2] == ["victim", "victim"] and kinds[2:2 + 2 * n] == ["prologue"] * (2 * n)
    prologue = [x["who"] for x in throws[2:2 + 2 * n]]
    assert prologue == [p for p in g["players"] for _ in range(2)]
    assert g["turns"]
    first = g["players"].index(g["turns"][0]["who"])
    for i, turn in enumerate(g["turns"]):  # clockwise
        assert turn["who"] == g["players"][(first + i) % n]
        if turn["phase"] == "act1":
            assert turn["penalties"] == (0 if turn["victims"] else 1)
    assert len(tr["lifts"]) == len(tr["closes"]) == len(g["turns"])
    for lift, close in zip(tr["lifts"], tr["closes"], strict=True):
        assert lift["exposed"] == close["exposed"] and lift["t"] < close["t"]
        rem = [x for x in tr["removals"] if lift["t"] < x["t"] < close["t"]]
        assert all(x["floor"] == lift["exposed"] for x in rem)
    thrown = {p: sum(x.get("who") == p and x["kind"] in ("prologue", "penalty")
                     for x in throws) for p in g["players"]}
    for p in g["players"]:  # 20 each: supply + thrown from it + put on the sheet
        assert g["supply"][p] + thrown[p] + sum(g["sheet"][p]) == 20
    throwbacks = sum(k == "throwback" for k in kinds)
    assert throwbacks == sum(t.get("thrown_back", 0) for t in g["turns"])
    for t in g["turns"]:
        if not t.get("cut_by_end"):
            assert t["thrown_back"] == t["removed"] - t["victims"] + sum(
                f["t"] > t["t_lift"] and f["t"] < t["t_lift"] + 30 for f in tr["fallouts"])


# -- what the sensors say ---------------------------------------------------------------------


def _isolated(tr: dict[str, Any], t: float, before: float, after: float) -> bool:
    times = [i[0] for x in tr["landings"] for i in x["impacts"]] + [x["t"] for x in tr["landings"]]
    times += [x["t"] for k in ("knocks", "lifts", "closes", "removals") for x in tr[k]]
    times += [x["t_end"] for x in tr["knocks"]]
    times += [b["t"] for b in (tr["flaws"]["cracked_joint"] or {}).get("bursts", [])]
    return not any(t - before < u < t + after for u in times if abs(u - t) > 1e-6)


def test_landings_step_their_own_level_by_the_cube_mass(recs: dict[str, Recording]) -> None:
    """Eleven throws on tower 4, cubes of both editions: each isolated landing steps its own
    level by its own cube's mass and no other level, every cell in the counts per gram of
    its batch (the replacement cells on levels 3 and 6 read fewer counts per gram, and the
    other way round)."""
    tw = AL.make_tower(SEED)
    assert tw.replaced == [3, 6] and all(
        tw.cpg[k] < 0 and abs(tw.cpg[k]) != pytest.approx(abs(tw.cpg[0]), rel=0.05)
        for k in tw.replaced)
    sc = _bare(SEED, 36.0, cracked=-1)
    for k in range(11):
        sc.throw(6.0 + 2.6 * k, sc.new_cube("yellow"), ("soft", "normal", "hard")[k % 3])
    r = _rec(sc)
    steps: dict[str, list[float]] = {}
    floors = set()
    for x in r.truth["landings"]:
        if x["knocked"] or not _isolated(r.truth, x["t_first_impact"], 1.2, 0.0) \
                or not _isolated(r.truth, x["t"], 0.0, 1.0):
            continue
        for ch in range(8):
            step = _step(r.d, ch, x["t_first_impact"] - 0.1, x["t"] + 0.35) / tw.cpg[ch]
            want = x["mass_g"] if ch == x["floor"] else 0.0
            assert step == pytest.approx(want, abs=0.03), (x["t"], ch)
        steps.setdefault(x["edition"], []).append(
            _step(r.d, x["floor"], x["t_first_impact"] - 0.1, x["t"] + 0.35) / tw.cpg[x["floor"]])
        floors.add(x["floor"])
        if x["floor"] in tw.replaced:  # fewer counts, the other way round
            raw_step = _step(r.d, x["floor"], x["t_first_impact"] - 0.1, x["t"] + 0.35)
            assert raw_step < 0 and abs(raw_step) > 0.9 * x["mass_g"] * abs(tw.cpg[x["floor"]])
    assert sum(len(v) for v in steps.values()) >= 8 and floors & set(tw.replaced)
    # the two editions weigh apart: the original wooden cubes, the lighter replacements
    assert set(steps) == {"original10", tw.repl_kind}
    assert min(steps["original10"]) > max(steps[tw.repl_kind]) + 0.05
    # and in the recordings too, where nothing else moves (the cracked cell aside)
    checked = 0
    for x in recs["single"].truth["landings"]:
        if not _isolated(recs["single"].truth, x["t_first_impact"], 1.2, 0.0) \
                or not _isolated(recs["single"].truth, x["t"], 0.0, 1.0) \
                or x["floor"] == tw.cracked:
            continue
        step = _step(recs["single"].d, x["floor"], x["t_first_impact"] - 0.1, x["t"] + 0.35)
        assert step / tw.cpg[x["floor"]] == pytest.approx(x["mass_g"], abs=0.03)
        checked += 1
    assert checked >= 2


def test_two_editions_of_cubes(recs: dict[str, Recording]) -> None:
    """Original 10 mm wooden cubes (swollen a little by the damp) and lighter, bouncier
    replacements, mixed in every scenario."""
    tw = recs["rapid"].sc.tw
    lands = [x for r in recs.values() for x in r.truth["landings"]]
    assert {x["edition"] for x in lands} == {"original10", tw.repl_kind}
    orig = [x["mass_g"] for x in lands if x["edition"] == "original10"]
    repl = [x["mass_g"] for x in lands if x["edition"] != "original10"]
    assert min(orig) > max(repl) and 0.3 < min(repl) and max(orig) < 0.8
    assert min(orig) > 0.62 * 0.96 * 0.97  # wood takes up water in the damp
    assert np.mean([x["restitution"] for x in lands if x["edition"] != "original10"]) > \
        np.mean([x["restitution"] for x in lands if x["edition"] == "original10"]) + 0.05
    assert 0.1 < len(repl) / len(lands) < 0.6
    for r in recs.values():
        assert len({x["edition"] for x in r.truth["landings"]}) == 2


def test_damp_card_rings_lower_and_duller() -> None:
    towers = [AL.make_tower(s) for s in range(1, 25)]
    for tw in towers:
        assert np.all(tw.f1 < 0.93 * tw.f1_dry) and np.all(tw.q[:, 0] < 0.85 * 22)
        assert tw.contact_ms > 0.3 * (1 + 2.5 * 0.3) * 0.99
    # a strike on level 5 rings at that plate's (damp) first mode
    sc = _bare(SEED, 8.0, cracked=-1, loose=-1)
    sc.impacts.append(AL.Impact(5.0, 5, 0.8, "plate", (1.0, 0.5, 0.3, 0.2), 1.0, 1.0))
    r = _rec(sc)
    x = r.d.piezo(5.0, 5.25)[:, 5]
    spec = np.abs(np.fft.rfft((x - x.mean()) * np.hanning(len(x)), 4096))
    f = np.fft.rfftfreq(4096, 1 / sc.tw.piezo_rate_hz)
    band = (f > 150) & (f < 1000)
    f_peak = f[band][np.argmax(spec[band])]
    assert f_peak == pytest.approx(sc.tw.f1[5], rel=0.08)
    assert f_peak < 0.93 * sc.tw.f1_dry[5]


def test_a_cube_at_a_holes_edge_tips_in_without_a_throw() -> None:
    """A sagging tower where every cube comes to rest at a hole's edge: seconds later, with
    nobody throwing, it tips in. Its level loses the cube's weight, a lower level gains it,
    and the truth lists a knocked-down landing with no throw behind it."""
    stop = AL.make_tower(SEED).stop_odds.copy()
    stop[7] = 1.0
    sc = _bare(SEED, 34.0, cracked=-1, loose=-1, stop_odds=stop, hop_odds=0.0, tip_odds=1.0,
               edge_odds=1.0, edge_max=1.0, creep_s=2.0, knock_odds=0.0)
    for t in (6.0, 16.0, 26.0):
        sc.throw(t, sc.new_cube("blue"), "soft")
    r = _rec(sc)
    tr = r.truth
    assert not any(x.get("caused_knockdown") for x in tr["landings"])
    assert all(k["by_fid"] is None and k["cause"] == "sag" for k in tr["knockdowns"])
    moved = [x["t_first_impact"] for x in tr["landings"]] + [x["t"] for x in tr["landings"]]
    checked = 0
    for k in tr["flaws"]["tips"]:
        [land] = [x for x in tr["landings"] if x["knocked"] and x["t_release"] == k["t"]]
        assert land["kind"] == "tipped" and land["knocked_from"] == k["from"] > land["floor"]
        before = [x for x in tr["landings"] if x["fid"] == k["fid"] and x["t"] < k["t"]][-1]
        assert before["edge"] and before["floor"] == k["from"] and before["tipped_at"] == k["t"]
        assert k["t"] - before["t"] > 0.8  # seconds later, not a bounce
        if any(k["t"] - 1.0 < u < land["t"] + 1.0 for u in moved
               if u not in (land["t"], land["t_first_impact"])):
            continue
        m = land["mass_g"]
        for ch in range(8):
            want = -m if ch == k["from"] else m if ch == land["floor"] else 0.0
            got = _step(r.d, ch, k["t"] - 0.05, land["t"] + 0.3, 0.3) / sc.tw.cpg[ch]
            assert got == pytest.approx(want, abs=0.03), (k, ch)
        checked += 1
    assert checked >= 2


def test_creaks_are_faint_broadband_ticks_after_load_changes() -> None:
    sc = _bare(SEED, 16.0, cracked=-1, loose=-1)
    for t in (6.0, 9.0, 12.0):
        sc.throw(t, sc.new_cube("gray"), "normal")
    r = _rec(sc)
    creaks = r.truth["flaws"]["creaks"]
    assert creaks
    loads = [x["t"] for x in r.truth["landings"]]
    for t, lv, _ in creaks:  # after a cube came to rest on that level
        assert any(0.04 < t - u < 1.6 and x["floor"] == lv
                   for x in r.truth["landings"] for u in loads if u == x["t"])
    sc.impacts = [i for i in sc.impacts if i.kind != "creak"]
    quiet = decode_stream(AL.render(sc)[0])
    diff = r.d.pz - quiet.pz
    assert np.abs(diff[r.d.pz_t < creaks[0][0] - 0.001]).max() <= 1  # nothing before
    fs = sc.tw.piezo_rate_hz
    for t, lv, j in creaks:
        sel = (r.d.pz_t >= t) & (r.d.pz_t < t + 0.02)
        expect = j * sc.tw.sens[lv]
        if expect > 2.0:
            assert np.abs(diff[sel, lv]).max() >= 1
        assert np.abs(diff[sel, lv]).max() < 20  # faint
    hi = _band_rms(diff[:, creaks[0][1]], fs, 600, fs / 2)
    lo = _band_rms(diff[:, creaks[0][1]], fs, 1, 600)
    assert hi > 0.2 * lo  # broadband, not a low thud


def test_a_loose_disc_jumps_between_two_sensitivities_and_rattles() -> None:
    """Tower 4's level-3 disc is half off: weak strikes read at one of two gains (the same
    plate, the same strikes, against the disc glued back), and a strong strike sets it
    rattling (and here flips its contact)."""
    tw0 = AL.make_tower(SEED)
    assert tw0.loose == 3
    sc = _bare(SEED, 14.0, cracked=-1, loose_toggle_s=1e9, loose_toggle_hit=1.0)
    weak = [6.0, 6.6, 7.2, 10.0, 10.6, 11.2]
    for t in weak:
        sc.impacts.append(AL.Impact(t, 3, 0.15, "plate", (1.0, 0.6, 0.4, 0.3), 1.0, 1.0))
    sc.impacts.append(AL.Impact(8.5, 3, 2.0, "plate", (1.0, 0.6, 0.4, 0.3), 1.0, 1.0))
    r = _rec(sc)
    ld = r.truth["flaws"]["loose_disc"]
    assert ld["level"] == 3 and len(ld["states"]) == 2 and ld["states"][1][0] > 8.5
    assert [x[0] for x in ld["rattles"]] == [8.5]
    sc.tw = dataclasses.replace(sc.tw, loose=-1)
    glued = decode_stream(AL.render(sc)[0])
    gains = []
    for t in weak:
        sel = (r.d.pz_t >= t) & (r.d.pz_t < t + 0.08)
        a = r.d.pz[sel, 3] - tw0.bias[3]
        b = glued.pz[sel, 3] - tw0.bias[3]
        gains.append(float(np.dot(a, b) / np.dot(b, b)))
    before, after = np.array(gains[:3]), np.array(gains[3:])
    g = dict(good=tw0.loose_gain[0], poor=tw0.loose_gain[1])
    assert before == pytest.approx(g[ld["states"][0][1]], abs=0.05)
    assert after == pytest.approx(g[ld["states"][1][1]], abs=0.05)
    # the rattle: what the glued disc does not show, beyond the gain, after the strong strike
    sel = (r.d.pz_t >= 8.5) & (r.d.pz_t < 8.56)
    resid = r.d.pz[sel, 3] - tw0.bias[3] - g[ld["states"][0][1]] * (glued.pz[sel, 3] - tw0.bias[3])
    assert np.abs(resid).max() > 0.1 * np.abs(glued.pz[sel, 3] - tw0.bias[3]).max()
    for ch in (0, 1, 5, 6, 7):  # the other discs are the same
        assert np.abs(r.d.pz[:, ch] - glued.pz[:, ch]).max() == 0


def test_a_cracked_solder_joint_spikes_and_drops_out() -> None:
    """Tower 4's cell 1 has a cracked joint: single readings jump (to a rail or far off),
    and in bursts the HX711 never says ready, so the valid bit is 0, as the truth lists."""
    sc = _bare(SEED, 24.0, loose=-1, spike_every_s=3.0, burst_every_s=5.0)
    sc.throw(8.0, sc.new_cube("black"), "hard")
    sc.table_knock(14.0, "dog")
    r = _rec(sc)
    cj = r.truth["flaws"]["cracked_joint"]
    assert cj["channel"] == 1 and cj["mode"] == "both" and cj["spikes"] and cj["bursts"]
    d = r.d
    bit = (d.ld_valid >> 1) & 1
    in_burst = np.zeros(len(d.ld_t), bool)
    for b in cj["bursts"]:
        in_burst |= (d.ld_t >= b["t"]) & (d.ld_t <= b["t_end"])
        inside = (d.ld_t > b["t"] + 0.02) & (d.ld_t < b["t_end"])
        assert inside.sum() >= 5 and np.all(bit[inside] == 0)
        assert np.all(d.ld_valid[inside] == 0xFD)  # the others still read
    assert np.all(bit[~in_burst] == 1)
    ok = np.nonzero(bit == 1)[0]
    spike_rows = []
    for sp in cj["spikes"]:  # one reading far off its neighbours (>= 20,000 counts, ~1 g)
        [i] = np.nonzero(np.abs(d.ld_t - sp["t"]) < 2e-6)[0]
        assert d.ld[i, 1] == sp["counts"]
        j = int(np.searchsorted(ok, i))
        near = d.ld[np.r_[ok[max(0, j - 4):j], ok[j + 1:j + 5]], 1]
        assert abs(sp["counts"] - np.median(near)) > 15_000
        spike_rows.append(i)
    rails = np.nonzero(np.isin(d.ld[:, 1], [2**23 - 1, -(2**23)]))[0]
    assert set(rails) <= set(spike_rows)  # no rail reading the truth does not list
    assert d.status[-1][1] >= sum(b["t"] < d.status[-1][0] / 1000 - sc.up0 for b in cj["bursts"])


def test_lifted_levels_read_invalid_until_closed(recs: dict[str, Recording]) -> None:
    r = recs["game"]
    d = r.d
    cracked = r.sc.tw.cracked
    assert r.truth["lifts"]
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        k = lift["exposed"]
        sel = (d.ld_t > lift["t"] + 0.02) & (d.ld_t < close["t"])
        assert sel.sum() >= 20
        v = d.ld_valid[sel]
        assert np.all(v & (0xFF << (k + 1)) & 0xFF == 0)  # modules k+1..7 are off
        low = ((1 << (k + 1)) - 1) & ~(1 << cracked)
        assert np.all(v & low == low)
        back = (d.ld_t > close["t"] + 0.25) & (d.ld_t < close["t"] + 0.8)
        assert np.all(d.ld_valid[back] | (1 << cracked) == 0xFF)
        # the lifted pins keep only the bias divider: mains hum, no plate ring
        x = d.piezo(lift["t"] + 0.1, close["t"] - 0.05)
        if k < 7:
            assert np.all(np.abs(np.median(x[:, k + 1:], axis=0) - r.sc.tw.bias[k + 1:]) < 3)
    lifted = sum(7 - x["exposed"] for x in r.truth["lifts"] if x["t"] < d.ld_t[-1] - 1.5)
    assert d.status[-1][1] >= lifted


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Recording]) -> None:
    r = recs["game"]
    cpg = r.sc.tw.cpg
    assert r.truth["removals"]
    for rm in r.truth["removals"]:
        k = rm["floor"]
        if k == r.sc.tw.cracked:
            continue
        press = [p for p in r.sc.presses if p["level"] == k and abs(p["t1"] - rm["t"]) < 1e-6]
        t_press = press[0]["t0"]
        before = np.median(r.d.load(k, t_press - 0.5, t_press - 0.05)) / cpg[k]
        after = np.median(r.d.load(k, rm["t"] + 0.25, rm["t"] + 0.6)) / cpg[k]
        assert after - before == pytest.approx(-rm["mass_g"], abs=0.07)


def test_a_pet_bumping_the_heavy_table_is_low_and_lands_nothing() -> None:
    sc = _bare(SEED, 14.0, cracked=-1, loose=-1)
    sc.throw(6.0, sc.new_cube("white"), "soft")
    sc.table_knock(9.0, "dog", peak=1.2)
    r = _rec(sc)
    tw = sc.tw
    assert [(k["t"], k["kind"]) for k in r.truth["knocks"]] == [(9.0, "dog")]
    assert len(r.truth["landings"]) == 1
    fs = tw.piezo_rate_hz
    x, calm = r.d.piezo(9.0, 10.0), r.d.piezo(2.0, 3.0)
    base = np.median(r.d.piezo(2.0, 5.5), axis=0)
    for ch in range(8):  # the farmhouse table's low modes on every disc
        assert np.abs(x[:, ch] - base[ch]).max() > 8
        low = _band_rms(x[:, ch], fs, 3, 70) / _band_rms(calm[:, ch], fs, 3, 70)
        high = _band_rms(x[:, ch], fs, 120, fs / 2) / _band_rms(calm[:, ch], fs, 120, fs / 2)
        assert low > 5 and high < low / 3
    for ch in range(8):  # every cell shakes with the plates' inertia, and settles back
        g = r.d.load(ch, 8.0, 12.5) / tw.cpg[ch]
        t = r.d.ld_t[(r.d.ld_t >= 8.0) & (r.d.ld_t < 12.5)]
        assert np.abs(g[(t > 9.0) & (t < 9.8)] - np.median(g[t < 8.9])).max() > 0.02
        assert abs(np.median(g[t > 11.5]) - np.median(g[t < 8.9])) < 0.03


def test_the_cabin_rain_stove_and_hands() -> None:
    """Rain raises a broadband hiss on every disc; the stove's pops reach every plate at
    the times the truth lists; a child's hand on the card rustles on the levels it holds
    and leans a little weight on their cells."""
    def scene(rain: bool, pops: bool, hand: bool) -> Any:
        sc = _bare(SEED, 12.0, cracked=-1, loose=-1)
        if rain:
            sc.rain = {"kind": "heavy", "lsb": 1.2, "gust_hz": 0.1}
        if pops:
            sc.pops = [7.0, 7.15, 9.5]
            sc.stove = {"lit": True, "pops_per_s": 0.3, "logs": []}
        if hand:
            sc.touch(8.0, 10.5, [2, 3, 4])
        return sc

    dry = _rec(scene(False, False, False))
    wet = _rec(scene(True, False, False))
    fs = dry.sc.tw.piezo_rate_hz
    for ch in range(8):
        assert _band_rms(wet.d.piezo(1, 11)[:, ch], fs, 150, 900) > 1.3 * _band_rms(
            dry.d.piezo(1, 11)[:, ch], fs, 150, 900)
    assert wet.truth["room"]["rain"]["kind"] == "heavy"
    stove = _rec(scene(False, True, False))
    assert stove.truth["room"]["stove"]["pops"] == [7.0, 7.15, 9.5]
    diff = stove.d.pz - dry.d.pz
    assert np.abs(diff[stove.d.pz_t < 6.999]).max() == 0
    for p in (7.0, 9.5):
        sel = (stove.d.pz_t >= p) & (stove.d.pz_t < p + 0.03)
        assert np.sum(np.abs(diff[sel]).max(axis=0) >= 1) >= 6  # on nearly every plate
    hand = _rec(scene(False, False, True))
    assert [k["kind"] for k in hand.truth["knocks"]] == ["hand"]
    tw = hand.sc.tw
    for ch in range(8):
        rus = _band_rms(hand.d.piezo(8.3, 10.2)[:, ch], fs, 200, 1200)
        calm = _band_rms(dry.d.piezo(8.3, 10.2)[:, ch], fs, 200, 1200)
        lean = (np.median(hand.d.load(ch, 8.4, 10.2)) - np.median(dry.d.load(ch, 8.4, 10.2))) \
            / tw.cpg[ch]
        if ch in (2, 3, 4):
            assert rus > 2 * calm and lean > 0.03
        else:
            assert abs(lean) < 0.01
    back = (np.median(hand.d.load(3, 11.0, 11.9)) - np.median(dry.d.load(3, 11.0, 11.9))) \
        / tw.cpg[3]
    assert abs(back) < 0.01


def test_rapid_series_and_two_cubes_at_once(recs: dict[str, Recording]) -> None:
    lands = [x for x in recs["rapid"].truth["landings"] if not x["knocked"]]
    series: dict[int, list[float]] = {}
    pairs: dict[int, list[float]] = {}
    for x in lands:
        if x.get("pair") is not None:
            pairs.setdefault(x["pair"], []).append(x["t_release"])
        series.setdefault(x["series"], []).append(x["t_release"])
    assert len(series) >= 2 and pairs
    assert all(len(v) == 2 and np.ptp(v) <= 0.061 for v in pairs.values())
    for rel in series.values():
        gaps = np.diff(sorted(rel))
        gaps = gaps[gaps > 0.07]  # the second cube of a pair goes with the first
        assert np.all((gaps >= 0.3 * 0.995) & (gaps <= 0.8 * 1.005)), gaps
    assert {x["by"] for x in lands} == {"child", "adult"}
    assert {x["style"] for x in lands} == {"soft", "normal", "hard"}


def test_towers_differ_as_families_built_and_wore_them() -> None:
    towers = [AL.make_tower(s) for s in range(1, 25)]
    assert len({t.device_id for t in towers}) == 24
    assert {t.load_rate_hz for t in towers} == {10, 80}
    assert {t.piezo_rate_hz for t in towers} == {1600, 2000} and len({t.batch for t in towers}) >= 3
    assert {t.cells for t in towers} == {"matched", "mixed"}
    assert {t.clock for t in towers} == {"crystal", "resonator"}
    assert {t.repl_kind for t in towers} == {"plastic8", "beech8"}
    for flaw in (sum(t.loose >= 0 for t in towers), sum(t.cracked >= 0 for t in towers),
                 sum(bool(t.replaced) for t in towers)):
        assert 3 <= flaw <= 16
    flipped = [t for t in towers if t.replaced and t.cpg[t.replaced[0]] < 0]
    assert flipped and len(flipped) < sum(bool(t.replaced) for t in towers)
    assert {t.cracked_mode for t in towers if t.cracked >= 0} == {"spikes", "dropouts", "both"}
    damp = [t.damp for t in towers]
    assert min(damp) < 0.4 and max(damp) > 0.9
    assert AL.make_tower(3).figures() == AL.make_tower(3).figures()
    json.dumps(towers[0].figures())
