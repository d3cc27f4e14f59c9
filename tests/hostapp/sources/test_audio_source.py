from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile

from hostapp.errors import SourceError
from hostapp.pipeline import LivePipeline
from hostapp.protocol import Hello, Load, Piezo
from hostapp.sources.audio import AudioConverter, AudioSource

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "piezo-edrumulus"


def _real_pad_audio(rate_hz: int) -> np.ndarray:
    """Two real piezo channels (pad hits and their crosstalk) as float audio at ``rate_hz``."""
    path = DATA / "crosstalk_vh12_pd8.wav"
    if not path.exists():
        pytest.skip("real piezo data not available")
    from scipy.signal import resample_poly

    sr, x = wavfile.read(path)
    x = x[: 6 * sr].astype(np.float64) / 32768.0
    return resample_poly(x, rate_hz, sr, axis=0)


def _feed_callback(source: AudioSource, audio: np.ndarray, block: int) -> None:
    for a in range(0, audio.shape[0], block):
        chunk = audio[a : a + block].astype(np.float32)
        source.callback(chunk, chunk.shape[0], None, None)


@pytest.mark.parametrize("rate_hz", [8000, 44100])
def test_callback_blocks_become_piezo_messages_the_pipeline_hears(rate_hz: int) -> None:
    audio = _real_pad_audio(rate_hz)
    source = AudioSource(channel_levels=(5, 4), gain=8.0)
    source.prepare(sample_rate_hz=rate_hz, n_inputs=2)
    _feed_callback(source, audio, block=int(rate_hz * 0.02))
    frames = source.get_frames()
    assert isinstance(frames[0].msg, Hello) and frames[0].msg.n_load == 0
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    total = sum(p.samples.shape[0] for p in piezo)
    assert total == pytest.approx(audio.shape[0] / source.converter.factor, abs=2)
    # Unmapped levels idle at mid-scale; mapped ones carry the signal.
    samples = np.concatenate([p.samples for p in piezo])
    assert np.all(samples[:, [0, 1, 2, 3, 6, 7]] == 512)
    assert samples[:, 5].std() > 1.0
    pipeline = LivePipeline()
    pipeline.feed(frames)
    pipeline.finish()
    detector = pipeline.detector
    assert detector is not None
    # Acoustic-only: the pad hits on input 0 (level 5) are heard as landings.
    stats = detector.diagnostics().fusion
    assert stats.impacts >= 10
    assert stats.acoustic_landings >= 5


def test_block_size_does_not_change_the_converted_stream() -> None:
    audio = _real_pad_audio(48000)[:48000]
    out = []
    for block in (480, 1000, 48000):
        conv = AudioConverter(sample_rate_hz=48000, channel_levels=(0, 1))
        parts = [conv.convert(audio[a : a + block]) for a in range(0, 48000, block)]
        out.append(np.concatenate([p.samples for p in parts if p is not None]))
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


def test_a_glitch_of_nan_and_inf_samples_is_silence_and_leaves_no_channel_dead() -> None:
    # A float device's driver glitch: NaN and inf samples on channel 1. Kept,
    # they poisoned the decimation filter, and that level read code 0 for good.
    audio = _real_pad_audio(48000)[:48000]
    clean = AudioConverter(sample_rate_hz=48000, channel_levels=(0, 1))
    hurt = AudioConverter(sample_rate_hz=48000, channel_levels=(0, 1))
    glitched = audio.copy()
    glitched[1000:1003, 1] = [np.nan, np.inf, -np.inf]
    with np.errstate(invalid="raise"):  # no NaN reaches a cast
        parts = [hurt.convert(glitched[a : a + 480]) for a in range(0, 48000, 480)]
    ref = [clean.convert(audio[a : a + 480]) for a in range(0, 48000, 480)]
    assert hurt.bad_samples == 3
    got = np.concatenate([p.samples for p in parts if p is not None])
    want = np.concatenate([p.samples for p in ref if p is not None])
    assert np.array_equal(got[:, 0], want[:, 0])
    # Level 1 moves by a code or two while the filter rings off the three
    # silenced samples (input 1000: set 41 of 2000 a second), then reads
    # as the clean stream.
    gap = np.abs(got[:, 1].astype(int) - want[:, 1].astype(int))
    assert gap.max() <= 3
    assert np.array_equal(got[60:, 1], want[60:, 1])


def test_bad_channel_maps_are_refused_clearly() -> None:
    with pytest.raises(SourceError, match="at least one"):
        AudioConverter(sample_rate_hz=48000, channel_levels=(None, None))
    with pytest.raises(SourceError, match="at most one"):
        AudioConverter(sample_rate_hz=48000, channel_levels=(3, 3))
    source = AudioSource(channel_levels=(0, 1, 2))
    with pytest.raises(SourceError, match="names 3 inputs"):
        source.prepare(sample_rate_hz=48000, n_inputs=2)


def test_no_audio_device_gives_one_clear_sentence() -> None:
    import sounddevice as sd

    if any(d["max_input_channels"] > 0 for d in sd.query_devices()):
        pytest.skip("this machine has an audio input")
    with pytest.raises(SourceError, match="no audio input device"):
        AudioSource().start()


class _LoadOnly:
    """A second source that only has LOAD frames (the serial device's part)."""

    def __init__(self, frames: list) -> None:
        self.pending = frames

    def get_frames(self, timeout_s: float = 0.0) -> list:
        out, self.pending = self.pending, []
        return out


def test_load_frames_of_a_serial_device_are_merged_on_the_audio_clock() -> None:
    from hostapp.protocol import Frame

    loads = [Frame(i, Load(4_000_000_000 + i * 12_500, 0xFF, np.arange(8, dtype=np.int32)))
             for i in range(3)]
    loads.insert(1, Frame(9, Piezo(5, np.zeros((2, 8), dtype=np.uint16))))
    source = AudioSource(channel_levels=(0,), load_source=_LoadOnly(loads))
    source.prepare(sample_rate_hz=8000, n_inputs=1)
    source.callback(np.zeros((8000, 1), dtype=np.float32), 8000, None, None)
    frames = source.get_frames()
    merged = [f.msg for f in frames if isinstance(f.msg, Load)]
    assert len(merged) == 3  # the serial device's own PIEZO frame was dropped
    assert merged[0].t_us == 1_000_000  # aligned with the audio clock at 1 s
    assert merged[2].t_us - merged[0].t_us == 25_000
