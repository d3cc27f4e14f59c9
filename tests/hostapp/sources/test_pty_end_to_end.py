"""The pseudo-terminal server through pyserial: commands, and a port that goes away.

The sample-exact 10-second run against dsp.sim is in test_sim_tower_device.py.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from hostapp.protocol import GetInfo, Hello, Load, Message, Ping, Pong, Start
from hostapp.protocol import constants as c
from hostapp.sources import SourceState, base
from hostapp.sources.pty_server import PtyDeviceServer
from hostapp.sources.serial_port import SerialSource
from hostapp.sources.sim_device import DeviceInfo, SimulatedDevice

PACE = 10.0  # simulated seconds per wall second


def test_commands_are_answered_over_the_port(tmp_path: Path, synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(2), DeviceInfo())
    with PtyDeviceServer(device, pace=PACE) as server:
        with SerialSource(server.path, request_info_on_connect=False) as source:
            assert source.wait_connected(3.0)
            ping_seq = source.send(Ping(77))
            load_seq = source.send(Start(c.STREAM_LOAD))
            assert (ping_seq, load_seq) == (0, 1)
            answers: list[Any] = []
            deadline = time.monotonic() + 5
            while len(answers) < 2 and time.monotonic() < deadline:
                answers += [f.msg for f in source.get_frames(0.05) if f.msg.TYPE >= c.ACK]
            assert isinstance(answers[0], Pong) and answers[0].token == 77
            assert answers[1].cmd_type == c.START and answers[1].result == c.RESULT_OK
            source.get_frames(0.3)
            time.sleep(0.1)
            later = source.get_frames(0.3)
            assert later and all(isinstance(f.msg, Load) for f in later)


def test_unplugged_port_is_a_state_and_reconnects(tmp_path: Path, synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(3), DeviceInfo())
    with PtyDeviceServer(device, pace=PACE, link_path=tmp_path / "tty") as server:
        with SerialSource(server.path, retry_interval_s=0.05) as source:
            assert source.wait_connected(3.0)
            assert source.get_frames(1.0)
            server.unplug()
            assert not (tmp_path / "tty").exists()  # the port's name goes with the cable
            deadline = time.monotonic() + 3
            while source.state is not SourceState.DISCONNECTED and time.monotonic() < deadline:
                time.sleep(0.02)
            assert source.state is SourceState.DISCONNECTED
            assert source.stats().last_error
            assert source.send(Ping(1)) is None
            server.replug()
            assert source.wait_connected(3.0)
            assert source.stats().connects == 2
            deadline = time.monotonic() + 3
            hellos = []
            while not hellos and time.monotonic() < deadline:
                hellos = [f for f in source.get_frames(0.05) if f.msg.TYPE == c.HELLO]
            assert hellos  # answered the GET_INFO sent on reconnecting


@pytest.mark.parametrize("pace", [0.0, -1.0])
def test_pace_must_be_positive(synthetic_physics: Any, pace: float) -> None:
    with pytest.raises(ValueError, match="pace"):
        PtyDeviceServer(SimulatedDevice(synthetic_physics(1), DeviceInfo()), pace=pace)


class _DeafAtFirst(SimulatedDevice):
    """A board that misses the first ``deaf_to`` GET_INFO (still booting)."""

    def __init__(self, *args: Any, deaf_to: int) -> None:
        super().__init__(*args)
        self.deaf_to = deaf_to
        self.asked = 0

    def _answer(self, msg: Message, seq: int) -> None:
        if isinstance(msg, GetInfo):
            self.asked += 1
            if self.asked <= self.deaf_to:
                return
        super()._answer(msg, seq)


def _wait_for(condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return bool(condition())


def test_a_hello_that_does_not_come_is_asked_for_again(
    synthetic_physics: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The boot HELLO went before the port was opened (and the open flushes
    # the input); the first GET_INFO is missed: a second one brings it.
    # Asked 0.5 s apart: 0.25 s failed 1 run in 8 with every core busy (no
    # HELLO within 5 s, seen once in CI too), 0.5 s none in 12.
    monkeypatch.setattr(base, "HELLO_WAIT_S", 0.5)
    device = _DeafAtFirst(synthetic_physics(4), DeviceInfo(), deaf_to=1)
    with PtyDeviceServer(device, pace=PACE) as server:
        time.sleep(0.2)  # the board booted before the host came
        with SerialSource(server.path) as source:
            assert source.wait_connected(3.0)
            hellos: list[Any] = []

            def hello_came() -> bool:
                hellos.extend(f for f in source.get_frames(0.05) if isinstance(f.msg, Hello))
                return bool(hellos)

            assert _wait_for(hello_came, 5.0)
            assert device.asked >= 2
            time.sleep(3 * base.HELLO_WAIT_S)
            assert device.asked <= base.HELLO_ASKS  # answered: not asked on and on
    # A board that never answers is asked three times, then left alone.
    # Counted as the host sends them: a loaded machine may open the port
    # late enough for its flush to drop the first one on the board's side,
    # or find the port not yet ready and connect again (asking anew), so
    # the asks are counted per connection.
    sent: list[tuple[int, int | None]] = []
    send = SerialSource.send

    def counted(self: SerialSource, command: Any) -> int | None:
        seq = send(self, command)
        if isinstance(command, GetInfo):
            sent.append((self.stats().connects, seq))
        return seq

    def asked_since_connect() -> list[int | None]:
        last = max((connects for connects, _ in sent), default=0)
        return [seq for connects, seq in sent if connects == last]

    monkeypatch.setattr(SerialSource, "send", counted)
    device = _DeafAtFirst(synthetic_physics(4), DeviceInfo(), deaf_to=99)
    with PtyDeviceServer(device, pace=PACE) as server, SerialSource(server.path) as source:
        assert source.wait_connected(3.0)
        assert _wait_for(lambda: len(asked_since_connect()) >= base.HELLO_ASKS, 5.0)
        time.sleep(3 * base.HELLO_WAIT_S)
        assert len(asked_since_connect()) == base.HELLO_ASKS
        assert all(seq is not None for seq in asked_since_connect())
        assert 1 <= device.asked <= len(sent)
