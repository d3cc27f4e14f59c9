"""Fast checks of the blind cross-check model Z (tools/crosscheck_z): contracts.md stretched to
its legal edges (rates, batch sizes, wraps, message orders, rare types) on a well-built tower
played by a fast adult group."""

from __future__ import annotations

import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Hello, Load, Piezo, cobs_decode
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

SCRIPT = TOOLS / "crosscheck_z" / "make_recordings_z.py"
Z = load_script(SCRIPT, "make_recordings_z")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_z")
DUR = 14.0
SEEDS = range(1, 9)  # one of each firmware profile
U32 = 1 << 32

# Body lengths contracts.md section 1 fixes for n_piezo = n_load = 8.
BODY = {1: 19, 3: 29, 4: 12, 5: 4, 6: 8}


@dataclass
class Msg:
    """One complete, CRC-valid message of a recording, as our own reading of the bytes."""

    index: int  # position among the complete frames
    mtype: int
    seq: int
    body: bytes
    frame_len: int  # bytes on the wire including the 0x00

    @property
    def t_us(self) -> int:
        return int.from_bytes(self.body[0:4], "little")


@dataclass
class Parsed:
    msgs: list[Msg]
    head: bytes  # bytes before the first 0x00
    tail: bytes  # bytes after the last 0x00


def parse(data: bytes) -> Parsed:
    """Split at 0x00, COBS-decode (the project's decoder), check every CRC (binascii)."""
    chunks = data.split(b"\x00")
    msgs: list[Msg] = []
    for ch in chunks[1:-1]:
        if not ch:
            continue
        raw = cobs_decode(ch)
        assert _is_message(raw)
        msgs.append(Msg(len(msgs), raw[0], int.from_bytes(raw[1:3], "little"), raw[3:-2],
                        len(ch) + 1))
    return Parsed(msgs, chunks[0], chunks[-1])


def _is_message(raw: bytes) -> bool:
    return len(raw) >= 5 and binascii.crc_hqx(raw[:-2], 0xFFFF) == int.from_bytes(raw[-2:],
                                                                                  "little")


def _is_frame(chunk: bytes) -> bool:
    try:
        return _is_message(cobs_decode(chunk))
    except ValueError:
        return False


@pytest.fixture(scope="module")
def kits() -> dict[int, tuple[bytes, dict[str, Any], Parsed]]:
    """One short 'single' recording of each of the eight kits (profiles)."""
    out = {}
    for seed in SEEDS:
        raw, truth = Z.generate(seed, "single", DUR)
        out[seed] = (raw, truth, parse(raw))
    return out


@pytest.fixture(scope="module")
def game() -> tuple[bytes, dict[str, Any], Parsed]:
    """A fast game on the 2 kHz / 116 Hz kit, with a STOP/START gap in a quiet moment."""
    raw, truth = Z.generate(6, "game", 50.0)
    assert truth["lifts"] and truth["removals"] and truth["session"]["stop_span"]
    return raw, truth, parse(raw)


@pytest.fixture(scope="module")
def busy() -> dict[str, tuple[bytes, dict[str, Any]]]:
    return {"rapid": Z.generate(1, "rapid", 20.0), "noisy": Z.generate(4, "noisy", 24.0)}


_DECODED: dict[int, Any] = {}


def decoded(raw: bytes) -> Any:
    """``decode_stream`` of a recording, once per recording."""
    key = id(raw)
    if key not in _DECODED:
        _DECODED[key] = decode_stream(raw)
    return _DECODED[key]


def _hello(p: Parsed) -> Msg:
    return next(m for m in p.msgs if m.mtype == 1)


def _rate(hello: Msg, off: int) -> int:
    return int.from_bytes(hello.body[off:off + 2], "little")


# -- the wire encoder -------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract(kits: dict[int, Any]) -> None:
    check_wire_encoder(Z)
    check_row_encoders(Z)
    for n in (0, 1, 200, 253, 254):
        data = bytes(np.random.default_rng(n).integers(0, 3, n, dtype=np.uint8))
        assert Z.cobs_decode_own(Z.cobs_encode(data)) == data
    # Rows of 254 bytes (the limit) with no zero: one 0xFF block, like the scalar encoder.
    rows = np.random.default_rng(1).integers(1, 256, (4, 254)).astype(np.uint8)
    enc = Z.cobs_encode_rows(rows)
    assert enc.shape == (4, 256) and np.all(enc[:, 0] == 0xFF)
    assert all(enc[r].tobytes() == Z.cobs_encode(rows[r].tobytes()) + b"\x00" for r in range(4))
    # Every frame of a recording (PIEZO and LOAD encoded many at once) is the one-frame one's.
    raw, _, p = kits[3]
    frames = raw.split(b"\x00")[1:-1]
    for ch, m in zip(frames, p.msgs, strict=True):
        assert Z.frame(m.mtype, m.seq, m.body) == ch + b"\x00"


def test_every_message_is_legal(kits: dict[int, Any],
                                game: tuple[bytes, dict[str, Any], Parsed]) -> None:
    """Types, body lengths, n, seq steps, s24 zero where invalid, ACK results: all per section 1."""
    for _raw, truth, p in [*kits.values(), game]:
        kinds = truth["session"]["kinds"]
        assert len(p.msgs) == sum(kinds.values()) - kinds["drop"]
        drops = 0
        for a, b in zip(p.msgs, p.msgs[1:], strict=False):
            step = (b.seq - a.seq) % 65536
            assert step == 1 or (a.mtype == 0x3F and step == 1 + 3), (a, b.seq)
            drops += step - 1
        assert drops == truth["session"]["tx_dropped"]
        for m in p.msgs:
            assert m.mtype in (1, 2, 3, 4, 5, 6, 0x10, 0x3F)
            assert 5 + len(m.body) <= 254
            if m.mtype in BODY:
                assert len(m.body) == BODY[m.mtype], m
            if m.mtype == 2:
                n = m.body[4]
                assert 1 <= n <= 14 and len(m.body) == 5 + 16 * n
            if m.mtype == 3:
                valid = m.body[4]
                for k in range(8):
                    if not valid >> k & 1:
                        assert m.body[5 + 3 * k:8 + 3 * k] == b"\x00\x00\x00"
            if m.mtype == 5:
                assert m.body[0] in (0x81, 0x82, 0x83, 0xC1, 0xC7) and m.body[3] in (0, 1, 2, 3)
            if m.mtype == 1:
                assert m.body[0] == 1 and m.body[4:6] == b"\x08\x08"


def test_the_project_decoder_reads_every_kit(kits: dict[int, Any],
                                             game: tuple[bytes, dict[str, Any], Parsed]) -> None:
    for raw, truth, p in [*kits.values(), game]:
        d = decoded(raw)  # our FrameDecoder, fed in odd chunks
        st = d.stats
        sess = truth["session"]
        assert st.crc_errors + st.framing_errors <= int(sess["starts_mid_frame"])
        assert st.lost_messages == sess["tx_dropped"]
        assert st.unknown_types == sum(m.mtype >= 0x10 for m in p.msgs)
        n_data = sum(isinstance(f.msg, Piezo | Load) for f in d.frames)
        assert n_data == sum(m.mtype in (2, 3) for m in p.msgs)
        hellos = [f.msg for f in d.frames if isinstance(f.msg, Hello)]
        assert len(hellos) == sum(m.mtype == 1 for m in p.msgs) >= 1


# -- rates, codes, batches --------------------------------------------------------------------


def test_hello_rates_reach_the_extremes(kits: dict[int, Any]) -> None:
    seen: dict[str, set[int]] = {"piezo": set(), "load": set(), "bits": set()}
    for raw, truth, p in kits.values():
        h = _hello(p)
        rate, load_rate, bits = _rate(h, 6), _rate(h, 8), h.body[10]
        seen["piezo"].add(rate)
        seen["load"].add(load_rate)
        seen["bits"].add(bits)
        tw = truth["tower"]
        assert (rate, bits, load_rate) == (tw["piezo_rate_hz"], tw["adc_bits"],
                                           tw["load_rate_hello"])
        # PIEZO stamps advance by n / rate (micros(): 4 µs steps, a few µs of ISR jitter).
        pz = [m for m in p.msgs if m.mtype == 2]
        t = np.array([m.t_us for m in pz], np.int64)
        n = np.array([m.body[4] for m in pz])
        d = (np.diff(t) % U32) - n[:-1] * 1_000_000 // rate
        assert np.all(t % 4 == 0) and np.all(d >= -12)
        assert np.sum(d > 12) <= 3, "contiguous but for overruns and STOP"
        # Idle codes sit at 2^(bits-1) and never leave [0, 2^bits - 1].
        dd = decoded(raw)
        q = dd.piezo_t < 3.5
        assert np.all(np.abs(dd.piezo[q].mean(axis=0) / 2 ** (bits - 1) - 1) < 0.02)
        assert dd.piezo.max() < 2**bits and dd.piezo.min() >= 0
        # The converters' true rate: HELLO carries it rounded (115.74 -> 116, 144.68 -> 145).
        fresh = dd.load_t[dd.load_valid == 0xFF]
        true = 1 / np.median(np.diff(fresh))
        assert abs(true - load_rate) < 0.6 + 0.03 * load_rate * (tw["hx711_clock"] == "internal")
        assert true == pytest.approx(tw["load_rate_hz"], rel=0.07)
        if tw["hx711_clock"] != "internal":
            assert abs(true - load_rate) > 0.05, "a non-integer true rate"
    assert seen == {"piezo": {500, 1000, 2000, 5000}, "load": {10, 14, 116, 145},
                    "bits": {8, 10, 11, 12}}


def test_batches_from_one_to_fourteen_sets(kits: dict[int, Any]) -> None:
    sizes: dict[str, set[int]] = {}
    for _raw, truth, p in kits.values():
        ns = {m.body[4] for m in p.msgs if m.mtype == 2}
        sizes.setdefault(truth["tower"]["batching"], set()).update(ns)
    assert 1 in sizes["idle"] and len(sizes["idle"]) >= 5, "line-paced batches vary"
    assert 14 in sizes["fill14"] and 14 in sizes["tick"]
    assert set().union(*sizes.values()) >= {1, 2, 7, 14}
    # The largest PIEZO is 234 bytes before encoding: 14 x 8 x u16 + 10.
    big = max(len(m.body) for _r, _t, p in kits.values() for m in p.msgs if m.mtype == 2)
    assert big + 5 == 234


def test_the_wire_edge_kit_fills_the_line(kits: dict[int, Any]) -> None:
    raw, truth, p = kits[1]
    assert truth["tower"]["piezo_rate_hz"] == 5000
    # 1 Mbaud 8N1 carries 100 kB/s: this firmware sends whenever the line is free.
    per_s = len(raw) / DUR
    assert 0.97e5 < per_s < 1.005e5
    assert {m.body[4] for m in p.msgs if m.mtype == 2} >= {3, 4, 5}


# -- rare types, orders, sizes ------------------------------------------------------------------


def test_extension_messages_up_to_254_bytes(kits: dict[int, Any]) -> None:
    logs = [m for _r, _t, p in kits.values() for m in p.msgs if m.mtype == 0x10]
    dumps = [m for _r, _t, p in kits.values() for m in p.msgs if m.mtype == 0x3F]
    assert logs and all(m.body[1:].isascii() for m in logs)
    assert any(b"boot" in m.body for m in logs)
    assert dumps and all(3 + len(m.body) + 2 == 254 for m in dumps)
    assert any(m.frame_len == 256 for m in dumps), "a 254-byte message with no zero: one block"
    raw = kits[2][0]
    assert any(ch[:1] == b"\xff" and len(ch) == 255 for ch in raw.split(b"\x00"))


def test_dropped_dumps_leave_seq_gaps_that_status_counts(kits: dict[int, Any]) -> None:
    checked = 0
    for _raw, _truth, p in kits.values():
        for i, m in enumerate(p.msgs[:-1]):
            if (p.msgs[i + 1].seq - m.seq) % 65536 == 1:
                continue
            assert m.mtype == 0x3F and p.msgs[i - 1].mtype == 0x3F
            st = [x for x in p.msgs if x.mtype == 4]
            before = [x for x in st if x.index < m.index]
            after = [x for x in st if x.index > m.index]
            if not before or not after:
                continue
            dropped = int.from_bytes(after[0].body[6:8], "little") - int.from_bytes(
                before[-1].body[6:8], "little")
            assert dropped % 65536 == 3 and after[0].body[11] & 4
            checked += 1
    assert checked >= 2


def test_acks_of_every_result_and_pongs(kits: dict[int, Any],
                                        game: tuple[bytes, dict[str, Any], Parsed]) -> None:
    results: set[tuple[int, int]] = set()
    for _raw, truth, p in [*kits.values(), game]:
        msgs = p.msgs
        for i, m in enumerate(msgs):
            if m.mtype == 5:
                results.add((m.body[0], m.body[3]))
                if m.body[0] == 0x81:
                    assert msgs[i - 1].mtype == 1, "GET_INFO: HELLO, then ACK"
                if m.body[0] == 0xC1 and m.body[3] == 0:
                    assert msgs[i + 1].mtype == 0x3F
        pongs = [m for m in msgs if m.mtype == 6]
        if truth["session"]["host"]:
            assert len(pongs) >= DUR - 2
            tokens = [int.from_bytes(m.body[:4], "little") for m in pongs]
            assert all((b - a) % U32 == 1 for a, b in zip(tokens, tokens[1:], strict=False))
            # A PONG's t_us is the device clock: close to the data sent just before it.
            for pg in pongs:
                prev = next(x for x in reversed(msgs[:pg.index]) if x.mtype in (2, 3))
                dt = (int.from_bytes(pg.body[4:8], "little") - prev.t_us) % U32
                stopped = any(x.mtype == 5 and x.body[0] == 0x83
                              for x in msgs[prev.index:pg.index])
                assert dt < 60_000 or (stopped and dt < 2_000_000)
    assert {r for _, r in results} == {0, 1, 2, 3}
    assert {(0x81, 0), (0x82, 0), (0x82, 2), (0x83, 0), (0xC1, 0), (0xC1, 3), (0xC7, 1)} <= results


def test_attach_recordings_open_and_end_mid_frame(kits: dict[int, Any]) -> None:
    attached = [(raw, t, p) for raw, t, p in kits.values() if t["session"]["mode"] == "attach"]
    assert len(attached) == 4
    for raw, truth, p in attached:
        assert p.head and not _is_frame(p.head), "opens inside a frame"
        assert raw[-1] != 0 and p.tail and not _is_frame(p.tail), "cut inside the last frame"
        assert p.msgs[0].mtype in (2, 3, 4, 5, 6), "the device was running"
        i_hello = next(i for i, m in enumerate(p.msgs) if m.mtype == 1)
        assert any(m.mtype in (2, 3) for m in p.msgs[:i_hello]), "data comes before HELLO"
        assert p.msgs[i_hello].seq != 0 and p.msgs[i_hello + 1].mtype == 5
        assert p.msgs[0].seq == truth["session"]["first_seq"] > 64900
        assert any(b.seq < a.seq for a, b in zip(p.msgs, p.msgs[1:], strict=False)), "seq wraps"


def test_boot_recordings_start_with_hello_then_an_empty_load(kits: dict[int, Any]) -> None:
    booted = [(raw, t, p) for raw, t, p in kits.values() if t["session"]["mode"] == "boot"]
    assert len(booted) == 4
    zeros = 0
    for raw, truth, p in booted:
        zeros += raw[:1] == b"\x00"
        assert p.head == b"" and p.tail == b"" and raw[-1] == 0
        assert [m.mtype for m in p.msgs[:4]] == [1, 4, 0x10, 3] and p.msgs[0].seq == 0
        first_load = p.msgs[3]
        assert first_load.body[4] == 0 and first_load.body[5:] == bytes(24)
        # The converters settle four conversions before their readings count.
        loads = [m for m in p.msgs if m.mtype == 3]
        if not truth["tower"]["keepalive_ms"]:
            assert all(m.body[4] == 0 for m in loads[:5]) and loads[5].body[4] == 0xFF
        assert int.from_bytes(p.msgs[1].body[:4], "little") < 1000  # uptime_ms after reset
        if truth["session"]["edges"] and "get_info_again" in truth["session"]["edges"]:
            assert sum(m.mtype == 1 for m in p.msgs) == 2
    assert zeros >= 1, "a firmware that opens with a lone delimiter"


def test_clocks_wrap_inside_the_recording(kits: dict[int, Any]) -> None:
    wrapped = days = 0
    for raw, truth, p in kits.values():
        sess = truth["session"]
        if sess["mode"] != "attach":
            continue
        data = [m for m in p.msgs if m.mtype in (2, 3)]
        pairs = [(a, b) for a, b in zip(data, data[1:], strict=False)
                 if a.t_us < 1_000_000 and b.t_us > U32 - 1_000_000]
        assert sess["wrap_between_load_and_older_piezo"]
        # A LOAD stamped just after the wrap, then a PIEZO whose first set came before it.
        assert any(a.mtype == 3 and b.mtype == 2 for a, b in pairs)
        wrapped += 1
        d = decoded(raw)
        assert d.piezo_t[0] < 0.01 and d.piezo_t[-1] == pytest.approx(DUR, abs=0.04)
        assert np.all(np.diff(d.load_t) > 0)
        ups = [int.from_bytes(m.body[:4], "little") for m in p.msgs if m.mtype == 4]
        if sess["uptime_wraps"] == 1000:  # 49.7 days: millis() wraps with micros()
            days += 1
            assert ups[0] > U32 - 30_000 and ups[-1] < 30_000
            st = [m for m in p.msgs if m.mtype == 4]
            after = next(m for m, u in zip(st, ups, strict=True) if u < 30_000)
            prev = next(x for x in reversed(p.msgs[:after.index]) if x.mtype in (2, 3))
            t_after = ((prev.t_us - data[0].t_us) % U32) / 1e6
            u_after = int.from_bytes(after.body[:4], "little") / 1000
            assert t_after == pytest.approx(sess["t_us_wrap_t"] + u_after, abs=0.01)
        else:
            assert all(b > a for a, b in zip(ups, ups[1:], strict=False))
    assert wrapped == 4 and days >= 1


def test_stream_time_zero_is_a_load_with_older_piezo_after_it(kits: dict[int, Any]) -> None:
    found = 0
    for raw, truth, p in kits.values():
        if not truth["session"]["first_data_is_backstep_load"]:
            continue
        first = next(m for m in p.msgs if m.mtype in (2, 3))
        assert first.mtype == 3
        d = decoded(raw)
        assert d.load_t[0] == 0.0 and d.piezo_t[0] < 0.0, "sets before stream time zero"
        found += 1
    assert found >= 2


def test_load_valid_bits_empty_loads_and_negative_counts(
        kits: dict[int, Any], game: tuple[bytes, dict[str, Any], Parsed]) -> None:
    negative = 0
    for raw, truth, _p in kits.values():
        d = decoded(raw)
        negative += int(np.any(d.load_values < 0))
        if truth["tower"]["keepalive_ms"]:  # LOADs (valid 0) between slow converters
            empty = d.load_valid == 0
            assert empty.mean() > 0.7
            assert np.diff(d.load_t).max() < 0.0215
            assert np.all(d.load_values[empty] == 0)
    assert negative >= 1, "an empty plate below zero counts (zero balance)"
    raw, truth, _ = game
    d = decoded(raw)
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        sel = (d.load_t > lift["t"] + 0.05) & (d.load_t < close["t"])
        fresh = d.load_valid[sel]
        assert sel.sum() > 10 and np.all(fresh & ~((1 << (k + 1)) - 1) == 0)
        assert np.mean(fresh == (1 << (k + 1)) - 1) > 0.95
        after = (d.load_t > close["t"] + 0.1) & (d.load_t < close["t"] + 0.6)
        assert np.any(d.load_valid[after] == 0xFF)


def test_status_periods_switched_off_and_on(kits: dict[int, Any]) -> None:
    periods = set()
    off = 0
    for _raw, truth, p in kits.values():
        st = [m for m in p.msgs if m.mtype == 4]
        ups = np.array([int.from_bytes(m.body[:4], "little") for m in st], np.int64)
        steps = (np.diff(ups) % U32)[int(truth["session"]["mode"] == "boot"):]  # + one at boot
        period = truth["tower"]["status_ms"]
        periods.add(period)
        span = truth["session"]["status_off_span"]
        if span is None and truth["session"]["stop_span"] is None:
            assert np.all(np.abs(steps - period) <= 3)  # sent when the line is free
            continue
        assert np.all((np.abs(steps - period) <= 3) | (steps > 2 * period))
        if span is not None:
            off += 1
            a, b = span
            assert np.any(steps >= 1000 * (b - a) - 2 * period), "no STATUS while switched off"
    assert periods == {250, 500, 1000, 2000} and off >= 2


def test_stop_start_gap(game: tuple[bytes, dict[str, Any], Parsed]) -> None:
    raw, truth, p = game
    msgs = p.msgs
    i_stop = next(i for i, m in enumerate(msgs) if m.mtype == 5 and m.body[0] == 0x83)
    i_start = next(i for i, m in enumerate(msgs[i_stop:], i_stop)
                   if m.mtype == 5 and m.body[0] == 0x82)
    between = {m.mtype for m in msgs[i_stop + 1:i_start]}
    assert between <= {6}, "only PONGs while stopped"
    before = next(m for m in reversed(msgs[:i_stop]) if m.mtype == 2)
    after = next(m for m in msgs[i_start:] if m.mtype == 2)
    gap_s = ((after.t_us - before.t_us) % U32) / 1e6
    a, b = truth["session"]["stop_span"]
    assert gap_s == pytest.approx(b - a, abs=0.01)


def test_overruns_leave_t_us_gaps_that_status_counts(kits: dict[int, Any]) -> None:
    raw, truth, p = kits[5]
    assert truth["tower"]["piezo_rate_hz"] == 5000 and truth["session"]["piezo_sets_lost"] > 0
    pz = [m for m in p.msgs if m.mtype == 2]
    lost = 0
    for a, b in zip(pz, pz[1:], strict=False):
        gap = (b.t_us - a.t_us) % U32 - 200 * a.body[4]
        if gap > 100:
            lost += round(gap / 200)
    assert lost == truth["session"]["piezo_sets_lost"]
    st = [m for m in p.msgs if m.mtype == 4]
    ovr = [int.from_bytes(m.body[4:6], "little") for m in st]
    assert ovr[-1] - ovr[0] == lost and any(m.body[11] & 8 for m in st)


def test_load_timeouts_wrap_when_modules_are_lifted() -> None:
    raw, truth = Z.generate(4, "game", 40.0)
    assert truth["session"]["mode"] == "attach" and truth["lifts"]
    p = parse(raw)
    lto = [int.from_bytes(m.body[8:10], "little") for m in p.msgs if m.mtype == 4]
    # Every chip carried off with the lifted modules times out once (u16, cumulative).
    expect = sum(7 - lift["exposed"] for lift in truth["lifts"] if lift["t"] < 38.0)
    assert (lto[-1] - lto[0]) % 65536 == expect and lto[0] + expect > 65535, "it wraps"
    assert lto[-1] < lto[0]
    assert any(m.body[11] & 2 for m in p.msgs if m.mtype == 4), "flag: a cell is missing"
    assert any(b"back" in m.body for m in p.msgs if m.mtype == 0x10)


# -- physics ---------------------------------------------------------------------------------


def _grams(d: Any, kit: Any, ch: int, t0: float, t1: float) -> float:
    sel = d.fresh(ch) & (d.load_t >= t0) & (d.load_t < t1)
    assert sel.sum() >= 2, (ch, t0, t1)
    return float((np.median(d.load_values[sel, ch]) - kit.offset[ch]) / kit.cpg[ch])


def test_landings_weigh_one_cube_and_ring_their_level(
        busy: dict[str, tuple[bytes, dict[str, Any]]], kits: dict[int, Any]) -> None:
    checked = loudest = 0
    for seed, (raw, truth) in [(1, busy["rapid"]), (4, busy["noisy"]), (6, kits[6][:2]),
                               (2, kits[2][:2])]:
        kit = Z.make_kit(seed)
        d = decoded(raw)
        bias = 2 ** (kit.profile.adc_bits - 1)
        events = truth["landings"]
        for x in events:
            f = x["floor"]
            others = [e for e in events if e is not x and (
                abs(e["t"] - x["t"]) < 1.6 or abs(e["t_first_impact"] - x["t_first_impact"])
                < 1.6)]
            if others or x["t"] > truth["duration_s"] - 1.0 or any(
                    abs(k["t"] - x["t"]) < 1.5 for k in truth["knocks"]):
                continue
            step = _grams(d, kit, f, x["t"] + 0.45, x["t"] + 0.95) - _grams(
                d, kit, f, x["t_first_impact"] - 0.6, x["t_first_impact"] - 0.1)
            assert step == pytest.approx(x["mass_g"], abs=0.012), x
            checked += 1
            w = d.piezo_window(x["t_on_floor"] - 0.002, x["t_on_floor"] + 0.03) - bias
            loudest += int(np.argmax(np.abs(w).max(axis=0))) == f
    assert checked >= 8 and loudest >= 0.7 * checked


def test_removals_and_table_knocks(game: tuple[bytes, dict[str, Any], Parsed],
                                  busy: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    raw, truth, _ = game
    kit = Z.make_kit(6)
    d = decoded(raw)
    for rm in truth["removals"]:
        later = [r["t_touch"] for r in truth["removals"] if r["floor"] == rm["floor"]
                 and r["t"] > rm["t"]]
        t_after = min([rm["t"] + 0.9, *[x - 0.05 for x in later]])
        drop = _grams(d, kit, rm["floor"], rm["t_touch"] - 0.5, rm["t_touch"] - 0.05) - _grams(
            d, kit, rm["floor"], rm["t"] + 0.3, t_after)
        assert drop == pytest.approx(rm["load_g"], abs=0.015), rm
    raw, truth = busy["noisy"]
    kit = Z.make_kit(4)
    d = decoded(raw)
    assert truth["knocks"]
    for kn in truth["knocks"]:
        w = d.piezo_window(kn["t"] - 0.005, kn["t_end"] + 0.05)[:, 0]
        quiet = np.median(d.piezo_window(kn["t"] - 0.5, kn["t"] - 0.01)[:, 0])
        assert np.abs(w - quiet).max() > 30, "the base hears the table"


# -- truth, determinism, command line --------------------------------------------------------


def test_truth_is_what_the_scorer_reads(kits: dict[int, Any],
                                        game: tuple[bytes, dict[str, Any], Parsed],
                                        busy: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    for seed, (_raw, truth, _p) in kits.items():
        check_truth(truth, SCORE, scenario="single", seed=seed, duration_s=DUR)
        check_scored_perfect(truth, SCORE)
        assert truth["model"] == "Z"
    check_truth(game[1], SCORE, scenario="game", seed=6, duration_s=50.0)
    check_scored_perfect(game[1], SCORE)
    check_truth(busy["rapid"][1], SCORE, scenario="rapid", seed=1, duration_s=20.0)
    check_truth(busy["noisy"][1], SCORE, scenario="noisy", seed=4, duration_s=24.0)
    hands = [x for x in busy["rapid"][1]["landings"] if x.get("handful")]
    assert len(hands) >= 2


def test_game_follows_the_rules(game: tuple[bytes, dict[str, Any], Parsed]) -> None:
    truth = game[1]
    throws = sorted((x for x in truth["landings"] if not x["knocked"]),
                    key=lambda x: x["t_release"])
    kinds = [x["kind"] for x in throws]
    assert kinds[:2] == ["victim", "victim"] and {x["colour"] for x in throws[:2]} == {"red"}
    assert kinds.count("prologue") % 2 == 0 and kinds.count("prologue") >= 6
    for i, (lift, close) in enumerate(zip(truth["lifts"], truth["closes"], strict=True)):
        assert close["exposed"] == lift["exposed"] and close["t"] > lift["t"]
        rem = [r for r in truth["removals"] if lift["t"] < r["t"] < close["t"]]
        assert all(r["floor"] == lift["exposed"] for r in rem)
        assert not [x for x in throws if lift["t"] < x["t_release"] < close["t"]]
        nxt = truth["lifts"][i + 1]["t"] if i + 1 < len(truth["lifts"]) else np.inf
        back = [x for x in throws if close["t"] < x["t_release"] < nxt
                and x["kind"] == "throw_back"]
        expect = sum(c != "red" for r in rem for c in r["colours"])
        assert len(back) == expect or nxt == np.inf


def test_determinism_and_kit_from_seed() -> None:
    a = Z.generate(11, "noisy", 10.0)
    assert a == Z.generate(11, "noisy", 10.0)
    assert Z.generate(12, "noisy", 10.0)[0] != a[0]
    assert Z.generate(11, "single", 10.0)[1]["tower"] == a[1]["tower"]


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 7, 9)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")
