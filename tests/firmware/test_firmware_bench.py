"""The firmware benchmark's arithmetic, on the shared simavr session."""

from __future__ import annotations

from typing import Any

import pytest

from hostapp.bench.firmware import RAM_BYTES, isr_results, memory_use
from hostapp.sources.simavr import FirmwareBuild, SimavrRun

pytestmark = pytest.mark.firmware


def test_memory_use_reads_avr_size(firmware_build: FirmwareBuild) -> None:
    flash, ram = memory_use(firmware_build)
    assert 4000 < flash < 30 * 1024
    # the TX ring (512), the frame buffer (256) and the sample ring (292) alone
    assert 1060 < ram < RAM_BYTES


def test_isr_figures_come_from_the_harness(session_run: tuple[Any, SimavrRun]) -> None:
    _, run = session_run
    stats = run.stats
    results = {r.name: r for r in isr_results(stats, int(stats["cycles"]))}
    tick = stats["isr"]["TIMER1_COMPA"]
    # one tick ISR per 62.5 us from the first ADC start on
    ticking_s = stats["sim_seconds"] - stats["adc_first_start_us"] / 1e6
    assert abs(tick["count"] - 16000 * ticking_s) <= 2
    assert results["firmware worst-case ISR"].value == max(
        isr["max_cycles"] for isr in stats["isr"].values()
    )
    assert results["firmware worst-case ISR"].value < 300
    assert 0 < results["firmware CPU in ISRs (simavr)"].value < 50
    assert stats["stack_peak_bytes"] < RAM_BYTES - 1500
