"""Physical constants of one tower and of one room, and how they are drawn.

A *tower* is one physical build: cardboard modules, plates, piezo discs, load
cells, HX711 boards, the microcontroller's clock and the game copy's cubes.
A *room* is where it is played: mains hum, background sound. Both are drawn
from documented distributions (docs/simulator.md lists every range and where
it comes from) so that detectors can be tested on towers they were not tuned on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

N_LEVELS = 8
STANDARD_GRAVITY_M_S2 = 9.80665
GRAM_FORCE_N = STANDARD_GRAVITY_M_S2 * 1e-3

NOMINAL_PIEZO_RATE_HZ = 2000.0
NOMINAL_LOAD_RATE_HZ = 80.0
HX711_GAIN = 128
HX711_FULL_SCALE_COUNTS = 2**23

# Square-plate mode shapes in the order of the drawn modes: (1,1), (1,2), (2,2), (1,3).
MODE_SHAPES: tuple[tuple[int, int], ...] = ((1, 1), (1, 2), (2, 2), (1, 3))

# Why these seed tags: towers, rooms and sessions draw from disjoint streams even
# when callers pass the same integer seed for all three.
_TOWER_STREAM = 0x70_57_E2
_ROOM_STREAM = 0x2_0_0_3


@dataclass(frozen=True)
class LevelConstants:
    """Everything physical about one level: its plate, piezo and load cell.

    Heights in metres above the table; masses in grams unless the name says kg;
    frequencies in Hz. Load cell numbers are raw HX711 counts (signed 24-bit).
    """

    level: int
    plate_height_m: float
    module_height_m: float
    stop_probability: float
    edge_strike_probability: float
    knockdown_probability: float
    restitution: float
    mode_freqs_hz: tuple[float, ...]
    mode_q: tuple[float, ...]
    mode_mass_kg: tuple[float, ...]
    hole_fraction: float
    piezo_position: tuple[float, float]
    piezo_sensitivity_v_per_m_s: float
    hum_pickup_v: float
    cell_rated_output_mv_per_v: float
    counts_per_gram: float
    offset_counts: float
    noise_counts_rms: float
    drift_g_per_sqrt_min: float
    creep_fraction: float
    creep_tau_s: float
    cell_freq_hz: float
    cell_q: float
    plate_mass_g: float


@dataclass(frozen=True)
class TowerConstants:
    """Every physical constant of one tower (see docs/simulator.md).

    Attributes
    ----------
    seed : int
        The seed :func:`draw_tower` drew it from (-1 when built by hand).
    piezo_rate_hz : float
        True piezo sample-set rate in physical seconds: 2000 Hz nominal, off by
        the microcontroller clock's error.
    load_rate_hz : float
        True HX711 output rate (its own on-chip oscillator, about 80 Hz).
    load_phase_s : float
        Time of the first HX711 conversion's end after simulator time 0.
    adc_bits : int
        Piezo ADC resolution.
    adc_vref_v : float
        ADC reference (AVcc) in volts.
    bias_fraction : float
        Front-end bias as a fraction of the reference (0.5 nominal).
    highpass_hz : float
        Corner of the high-pass the disc's capacitance forms with its bleed
        and bias resistors (docs/hardware.md).
    antialias_hz, antialias_q : float
        Natural frequency and Q of the unity-gain Sallen-Key anti-alias filter.
    adc_noise_lsb : float
        Front-end plus ADC noise, rms, in LSB.
    crosstalk : tuple of tuple of float
        ``crosstalk[receiver][source]``: share of level ``source``'s plate
        signal that reaches level ``receiver``'s piezo (1 on the diagonal).
    crosstalk_lowpass_hz : float
        Cardboard passes low frequencies between levels better than high ones.
    cube_edge_mm, wood_density_kg_m3, cube_mass_spread : float
        The game copy's cubes: nominal edge, wood density, relative spread of
        single cubes' masses.
    levels : tuple of LevelConstants
        Levels 0..7.
    """

    seed: int
    piezo_rate_hz: float
    load_rate_hz: float
    load_phase_s: float
    adc_bits: int
    adc_vref_v: float
    bias_fraction: float
    highpass_hz: float
    antialias_hz: float
    antialias_q: float
    adc_noise_lsb: float
    crosstalk: tuple[tuple[float, ...], ...]
    crosstalk_lowpass_hz: float
    cube_edge_mm: float
    wood_density_kg_m3: float
    cube_mass_spread: float
    levels: tuple[LevelConstants, ...]

    @property
    def n_levels(self) -> int:
        """Number of levels (8)."""
        return len(self.levels)

    @property
    def counts_per_gram(self) -> tuple[float, ...]:
        """HX711 counts per gram on each level (negative where a cell is wired reversed)."""
        return tuple(lv.counts_per_gram for lv in self.levels)

    @property
    def offset_counts(self) -> tuple[float, ...]:
        """HX711 reading of each empty plate at time 0, in counts."""
        return tuple(lv.offset_counts for lv in self.levels)

    @property
    def stop_probabilities(self) -> tuple[float, ...]:
        """Chance that a cube arriving on each plate stays there (1 for level 0)."""
        return tuple(lv.stop_probability for lv in self.levels)

    @property
    def nominal_cube_mass_g(self) -> float:
        """Mass of a cube of the nominal edge and density, in grams."""
        return cube_mass_g(self.cube_edge_mm, self.wood_density_kg_m3)

    @property
    def idle_code(self) -> int:
        """ADC code an idle piezo channel reads (the bias)."""
        return int(self.bias_fraction * 2**self.adc_bits)

    @property
    def top_height_m(self) -> float:
        """Height of the entry opening on top of module 7."""
        top = self.levels[-1]
        return top.plate_height_m + top.module_height_m

    def device_seconds(self, sim_seconds: float) -> float:
        """Time on the device's clock (which believes it samples at 2000 Hz exactly)."""
        return sim_seconds * self.piezo_rate_hz / NOMINAL_PIEZO_RATE_HZ

    def to_json(self) -> dict[str, Any]:
        """All constants as plain JSON types."""
        data = asdict(self)
        data["crosstalk"] = [list(row) for row in self.crosstalk]
        return data


@dataclass(frozen=True)
class RoomConstants:
    """Where the tower is played: mains hum and background sound.

    Attributes
    ----------
    mains_hz : float
        Mains frequency (50 or 60 Hz, off by the grid's deviation).
    hum_scale : float
        Multiplies every level's hum pickup (wiring near mains cables, lamps).
    hum_harmonics : tuple of float
        Amplitudes of harmonics 1, 2, 3, ... relative to the fundamental.
    hum_phases_rad : tuple of float
        Phase of each harmonic at time 0.
    room_noise_v : float
        Rms of airborne background sound reaching the piezos, in volts.
    talk_v : float
        Rms added by people talking next to the tower, in volts.
    """

    seed: int
    mains_hz: float
    hum_scale: float
    hum_harmonics: tuple[float, ...]
    hum_phases_rad: tuple[float, ...]
    room_noise_v: float
    talk_v: float

    def to_json(self) -> dict[str, Any]:
        """All constants as plain JSON types."""
        return asdict(self)


def cube_mass_g(edge_mm: float, density_kg_m3: float) -> float:
    """Mass of a wooden cube in grams from its edge (mm) and wood density (kg/m^3)."""
    return (edge_mm * 1e-3) ** 3 * density_kg_m3 * 1e3


def _u(rng: np.random.Generator, low: float, high: float) -> float:
    return float(rng.uniform(low, high))


def _counts_per_volt_at_input(gain: int = HX711_GAIN) -> float:
    """HX711 counts per volt of bridge output when excitation equals AVDD.

    Full scale is +-0.5 AVDD / gain for +-2^23 counts, so counts per (V/V) of
    bridge ratio is 2^24 * gain, independent of AVDD (ratiometric).
    """
    return float(2 * HX711_FULL_SCALE_COUNTS * gain)


def _draw_modes(
    rng: np.random.Generator,
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    # First mode of a ~8 cm square greyboard plate, 1.2-2 mm thick: Kirchhoff
    # plate theory gives 300-600 Hz; mass loading and the hole spread it lower.
    f1 = _u(rng, 200.0, 560.0)
    # Ratios of a square plate's (1,1), (1,2), (2,2), (1,3) modes, detuned by
    # the hole and the glued edges.
    ratios = (1.0, 2.5, 4.0, 5.0)
    n_modes = int(rng.integers(3, 5))
    freqs = []
    for ratio in ratios[:n_modes]:
        freqs.append(f1 * ratio * _u(rng, 0.9, 1.1))
    freqs = [f for f in freqs if f < 1900.0]
    # Cardboard loss factor 0.07-0.25 (Q = 1/eta): heavily damped.
    qs = [_u(rng, 4.0, 14.0) for _ in freqs]
    # Effective modal mass: a few grams for the fundamental, higher modes respond less.
    m1 = _u(rng, 4e-3, 12e-3)
    masses = [m1 * (1.0 if i == 0 else _u(rng, 1.5, 3.5)) for i in range(len(freqs))]
    return tuple(freqs), tuple(qs), tuple(masses)


def mode_shape(mode: int, x: float, y: float) -> float:
    """Displacement of a simply supported square plate's mode at (x, y) in plate widths."""
    m, n = MODE_SHAPES[mode]
    return float(np.sin(m * np.pi * x) * np.sin(n * np.pi * y))


def _stop_mean(level: int) -> float:
    # Holes are smaller upwards but the plates below are hit by cubes that
    # already lost speed on edges: a cube that gets low stops more readily.
    # Means from 0.17 (level 7) to 0.53 (level 1) leave ~5 % of throws for the
    # ground floor and fewer for each level further down.
    return 0.17 + (7 - level) * 0.06


def draw_tower(seed: int) -> TowerConstants:
    """Draw one tower's constants from the distributions of docs/simulator.md.

    Parameters
    ----------
    seed : int
        Any non-negative integer; the same seed gives the same tower.

    Returns
    -------
    TowerConstants
    """
    if seed < 0:
        raise ValueError("a tower seed must be a non-negative integer")
    rng = np.random.default_rng([_TOWER_STREAM, seed])

    # Nano boards: most carry a 16 MHz crystal (+-50 ppm), some a ceramic
    # resonator (+-0.3 %).
    clock_ppm = _u(rng, -50, 50) if rng.random() < 0.8 else _u(rng, -3000, 3000)
    piezo_rate = NOMINAL_PIEZO_RATE_HZ * (1.0 + clock_ppm * 1e-6)
    # HX711 on-chip oscillator: nominal 80 SPS, untrimmed; boards are reported
    # anywhere between about 77 and 92 SPS.
    load_rate = _u(rng, 77.0, 92.0)

    module_heights = [_u(rng, 0.028, 0.034) for _ in range(N_LEVELS)]
    base_height = _u(rng, 0.008, 0.015)

    cpv = _counts_per_volt_at_input()
    levels = []
    for level in range(N_LEVELS):
        plate_height = base_height + sum(module_heights[:level])
        if level == 0:
            stop = 1.0
            edge = 0.0
        else:
            stop = float(np.clip(rng.normal(_stop_mean(level), 0.06), 0.06, 0.8))
            edge = _u(rng, 0.2, 0.7)
        freqs, qs, masses = _draw_modes(rng)
        # The hole takes the middle of the plate, so the disc sits to one side.
        hole = _u(rng, 0.25, 0.45)
        piezo_xy = (_u(rng, 0.12, 0.5 - hole / 2), _u(rng, 0.3, 0.7))
        rated = _u(rng, 0.85, 1.15)  # bar cells sold as 1.0 +- 0.15 mV/V
        capacity_g = 100.0
        mount = _u(rng, 0.97, 1.03)  # plate load not exactly on the cell's axis
        sign = -1.0 if rng.random() < 0.06 else 1.0  # A+/A- swapped or cell upside down
        cpg = sign * cpv * rated * 1e-3 / capacity_g * mount
        zero_balance_g = _u(rng, -10.0, 10.0)  # +-0.1 mV/V zero balance of a 1 mV/V cell
        dead_weight_g = _u(rng, 5.0, 25.0)  # the plate part carried by the cell
        noise_nv = _u(rng, 90.0, 400.0)  # datasheet 90 nV at 80 SPS; boards do worse
        avdd_v = _u(rng, 4.2, 5.0)  # module regulator (4.3 V typical) or raw 5 V
        levels.append(
            LevelConstants(
                level=level,
                plate_height_m=plate_height,
                module_height_m=module_heights[level],
                stop_probability=stop,
                edge_strike_probability=edge,
                knockdown_probability=_u(rng, 0.01, 0.05) if level > 0 else 0.0,
                restitution=_u(rng, 0.3, 0.6),
                mode_freqs_hz=freqs,
                mode_q=qs,
                mode_mass_kg=masses,
                hole_fraction=hole,
                piezo_position=piezo_xy,
                piezo_sensitivity_v_per_m_s=_u(rng, 8.0, 30.0),
                hum_pickup_v=_u(rng, 0.5e-3, 4e-3),
                cell_rated_output_mv_per_v=rated,
                counts_per_gram=cpg,
                offset_counts=cpg * (zero_balance_g + dead_weight_g),
                noise_counts_rms=noise_nv * 1e-9 * cpv / avdd_v,
                drift_g_per_sqrt_min=_u(rng, 0.005, 0.04),
                creep_fraction=_u(rng, 0.002, 0.015),
                creep_tau_s=_u(rng, 60.0, 300.0),
                cell_freq_hz=_u(rng, 12.0, 40.0),
                cell_q=_u(rng, 3.0, 10.0),
                plate_mass_g=_u(rng, 8.0, 25.0),
            )
        )

    adjacent = [_u(rng, 0.08, 0.35) for _ in range(N_LEVELS - 1)]
    crosstalk = np.eye(N_LEVELS)
    for receiver in range(N_LEVELS):
        for source in range(N_LEVELS):
            if receiver == source:
                continue
            lo, hi = sorted((receiver, source))
            crosstalk[receiver, source] = float(np.prod(adjacent[lo:hi]))

    edge_mm = _u(rng, 8.5, 10.0)
    density = _u(rng, 480.0, 780.0)  # pine ~480-550, maple/beech ~650-780
    return TowerConstants(
        seed=seed,
        piezo_rate_hz=piezo_rate,
        load_rate_hz=load_rate,
        load_phase_s=_u(rng, 0.0, 1.0 / load_rate),
        adc_bits=10,
        adc_vref_v=_u(rng, 4.75, 5.1),  # USB VBUS through the Nano's diode
        bias_fraction=float(rng.normal(0.5, 0.003)),  # 1 % divider resistors
        # docs/hardware.md: a 10 nF +-30 % disc into 1 MOhm || 1 MOhm.
        highpass_hz=1.0 / (2 * np.pi * 0.5e6 * _u(rng, 7e-9, 13e-9)),
        # Sallen-Key 15k/15k/47n/22n: 330 Hz, Q 0.73; 1 % resistors and 5 %
        # C0G capacitors move f0 by up to ~7 % and Q a little.
        antialias_hz=330.0 * _u(rng, 0.93, 1.07),
        antialias_q=_u(rng, 0.68, 0.78),
        adc_noise_lsb=_u(rng, 0.3, 0.9),
        crosstalk=tuple(tuple(float(x) for x in row) for row in crosstalk),
        crosstalk_lowpass_hz=_u(rng, 300.0, 900.0),
        cube_edge_mm=edge_mm,
        wood_density_kg_m3=density,
        cube_mass_spread=_u(rng, 0.02, 0.06),
        levels=tuple(levels),
    )


def draw_room(seed: int, *, noisy: bool = False) -> RoomConstants:
    """Draw a room: 50 or 60 Hz mains, hum strength, background sound.

    Parameters
    ----------
    seed : int
        Any non-negative integer.
    noisy : bool
        A noisy room: strong hum pickup, loud background, talking.
    """
    if seed < 0:
        raise ValueError("a room seed must be a non-negative integer")
    rng = np.random.default_rng([_ROOM_STREAM, seed, int(noisy)])
    mains = 50.0 if rng.random() < 0.7 else 60.0
    mains += _u(rng, -0.05, 0.05)  # grid frequency deviation, held for a session
    harmonics = (1.0, _u(rng, 0.05, 0.4), _u(rng, 0.1, 0.6), _u(rng, 0.0, 0.2))
    phases = tuple(_u(rng, 0.0, 2 * np.pi) for _ in harmonics)
    if noisy:
        return RoomConstants(
            seed,
            mains,
            _u(rng, 3.0, 10.0),
            harmonics,
            phases,
            _u(rng, 4e-3, 10e-3),
            _u(rng, 8e-3, 25e-3),
        )
    return RoomConstants(
        seed,
        mains,
        _u(rng, 0.3, 1.5),
        harmonics,
        phases,
        _u(rng, 0.5e-3, 2.5e-3),
        _u(rng, 2e-3, 6e-3),
    )
