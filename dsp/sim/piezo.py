"""Plate vibration, piezo pickup, crosstalk and the analogue front end.

Signal path per level, at four times the piezo rate (so plate modes above the
ADC's Nyquist frequency exist and alias as on the real board):

    contact force [N] -> plate modes (mobility, m/s per N) -> piezo [V per m/s]
    -> crosstalk through the cardboard (low-passed) -> high-pass (disc
    capacitance into the bias resistors) -> Sallen-Key anti-alias low-pass
    -> decimate -> + bias + hum + room sound + noise -> clip to the rails
    -> 10-bit quantisation. The component values follow docs/hardware.md.

Filter states carry from call to call, so any split of the time axis gives the
same codes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import signal

from dsp.sim.constants import MODE_SHAPES, RoomConstants, TowerConstants, mode_shape
from dsp.sim.noise import IndexedNoise

FloatArray = npt.NDArray[np.float64]

OVERSAMPLE = 4
# Why 512: filter states below _FLUSH are zeroed only at multiples of this many
# output samples, so the idle shortcut cannot depend on how calls are split.
FLUSH_GRID = 512
_FLUSH = 1e-13

_STREAM_ADC = 11
_STREAM_ROOM = 12
_STREAM_TALK = 13
_STREAM_FLOAT = 14


def _prewarped(f_hz: float, fs_hz: float) -> float:
    """Analogue angular frequency that the bilinear transform maps onto ``f_hz``."""
    return 2.0 * fs_hz * float(np.tan(np.pi * f_hz / fs_hz))


def mode_filter(
    freq_hz: float, q: float, mass_kg: float, fs_hz: float
) -> tuple[FloatArray, FloatArray]:
    """Digital mobility of one plate mode: force [N] samples -> velocity [m/s].

    The analogue mode is ``Y(s) = s / (m (s^2 + (w/Q) s + w^2))``; its bilinear
    image (prewarped at ``w``) has the impulse response ``T * y(kT)``, so
    feeding sampled force in newtons gives velocity in m/s.
    """
    w = _prewarped(freq_hz, fs_hz)
    b, a = signal.bilinear([1.0 / mass_kg, 0.0], [1.0, w / q, w * w], fs=fs_hz)
    return np.asarray(b, dtype=np.float64), np.asarray(a, dtype=np.float64)


def front_end_sos(tower: TowerConstants, fs_hz: float) -> FloatArray:
    """High-pass and Sallen-Key anti-alias filter as second-order sections at ``fs_hz``."""
    hp = signal.butter(1, tower.highpass_hz, btype="highpass", fs=fs_hz, output="sos")
    w = _prewarped(tower.antialias_hz, fs_hz)
    b, a = signal.bilinear([w * w], [1.0, w / tower.antialias_q, w * w], fs=fs_hz)
    return np.vstack([hp, signal.tf2sos(b, a)])


class PiezoChain:
    """Stateful piezo signal path of one tower in one room.

    Parameters
    ----------
    tower, room : constants
    seed : int
        Session seed for the noise streams.
    """

    def __init__(self, tower: TowerConstants, room: RoomConstants, seed: int) -> None:
        self.tower = tower
        self.room = room
        n = tower.n_levels
        self.n = n
        self.rate_hz = tower.piezo_rate_hz
        self.fs_hz = tower.piezo_rate_hz * OVERSAMPLE
        self._modes: list[list[tuple[FloatArray, FloatArray]]] = []
        self._mode_zi: list[list[FloatArray]] = []
        for lv in tower.levels:
            filters = [
                mode_filter(f, q, m, self.fs_hz)
                for f, q, m in zip(lv.mode_freqs_hz, lv.mode_q, lv.mode_mass_kg, strict=True)
            ]
            self._modes.append(filters)
            self._mode_zi.append([np.zeros(2) for _ in filters])
        self.n_modes = len(MODE_SHAPES)
        self._sens = np.array([lv.piezo_sensitivity_v_per_m_s for lv in tower.levels])
        xt = np.array(tower.crosstalk, dtype=np.float64)
        self._xt = xt
        self._xt_b, self._xt_a = signal.butter(1, tower.crosstalk_lowpass_hz, fs=self.fs_hz)
        self._xt_zi = np.zeros((1, n))
        self._sos = front_end_sos(tower, self.fs_hz)
        self._sos_zi = np.zeros((self._sos.shape[0], 2, n))
        self._active = np.zeros(n, dtype=bool)  # plate or filter still ringing
        self._fe_active = False
        # The last front-end row of the previous call: the ADC converts
        # channel k of a set k * 62.5 us after channel 0 (docs/firmware.md),
        # read here by interpolating between fast rows.
        self._fe_tail = np.zeros((1, n))
        delays = np.arange(n) * OVERSAMPLE / n  # in fast rows, 0 .. 3.5
        self._skew_row = delays.astype(int)
        self._skew_frac = delays - self._skew_row

        self._vref = tower.adc_vref_v
        self._lsb_v = tower.adc_vref_v / 2**tower.adc_bits
        self._bias_v = tower.bias_fraction * tower.adc_vref_v
        self._hum_gain = np.array([lv.hum_pickup_v for lv in tower.levels]) * room.hum_scale
        # Airborne sound as it reaches the ADC: the plates pass little below
        # ~100 Hz and the anti-alias filter little above ~400 Hz.
        room_b, room_a = signal.butter(2, [100.0, 400.0], btype="bandpass", fs=self.rate_hz)
        self._room_b, self._room_a = room_b, room_a
        impulse = np.zeros(4096)
        impulse[0] = 1.0
        response = signal.lfilter(room_b, room_a, impulse)
        self._room_norm = 1.0 / float(np.sqrt(np.sum(response**2)))  # unit rms out
        self._room_zi = np.zeros((len(room_a) - 1, 2))
        # Airborne sound reaches each piezo through its plate: more sensitive
        # piezos hear the room more.
        self._room_gain = self._sens / float(np.mean(self._sens))
        self._adc_noise = IndexedNoise(seed, _STREAM_ADC, n)
        self._room_noise = IndexedNoise(seed, _STREAM_ROOM, 2)
        self._float_noise = IndexedNoise(seed, _STREAM_FLOAT, n)

    def mode_weights(self, level: int, x: float, y: float) -> tuple[float, ...]:
        """How strongly an impact at (x, y) drives each mode, as the level's piezo hears it.

        Reciprocity: the mode shape at the impact times the mode shape at the
        piezo; divided by 0.5 so an impact and disc at typical places give ~1.
        """
        px, py = self.tower.levels[level].piezo_position
        return tuple(
            mode_shape(i, x, y) * mode_shape(i, px, py) / 0.5
            for i in range(len(self._modes[level]))
        )

    # -- mechanical part, at the oversampled rate --------------------------------

    def _plates(self, force: FloatArray | None, n_fast: int) -> FloatArray | None:
        """Piezo voltages (before the front end) from contact forces; None if silent."""
        volts: FloatArray | None = None
        zeros = np.zeros(n_fast)
        for level in range(self.n):
            col = None if force is None else force[:, level, :]
            has_input = col is not None and bool(np.any(col))
            if not has_input and not self._active[level]:
                continue
            vel = np.zeros(n_fast)
            for i, (b, a) in enumerate(self._modes[level]):
                x = zeros if col is None else col[:, i]
                y, self._mode_zi[level][i] = signal.lfilter(b, a, x, zi=self._mode_zi[level][i])
                vel += y
            self._active[level] = True
            if volts is None:
                volts = np.zeros((n_fast, self.n))
            volts[:, level] = vel * self._sens[level]
        return volts

    def _crosstalk(self, volts: FloatArray, connected: npt.NDArray[np.bool_]) -> FloatArray:
        """Each piezo hears its own plate plus the low-passed plates of the others."""
        lp, self._xt_zi = signal.lfilter(self._xt_b, self._xt_a, volts, axis=0, zi=self._xt_zi)
        # Lifted modules touch nothing: they send nothing to the base and vice versa.
        out = volts.copy()
        for receiver in range(self.n):
            for source in range(self.n):
                if source != receiver and connected[source] and connected[receiver]:
                    out[:, receiver] += self._xt[receiver, source] * lp[:, source]
        return out

    def _maybe_flush(self) -> None:
        for level in range(self.n):
            if self._active[level] and all(
                float(np.max(np.abs(z))) < _FLUSH for z in self._mode_zi[level]
            ):
                for z in self._mode_zi[level]:
                    z[:] = 0.0
                self._active[level] = False
        if not self._active.any():
            # The crosstalk low-pass (0.2-0.5 ms) has long forgotten plates
            # that are this quiet; zeroing it keeps the idle shortcut exact.
            self._xt_zi[:] = 0.0
        if self._fe_active and float(np.max(np.abs(self._sos_zi))) < _FLUSH:
            self._sos_zi[:] = 0.0
            self._fe_tail[:] = 0.0
            self._fe_active = False

    def _skewed(self, fast: FloatArray, n: int) -> FloatArray:
        """Decimate to sets, each channel read at its own conversion time.

        Channel k of set i shows the signal at ``t_i - 125 us + k * 62.5 us``:
        the one fast row of lag keeps every interpolation inside rows already
        rendered.
        """
        ext = np.concatenate([self._fe_tail, fast])
        self._fe_tail = fast[-1:].copy()
        rows = np.arange(n)[:, None] * OVERSAMPLE + self._skew_row[None, :]
        cols = np.arange(self.n)[None, :]
        frac = self._skew_frac[None, :]
        return ext[rows, cols] * (1.0 - frac) + ext[rows + 1, cols] * frac

    # -- public -----------------------------------------------------------------

    def render(
        self,
        start: int,
        stop: int,
        *,
        force: FloatArray | None,
        connected: npt.NDArray[np.bool_],
        extra_v: FloatArray | None,
        talk: FloatArray | None,
    ) -> npt.NDArray[np.uint16]:
        """ADC codes of piezo samples ``start..stop-1``.

        Parameters
        ----------
        start, stop : int
            Output sample indices; the range must not cross a multiple of
            :data:`FLUSH_GRID` except at ``stop``.
        force : ndarray (OVERSAMPLE * n, 8, n_modes) or None
            Contact forces on each plate in newtons at the oversampled rate,
            already weighted per mode (see :meth:`mode_weights`).
        connected : ndarray (8,) bool
            Which channels are in contact with the base during this range.
        extra_v : ndarray (n, 8) or None
            Voltages added at the ADC input (reconnection transients).
        talk : ndarray (n,) or None
            Talking envelope (0..1).
        """
        n = stop - start
        n_fast = n * OVERSAMPLE
        volts = self._plates(force, n_fast)
        if volts is not None:
            volts = self._crosstalk(volts, connected)
        if volts is not None or self._fe_active:
            x = volts if volts is not None else np.zeros((n_fast, self.n))
            y, self._sos_zi = signal.sosfilt(self._sos, x, axis=0, zi=self._sos_zi)
            self._fe_active = True
            sig = self._skewed(y, n)
        else:
            sig = np.zeros((n, self.n))

        t = np.arange(start, stop, dtype=np.float64) / self.rate_hz
        hum = np.zeros(n)
        for h, (amp, phase) in enumerate(
            zip(self.room.hum_harmonics, self.room.hum_phases_rad, strict=True), start=1
        ):
            hum += amp * np.sin(2 * np.pi * h * self.room.mains_hz * t + phase)
        room_raw = self._room_noise.rows(start, stop)
        room_f, self._room_zi = signal.lfilter(
            self._room_b, self._room_a, room_raw, axis=0, zi=self._room_zi
        )
        room_f = room_f * self._room_norm
        room = room_f[:, 0] * self.room.room_noise_v
        if talk is not None:
            room = room + room_f[:, 1] * talk * self.room.talk_v

        sig += hum[:, None] * self._hum_gain[None, :]
        sig += room[:, None] * self._room_gain[None, :]
        if extra_v is not None:
            sig += extra_v
        sig += self._adc_noise.rows(start, stop) * (self.tower.adc_noise_lsb * self._lsb_v)
        if not connected.all():
            # A lifted module takes its disc along: the base board's 1 MOhm
            # holds the input at the bias (docs/hardware.md); without the
            # disc's 10 nF across it that node picks up a little more hum.
            floating = (
                hum[:, None] * self._hum_gain[None, :] * 2.0
                + self._float_noise.rows(start, stop) * 0.5 * self._lsb_v
            )
            sig[:, ~connected] = floating[:, ~connected]

        v = np.clip(self._bias_v + sig, 0.0, self._vref)
        codes = np.floor(v / self._lsb_v)
        np.clip(codes, 0, 2**self.tower.adc_bits - 1, out=codes)
        if stop % FLUSH_GRID == 0:
            self._maybe_flush()
        return codes.astype(np.uint16)
