"""Mains hum on the piezo pins: harmonics found, notched out, the same however cut."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import signal

from dsp.detect.biquad import notch
from dsp.detect.conditioning import PiezoConditioner
from dsp.detect.hum import HUM_LEARN_S, MOST_LINES, MainsHumNotch, mains_lines
from dsp.detect.piezo import PiezoChain
from tests.dsp.detect.edrumulus import RATE
from tests.dsp.detect.edrumulus import device_codes as _device_codes


def _hum(n: int, rate: float, mains: float, amplitudes: dict[int, float], *,
         clock: float = 1.0, channels: int = 8, seed: int = 0) -> np.ndarray:
    """A ground loop's hum, the same on every pin, with white noise of 0.3 codes."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate * clock  # a device clock running ``clock`` times fast
    hum = np.zeros(n)
    for k, a in amplitudes.items():
        hum += a * np.sin(2 * np.pi * k * mains * t + k)
    return hum[:, None] + rng.normal(0.0, 0.3, (n, channels))


def _click(n: int, rate: float, at_s: float, freq_hz: float, amplitude: float) -> np.ndarray:
    """A plate's strike: a damped burst (20 ms decay) starting at ``at_s``."""
    t = np.arange(n) / rate - at_s
    burst = amplitude * np.exp(-np.clip(t, 0, None) / 0.02) * np.sin(2 * np.pi * freq_hz * t)
    return np.where(t >= 0, burst, 0.0)


@pytest.mark.parametrize("rate", [1600.0, 2000.0, 2500.0])
def test_the_harmonics_of_a_ground_loop_are_found_where_the_device_clock_puts_them(
        rate: float) -> None:
    clock = 1.003  # a resonator 0.3 % fast reads the hum 0.3 % low
    x = _hum(int(rate), rate, 50.0, {1: 4.0, 3: 1.5, 5: 0.4, 7: 0.2}, clock=clock)
    lines = mains_lines(x, rate, lowest_hz=90.0)
    assert len(lines) == 3
    assert np.allclose(lines, [150 * clock, 250 * clock, 350 * clock], atol=0.3)


def test_sixty_hertz_mains_is_told_from_fifty() -> None:
    x = _hum(2000, 2000.0, 60.0, {2: 1.0, 3: 1.0, 4: 0.5})
    assert np.allclose(mains_lines(x, 2000.0), [120.0, 180.0, 240.0], atol=0.3)


def test_noise_and_strikes_alone_are_no_hum() -> None:
    rate = 2000.0
    n = int(rate)
    quiet = _hum(n, rate, 50.0, {})
    assert mains_lines(quiet, rate) == ()
    # Plates ringing at harmonics of the mains (a strike lasts tens of ms).
    struck = quiet + sum(_click(n, rate, at, f, 80.0) for at, f in
                         [(0.2, 250.0), (0.5, 350.0), (0.8, 150.0)])[:, None]
    assert mains_lines(struck, rate) == ()
    assert mains_lines(quiet[:10], rate) == ()


def test_the_notch_is_scipys() -> None:
    b, a = notch(250.0, 2000.0, 3.0)
    want_b, want_a = signal.iirnotch(250.0, 250.0 / 3.0, 2000.0)
    assert np.allclose(b, want_b) and np.allclose(a, want_a)
    with pytest.raises(ValueError, match="half the sample rate"):
        notch(1000.0, 2000.0, 3.0)


def test_the_hum_is_taken_out_after_the_first_second_and_a_click_kept() -> None:
    rate = 2000.0
    n = int(4 * rate)
    hum = _hum(n, rate, 50.0, {3: 3.0, 5: 1.0}, channels=2)
    click = _click(n, rate, 3.0, 420.0, 40.0)[:, None]
    notcher = MainsHumNotch(n_channels=2, sample_rate_hz=rate, lowest_hz=90.0)
    y = notcher.process(hum + click)
    assert notcher.lines is not None and len(notcher.lines) == 2
    learn = int(HUM_LEARN_S * rate)
    assert np.array_equal(y[:learn], (hum + click)[:learn])  # the first second as it was
    # Hum: 3.2 codes rms before, down to the noise (0.3 codes) from 1.2 s on.
    later = slice(int(1.2 * rate), int(2.9 * rate))
    assert np.sqrt(np.mean(y[later] ** 2)) < 0.4
    # The click's peak kept within a tenth.
    strike = slice(int(3.0 * rate), int(3.1 * rate))
    assert np.max(np.abs(y[strike, 0])) == pytest.approx(40.0, rel=0.1)


def test_no_hum_no_notch() -> None:
    rate = 2000.0
    x = _hum(3 * int(rate), rate, 50.0, {})
    notcher = MainsHumNotch(n_channels=8, sample_rate_hz=rate)
    assert np.array_equal(notcher.process(x), x)
    assert notcher.lines == ()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5999), max_size=12))
def test_notching_is_the_same_however_the_stream_is_cut(cuts: list[int]) -> None:
    rate = 2000.0
    x = _hum(6000, rate, 50.0, {3: 2.0, 5: 1.0, 7: 0.5}, channels=3, seed=1)
    whole = MainsHumNotch(n_channels=3, sample_rate_hz=rate).process(x.copy())
    notcher = MainsHumNotch(n_channels=3, sample_rate_hz=rate)
    edges = [0, *sorted(set(cuts)), x.shape[0]]
    parts = [notcher.process(x[a:b].copy()) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    assert np.allclose(np.concatenate(parts), whole, rtol=0, atol=1e-9)


def test_the_conditioner_floor_falls_once_the_hum_is_known() -> None:
    rate = 2000.0
    n = int(3 * rate)
    codes = 512.0 + _hum(n, rate, 50.0, {1: 6.0, 3: 3.0, 5: 1.5, 7: 0.8}, channels=8)
    env = PiezoConditioner(n_channels=8, sample_rate_hz=rate).process(codes)
    frames_per_s = env.shape[0] / 3.0
    first = np.median(env[: int(0.9 * frames_per_s)])
    after = np.median(env[int(1.3 * frames_per_s):])
    assert after < 0.3 * first


def test_faint_real_hits_under_hum_are_heard_once_the_hum_is_notched() -> None:
    # Real pad hits, turned down to a few codes, under a ground loop's hum.
    codes = _device_codes("pd120_single_hits").astype(np.float64)
    quiet = codes - 512.0
    faint = 0.06 * quiet  # peaks of about 20 codes
    n = codes.shape[0]
    hum = _hum(n, RATE, 50.0, {3: 3.0, 5: 1.5, 7: 0.8}, channels=codes.shape[1], seed=3)
    signal_codes = np.clip(np.round(512.0 + faint + hum), 0, 1023)
    chain = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
    found = [i.t_s for i in chain.process(0.0, signal_codes) + chain.flush()]
    # The same tones off the mains family (52.5 Hz and its harmonics) are
    # not notched: under them the same hits drown.
    tones = _hum(n, RATE, 52.5, {3: 3.0, 5: 1.5, 7: 0.8}, channels=codes.shape[1], seed=3)
    chain_toned = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
    toned = np.clip(np.round(512.0 + faint + tones), 0, 1023)
    lost = [i.t_s for i in chain_toned.process(0.0, toned) + chain_toned.flush()]
    strong = np.abs(faint[:, 0])
    hits = np.flatnonzero(strong > 0.25 * strong.max()) / RATE
    hits = hits[np.concatenate([[True], np.diff(hits) > 0.1])]
    hits = hits[hits > 1.5]
    assert len(hits) >= 8
    heard = sum(any(abs(t - h) < 0.01 for t in found) for h in hits)
    heard_hummed = sum(any(abs(t - h) < 0.01 for t in lost) for h in hits)
    assert heard == len(hits)
    assert heard_hummed <= 2


def test_an_audio_interface_gets_the_loudest_lines_only() -> None:
    rate = 48000.0
    x = _hum(int(rate), rate, 50.0, {k: 2.0 / k for k in range(2, 40)}, channels=2)
    lines = mains_lines(x, rate, lowest_hz=90.0)
    assert len(lines) == MOST_LINES
    assert np.allclose(lines, [100.0 + 50.0 * k for k in range(MOST_LINES)], atol=0.3)  # loudest


def test_a_hum_under_the_noise_is_found_and_left_alone() -> None:
    rate = 2000.0
    x = _hum(3 * int(rate), rate, 50.0, {3: 0.15, 5: 0.1})  # noise 0.3 codes rms
    notcher = MainsHumNotch(n_channels=8, sample_rate_hz=rate, lowest_hz=90.0)
    assert np.array_equal(notcher.process(x), x)
    assert len(notcher.found) == 2 and notcher.lines == ()
