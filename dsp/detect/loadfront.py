"""The load stream as the load processors take it: one row per conversion, stale readings held.

A device sends LOAD rows at a cadence of its own: once per conversion round
(at HELLO's rate, or a few percent off it), or on a timer faster than its
converters, with stale channels flagged (:mod:`dsp.detect.cadence`). The
processors count their windows in rows, as consecutive conversions.
:class:`LoadFrontEnd` keeps the stream's first rows until they show its
cadence (``cadence.cadence_rows``), then gives every row on: put on the
converters' grid when polled well faster (``REGRID_RATIO``), with stale
readings held (:class:`dsp.detect.stale.StaleReadingHold`) and a slow
converter's drawn between its conversions
(:class:`dsp.detect.slowchannels.SlowChannelBridge`), and tells the rate
the rows come at, for which the processors are built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsp.detect.cadence import (
    CADENCE_TOLERANCE,
    REGRID_RATIO,
    LoadRegrid,
    cadence_rows,
    load_cadence,
)
from dsp.detect.slowchannels import SlowChannelBridge
from dsp.detect.stale import StaleReadingHold, load_rows


@dataclass(frozen=True)
class LoadRows:
    """Load rows for the processors: stale readings held, and the valid bits as sent.

    Attributes
    ----------
    t_s : ndarray, shape (m,)
    values, valid : ndarray, shape (m, n)
        Counts and which readings windows may use (stale ones held).
    fresh : ndarray of bool, shape (m, n)
        The valid bits as the device sent them.
    read_t : ndarray, shape (m, n)
        When each reading was made.
    shaken : ndarray of bool, shape (m,)
        Rows the shaking every cell felt at once was taken out of
        (:mod:`dsp.detect.commonshake`).
    """

    t_s: np.ndarray
    values: np.ndarray
    valid: np.ndarray
    fresh: np.ndarray
    read_t: np.ndarray
    shaken: np.ndarray

    @staticmethod
    def unshaken(t_s: np.ndarray, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray,
                 read_t: np.ndarray) -> LoadRows:
        """Rows as the front end gives them: no shaking taken out of any."""
        return LoadRows(t_s, values, valid, fresh, read_t, np.zeros(t_s.shape, dtype=bool))

    def before(self, cut: int) -> LoadRows:
        """The first ``cut`` rows."""
        return LoadRows(self.t_s[:cut], self.values[:cut], self.valid[:cut],
                        self.fresh[:cut], self.read_t[:cut], self.shaken[:cut])

    def after(self, cut: int) -> LoadRows:
        """The rows from ``cut`` on."""
        return LoadRows(self.t_s[cut:], self.values[cut:], self.valid[cut:],
                        self.fresh[cut:], self.read_t[cut:], self.shaken[cut:])

    def given(self) -> dict[str, np.ndarray]:
        """The keyword arguments of ``LoadChannelProcessor.process``."""
        return {"t_s": self.t_s, "values": self.values, "valid": self.valid,
                "fresh": self.fresh, "read_t": self.read_t, "shaken": self.shaken}

    @staticmethod
    def joined(parts: list[LoadRows]) -> LoadRows:
        """Consecutive blocks as one."""
        return LoadRows(*(np.concatenate([getattr(p, name) for p in parts])
                          for name in ("t_s", "values", "valid", "fresh", "read_t", "shaken")))


class LoadFrontEnd:
    """LOAD rows in, rows for the processors out (see the module docstring).

    Parameters
    ----------
    n_channels : int
        Load channels.
    hello_rate_hz : float
        The load rate HELLO states.

    Blocks may be of any size: the rows given are the same as for one big block.
    """

    def __init__(self, *, n_channels: int, hello_rate_hz: float) -> None:
        self.n_channels = int(n_channels)
        #: The rate the rows given come at: HELLO's until the cadence is known.
        self.rate_hz = float(hello_rate_hz)
        self.regrid: LoadRegrid | None = None
        self.stale = StaleReadingHold(n_channels=n_channels, reading_interval_s=1.0 / hello_rate_hz)
        # How late a polled row may come after its readings were made (0:
        # one row per conversion round, each made as it is sent).
        self._polled_late_s = 0.0
        self._first: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = []
        # Draws slow channels' readings between their conversions, once the
        # rows' interval is known.
        self.bridge: SlowChannelBridge | None = None

    @property
    def measuring(self) -> bool:
        """Whether the first rows still wait for the cadence."""
        return self._first is not None

    def process(self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray) -> LoadRows | None:
        """A block of rows as sent; the rows ready for the processors (None: none yet)."""
        t_s, values, fresh, _ = load_rows(t_s, values, valid)
        if self._first is not None:
            self._first.append((t_s, values, fresh))
            t_all = np.concatenate([t for t, _, _ in self._first])
            if cadence_rows(t_all, np.concatenate([f for _, _, f in self._first])) is None:
                return None
            return self.flush()
        return self._rows(t_s, values, fresh)

    def flush(self) -> LoadRows | None:
        """The first rows, however few, once no more will come (or enough came).

        At the stream's end: also the rows kept for slow channels.
        """
        if self._first is None and self.bridge is not None:
            return self._given(self.bridge.flush())
        if not self._first:
            self._first = None
            return None
        first, self._first = self._first, None
        t_s = np.concatenate([t for t, _, _ in first])
        values = np.concatenate([v for _, v, _ in first])
        fresh = np.concatenate([f for _, _, f in first])
        # From the first rows that show it only, however many came in the
        # blocks so far (all of them at the stream's end).
        shown = cadence_rows(t_s, fresh) or t_s.size
        self._take_cadence(t_s[:shown], fresh[:shown])
        return self._rows(t_s, values, fresh)

    def _take_cadence(self, t_s: np.ndarray, fresh: np.ndarray) -> None:
        row_s, conversion_s = load_cadence(t_s, fresh)
        if not np.isfinite(row_s):
            return
        if np.isfinite(conversion_s) and conversion_s > row_s * (1.0 + CADENCE_TOLERANCE):
            # A poll catches a conversion up to a poll after it was made.
            self._polled_late_s = row_s
        if np.isfinite(conversion_s) and conversion_s > row_s * REGRID_RATIO:
            self.regrid = LoadRegrid(n_channels=self.n_channels, interval_s=conversion_s)
            row_s = conversion_s
        if abs(1.0 / (self.rate_hz * row_s) - 1.0) > CADENCE_TOLERANCE:
            self.rate_hz = 1.0 / row_s
            self.stale = StaleReadingHold(n_channels=self.n_channels, reading_interval_s=row_s)
        self.bridge = SlowChannelBridge(n_channels=self.n_channels, row_interval_s=row_s)

    def _rows(self, t_s: np.ndarray, values: np.ndarray, fresh: np.ndarray) -> LoadRows | None:
        read_t = np.repeat(t_s[:, None] - self._polled_late_s, values.shape[1], axis=1)
        if self.regrid is not None:
            t_s, values, fresh, read_t = self.regrid.process(t_s, values, fresh, read_t)
        if t_s.size == 0:
            return None
        values, valid, read_t = self.stale.process(t_s, values, fresh, read_t)
        if self.bridge is None:
            return LoadRows.unshaken(t_s, values, valid, fresh, read_t)
        return self._given(self.bridge.process(t_s, values, valid, fresh, read_t))

    @staticmethod
    def _given(rows: tuple[np.ndarray, ...]) -> LoadRows | None:
        return LoadRows.unshaken(*rows) if rows[0].size else None
