"""``towerear monitor``: its table, its handling of a lost port, and the CLI itself."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hostapp.cli import main
from hostapp.cli.monitor import MonitorView, watch
from hostapp.protocol import Frame, Hello, Load, Piezo, Status
from hostapp.protocol.decoder import DecoderStats
from hostapp.recording import read_recording
from hostapp.sources.base import SourceState, SourceStats
from hostapp.sources.pty_server import PtyDeviceServer
from hostapp.sources.serial_port import SerialSource
from hostapp.sources.sim_device import DeviceInfo, SimulatedDevice


class QuietTower:
    """Idle sensors: enough physics for the monitor's plumbing."""

    def __init__(self) -> None:
        self.t_s = 0.0
        self.sets = 0
        self.loads = 0

    def advance(self, duration_s: float) -> Any:
        self.t_s += duration_s
        n_sets = int(self.t_s * 2000) - self.sets
        n_loads = int(self.t_s * 80) - self.loads
        block = SimpleNamespace(
            piezo_t0_s=self.sets / 2000,
            piezo=np.full((n_sets, 8), 512, dtype=np.uint16),
            load_t_s=(self.loads + np.arange(n_loads)) / 80,
            load=np.full((n_loads, 8), 1000, dtype=np.int32),
            load_valid=np.ones((n_loads, 8), dtype=bool),
        )
        self.sets += n_sets
        self.loads += n_loads
        return block


def stats(**decoder: int) -> SourceStats:
    return SourceStats(SourceState.CONNECTED, DecoderStats(**decoder), 35_000.0, 1, 0, 1, "")


def test_view_shows_load_piezo_and_status() -> None:
    view = MonitorView()
    samples = np.full((10, 8), 512, dtype=np.uint16)
    samples[3, 2] = 600
    samples[4, 2] = 450
    values = np.array([100, -200, 300, 0, 0, 0, 0, 0], dtype=np.int32)
    view.add([
        Frame(0, Hello(device_id=b"abcdefgh")),
        Frame(1, Piezo(0, samples)),
        Frame(2, Load(0, 0b0000_0111, values)),
        Frame(3, Status(5000, 1, 2, 3, 0, 7)),
    ])
    assert view.take_hello() == Hello(device_id=b"abcdefgh")
    assert view.take_hello() is None
    text = view.render(3.0, stats(frames_ok=4, lost_messages=2, crc_errors=1))
    lines = text.splitlines()
    assert "lost 2" in lines[0] and "crc 1" in lines[0] and "35.0 kB/s" in lines[0]
    assert lines[2].split()[1:] == ["100", "-200", "300"] + ["lifted"] * 5
    assert lines[3].split()[2:] == ["0", "0", "150", "0", "0", "0", "0", "0"]
    assert "load_timeouts 3" in lines[5] and "flags 0x07" in lines[5]
    # The piezo window restarts each second.
    assert view.render(4.0, stats()).splitlines()[3].strip() == "piezo p2p"


def test_watch_reports_a_lost_port_and_its_return(tmp_path: Path) -> None:
    device = SimulatedDevice(QuietTower(), DeviceInfo(device_id=b"monitor1"))
    out = io.StringIO()
    with PtyDeviceServer(device, pace=1.0, link_path=tmp_path / "tty") as server:
        with SerialSource(server.path, retry_interval_s=0.05) as source:
            timer = threading.Thread(target=lambda: (time.sleep(0.6), server.unplug(),
                                                     time.sleep(0.4), server.replug()))
            timer.start()
            watch(source, out, duration_s=2.0, refresh_s=0.4)
            timer.join()
    text = out.getvalue()
    assert "device 6d6f6e69746f7231" in text
    assert "port lost" in text and "reconnected" in text
    assert text.index("port lost") < text.index("reconnected")
    assert text.count("level ") >= 4
    tables = [line for line in text.splitlines() if line.startswith("t=")]
    assert "disconnected" in " ".join(tables) or len(tables) >= 4


def test_no_device_found_is_one_clear_line(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    assert main(["monitor", "--duration", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("towerear: no towerear device found") and "\n" not in err


def test_bad_duration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor", "--sim", "--duration", "0"]) == 2
    assert "--duration" in capsys.readouterr().err


def test_record_to_unwritable_place(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "rec.bin"
    assert main(["monitor", "--sim", "--duration", "1", "--record", str(target)]) == 2
    assert "cannot write the recording" in capsys.readouterr().err


def test_monitor_sim_prints_hello_and_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "live.bin"
    assert main(["monitor", "--sim", "--duration", "2.3", "--scenario", "quiet",
                 "--record", str(record)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("device ") and "8 piezo @ 2000 Hz" in lines[0]
    assert out.count("device ") == 1
    tables = [line for line in lines if line.startswith("t=")]
    assert len(tables) == 2
    assert all("lost 0  crc 0  framing 0" in line for line in tables), out
    load_rows = [line.split()[1:] for line in lines if line.startswith("load ")]
    assert load_rows and all(len(row) == 8 for row in load_rows)
    assert any(line.startswith("status    uptime") for line in lines)
    rec = read_recording(record)
    assert rec.stats.frames_ok > 400 and rec.stats.damaged_frames == 0
    assert rec.hello is not None


def test_ctrl_c_exits_cleanly_with_status_0() -> None:
    command = [sys.executable, "-m", "hostapp.cli", "monitor", "--sim", "--scenario", "quiet"]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell may start background children with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the HELLO: the monitor is running
        assert first.startswith("device ")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_missing_port_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor", "--port", str(tmp_path / "ttyUSB9"), "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert "ttyUSB9 does not exist" in err and "\n" not in err.strip()
