"""Firmware numbers from simavr cycle counts: CPU load, ISR cost, UART, memory.

Runs the real firmware in the simavr harness on a scripted session (throws
and a lift) at full streaming, and reports what the harness measured from
outside (cycles in each ISR, SCK pulse widths, bytes on the UART), what the
firmware measured about itself (``cpu_load_pct`` in STATUS), and flash/RAM
use from ``avr-size``.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

from hostapp.bench import BenchResult
from hostapp.protocol import FrameDecoder, Ping, Status, encode_frame
from hostapp.sources.simavr import (
    FirmwareBuild,
    HostBytes,
    build_firmware,
    run_simavr,
    scripted_session,
)

FLASH_BYTES = 32 * 1024 - 2 * 1024  # ATmega328P minus the Arduino bootloader
RAM_BYTES = 2048
# What the ATmega328P has. The stack grows into what .data/.bss leave; its
# peak is measured by the harness (lowest SP seen), so "free" counts it.
UART_BITS_PER_BYTE = 10  # 8N1 on the chip (simavr itself counts 11)
UART_BAUD = 1_000_000


def memory_use(build: FirmwareBuild) -> tuple[int, int]:
    """Flash and static RAM bytes of the firmware image, from ``avr-size``.

    Returns
    -------
    (flash_bytes, ram_bytes)
    """
    out = subprocess.run(
        ["avr-size", "-A", str(build.elf)], capture_output=True, text=True, check=True
    ).stdout
    sizes = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\.\w+)\s+(\d+)", out, re.M)}
    flash = sizes.get(".text", 0) + sizes.get(".data", 0)
    ram = sizes.get(".data", 0) + sizes.get(".bss", 0) + sizes.get(".noinit", 0)
    return flash, ram


def isr_results(stats: dict[str, Any], cycles: int) -> list[BenchResult]:
    """Per-ISR worst case and CPU share, and the totals, from harness stats.

    Parameters
    ----------
    stats : dict
        The harness's ``--stats`` JSON (``SimavrRun.stats``).
    cycles : int
        CPU cycles the run lasted.
    """
    results = []
    worst = 0
    for name, isr in sorted(stats["isr"].items()):
        worst = max(worst, isr["max_cycles"])
        results.append(BenchResult(f"firmware ISR {name} worst case", isr["max_cycles"], "cycles"))
        share = 100.0 * isr["total_cycles"] / cycles
        results.append(BenchResult(f"firmware ISR {name} CPU share", share, "%"))
    results.append(BenchResult("firmware worst-case ISR", worst, "cycles"))
    isr_pct = 100.0 * stats["isr_cycles_total"] / cycles
    results.append(BenchResult("firmware CPU in ISRs (simavr)", isr_pct, "%"))
    return results


def run(quick: bool) -> list[BenchResult]:
    """Measure the firmware in simavr (``quick``: 4 simulated seconds, else 10)."""
    build = build_firmware()
    seconds = 4.0 if quick else 10.0
    block, _ = scripted_session(seed=5, duration_s=max(seconds, 8.0))
    # a PING every 100 ms keeps the RX path (its ISR, the command parser) in the numbers
    n_pings = int(seconds * 10) - 6
    pings = [HostBytes(0.5 + 0.1 * i, encode_frame(Ping(i), i)) for i in range(n_pings)]
    sim = run_simavr(block, seconds=seconds, commands=pings, build=build)
    stats = sim.stats
    cycles = int(stats["cycles"])
    statuses = [f.msg for f in FrameDecoder().feed(sim.stream) if isinstance(f.msg, Status)]
    # the first STATUS covers boot and calibration; the rest are full streaming
    loads = [s.cpu_load_pct for s in statuses[1:]] or [s.cpu_load_pct for s in statuses]
    results = [
        BenchResult(
            "firmware CPU load at full streaming (on-chip, max)",
            max(loads),
            "%",
            target="<= 60 %",
            ok=max(loads) <= 60,
        )
    ]
    results += isr_results(stats, cycles)
    sim_s = float(stats["sim_seconds"])
    util = 100.0 * stats["uart_bytes"] * UART_BITS_PER_BYTE / (UART_BAUD * sim_s)
    results.append(BenchResult("firmware UART utilisation at 1 Mbaud", util, "%"))
    results.append(
        BenchResult("firmware SCK high, longest", stats["sck_high_max_cycles"] / 16.0, "us",
                    target="< 60 us", ok=stats["sck_high_max_cycles"] < 60 * 16)
    )
    results.append(
        BenchResult("firmware ADC start jitter, max", stats["adc_slot_deviation_max_cycles"] / 16.0,
                    "us")
    )
    flash, ram = memory_use(build)
    stack = int(stats["stack_peak_bytes"])
    free = 100.0 * (RAM_BYTES - ram - stack) / RAM_BYTES
    results.append(BenchResult("firmware flash used", flash, "bytes"))
    results.append(BenchResult("firmware flash used (of 30 KiB)", 100.0 * flash / FLASH_BYTES, "%"))
    results.append(BenchResult("firmware RAM used (static)", ram, "bytes"))
    results.append(BenchResult("firmware stack peak (simavr)", stack, "bytes"))
    results.append(
        BenchResult("firmware RAM free (static + stack peak)", free, "%", target=">= 25 %",
                    ok=free >= 25)
    )
    results.append(BenchResult("simavr speed", sim_s / float(stats["wall_seconds"]), "x realtime"))
    return results
