"""The simulated device: tower physics in, protocol v1 bytes out, as the firmware sends them.

:class:`SimulatedDevice` is transport-free: :meth:`~SimulatedDevice.generate`
advances the physics and returns the bytes the device would have sent in that
time; :meth:`~SimulatedDevice.receive` takes host bytes and queues the answers.
In-process use (a recording as fast as possible) calls these directly; the
pseudo-terminal server (:mod:`hostapp.sources.pty_server`) paces them to the
wall clock.

What it sends, like the firmware:

- HELLO at boot with seq 0 (and after RESET, and in answer to GET_INFO);
- PIEZO frames of 10 sample sets, ``t_us`` of the first set, sent once the
  tenth set is sampled;
- LOAD at every HX711 reading: the ``valid`` bitmask, 0 where not valid;
- STATUS at every whole second of uptime; ``flags`` is the bitmask of streams
  currently on, ``load_timeouts`` counts channel readings that were not valid,
  ``cpu_load_pct`` is 0 (a simulation has no CPU load to measure);
- the device clock ``t_us`` starts at ``clock_offset_us`` at the first boot
  (so wrap-around can be tested) and at 0 after a RESET.

Damage injection (:class:`Damage`) flips bits or drops bytes inside chosen
frames and records exactly which frames it damaged.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from hostapp.errors import SourceError
from hostapp.i18n import tr_sentence
from hostapp.protocol import (
    Ack,
    FrameDecoder,
    GetInfo,
    Hello,
    Load,
    Message,
    Piezo,
    Ping,
    Pong,
    Reset,
    Start,
    Status,
    Stop,
    encode_frame,
)
from hostapp.protocol import constants as c
from hostapp.sources.base import ByteSource

_SOURCE_TICK_S = 0.01  # the in-process source hands over 10 ms of stream at a time
FIRMWARE_VERSION = (0, 1, 0)  # the firmware release the simulated device claims to be


class SensorBlockLike(Protocol):
    """What the physics returns for one step (``dsp.sim.SensorBlock`` has this shape)."""

    @property
    def piezo_t0_s(self) -> float: ...
    @property
    def piezo(self) -> npt.NDArray[np.uint16]: ...
    @property
    def load_t_s(self) -> npt.NDArray[np.float64]: ...
    @property
    def load(self) -> npt.NDArray[np.int32]: ...
    @property
    def load_valid(self) -> npt.NDArray[np.bool_]: ...


class TowerPhysics(Protocol):
    """Anything that advances simulated time and reports what the sensors saw."""

    def advance(self, duration_s: float) -> SensorBlockLike: ...


def device_id_for_seed(seed: int) -> bytes:
    """The 8-byte device id a simulated tower with this seed reports in HELLO."""
    return hashlib.blake2b(f"towerear-sim-{seed}".encode(), digest_size=8).digest()


def clock_offset_for_seed(seed: int) -> int:
    """A seed-derived start value of the device clock, anywhere in the u32 range."""
    digest = hashlib.blake2b(f"towerear-clock-{seed}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little")


@dataclass(frozen=True)
class DeviceInfo:
    """What the simulated device says about itself in HELLO."""

    device_id: bytes = bytes(c.DEVICE_ID_SIZE)
    piezo_rate_hz: int = c.NOMINAL_PIEZO_RATE_HZ
    load_rate_hz: int = c.NOMINAL_LOAD_RATE_HZ
    n_piezo: int = c.NOMINAL_N_PIEZO
    n_load: int = c.NOMINAL_N_LOAD
    adc_bits: int = c.NOMINAL_ADC_BITS
    firmware: tuple[int, int, int] = FIRMWARE_VERSION

    def hello(self) -> Hello:
        """The HELLO message for this device."""
        return Hello(
            c.PROTOCOL_VERSION,
            *self.firmware,
            self.n_piezo,
            self.n_load,
            self.piezo_rate_hz,
            self.load_rate_hz,
            self.adc_bits,
            self.device_id,
        )


@dataclass
class Damage:
    """Line damage injected into the device's output.

    Parameters
    ----------
    bit_flip_prob : float
        Probability per frame of one flipped bit (never creating or removing
        a 0x00, so exactly that frame is hit).
    drop_prob : float
        Probability per frame of losing a run of its bytes (not its delimiter).
    seed : int
        Seed of the damage's own random generator.
    first_seq : int
        Frames with a lower seq after boot are left alone, so the receiver
        sees the HELLO and the first timed message.
    """

    bit_flip_prob: float = 0.0
    drop_prob: float = 0.0
    seed: int = 0
    first_seq: int = 8
    damaged_seqs: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def apply(self, frame: bytes, seq: int) -> bytes:
        """Return ``frame`` (with its 0x00), possibly damaged; records what it hit."""
        if seq < self.first_seq or len(frame) < 4:
            return frame
        draw = self._rng.random()
        body = bytearray(frame[:-1])
        if draw < self.bit_flip_prob:
            position = int(self._rng.integers(len(body)))
            bits = [1 << b for b in range(8) if body[position] ^ (1 << b)]
            body[position] ^= bits[int(self._rng.integers(len(bits)))]
        elif draw < self.bit_flip_prob + self.drop_prob:
            length = int(self._rng.integers(1, len(body) - 1))
            start = int(self._rng.integers(0, len(body) - length + 1))
            del body[start : start + length]
        else:
            return frame
        self.damaged_seqs.append(seq)
        return bytes(body) + c.FRAME_DELIMITER


class _Timed(NamedTuple):
    sent_s: float  # physics time at which the firmware would send it
    order: int  # PIEZO before LOAD before STATUS when sent at the same time
    msg: Message
    t_s: float | None  # physics time its t_us stands for (None for STATUS)


class SimulatedDevice:
    """The device firmware's behaviour over simulated physics.

    Parameters
    ----------
    physics : TowerPhysics
        Produces sensor data; its time starts at 0 when the device boots.
    info : DeviceInfo
        HELLO contents; ``piezo_rate_hz`` must be the physics' piezo rate.
    clock_offset_us : int
        Device clock at the first boot (taken mod 2^32).
    damage : Damage, optional
        Damage injected into the output.
    sets_per_frame : int
        Piezo sample sets per PIEZO frame (the firmware sends 10).
    clock_scale : float
        Device seconds per physics second: the device believes it samples at
        ``info.piezo_rate_hz`` exactly, while its crystal is off by some ppm
        (``dsp.sim`` towers give ``piezo_rate_hz / 2000``).
    """

    def __init__(
        self,
        physics: TowerPhysics,
        info: DeviceInfo,
        *,
        clock_offset_us: int = 0,
        damage: Damage | None = None,
        sets_per_frame: int = c.PIEZO_SETS_PER_FRAME,
        clock_scale: float = 1.0,
    ) -> None:
        if not 1 <= sets_per_frame <= c.PIEZO_MAX_SETS:
            raise ValueError(f"sets_per_frame must be 1..{c.PIEZO_MAX_SETS}")
        self.physics = physics
        self.info = info
        self.damage = damage
        self.sets_per_frame = sets_per_frame
        self.clock_scale = clock_scale
        self._us_per_set = 1_000_000 / info.piezo_rate_hz  # device clock
        self._sim_s_per_set = 1.0 / (info.piezo_rate_hz * clock_scale)  # physics clock
        self._sim_s = 0.0  # physics time advanced so far
        self._sets_total = 0  # piezo sets produced by the physics so far
        self._piezo_t0_s = 0.0  # physics time of the first set
        self._commands = FrameDecoder(on_rejected=self._on_rejected)
        self._out = bytearray()  # encoded frames waiting for the next generate()
        self._seq = 0
        self.frames_sent = 0
        self.stream_origin_sim_s: float | None = None
        self.initial_clock_offset_us = clock_offset_us % c.T_US_MODULUS
        self._boot(self.initial_clock_offset_us)

    # -- state -----------------------------------------------------------

    def _boot(self, clock_offset_us: int) -> None:
        self._seq = 0
        self._streams = c.STREAM_ALL
        self._clock_offset_us = clock_offset_us
        self._boot_sim_s = self._sim_s
        self._boot_set = self._sets_total
        self._pending_sets: list[npt.NDArray[np.uint16]] = []
        self._pending_first_set = self._sets_total
        self._next_status_s = 1.0
        self._load_timeouts = 0
        self._send(self.info.hello())

    def power_cycle(self) -> None:
        """Reboot as after unplugging USB: HELLO with seq 0, clock from 0, streams on."""
        self._out.clear()
        self._boot(0)

    @property
    def sim_time_s(self) -> float:
        """Physics time advanced so far (seconds since the first boot)."""
        return self._sim_s

    @property
    def streams(self) -> int:
        """Bitmask of the streams currently on (bit0 piezo, bit1 load, bit2 status)."""
        return self._streams

    def t_us_at(self, sim_s: float) -> int:
        """Device clock (u32) at physics time ``sim_s`` of the current boot."""
        elapsed_us = round((sim_s - self._boot_sim_s) * self.clock_scale * 1e6)
        return (self._clock_offset_us + elapsed_us) % c.T_US_MODULUS

    def _t_us_of_set(self, set_index: int) -> int:
        elapsed_us = int((set_index - self._boot_set) * self._us_per_set)
        return (self._clock_offset_us + elapsed_us) % c.T_US_MODULUS

    # -- host commands ---------------------------------------------------

    def receive(self, data: bytes) -> None:
        """Take bytes the host wrote; answers go out with the next :meth:`generate`."""
        for frame in self._commands.feed(data):
            self._answer(frame.msg, frame.seq)

    def _on_rejected(self, msg_type: int, seq: int, reason: str) -> None:
        result = c.RESULT_UNKNOWN_COMMAND if reason == "unknown_type" else c.RESULT_BAD_ARGUMENT
        self._send(Ack(msg_type, seq, result))

    def _answer(self, msg: Message, seq: int) -> None:
        if isinstance(msg, GetInfo):
            self._send(self.info.hello())
            self._send(Ack(msg.TYPE, seq, c.RESULT_OK))
        elif isinstance(msg, Start):
            if msg.streams == 0 or msg.streams & ~c.STREAM_ALL:
                self._send(Ack(msg.TYPE, seq, c.RESULT_BAD_ARGUMENT))
                return
            self._set_streams(msg.streams)
            self._send(Ack(msg.TYPE, seq, c.RESULT_OK))
        elif isinstance(msg, Stop):
            self._set_streams(0)
            self._send(Ack(msg.TYPE, seq, c.RESULT_OK))
        elif isinstance(msg, Ping):
            self._send(Pong(msg.token, self.t_us_at(self._sim_s)))
        elif isinstance(msg, Reset):
            self._send(Ack(msg.TYPE, seq, c.RESULT_OK))
            self._boot(0)  # a rebooted AVR's micros() starts again at 0
        else:  # a device -> host message type sent to the device
            self._send(Ack(msg.TYPE, seq, c.RESULT_UNKNOWN_COMMAND))

    def _set_streams(self, streams: int) -> None:
        if not streams & c.STREAM_PIEZO:
            self._pending_sets = []
        self._streams = streams

    # -- output ----------------------------------------------------------

    def generate(self, duration_s: float) -> bytes:
        """Advance the physics by ``duration_s`` and return the bytes sent meanwhile.

        Pending answers to host commands go first.
        """
        if duration_s > 0:
            block = self.physics.advance(duration_s)
            self._sim_s += duration_s
            timed: list[_Timed] = []
            self._frame_piezo(np.asarray(block.piezo, dtype=np.uint16), block.piezo_t0_s, timed)
            self._frame_load(block, timed)
            self._frame_status(timed)
            timed.sort(key=lambda item: (item.sent_s, item.order))
            for item in timed:
                if self.stream_origin_sim_s is None and item.t_s is not None:
                    self.stream_origin_sim_s = item.t_s
                msg = item.msg
                if isinstance(msg, Load):
                    # Counted as sent so STATUS reports exactly what came before it.
                    self._load_timeouts += self.info.n_load - msg.valid.bit_count()
                elif isinstance(msg, Status):
                    msg = replace(msg, load_timeouts=min(self._load_timeouts, 0xFFFF))
                self._send(msg)
        out = bytes(self._out)
        self._out.clear()
        return out

    def _send(self, msg: Message) -> None:
        frame = encode_frame(msg, self._seq)
        if self.damage is not None:
            frame = self.damage.apply(frame, self._seq)
        self._out += frame
        self._seq = (self._seq + 1) % c.SEQ_MODULUS
        self.frames_sent += 1

    def _frame_piezo(
        self, sets: npt.NDArray[np.uint16], piezo_t0_s: float, timed: list[_Timed]
    ) -> None:
        first_new = self._sets_total
        if first_new == 0:
            self._piezo_t0_s = piezo_t0_s
        self._sets_total += len(sets)
        if not self._streams & c.STREAM_PIEZO:
            self._pending_first_set = self._sets_total
            return
        if not self._pending_sets:
            self._pending_first_set = first_new
        self._pending_sets.append(sets)
        pending = np.concatenate(self._pending_sets) if len(self._pending_sets) > 1 else sets
        n_frames = len(pending) // self.sets_per_frame
        per = self.sets_per_frame
        for k in range(n_frames):
            first = self._pending_first_set + k * per
            first_s = self._piezo_t0_s + first * self._sim_s_per_set
            sent_s = first_s + (per - 1) * self._sim_s_per_set
            piezo = Piezo(self._t_us_of_set(first), pending[k * per : (k + 1) * per].copy())
            timed.append(_Timed(sent_s, 0, piezo, first_s))
        rest = pending[n_frames * per :]
        self._pending_first_set += n_frames * per
        self._pending_sets = [rest] if len(rest) else []

    def _frame_load(self, block: SensorBlockLike, timed: list[_Timed]) -> None:
        if not self._streams & c.STREAM_LOAD:
            return
        load_t = np.asarray(block.load_t_s, dtype=np.float64)
        valid = np.asarray(block.load_valid, dtype=bool)
        values = np.where(valid, np.asarray(block.load, dtype=np.int32), 0)
        masks = (valid.astype(np.int64) << np.arange(valid.shape[1])).sum(axis=1)
        for t_s, mask, row in zip(load_t, masks, values, strict=True):
            load = Load(self.t_us_at(float(t_s)), int(mask), row)
            timed.append(_Timed(float(t_s), 1, load, float(t_s)))

    def _frame_status(self, timed: list[_Timed]) -> None:
        end_uptime_s = (self._sim_s - self._boot_sim_s) * self.clock_scale  # device seconds
        while self._next_status_s <= end_uptime_s + 1e-9:
            uptime_s = self._next_status_s
            self._next_status_s += 1.0
            if not self._streams & c.STREAM_STATUS:
                continue
            status = Status(
                uptime_ms=round(uptime_s * 1000) % c.T_US_MODULUS,
                flags=self._streams,
            )
            sent_s = self._boot_sim_s + uptime_s / self.clock_scale
            timed.append(_Timed(sent_s, 2, status, None))


class SimulatedDeviceSource(ByteSource):
    """The simulated device as an in-process source, paced to the wall clock.

    The app's default when no board is plugged in. It behaves like a serial
    source (frames queue, commands answered, counters) without a port.

    Parameters
    ----------
    device : SimulatedDevice, optional
        The device to run; by default the simulated tower of ``seed`` playing
        ``scenario`` (:func:`tower_device`).
    seed : int
        Tower seed when ``device`` is not given.
    scenario : str
        Scenario when ``device`` is not given.
    pace : float
        Simulated seconds per wall second.
    tap : callable, optional
        Gets every raw chunk.
    **kwargs
        Passed to :class:`~hostapp.sources.base.ByteSource`.
    """

    def __init__(
        self,
        device: SimulatedDevice | None = None,
        *,
        seed: int = 1,
        scenario: str = "game",
        pace: float = 1.0,
        tap: Callable[[bytes], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(f"simulated tower {seed}", tap=tap, **kwargs)
        if pace <= 0:
            raise ValueError("pace must be positive")
        self._device = device
        self._seed = seed
        self._scenario = scenario
        self.pace = pace
        self._started = 0.0
        self._produced_s = 0.0

    @property
    def device(self) -> SimulatedDevice | None:
        """The running device (None before the first connection)."""
        return self._device

    def _open(self) -> None:
        if self._device is None:
            self._device = tower_device(seed=self._seed, scenario=self._scenario)
        self._started = time.monotonic() - self._produced_s / self.pace

    def _read(self) -> bytes:
        device = self._device
        if device is None:
            raise OSError("simulated device not running")
        time.sleep(_SOURCE_TICK_S)
        target_s = (time.monotonic() - self._started) * self.pace
        with self._write_lock:
            data = device.generate(target_s - self._produced_s)
        self._produced_s = target_s
        return data

    def _write(self, data: bytes) -> None:
        if self._device is None:
            raise OSError("simulated device not running")
        # Called with the base class's write lock held, like _read's generate().
        self._device.receive(data)

    def _close(self) -> None:
        """Nothing to close: the device lives on between connections."""


def tower_device_info(tower: Any, seed: int) -> DeviceInfo:
    """HELLO contents of the device in a simulated tower (``dsp.sim.TowerConstants``).

    The firmware believes its crystal: it reports the nominal piezo rate and
    the HX711 rate as measured against its own clock.
    """
    clock_scale = tower.piezo_rate_hz / c.NOMINAL_PIEZO_RATE_HZ
    return DeviceInfo(
        device_id=device_id_for_seed(seed),
        piezo_rate_hz=c.NOMINAL_PIEZO_RATE_HZ,
        load_rate_hz=round(tower.load_rate_hz / clock_scale),
        n_piezo=tower.n_levels,
        n_load=tower.n_levels,
        adc_bits=tower.adc_bits,
    )


def scenario_names() -> dict[str, str]:
    """The ``dsp.sim`` scenarios: name -> one-line description."""
    from dsp.sim.scenarios import SCENARIOS

    return dict(SCENARIOS)


# Scenario blocks pulled at a time: short enough for a paced pseudo-terminal,
# long enough that the simulator's per-call overhead does not matter.
_SCENARIO_BLOCK_S = 0.25
# Open-ended sessions (the live monitor, the app) script this far ahead, then the
# tower stays quiet; longer would make the "noisy" scenario slow to start.
OPEN_ENDED_S = 3600.0


class ScenarioPhysics:
    """A ``dsp.sim`` scenario as :class:`TowerPhysics`.

    A scenario decides its own block lengths (it cuts them at its actions);
    this adapter hands out exactly the span asked for, keeping the rest.
    After the scenario's end the tower carries on with nobody acting.

    Parameters
    ----------
    scenario : dsp.sim.scenarios.Scenario
        The scripted session.
    """

    def __init__(self, scenario: Any) -> None:
        self.scenario = scenario
        self._rate_hz = float(scenario.tower.piezo_rate_hz)
        self._blocks = scenario.blocks(_SCENARIO_BLOCK_S)
        self._pending: list[Any] = []
        self._time_s = 0.0

    @property
    def truth(self) -> Any:
        """The scenario's ground truth so far (``dsp.sim.GroundTruth``)."""
        return self.scenario.truth

    def advance(self, duration_s: float) -> SensorBlockLike:
        from dsp.sim import SensorBlock

        t_end = self._time_s + duration_s
        sim = self.scenario.sim
        while sim.time_s < t_end - 1e-12:
            block = next(self._blocks, None)
            if block is None:  # the script is over; time goes on
                block = sim.advance(t_end - sim.time_s)
            self._pending.append(block)
        merged = SensorBlock.concat(self._pending)
        times = merged.piezo_t0_s + np.arange(len(merged.piezo)) / self._rate_hz
        n_sets = int(np.searchsorted(times, t_end))
        n_loads = int(np.searchsorted(merged.load_t_s, t_end))
        head = SensorBlock(
            merged.piezo_t0_s, merged.piezo[:n_sets], merged.load_t_s[:n_loads],
            merged.load[:n_loads], merged.load_valid[:n_loads],
        )
        tail_t0 = float(times[n_sets]) if n_sets < len(times) else t_end
        self._pending = [SensorBlock(
            tail_t0, merged.piezo[n_sets:], merged.load_t_s[n_loads:],
            merged.load[n_loads:], merged.load_valid[n_loads:],
        )]
        self._time_s = t_end
        return head


def tower_device(
    *,
    seed: int,
    scenario: str = "game",
    duration_s: float | None = None,
    clock_offset_us: int | None = None,
    damage: Damage | None = None,
) -> SimulatedDevice:
    """The simulated device in the simulated tower of ``seed`` playing ``scenario``.

    Parameters
    ----------
    seed : int
        Tower and session seed (``dsp.sim.draw_tower(seed)``, session ``seed``).
    scenario : str
        Name of a ``dsp.sim`` scenario (see :func:`scenario_names`).
    duration_s : float, optional
        How long the scenario should plan for; open-ended when None.
    clock_offset_us : int, optional
        Device clock at boot; seed-derived when None.
    damage : Damage, optional
        Line damage to inject.

    Returns
    -------
    SimulatedDevice
        Its ``physics`` is a :class:`ScenarioPhysics` (ground truth in
        ``physics.truth``).

    Raises
    ------
    SourceError
        If ``scenario`` is not known; the message lists the known ones.
    """
    from dsp.sim import SimulatorError, draw_tower
    from dsp.sim.scenarios import Scenario

    tower = draw_tower(seed)
    try:
        session = Scenario(scenario, tower, seed, duration_s or OPEN_ENDED_S)
    except SimulatorError as exc:
        raise SourceError(tr_sentence(str(exc))) from exc
    return SimulatedDevice(
        ScenarioPhysics(session),
        tower_device_info(tower, seed),
        clock_offset_us=clock_offset_for_seed(seed) if clock_offset_us is None else clock_offset_us,
        damage=damage,
        clock_scale=tower.piezo_rate_hz / c.NOMINAL_PIEZO_RATE_HZ,
    )
