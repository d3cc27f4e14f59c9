"""A cube's way down the shaft: free fall, hole-edge strikes, bounces, rest.

Pure kinematics with drawn outcomes: the cube falls freely between plates
(``h = v t + g t^2 / 2``); on each plate it either goes through the hole
(sometimes clipping the edge, which takes part of its speed) or lands, with
the tower's per-level chance to stop; on the plate it bounces with restitution
``e`` (each impact passes the impulse ``m (1 + e) v``) until the bounces die
out, then rocks to rest. A landing can push a resting cube into the hole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dsp.sim.constants import STANDARD_GRAVITY_M_S2, TowerConstants

# Why 0.05 m/s: a cube bouncing slower than this rises less than 0.13 mm, i.e.
# it rocks on the plate rather than leaving it.
_MIN_BOUNCE_SPEED_M_S = 0.05


@dataclass(frozen=True)
class PlateImpact:
    """One force impulse of a cube on a plate."""

    t_s: float
    level: int
    cube: int
    impulse_n_s: float
    contact_s: float
    energy_j: float
    where: str  # "edge", "bounce" or "ceiling" (underside of the plate above)
    x: float = 0.5  # where on the plate, in plate widths from one edge
    y: float = 0.5


@dataclass(frozen=True)
class KnockRequest:
    """A resting cube pushed into the hole of ``level`` at ``t_s``."""

    victim: int
    level: int
    t_s: float
    speed_m_s: float


@dataclass(frozen=True)
class FallPlan:
    """Everything one falling cube does until it rests."""

    cube: int
    impacts: tuple[PlateImpact, ...]
    rest_level: int
    rest_t_s: float
    first_impact_t_s: float
    knock: KnockRequest | None


def _on_solid_part(rng: np.random.Generator, hole: float) -> tuple[float, float]:
    """A point on the plate outside the central hole and the glued rim."""
    while True:
        x, y = (float(v) for v in rng.uniform(0.1, 0.9, size=2))
        if max(abs(x - 0.5), abs(y - 0.5)) > hole / 2:
            return x, y


def _on_hole_rim(rng: np.random.Generator, hole: float) -> tuple[float, float]:
    """A point on the rim of the central hole."""
    along = float(rng.uniform(0.5 - hole / 2, 0.5 + hole / 2))
    across = 0.5 + float(rng.choice([-1.0, 1.0])) * hole / 2
    return (along, across) if rng.random() < 0.5 else (across, along)


def _fall_time_s(speed_m_s: float, drop_m: float) -> float:
    g = STANDARD_GRAVITY_M_S2
    return (math.sqrt(speed_m_s**2 + 2 * g * drop_m) - speed_m_s) / g


def plan_fall(
    tower: TowerConstants,
    rng: np.random.Generator,
    *,
    cube: int,
    mass_g: float,
    level: int,
    t_s: float,
    speed_m_s: float,
    drop_m: float,
    residents: Callable[[int, float], Sequence[int]],
    allow_knock: bool = True,
) -> FallPlan:
    """Plan the fall of one cube.

    Parameters
    ----------
    tower : TowerConstants
    rng : numpy.random.Generator
        The action's own random stream.
    cube : int
        Id of the falling cube.
    mass_g : float
        Its mass in grams.
    level : int
        The first plate it will reach.
    t_s : float
        Simulator time at which it is ``drop_m`` above that plate.
    speed_m_s : float
        Its downward speed then.
    drop_m : float
        Height above the plate at ``t_s``.
    residents : callable
        ``residents(level, t) -> cube ids`` resting on a plate at time t.
    allow_knock : bool
        Whether this cube may push a resting cube down.

    Returns
    -------
    FallPlan
    """
    g = STANDARD_GRAVITY_M_S2
    m = mass_g * 1e-3
    impacts: list[PlateImpact] = []
    t, v, drop = t_s, speed_m_s, drop_m
    while True:
        lv = tower.levels[level]
        t += _fall_time_s(v, drop)
        v = math.sqrt(v**2 + 2 * g * drop)
        if level == 0 or rng.random() < lv.stop_probability:
            break
        if rng.random() < lv.edge_strike_probability:
            kept = float(rng.uniform(0.4, 0.85))
            x, y = _on_hole_rim(rng, lv.hole_fraction)
            impacts.append(
                PlateImpact(
                    t_s=t,
                    level=level,
                    cube=cube,
                    impulse_n_s=m * (1.0 - kept) * v,
                    contact_s=float(rng.uniform(0.15e-3, 0.4e-3)),
                    energy_j=0.5 * m * v * v * (1.0 - kept * kept),
                    where="edge",
                    x=x,
                    y=y,
                )
            )
            v *= kept
        level -= 1
        drop = tower.levels[level].module_height_m

    lv = tower.levels[level]
    first_impact = t
    n_impacts = int(rng.integers(2, 5))
    x, y = _on_solid_part(rng, lv.hole_fraction)
    for i in range(n_impacts):
        e = float(np.clip(rng.normal(lv.restitution, 0.05), 0.15, 0.75))
        impacts.append(
            PlateImpact(
                t_s=t,
                level=level,
                cube=cube,
                impulse_n_s=m * (1.0 + e) * v,
                contact_s=float(rng.uniform(0.3e-3, 1.0e-3)),
                energy_j=0.5 * m * v * v * (1.0 - e * e),
                where="bounce",
                x=x,
                y=y,
            )
        )
        # Each bounce moves the cube a little across the plate.
        x = float(np.clip(x + rng.normal(0.0, 0.05), 0.1, 0.9))
        y = float(np.clip(y + rng.normal(0.0, 0.05), 0.1, 0.9))
        v *= e
        if v < _MIN_BOUNCE_SPEED_M_S or i == n_impacts - 1:
            break
        # The module is only ~3 cm tall: a cube that would rise higher hits
        # the underside of the plate above and comes back slower.
        headroom = max(lv.module_height_m - tower.cube_edge_mm * 1e-3, 1e-3)
        if v * v > 2 * g * headroom and level + 1 < tower.n_levels:
            u = math.sqrt(v * v - 2 * g * headroom)  # speed when it reaches the ceiling
            t_up = (v - u) / g
            cx, cy = _on_solid_part(rng, tower.levels[level + 1].hole_fraction)
            impacts.append(
                PlateImpact(
                    t_s=t + t_up,
                    level=level + 1,
                    cube=cube,
                    impulse_n_s=m * 1.5 * u,
                    contact_s=float(rng.uniform(0.3e-3, 1.0e-3)),
                    energy_j=0.5 * m * u * u * 0.75,
                    where="ceiling",
                    x=cx,
                    y=cy,
                )
            )
            w = 0.5 * u  # back down at half the speed (restitution 0.5)
            v = math.sqrt(w * w + 2 * g * headroom)
            t += t_up + (v - w) / g
            continue
        t += 2.0 * v / g
    rest_t = t + float(rng.uniform(0.005, 0.04))  # rocks and slides to rest

    knock = None
    if allow_knock and level > 0:
        present = list(residents(level, first_impact))
        p_knock = 1.0 - (1.0 - lv.knockdown_probability) ** len(present)
        if present and rng.random() < p_knock:
            victim = present[int(rng.integers(len(present)))]
            knock = KnockRequest(
                victim=victim,
                level=level,
                t_s=first_impact + float(rng.uniform(0.005, 0.03)),
                speed_m_s=float(rng.uniform(0.1, 0.4)),
            )
    return FallPlan(cube, tuple(impacts), level, rest_t, first_impact, knock)


def plan_bounces_on(
    tower: TowerConstants,
    rng: np.random.Generator,
    *,
    cube: int,
    mass_g: float,
    level: int,
    t_s: float,
    height_m: float,
) -> FallPlan:
    """A cube dropped from ``height_m`` straight onto an opened plate (no hole)."""
    return plan_fall(
        _no_hole(tower, level),
        rng,
        cube=cube,
        mass_g=mass_g,
        level=level,
        t_s=t_s,
        speed_m_s=0.0,
        drop_m=height_m,
        residents=lambda _lv, _t: (),
        allow_knock=False,
    )


def _no_hole(tower: TowerConstants, level: int) -> TowerConstants:
    from dataclasses import replace

    levels = list(tower.levels)
    levels[level] = replace(levels[level], stop_probability=1.0)
    return replace(tower, levels=tuple(levels))
