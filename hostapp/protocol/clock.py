"""Unwrapping the device's u32 microsecond clock (it wraps every ~71.6 min)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from hostapp.protocol.constants import T_US_MODULUS

_HALF = T_US_MODULUS // 2


class ClockUnwrapper:
    """Turn successive u32 ``t_us`` values into a monotonic-ish 64-bit clock.

    Each value is taken as the nearest one (within half the wrap period) to
    the previous value, so small steps backwards (a LOAD stamped just before
    the last PIEZO) stay small instead of jumping a whole wrap forward.
    """

    def __init__(self) -> None:
        self._last_raw: int | None = None
        self._last = 0

    def unwrap(self, t_us: int) -> int:
        """The unwrapped time of ``t_us`` in microseconds (starts at the first value)."""
        if self._last_raw is None:
            self._last_raw = t_us
            self._last = t_us
            return t_us
        delta = (t_us - self._last_raw) % T_US_MODULUS
        if delta >= _HALF:
            delta -= T_US_MODULUS
        self._last += delta
        self._last_raw = t_us
        return self._last

    def reset(self) -> None:
        """Forget the history (after a device reboot its clock restarts)."""
        self._last_raw = None
        self._last = 0


def unwrap_t_us(t_us: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Vectorised :meth:`ClockUnwrapper.unwrap` over a whole sequence.

    Parameters
    ----------
    t_us : array_like of int, shape (n,)
        Raw u32 device times in arrival order.

    Returns
    -------
    ndarray of int64, shape (n,)
        Unwrapped times; the first equals the first input.
    """
    raw = np.asarray(t_us, dtype=np.int64)
    if raw.size == 0:
        return raw
    delta = np.diff(raw) % T_US_MODULUS
    delta[delta >= _HALF] -= T_US_MODULUS
    out = np.empty_like(raw)
    out[0] = raw[0]
    np.cumsum(delta, out=out[1:])
    out[1:] += raw[0]
    return out
