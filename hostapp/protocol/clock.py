"""Unwrapping the device's u32 microsecond clock (it wraps every ~71.6 min)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from hostapp.protocol import constants as c
from hostapp.protocol.constants import T_US_MODULUS
from hostapp.protocol.messages import Hello, Load, Piezo, Pong

_HALF = T_US_MODULUS // 2
# Why a second: messages of one stream are stamped in order, and a LOAD
# stamped just before the PIEZO sent ahead of it is milliseconds back. A
# clock a second or more behind the last time seen started again: the
# device rebooted and its HELLO was lost in damage (or bytes of another
# session were spliced in).
_CLOCK_RESTART_BACK_US = 1_000_000


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

    def unwrap_many(self, t_us: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """:meth:`unwrap` of each value in turn, at once."""
        raw = np.asarray(t_us, dtype=np.int64)
        if raw.size == 0:
            return raw
        if self._last_raw is None:
            out = unwrap_t_us(raw)
        else:
            delta = np.diff(raw, prepend=self._last_raw) % T_US_MODULUS
            delta[delta >= _HALF] -= T_US_MODULUS
            out = self._last + np.cumsum(delta)
        self._last_raw = int(raw[-1])
        self._last = int(out[-1])
        return out

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


class StreamClock:
    """Stream time in seconds of device messages (contracts.md section 2).

    Stream time is ``(unwrapped t_us - t_us of the first PIEZO or LOAD) / 1e6``.
    Feed every decoded message in arrival order to :meth:`stamp`. When the
    device reboots (a HELLO with seq 0 after other messages) its clock starts
    again; stream time then carries on from the last time seen instead of
    jumping back, so it never runs backwards by a whole session. A clock a
    second or more behind the last time seen is taken for such a restart
    too, whose HELLO was lost (counted in ``restarts_unannounced``).
    """

    def __init__(self) -> None:
        self._unwrapper = ClockUnwrapper()
        self._origin_us: int | None = None
        # Stream time at the start of the current boot of the device, and the
        # raw t_us that boot's first timed message carried.
        self._epoch_start_us = 0
        self._epoch_ref_us: int | None = None
        self._last_us = 0
        self._seen_any = False
        self.restarts_unannounced = 0

    @property
    def origin_us(self) -> int | None:
        """Raw ``t_us`` of the first PIEZO or LOAD message, once seen."""
        return self._origin_us

    def stamp(self, seq: int, msg: object) -> float | None:
        """Stream time of ``msg`` in seconds, or None if it carries no time yet.

        Parameters
        ----------
        seq : int
            The message's sequence number (a HELLO with seq 0 marks a reboot).
        msg : Message
            A decoded message; PIEZO and LOAD set the origin, PONG is stamped
            once the origin is known, every other type gives None.

        Returns
        -------
        float or None
            Seconds since the first PIEZO or LOAD message.
        """
        if isinstance(msg, Piezo):
            return self.stamp_raw(seq, c.PIEZO, msg.t_us)
        if isinstance(msg, Load):
            return self.stamp_raw(seq, c.LOAD, msg.t_us)
        if isinstance(msg, Pong):
            return self.stamp_raw(seq, c.PONG, msg.t_us)
        if isinstance(msg, Hello):
            return self.stamp_raw(seq, c.HELLO, 0)
        return None

    def stamp_timed(self, t_us: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """Stream times of consecutive PIEZO and LOAD messages (:meth:`stamp_raw` of each)."""
        raw = np.asarray(t_us, dtype=np.int64)
        if raw.size == 0:
            return np.zeros(0)
        if self._epoch_ref_us is None:
            self._epoch_ref_us = int(raw[0])
            if self._origin_us is None:
                self._origin_us = int(raw[0])
        self._seen_any = True
        elapsed = self._epoch_start_us + self._unwrapper.unwrap_many(raw) - self._epoch_ref_us
        while True:
            latest = np.maximum.accumulate(np.concatenate([[self._last_us], elapsed[:-1]]))
            back = np.flatnonzero(elapsed <= latest - _CLOCK_RESTART_BACK_US)
            if back.size == 0:
                break
            # Restarted at this message: the rest carries on from the last time seen.
            i = int(back[0])
            shift = int(latest[i] - elapsed[i])
            self._epoch_start_us += shift
            elapsed[i:] += shift
            self.restarts_unannounced += 1
        self._last_us = max(self._last_us, int(elapsed.max()))
        return elapsed / 1e6

    def stamp_raw(self, seq: int, msg_type: int, t_us: int) -> float | None:
        """:meth:`stamp` from a message type and ``t_us`` (any value for types without one)."""
        if msg_type == c.HELLO:
            if seq == 0 and self._seen_any:
                self._epoch_start_us = self._last_us
                self._epoch_ref_us = None
                self._unwrapper.reset()
            return None
        if msg_type != c.PIEZO and msg_type != c.LOAD and msg_type != c.PONG:
            return None
        if self._epoch_ref_us is None:
            if msg_type == c.PONG:
                return None
            self._epoch_ref_us = t_us
            if self._origin_us is None:
                self._origin_us = t_us
        self._seen_any = True
        elapsed = self._epoch_start_us + self._unwrapper.unwrap(t_us) - self._epoch_ref_us
        if elapsed <= self._last_us - _CLOCK_RESTART_BACK_US:
            self._epoch_start_us += self._last_us - elapsed
            elapsed = self._last_us
            self.restarts_unannounced += 1
        self._last_us = max(self._last_us, elapsed)
        return elapsed / 1e6
