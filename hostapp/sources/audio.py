"""Contact microphones on a multichannel USB audio interface, as a piezo source.

The interface's input channels carry the contact microphones (piezos) of
the tower's levels; which input is which level is the user's choice
(``channel_levels``). Each audio block is turned into what the device would
have sent: PIEZO messages of ADC-like codes (10 bits, idle at mid-scale),
preceded by a HELLO that names the resulting piezo rate and no load cells.
The same :class:`hostapp.pipeline.DetectionPipeline` then runs on it, in
acoustic-only mode, or together with the LOAD messages of a serial device
(``load_source``), whose clock is mapped onto the audio clock.

Any sample rate works: the audio is low-passed and decimated by an integer
factor to about ``TARGET_RATE_HZ`` inside the callback (vectorised, with
filter state, so block sizes do not matter). The callback only converts and
queues; problems become counters (sounddevice's status flags), never
exceptions.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.signal import butter, lfilter, lfilter_zi

from hostapp.errors import SourceError
from hostapp.i18n import tr
from hostapp.protocol import DecoderStats, Frame, Hello, Load, Piezo
from hostapp.protocol import constants as c
from hostapp.sources.base import SourceState, SourceStats

N_LEVELS = 8
# Why 4 kHz: twice the device's piezo rate keeps a cube's click intact while
# the detector's work per second stays small; integer decimation of 44.1 or
# 48 kHz lands close to it.
TARGET_RATE_HZ = 4000.0
_ADC_BITS = 10
_MID = 2 ** (_ADC_BITS - 1)
_FULL = 2**_ADC_BITS - 1
# Why 20000 frames: a few minutes of blocks if the consumer stalls; bounded.
_QUEUE_FRAMES = 20_000


def default_channel_levels(n_channels: int) -> tuple[int | None, ...]:
    """Input ``i`` is level ``i`` for the first eight inputs; others unused."""
    return tuple(i if i < N_LEVELS else None for i in range(n_channels))


class AudioConverter:
    """Audio blocks in, PIEZO messages out (no I/O; the callback's work).

    Parameters
    ----------
    sample_rate_hz : float
        The interface's sample rate.
    channel_levels : sequence of (int or None)
        For each input channel, the level it listens to (None: unused).
    gain : float
        Audio full scale (1.0) maps to ``gain`` times the ADC half range.
    """

    def __init__(
        self,
        *,
        sample_rate_hz: float,
        channel_levels: Sequence[int | None],
        gain: float = 1.0,
    ) -> None:
        if sample_rate_hz <= 0:
            raise SourceError(tr("the audio sample rate must be positive"))
        levels = [lv for lv in channel_levels if lv is not None]
        if not levels:
            raise SourceError(tr("map at least one audio input to a level"))
        if any(not 0 <= lv < N_LEVELS for lv in levels) or len(set(levels)) != len(levels):
            raise SourceError(
                tr("each level 0..7 may be mapped from at most one audio input")
            )
        self.channel_levels = tuple(channel_levels)
        self.factor = max(1, int(sample_rate_hz // TARGET_RATE_HZ))
        self.rate_hz = sample_rate_hz / self.factor
        if self.rate_hz > 65535:
            raise SourceError(tr("the audio sample rate is too high to be decimated"))
        self.gain = float(gain)
        n_in = len(self.channel_levels)
        if self.factor > 1:
            self._b, self._a = butter(4, 0.8 / self.factor)
            self._zi = np.repeat(lfilter_zi(self._b, self._a)[:, None], n_in, axis=1) * 0.0
        self._phase = 0  # input samples to skip before the next kept one
        self.sets_out = 0
        self.bad_samples = 0  # NaN or infinite samples taken as silence

    def hello(self) -> Hello:
        """The HELLO this source stands for: piezo rate, no load channels."""
        return Hello(
            n_piezo=N_LEVELS,
            n_load=0,
            piezo_rate_hz=int(round(self.rate_hz)),
            load_rate_hz=0,
            adc_bits=_ADC_BITS,
        )

    def convert(self, block: np.ndarray) -> Piezo | None:
        """One audio block ``(frames, inputs)`` as a PIEZO message (None if nothing left)."""
        x = np.asarray(block, dtype=np.float64)
        if x.ndim == 1:
            x = x[:, None]
        if x.shape[0] == 0 or x.shape[1] != len(self.channel_levels):
            return None
        finite = np.isfinite(x)
        if not finite.all():
            # A driver's glitch (NaN or inf from a float device) is taken as
            # silence: kept, it would poison the decimation filter for good.
            self.bad_samples += int(x.size - np.count_nonzero(finite))
            x = np.where(finite, x, 0.0)
        if self.factor > 1:
            x, self._zi = lfilter(self._b, self._a, x, axis=0, zi=self._zi)
            kept = x[self._phase :: self.factor]
            self._phase = (self._phase - x.shape[0]) % self.factor
            x = kept
        if x.shape[0] == 0:
            return None
        codes = np.full((x.shape[0], N_LEVELS), _MID, dtype=np.uint16)
        for i, level in enumerate(self.channel_levels):
            if level is not None:
                scaled = np.round(_MID + self.gain * (_MID - 1) * x[:, i])
                codes[:, level] = np.clip(scaled, 0, _FULL).astype(np.uint16)
        t_us = int(round(self.sets_out * 1e6 / self.rate_hz)) % c.T_US_MODULUS
        self.sets_out += x.shape[0]
        return Piezo(t_us, codes)


class AudioSource:
    """Contact microphones through sounddevice, as a frame source for the app.

    Parameters
    ----------
    device : int or str, optional
        sounddevice input device (index or name); the default input if None.
    sample_rate_hz : float, optional
        Rate to open the device at; the device's default if None.
    channel_levels : sequence of (int or None), optional
        Level of each input channel; inputs 0..7 are levels 0..7 if None.
    gain : float
        See :class:`AudioConverter`.
    load_source : object, optional
        A started-later frame source (e.g. the serial device) whose LOAD
        messages are merged in; its PIEZO messages are dropped.
    block_ms : float
        Audio callback block length.
    tap : object, optional
        Accepted like a byte source's tap so the app can build every source
        alike; audio is not a protocol byte stream, so nothing is written to it.
    """

    def __init__(
        self,
        device: int | str | None = None,
        *,
        sample_rate_hz: float | None = None,
        channel_levels: Sequence[int | None] | None = None,
        gain: float = 1.0,
        load_source: Any = None,
        block_ms: float = 20.0,
        tap: Any = None,
    ) -> None:
        self.device = device
        self.name = f"audio interface {device}" if device is not None else "audio interface"
        self.sample_rate_hz = sample_rate_hz
        self.channel_levels = tuple(channel_levels) if channel_levels is not None else None
        self.gain = gain
        self.load_source = load_source
        self.block_ms = block_ms
        self.frames: queue.Queue[Frame] = queue.Queue(maxsize=_QUEUE_FRAMES)
        self.converter: AudioConverter | None = None
        self._stream: Any = None
        self._seq = 0
        self._state = SourceState.STOPPED
        self._last_error = ""
        self._lock = threading.Lock()
        self.overflows = 0  # sounddevice input overflow flags
        self.queue_dropped = 0
        self._load_offset_us: int | None = None
        self._connects = 0

    # -- the callback path (no I/O, no exceptions) ----------------------------
    def prepare(self, *, sample_rate_hz: float, n_inputs: int) -> None:
        """Set up conversion for a stream of this rate and input count (queues HELLO)."""
        levels = self.channel_levels or default_channel_levels(n_inputs)
        if len(levels) != n_inputs:
            raise SourceError(
                tr(
                    "the channel map names {n} inputs but the device has {n_inputs}",
                    n=len(levels),
                    n_inputs=n_inputs,
                )
            )
        self.converter = AudioConverter(
            sample_rate_hz=sample_rate_hz, channel_levels=levels, gain=self.gain
        )
        self._put(self.converter.hello(), seq=0)

    def callback(self, indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        """The sounddevice input callback: convert the block and queue it."""
        if status:
            with self._lock:
                self.overflows += 1
        converter = self.converter
        if converter is None:
            return
        message = converter.convert(indata[:frames])
        if message is not None:
            self._put(message)

    def _put(self, msg: Any, seq: int | None = None) -> None:
        if seq is None:
            self._seq = (self._seq + 1) % c.SEQ_MODULUS
            seq = self._seq
        try:
            self.frames.put_nowait(Frame(seq, msg))
        except queue.Full:
            with self._lock:
                self.queue_dropped += 1

    # -- the frame-source interface ------------------------------------------
    def start(self) -> None:
        """Open the audio device and start streaming.

        Raises
        ------
        SourceError
            With one sentence when sounddevice or an input device is missing.
        """
        try:
            import sounddevice as sd
        except OSError as exc:  # PortAudio library missing
            raise SourceError(
                tr("audio input needs the PortAudio library (libportaudio2)")
            ) from exc
        try:
            devices = sd.query_devices()
        except Exception as exc:  # sounddevice raises PortAudioError here
            raise SourceError(tr("cannot list audio devices: {reason}", reason=exc)) from exc
        inputs = [d for d in devices if int(d.get("max_input_channels", 0)) > 0]
        if not inputs:
            raise SourceError(tr("no audio input device found: plug in the audio interface"))
        try:
            info = sd.query_devices(self.device, kind="input")
        except Exception as exc:
            raise SourceError(
                tr("audio input device {device!r} not found", device=self.device)
            ) from exc
        n_inputs = int(info["max_input_channels"])
        if self.channel_levels is not None:
            n_inputs = len(self.channel_levels)
        rate = float(self.sample_rate_hz or info["default_samplerate"])
        self.prepare(sample_rate_hz=rate, n_inputs=n_inputs)
        try:
            self._stream = sd.InputStream(
                device=self.device,
                channels=n_inputs,
                samplerate=rate,
                blocksize=max(1, int(rate * self.block_ms / 1000.0)),
                dtype="float32",
                callback=self.callback,
            )
            self._stream.start()
        except Exception as exc:
            self._stream = None
            raise SourceError(
                tr("cannot open audio input {name!r}: {reason}", name=info["name"], reason=exc)
            ) from exc
        if self.load_source is not None:
            self.load_source.start()
        self._state = SourceState.CONNECTED
        self._connects += 1

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop the audio stream (and the load source)."""
        if self._stream is not None:
            self._stream.stop()
            self._stream.close()
            self._stream = None
        if self.load_source is not None:
            self.load_source.stop(timeout_s)
        self._state = SourceState.STOPPED

    def get_frames(self, timeout_s: float = 0.0, max_frames: int = 100_000) -> list[Frame]:
        """Drain queued frames (audio PIEZO, merged LOAD), waiting up to ``timeout_s``."""
        out: list[Frame] = []
        try:
            out.append(self.frames.get(block=timeout_s > 0, timeout=timeout_s or None))
        except queue.Empty:
            pass
        while len(out) < max_frames:
            try:
                out.append(self.frames.get_nowait())
            except queue.Empty:
                break
        if self.load_source is not None:
            out.extend(self._merge_load(self.load_source.get_frames(0.0)))
        return out

    def _merge_load(self, frames: list[Any]) -> list[Frame]:
        """LOAD messages of the serial device, re-stamped on the audio clock."""
        converter = self.converter
        if converter is None:
            return []
        now_audio_us = int(converter.sets_out * 1e6 / converter.rate_hz)
        out = []
        for frame in frames:
            msg = frame.msg
            if not isinstance(msg, Load):
                continue
            if self._load_offset_us is None:
                # Aligned at the first reading: both clocks read "now" here.
                self._load_offset_us = now_audio_us - msg.t_us
            t_us = (msg.t_us + self._load_offset_us) % c.T_US_MODULUS
            out.append(Frame(frame.seq, Load(t_us, msg.valid, msg.values)))
        return out

    @property
    def finished(self) -> bool:
        """Always False: a live interface has no end (a lost device reconnects)."""
        return False

    def stats(self) -> SourceStats:
        """Counters and state, like a byte source's."""
        with self._lock:
            dropped = self.queue_dropped
        return SourceStats(
            state=self._state,
            decoder=DecoderStats(),
            bytes_per_s=0.0,
            connects=self._connects,
            queue_dropped=dropped,
            commands_sent=0,
            last_error=self._last_error,
        )

    def wait_connected(self, timeout_s: float) -> bool:
        """True once streaming (audio devices connect at :meth:`start`)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._state is SourceState.CONNECTED:
                return True
            time.sleep(0.01)
        return self._state is SourceState.CONNECTED
