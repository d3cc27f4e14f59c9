"""Unwrapping the device's u32 microsecond clock (it wraps every ~71.6 min)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from hostapp.protocol import constants as c
from hostapp.protocol.constants import T_US_MODULUS
from hostapp.protocol.messages import Hello, Load, Piezo, Pong

_HALF = T_US_MODULUS // 2
# Why a second: messages of one stream are stamped in order, a LOAD
# stamped just before the PIEZO sent ahead of it is milliseconds back, and
# messages come many times a second. A clock a second or more back started
# again (the device rebooted, its HELLO lost in damage); one more than a
# second ahead skipped lost bytes. Either, alone, is a damaged frame.
_CLOCK_BACK_US = 1_000_000
_CLOCK_AHEAD_US = 1_000_000
# Why 10 s: a device that rebooted streams within a second or two of
# power-up, so its first stamps after a restart are its time since boot,
# and at least that much time passed since the last stamp before it (the
# device was running then). A restarted clock reading more than this was
# no fresh boot (bytes of another session, or a clock that ran on).
_BOOT_CLOCK_MAX_US = 10_000_000
# Why 0.1 s: a HELLO with seq 0 for no reboot (the sequence number came
# round) sits between two messages of a clock running on, milliseconds apart.
_RAN_ON_US = 100_000


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
        unwrapped = self.following(t_us)
        self.accept(t_us, unwrapped)
        return unwrapped

    def unwrap_many(self, t_us: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """:meth:`unwrap` of each value in turn, at once."""
        out = self.following_many(t_us)
        if out.size:
            self.accept(int(t_us[-1]), int(out[-1]))
        return out

    def following(self, t_us: int) -> int:
        """What :meth:`unwrap` would give ``t_us`` next, without taking it."""
        if self._last_raw is None:
            return t_us
        return self._last + _wrapped_step(t_us - self._last_raw)

    def following_many(self, t_us: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """What :meth:`unwrap_many` would give, without taking the values."""
        raw = np.asarray(t_us, dtype=np.int64)
        if raw.size == 0 or self._last_raw is None:
            return unwrap_t_us(raw)
        delta = np.diff(raw, prepend=self._last_raw) % T_US_MODULUS
        delta[delta >= _HALF] -= T_US_MODULUS
        return self._last + np.cumsum(delta)

    @property
    def last_raw(self) -> int | None:
        """The latest value taken, as it came (None before any)."""
        return self._last_raw

    def accept(self, t_us: int, unwrapped: int) -> None:
        """Take ``t_us`` as the latest value, unwrapped to ``unwrapped``."""
        self._last_raw = t_us
        self._last = unwrapped

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
    again; stream time then carries on from the last time seen, plus the
    new clock's reading (its time since boot, at most ``_BOOT_CLOCK_MAX_US``:
    the least time the device can have been away), instead of jumping
    back, so it never runs backwards by a whole session.

    A message whose clock leaves the time seen so far (a second or more back,
    or more than a second ahead) is held, untimed, until the next one shows
    which it was:

    - the next one follows it: the clock really went there. Ahead, bytes were
      lost; back, the device restarted and its HELLO was lost in damage (or
      bytes of another session were spliced in; counted in
      ``restarts_unannounced``), and stream time carries on from the last
      time seen as after a HELLO.
    - the next one follows the time before it: it was a lone damaged frame
      whose CRC still passed (counted in ``outliers``), and it is dropped so
      that it moves no later time.

    Either way the held message stays untimed (:meth:`stamp` gives None,
    :meth:`stamp_timed` NaN): one message lost at a gap of a second or more.
    """

    def __init__(self) -> None:
        self._unwrapper = ClockUnwrapper()
        self._origin_us: int | None = None
        # Stream time at the start of the current boot of the device, and the
        # raw t_us that boot's first timed message carried.
        self._epoch_start_us = 0
        self._epoch_ref_us: int | None = None
        # A reboot's HELLO came and no timed message since; the raw clock
        # last seen before it, if any.
        self._rebooting = False
        self._rebooted_from: int | None = None
        self._last_us = 0
        self._seen_any = False
        # The message held for want of the next: (raw t_us, unwrapped, stream us).
        self._held: tuple[int, int, int] | None = None
        self.restarts_unannounced = 0
        self.outliers = 0

    @property
    def origin_us(self) -> int | None:
        """Raw ``t_us`` of the first PIEZO or LOAD message, once seen."""
        return self._origin_us

    def stamp(self, seq: int, msg: object) -> float | None:
        """Stream time of ``msg`` in seconds, or None if it carries no time (yet).

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
            Seconds since the first PIEZO or LOAD message; None for a message
            held because its clock left the time seen so far.
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
        """Stream times of consecutive PIEZO and LOAD messages (:meth:`stamp_raw` of each).

        Held messages get NaN.
        """
        raw = np.asarray(t_us, dtype=np.int64)
        out = np.empty(raw.size)
        i = 0
        while i < raw.size:
            if self._epoch_ref_us is None or self._held is not None:
                out[i] = self._stamp_s(int(raw[i]))
                i += 1
                continue
            # A run of messages in time is stamped at once, up to the first that is not.
            unwrapped = self._unwrapper.following_many(raw[i:])
            elapsed = self._epoch_start_us + unwrapped - self._epoch_ref_us
            latest = np.maximum.accumulate(np.concatenate([[self._last_us], elapsed[:-1]]))
            off = (elapsed <= latest - _CLOCK_BACK_US) | (elapsed > latest + _CLOCK_AHEAD_US)
            n = int(np.argmax(off)) if off.any() else elapsed.size
            if n:
                out[i : i + n] = elapsed[:n] / 1e6
                self._unwrapper.accept(int(raw[i + n - 1]), int(unwrapped[n - 1]))
                self._last_us = max(self._last_us, int(elapsed[:n].max()))
                i += n
            if i < raw.size:  # the first out of time, in turn
                out[i] = self._stamp_s(int(raw[i]))
                i += 1
        return out

    def stamp_raw(self, seq: int, msg_type: int, t_us: int) -> float | None:
        """:meth:`stamp` from a message type and ``t_us`` (any value for types without one)."""
        if msg_type == c.HELLO:
            if seq == 0 and self._seen_any:
                if self._held is not None:
                    self._held = None
                    self.outliers += 1
                if not self._rebooting:
                    self._rebooted_from = self._unwrapper.last_raw
                self._rebooting = True
                self._epoch_start_us = self._last_us
                self._epoch_ref_us = None
                self._unwrapper.reset()
            return None
        if msg_type != c.PIEZO and msg_type != c.LOAD and msg_type != c.PONG:
            return None
        if self._epoch_ref_us is None and msg_type == c.PONG:
            return None
        us = self._stamp_us(t_us)
        return None if us is None else us / 1e6

    def _stamp_s(self, t_us: int) -> float:
        """:meth:`_stamp_us` in seconds, NaN while held."""
        us = self._stamp_us(t_us)
        return np.nan if us is None else us / 1e6

    def _stamp_us(self, t_us: int) -> int | None:
        """Stream time of one timed message in microseconds, or None while it is held."""
        self._seen_any = True
        if self._epoch_ref_us is None:
            away = self._since_boot(t_us, self._rebooted_from) if self._rebooting else 0
            self._epoch_ref_us = t_us - away
            self._rebooting, self._rebooted_from = False, None
            if self._origin_us is None:
                self._origin_us = t_us
            self._unwrapper.accept(t_us, t_us)
            elapsed = self._epoch_start_us + t_us - self._epoch_ref_us
            self._last_us = max(self._last_us, elapsed)
            return elapsed
        unwrapped = self._unwrapper.following(t_us)
        elapsed = self._epoch_start_us + unwrapped - self._epoch_ref_us
        if self._last_us - _CLOCK_BACK_US < elapsed <= self._last_us + _CLOCK_AHEAD_US:
            if self._held is not None:
                self._held = None
                self.outliers += 1
            self._unwrapper.accept(t_us, unwrapped)
            self._last_us = max(self._last_us, elapsed)
            return elapsed
        if self._held is not None:
            held_raw, held_unwrapped, held_elapsed = self._held
            step = _wrapped_step(t_us - held_raw)
            if -_CLOCK_BACK_US < step <= _CLOCK_AHEAD_US:
                # The clock did go where the held message said.
                self._held = None
                if held_elapsed <= self._last_us - _CLOCK_BACK_US:
                    away = self._since_boot(held_raw, None)
                    self._epoch_start_us += self._last_us + away - held_elapsed
                    held_elapsed = self._last_us + away
                    self.restarts_unannounced += 1
                self._unwrapper.accept(t_us, held_unwrapped + step)
                elapsed = held_elapsed + step
                self._last_us = max(self._last_us, held_elapsed, elapsed)
                return elapsed
            self.outliers += 1
        self._held = (t_us, unwrapped, elapsed)
        return None

    @staticmethod
    def _since_boot(t_us: int, before_us: int | None) -> int:
        """How long a restarted clock reading ``t_us`` has run: 0 unless it is a fresh boot's.

        ``before_us``: the raw clock last seen before the restart, if known;
        a clock reading on from it did not restart.
        """
        if t_us > _BOOT_CLOCK_MAX_US:
            return 0
        if before_us is not None and 0 <= _wrapped_step(t_us - before_us) <= _RAN_ON_US:
            return 0
        return t_us


def _wrapped_step(delta_us: int) -> int:
    """A raw clock difference taken within half a wrap period of zero."""
    step = delta_us % T_US_MODULUS
    return step - T_US_MODULUS if step >= _HALF else step
