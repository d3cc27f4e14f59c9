"""Fast checks of the blind cross-check model AB (tools/crosscheck_ab): cube motion from
rigid-body physics, and sensors driven by the simulated contacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Load, Piezo, Status
from tests.scripts import (
    TOOLS,
    DecodedStream,
    check_lifted_levels_invalid,
    check_own_framing,
    check_scored_perfect,
    check_truth,
    check_unknown_scenario_refused,
    check_wire_encoder,
    check_workers_same_bytes,
    decode_clean,
    decode_stream,
    load_script,
    quiet_except,
)

SCRIPT = TOOLS / "crosscheck_ab" / "make_recordings_ab.py"
AB = load_script(SCRIPT, "make_recordings_ab")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_ab")
SEED = 3
DURATIONS = {"single": 30.0, "rapid": 30.0, "noisy": 30.0, "game": 75.0}
GAME_SEED = 5
FS = AB.FS


class Rec:
    """A generated recording, decoded, with its session and kit."""

    def __init__(self, seed: int, scenario: str, duration: float) -> None:
        self.sess = AB.simulate(seed, scenario, duration)
        self.raw, self.truth = AB.render(self.sess)
        self.d: DecodedStream = decode_stream(self.raw)
        self.tw = self.sess.tw

    def grams(self, ch: int, t0: float, t1: float, least: int = 5) -> float:
        """Median load of ``ch`` over fresh readings in [t0, t1), grams above the empty plate."""
        sel = self.d.fresh(ch) & (self.d.load_t >= t0) & (self.d.load_t < t1)
        assert sel.sum() >= least, (ch, t0, t1)
        return float((np.median(self.d.load_values[sel, ch]) - self.tw.offset[ch])
                     / self.tw.cpg[ch])


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return {sc: Rec(GAME_SEED if sc == "game" else SEED, sc, dur)
            for sc, dur in DURATIONS.items()}


def _busy(truth: dict[str, Any]) -> list[tuple[float, float]]:
    """Spans in which something moves or touches the tower."""
    out = [(x["t_first_impact"] - 0.05, x["t"] + 0.1) for x in truth["landings"]]
    out += [(x["t"] - 0.6, x["t"] + 0.3) for x in truth["removals"]]
    out += [(x["t"] - 0.2, x["t"] + 0.2) for x in truth["lifts"] + truth["closes"]]
    out += [(x["t"] - 0.05, x["t_end"] + 0.5) for x in truth["knocks"]]
    out += [(x["t"] - 0.05, x["t_rest"] + 0.1) for x in truth["shaken_falls"]]
    out += [(m["t"], m["t_out"] + 0.2) for m in truth["misses"]]
    return out


def _quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
    return quiet_except(_busy(truth), t0, t1, own)


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract(recs: dict[str, Rec]) -> None:
    check_wire_encoder(AB)
    check_own_framing(AB, recs["single"].raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        frames = decode_clean(r.raw, sc)
        assert not r.truth["damage"]
        h = frames[0].msg
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits, h.piezo_rate_hz, h.load_rate_hz) \
            == (1, 8, 8, 10, 2000, 80)
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        n = [len(m.samples) for m in pz]
        assert set(n) == {r.truth["tower"]["sets_per_msg"]}
        dur = DURATIONS[sc]
        assert dur * FS - n[0] <= sum(n) <= dur * FS
        t_us = np.array([m.t_us for m in pz], np.int64)
        assert np.all(np.diff(t_us) == 500 * np.array(n[:-1]))
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        slowest = min(r.truth["tower"]["chip_rate_hz"])
        assert abs(len(loads) - dur * slowest) < 0.05 * dur * slowest
        assert all(m.t_us > pz[0].t_us for m in loads)
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert len(status) in (int(dur) - 1, int(dur), int(dur) + 1)
        assert status[-1].load_timeouts == r.truth["tower"]["load_timeouts"]


def test_idle_tower_is_quiet(recs: dict[str, Rec]) -> None:
    for r in recs.values():
        d, tw = r.d, r.tw
        q = d.piezo_t < AB.QUIET_S - 0.1
        pz = d.piezo[q].astype(float)
        assert np.all(np.abs(pz.mean(axis=0) - tw.piezo_bias) < 0.3)
        assert np.all(pz.std(axis=0) < 3 * (tw.piezo_noise + tw.hum * 2.5) + 0.5)
        lq = (d.load_t > 0.3) & (d.load_t < AB.QUIET_S - 0.1)
        assert np.all(d.load_valid[lq] == 0xFF)
        assert np.all(np.abs(d.load_values[lq].std(axis=0) / tw.load_noise - 1) < 0.3)
        assert np.all(np.abs(np.median(d.load_values[lq], axis=0) - tw.offset)
                      < 0.01 * tw.cpg)


# -- determinism, command line, truth ---------------------------------------------------


def test_determinism() -> None:
    a = AB.generate(7, "noisy", 12.0)
    assert a[0] == AB.generate(7, "noisy", 12.0)[0]
    assert AB.generate(8, "noisy", 12.0)[0] != a[0]


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 10, in_process=AB.main)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        seed = GAME_SEED if sc == "game" else SEED
        check_truth(r.truth, SCORE, scenario=sc, seed=seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AB"
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] < x["t"]
            if not x["knocked"]:
                assert x["passed"] == list(range(7, x["floor"], -1))
    game = recs["game"].truth
    assert game["lifts"] and len(game["lifts"]) == len(game["closes"]) and game["removals"]


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        assert lift["exposed"] == close["exposed"] and lift["t"] < close["t"]
    check_lifted_levels_invalid(r.d, r.truth, after_lift_s=0.05, fresh_least=0.9,
                                back_within_s=1.0, back_least=0.5)


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    checked = 0
    for x in r.truth["removals"]:
        lift = max((lf for lf in r.truth["lifts"] if lf["t"] < x["t"]), key=lambda lf: lf["t"])
        assert lift["exposed"] == x["floor"]
        before = r.grams(x["floor"], x["t"] - 1.2, x["t"] - 0.6, least=3)
        after = r.grams(x["floor"], x["t"] + 0.15, x["t"] + 0.5, least=3)
        mass = r.tw.cube_mass * 1000
        assert before - after == pytest.approx(x["cubes"] * mass, abs=0.1 * mass + 0.02)
        checked += 1
    assert checked


# -- the sensors follow the simulation --------------------------------------------------


def test_landings_weigh_their_cube(recs: dict[str, Rec]) -> None:
    checked = 0
    for sc in ("single", "noisy", "rapid"):
        r = recs[sc]
        for x in r.truth["landings"]:
            own = (x["t_first_impact"] - 0.05, x["t"] + 0.1)
            t0, t1 = x["t_first_impact"] - 0.7, x["t"] + 1.0
            if x["knocked"] or x.get("caused_knockdown") or t1 > DURATIONS[sc] \
                    or not _quiet(r.truth, t0, t1, own):
                continue
            step = r.grams(x["floor"], x["t"] + 0.3, x["t"] + 0.9) \
                - r.grams(x["floor"], t0, x["t_first_impact"] - 0.05)
            assert step == pytest.approx(x["load_g"], abs=0.012), x
            for ch in set(range(8)) - {x["floor"]}:
                other = r.grams(ch, x["t"] + 0.3, x["t"] + 0.9) \
                    - r.grams(ch, t0, x["t_first_impact"] - 0.05)
                assert abs(other) < 0.012, (x, ch)
            checked += 1
    assert checked >= 8


def test_first_impact_rings_the_plate_it_hits(recs: dict[str, Rec]) -> None:
    checked = 0
    for sc in ("single", "noisy"):
        r = recs[sc]
        for x in r.truth["landings"]:
            own = (x["t_first_impact"] - 0.05, x["t"] + 0.1)
            t_fi = x["t_first_impact"]
            if x["knocked"] or not _quiet(r.truth, t_fi - 0.3, t_fi, own):
                continue
            fc = x["first_contact"]
            ch = 7 if fc["part"] == "roof" else min(fc["level"], 7)
            before = r.d.piezo_window(t_fi - 0.25, t_fi - 0.005)[:, ch]
            after = r.d.piezo_window(t_fi - 0.001, t_fi + 0.03)[:, ch]
            peak = np.max(np.abs(after - np.median(before)))
            # the entry roof carries no disc: its rim is heard on level 7 through the walls
            k, extra = (3, 2) if fc["part"] == "roof" else (6, 3)
            assert peak > k * before.std() + extra, (x, peak, before.std())
            # nothing rings before the cube got there
            assert np.max(np.abs(before - np.median(before))) < 6 * before.std() + 4
            checked += 1
    assert checked >= 8


def _place(sess: Any, level: int, x: float, t: float) -> Any:
    """Put a cube down by hand on ``level`` at ``x`` (it settles and sleeps)."""
    tw = sess.tw
    c = AB.Cube(sess.w.next_id, tw.cube_side / 2, tw.cube_mass)
    sess.w.next_id += 1
    c.colour = "white"
    c.x, c.y = x, tw.y_top[level] + tw.cube_side / 2 + 1e-4
    sess.advance(t)
    sess.w.add_cube(c)
    sess.advance(t + 0.5)
    assert not c.awake and c.plate == level
    return c


def test_knocked_cube_leaves_its_plate_one_cube_lighter() -> None:
    sess = AB.Session(11, "single", 12.0)
    tw = sess.tw
    h = tw.cube_side / 2
    c7, w7 = tw.hole_c[7], tw.hole_w[7] / 2
    # the edge of hole 7 nearest the entry axis; a cube resting on it, centre 1 mm in
    edge = c7 - w7 if c7 > 0 else c7 + w7
    side = -1.0 if c7 > 0 else 1.0
    resting = _place(sess, 7, edge + side * 0.001, 4.5)
    assert resting.margin == pytest.approx(0.001, abs=2e-4)
    assert h > 0.001  # it overhangs the hole by h - 1 mm
    straight = AB.Style(height=0.12, push=0.4, aim=1e-9, lateral=1e-9, spin=1e-9)
    rec = sess.throw(6.0, "blue", "blue", "single", straight)
    sess.wait_rest(rec)
    sess.advance(sess.duration + 1.0)
    raw, truth = AB.render(sess)
    knocked = [x for x in truth["landings"] if x["knocked"]]
    assert len(knocked) == 1 and knocked[0]["knocked_from"] == 7
    (x,) = knocked
    thrown = next(y for y in truth["landings"] if not y["knocked"])
    assert thrown["caused_knockdown"] and truth["knockdowns"][0]["floor_from"] == 7
    d = decode_stream(raw)

    def grams(ch: int, t0: float, t1: float) -> float:
        sel = d.fresh(ch) & (d.load_t >= t0) & (d.load_t < t1)
        return float((np.median(d.load_values[sel, ch]) - tw.offset[ch]) / tw.cpg[ch])

    t_before, t_after = (5.2, 5.9), (max(x["t"], thrown["t"]) + 0.3, 11.5)
    mass = resting.m * 1000
    lost = grams(7, *t_before) - grams(7, *t_after)
    gained = grams(x["floor"], *t_after) - grams(x["floor"], *t_before)
    on_7 = mass * (thrown["floor"] == 7)
    assert lost == pytest.approx(mass - on_7, abs=0.012)
    expect = mass + (thrown["load_g"] if thrown["floor"] == x["floor"] else 0.0)
    assert gained == pytest.approx(expect, abs=0.012)


def test_energy_never_grows() -> None:
    for seed in range(1, 9):
        tw = AB.make_tower(seed)
        w = AB.World(tw)
        rng = np.random.default_rng(seed)
        c = AB.Cube(0, tw.cube_side / 2, tw.cube_mass)
        c.x, c.y = tw.hole_c[7] + rng.normal(0, 0.004), tw.y_top[7] + 0.015
        c.a, c.w = rng.uniform(0, 1.5), rng.normal(0, 20)
        c.vx, c.vy, c.vz = rng.normal(0, 0.3), -rng.uniform(0.5, 2.0), rng.normal(0, 0.1)
        w.add_cube(c)
        e0 = c.energy()
        worst = e0
        while c.awake and w.t < 4.0:
            w.step(w.next_dt)
            worst = max(worst, c.energy())
        assert not c.awake and worst <= e0 * (1 + 1e-3)
        assert c.energy() < e0


def test_a_resting_cube_stays_at_rest() -> None:
    sess = AB.Session(4, "single", 25.0)
    c = _place(sess, 3, -0.03, 4.2)
    x, y, a = c.x, c.y, c.a
    steps = sess.w.steps
    sess.advance(25.0)
    assert (c.x, c.y, c.a) == (x, y, a) and not c.awake and sess.w.steps == steps
    raw, _truth = AB.render(sess)
    d = decode_stream(raw)
    tw = sess.tw
    sel = d.fresh(3) & (d.load_t > 5.5)
    grams = (d.load_values[sel, 3] - tw.offset[3]) / tw.cpg[3]
    assert np.median(grams) == pytest.approx(c.m * 1000, abs=0.005)
    # only noise and the slow drift: no steps, no creep beyond the cell's noise
    assert np.std(grams) < 2.5 * tw.load_noise[3] / tw.cpg[3] + 0.002
    pz = d.piezo_window(5.5, 25.0)[:, 3]
    assert np.max(np.abs(pz - tw.piezo_bias[3])) < 8 * tw.piezo_noise[3] + 3


def test_contact_forces_weigh_the_cubes_on_each_plate(recs: dict[str, Rec]) -> None:
    r = recs["rapid"]
    sess = r.sess
    force = AB.plate_forces(sess, AB._contact_arrays(sess))
    n = force.shape[1]
    on = np.zeros(8)
    for c in sess.w.cubes:
        assert not c.awake
        on[c.plate] += c.m * AB.G
    np.testing.assert_allclose(force[:, n - 20:].mean(axis=1), on, atol=1e-6)
