"""A real piezo recording (Edrumulus drum-pad hits) as this tower's device would sample it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile
from scipy.signal import resample_poly

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "piezo-edrumulus"
RATE = 2000.0


def device_codes(name: str, *, start_s: float = 0.0, stop_s: float | None = None) -> np.ndarray:
    """A real Edrumulus piezo recording as our device would sample it (2 kHz, 10 bit)."""
    path = DATA / f"{name}.wav"
    if not path.exists():
        pytest.skip(f"real piezo data not available at {path}")
    sr, x = wavfile.read(path)
    x = x.astype(np.float64).reshape(len(x), -1)
    x = x[int(start_s * sr) : None if stop_s is None else int(stop_s * sr)]
    y = resample_poly(x, 1, int(sr // RATE), axis=0)
    # 16-bit pad signal into a mid-biased 10-bit ADC, a little hotter than
    # 1:64 so that the pad's noise floor is not all quantisation.
    return np.clip(np.round(y / 8.0 + 512.0), 0, 1023).astype(np.uint16)
