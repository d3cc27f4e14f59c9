"""The piezo chain's biquads (high-pass, hum notches), filtered as ``scipy.signal.lfilter`` does.

``import scipy.signal`` takes about 0.6 s (it loads scipy.stats and the
spline and peak-finding code with it): two thirds of the start-up of
``towerear detect``, for one filter. The high-pass needs only a biquad's
coefficients (closed form), its steady-state start (a 2 x 2 solve) and the
linear filter, which is scipy's compiled ``_sigtools._linear_filter``: it is
loaded here from its file, without the package around it, and used only
if it agrees with a direct evaluation of the recursion on a test signal;
otherwise ``scipy.signal.lfilter`` is imported as usual.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np

LinearFilter = Callable[
    [np.ndarray, np.ndarray, np.ndarray, int, np.ndarray], tuple[np.ndarray, np.ndarray]
]


def butter_highpass(corner_hz: float, rate_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """``(b, a)`` of the 2nd-order Butterworth high-pass (bilinear, pre-warped).

    The same filter as ``scipy.signal.butter(2, corner_hz / (rate_hz / 2), "highpass")``.
    """
    if not 0.0 < corner_hz < 0.5 * rate_hz:
        raise ValueError("the corner must lie between 0 and half the sample rate")
    k = np.tan(np.pi * corner_hz / rate_hz)
    norm = 1.0 / (1.0 + np.sqrt(2.0) * k + k * k)
    b = np.array([1.0, -2.0, 1.0]) * norm
    a = np.array([1.0, 2.0 * (k * k - 1.0) * norm, (1.0 - np.sqrt(2.0) * k + k * k) * norm])
    return b, a


def notch(freq_hz: float, sample_rate_hz: float, width_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """``(b, a)`` of a 2nd-order notch at ``freq_hz``, ``width_hz`` wide at -3 dB.

    The same filter as ``scipy.signal.iirnotch(freq_hz, freq_hz / width_hz, sample_rate_hz)``.
    """
    if not 0.0 < freq_hz < 0.5 * sample_rate_hz:
        raise ValueError("the notch must lie between 0 and half the sample rate")
    w0 = 2.0 * np.pi * freq_hz / sample_rate_hz
    beta = np.tan(0.5 * 2.0 * np.pi * width_hz / sample_rate_hz)
    gain = 1.0 / (1.0 + beta)
    b = gain * np.array([1.0, -2.0 * np.cos(w0), 1.0])
    a = np.array([1.0, -2.0 * gain * np.cos(w0), 2.0 * gain - 1.0])
    return b, a


def steady_state(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The filter state after a long constant input of 1 (``scipy.signal.lfilter_zi``)."""
    # Transposed direct form II: the state z solves (I - A^T) z = b[1:] - a[1:] b[0],
    # A the companion matrix of a (a[0] = 1).
    companion = np.array([[-a[1], -a[2]], [1.0, 0.0]])
    return np.linalg.solve(np.eye(2) - companion.T, b[1:] - a[1:] * b[0])


def _direct(
    b: np.ndarray, a: np.ndarray, x: np.ndarray, zi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The biquad's recursion, sample by sample (transposed direct form II), along axis 0."""
    y = np.empty_like(x)
    z0, z1 = zi[0].copy(), zi[1].copy()
    for n in range(x.shape[0]):
        y[n] = b[0] * x[n] + z0
        z0 = b[1] * x[n] - a[1] * y[n] + z1
        z1 = b[2] * x[n] - a[2] * y[n]
    return y, np.stack([z0, z1])


def _agrees(linear_filter: LinearFilter) -> bool:
    """Whether ``linear_filter`` computes the biquad's recursion, state in and out."""
    # A test signal without numpy.random, which nothing else `towerear
    # detect` runs imports: incommensurate sines, unlike in every column.
    n = np.arange(32 * 3, dtype=np.float64).reshape(32, 3)
    x = 100.0 * np.sin(0.7 * n + 0.3) + 37.0 * np.cos(2.3 * n)
    b, a = butter_highpass(150.0, 2000.0)
    zi = 10.0 * np.sin(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    want_y, want_z = _direct(b, a, x, zi)
    got_y, got_z = linear_filter(b, a, x, 0, zi)
    return bool(np.allclose(got_y, want_y, rtol=1e-12, atol=1e-9)
                and np.allclose(got_z, want_z, rtol=1e-12, atol=1e-9))


def _compiled_filter() -> LinearFilter | None:
    """The compiled linear filter of scipy, loaded from its file; None if it cannot be."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        return None
    directory = Path(spec.origin).parent / "signal"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = directory / f"_sigtools{suffix}"
        if not path.is_file():
            continue
        try:
            module_spec = importlib.util.spec_from_file_location("scipy.signal._sigtools", path)
            if module_spec is None or module_spec.loader is None:
                return None
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            compiled: LinearFilter = module._linear_filter
            return compiled if _agrees(compiled) else None
        except (ImportError, OSError, AttributeError, TypeError, ValueError):
            return None
    return None


def _scipy_filter() -> LinearFilter:
    from scipy.signal import lfilter

    def linear_filter(
        b: np.ndarray, a: np.ndarray, x: np.ndarray, axis: int, zi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        y, zf = lfilter(b, a, x, axis=axis, zi=zi)
        return y, zf

    return linear_filter


#: ``linear_filter(b, a, x, axis, zi) -> (y, zf)``, as ``scipy.signal.lfilter``.
linear_filter: LinearFilter = _compiled_filter() or _scipy_filter()
