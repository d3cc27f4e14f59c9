"""The fusion's stream interface: inputs, the stream clock, decisions out.

Impacts, plate busy changes, load steps and connection changes come in;
:meth:`Fusion.advance` decides everything due by the stream clock. Drops
heard while no load channel reports are decided by ear (``heardrops``).
"""

from __future__ import annotations

import numpy as np

from dsp.detect import swinging
from dsp.detect.deadcells import FOLLOWED_S, STILL_SIGMAS, HeardDrop
from dsp.detect.dropgap import LONG_GAP_S
from dsp.detect.events import Event, Landing
from dsp.detect.fusion.base import BUSY_KEPT_S, DEFAULT_WIDE_IMPACT_CHANNELS, IMPACT_MEMORY_S
from dsp.detect.fusion.settledview import SettledView
from dsp.detect.heardrops import (
    TABLE_LEVELS,
    TOLD_CONFIDENCE,
    TRAIN_STRIKES,
    HeardRest,
    continues_drop,
    cut_short,
    hands_at_the_tower,
    heard_landing,
    knock_on_the_table,
    late_strike_of,
    not_told,
    resting_level,
    told_already,
)
from dsp.detect.loadcell import LoadConnection, LoadStep
from dsp.detect.memory import Drop
from dsp.detect.piezo import PlateBusy, TimedImpact
from dsp.detect.removals import PRESS_LOOKBACK_S
from dsp.detect.stops import BEFORE_STRIKE_S
from dsp.detect.strikes import loudest_levels
from dsp.detect.trust import cube_like, sounded_like_a_cube

# Why these: a cell that reads nothing (``deadcells``) is judged by its
# noise over the second before the drop and its largest swing from just
# before the first strike to 0.3 s after the last (a struck plate's push
# and ring); a perfectly constant channel has noise 0, taken as one count.
# Its landings are heard only, so they are reported less sure (0.7 of the
# level's own confidence).
_NOISE_BEFORE_S = 1.0
_SILENT_SWING_AFTER_S = 0.3
_MIN_NOISE_COUNTS = 1.0
_SILENT_CELL_CONFIDENCE = 0.7
# Why 5 s and 40 s: the settled view decides the cubes taken out of an
# open level once the hands have left after the close (up to a few seconds),
# and a level lies open for 5-20 s on the cross-check towers.
_OPEN_HISTORY_AFTER_S = 5.0
_OPEN_HISTORY_S = 40.0
# Why 8 readings: the HX711 of a module set back powers up through the
# spring contacts and settles for four conversion periods (datasheet: 400 ms
# at 10 readings a second, 50 ms at 80), and a firmware may hold its channel
# invalid until then, after waiting a period or two for it to answer: the
# channels come back up to 0.7 s after the modules were set down (model Z).
# The set-down is heard at once, on the discs it brought back.
_SET_DOWN_LOOKBACK_READINGS = 8
# Why 0.2 s at the least: at 80 readings a second eight readings are 0.1 s,
# and a converter that settles its 50 ms after power-up, then waits for the
# next poll, answers later than that: model AD's channels came back 0.108 s
# after the thump, the close was timed by them, and 5 cubes thrown back
# half a second after the thump came too soon after it to tell from the
# hands (models A-AD: 5 landings more, 1 false fewer, nothing else changed).
_SET_DOWN_LOOKBACK_S = 0.2


class Fusion(SettledView):
    """Decision stage of the detector (see the package docstring, ``dsp.detect.fusion``).

    Parameters
    ----------
    n_levels : int
        Levels of the tower (load and piezo channels).
    scale : CubeScale
        Cube size per level (learnt or calibrated).
    acoustic : AcousticLevelModel
        The self-learning acoustic model.
    hold_s, coincidence_s, disturbance_levels, knock_window_s, lift_gather_s, drop_gap_s
        See the constants of ``fusion.base`` for the defaults and why.
    impact_delay_s : float
        How long after an impact the piezo chain hands it over (its onset
        decision delay): a drop is over only once its silence has lasted
        ``drop_gap_s`` *and* any strike within it would have arrived.
    first_landings_held : int
        How many of the session's first landings wait to see their cube
        stay, before the tower showed whether its cubes slide on
        (``slides.FIRST_HELD``; 0: none, for a fusion that stands for a
        tower past its first landings).
    """

    def add_impacts(
        self, impacts: list[TimedImpact], *, known_s: float | None = None
    ) -> list[Event]:
        """Take new impacts (time order), known at ``known_s``; returns disturbances."""
        out: list[Event] = []
        for imp in impacts:
            if imp.faint:
                self._faint_strike(imp)
                continue
            self._piezo_seen = True
            self.stats.impacts += 1
            self._impacts.append(imp)
            self.acoustic.observe(imp.peaks)
            self.deaf_discs.note_impact(imp.channels)
            known = imp.t_s if known_s is None else known_s
            thump = len(imp.channels) >= DEFAULT_WIDE_IMPACT_CHANNELS
            top_level = self._levels_of([imp])[0]
            if top_level == self.n_levels - 1 and cube_like(imp):
                self._top_strike_t.append(imp.t_s)
            if self.openings.top_off and (thump or top_level < self.n_levels - 1):
                # Set back with a thump heard through the tower, or something
                # struck below the top plate: the top module is on again. A
                # strike that stands out on one plate is a cube falling past;
                # one heard alike on several is the hands setting it down.
                handling = thump or not cube_like(imp)
                t_set = self._set_down_at(imp.t_s, by_a_cube=not handling)
                out.extend(self.openings.close_top(t_set, known, handling=handling))
                if self._is_wide(imp):
                    self._wide_impact_t.append(imp.t_s)
                    continue
            if self._is_wide(imp) and not (self.flat_discs.flat and self._load_present(imp.t_s)):
                self._wide_impact_t.append(imp.t_s)
                out.extend(self._disturbance(imp.t_s, known))
            elif not self._load_present(imp.t_s):
                if self._drop.impacts and self.acoustic_gap.ends_drop(
                    imp.t_s - self._drop.impacts[-1].t_s,
                    imp.impact.loudest,
                    loudest_levels(self._drop.impacts[-2:]),
                ):
                    # At once when a throw entering from the top ended it.
                    out.extend(self._decide_drop(min(self._drop_over_s(), known)))
                if not self._drop.impacts:
                    self.acoustic_gap.began(imp.t_s, loudest_levels([imp])[0])
                out.extend(self._bounces_cut_short(imp, known))
                self._drop.impacts.append(imp)
            else:
                if self._heard.impacts and imp.t_s - self._heard.impacts[-1].t_s > self.drop_gap_s:
                    self._hand_over_heard()
                self._heard.impacts.append(imp)
        while self._impacts and self._impacts[0].t_s < self._impacts[-1].t_s - IMPACT_MEMORY_S:
            self._impacts.popleft()
        # Landings told here (a drop ended by the next throw, bounces cut
        # short) are timed at rest as those decided in ``advance``.
        return self._at_rest(out) if out else out

    def _bounces_cut_short(self, strike: TimedImpact, known_s: float) -> list[Event]:
        """A landing told while the drop goes on: a cube's bounces, cut short by the next throw."""
        train = cut_short([imp for imp in self._drop.impacts if not imp.faint], strike)
        if sum(1 for imp in train if cube_like(imp)) < TRAIN_STRIKES:
            return []  # hands or the room, heard alike on every plate
        level, confidence, _ = resting_level(self.acoustic, train)
        t = train[-1].t_s
        if confidence < TOLD_CONFIDENCE or told_already(level, t, self._drop.told):
            return []
        self._drop.told.append((level, t))
        self.stats.acoustic_landings += 1
        self.stats.bounces_cut_short += 1
        return [Landing(t=t, t_decided=known_s, floor=level, cubes=1,
                        confidence=confidence, source="acoustic")]

    def _faint_strike(self, imp: TimedImpact) -> None:
        """A strike heard under the onset threshold: the cube of a drop heard by ear going on.

        Nothing else: faint strikes start no drop, teach the acoustic model
        nothing, and the load cells, where they report, need none.
        """
        drop = self._drop.impacts
        if not drop or self._load_present(imp.t_s):
            return
        if imp.t_s - drop[-1].t_s <= self._drop_silence_s() and continues_drop(drop, imp):
            drop.append(imp)

    def add_busy(self, change: PlateBusy) -> None:
        """Take a plate's busy/quiet change (in time order, at its time)."""
        if 0 <= change.level < self.n_levels:
            self._busy[change.level].append((change.t_s, change.busy))

    def add_dead_cells(self, levels: tuple[int, ...]) -> None:
        """Levels whose cells read nothing through the tare: their cubes are heard only."""
        for level in levels:
            self.silent_cells.mark_dead(level)

    def add_load(
        self, steps: list[LoadStep], connections: list[LoadConnection], t_last_s: float
    ) -> list[Event]:
        """Take load steps and connection changes up to reading time ``t_last_s``."""
        out: list[Event] = []
        for conn in connections:
            out.extend(self._connection(conn))
        for step in steps:
            self.stats.load_steps += 1
            self.silent_cells.note_step(step.level)
            if step.level in self.openings.disconnected:
                continue
            self._pending_steps.append(step)
        return out

    def advance(self, now_s: float) -> list[Event]:
        """Decide everything whose deadline is at or before ``now_s``."""
        out: list[Event] = []
        self.load_history.forget_before(self._history_horizon(now_s))
        # Busy changes are let go by this clock too, not by the newest one
        # taken: those may have come up to a slice ahead of a decision, and
        # which the decision still saw depended on where the stream's
        # chunks ended (a landing's rest time 0.09 s apart, model I).
        kept_from = now_s - BUSY_KEPT_S
        for changes in self._busy:
            while changes and changes[0][0] < kept_from:
                changes.popleft()
        if (deadline := self.openings.lift_deadline) is not None and now_s >= deadline:
            out.extend(self.openings.gathered_lift(deadline, self._reporting(deadline)))
        # Steps queued to be looked at again (``_looks``) may be due too.
        while ready := [s for s in self._pending_steps if now_s >= s.t_decided_s + self.hold_s]:
            out.extend(self._resolve_steps(ready))
        self._check_slides(now_s)
        out.extend(self.decide_settled_waiting(now_s))
        out.extend(self.reweigh_suspected_stops(now_s))
        if self._looks:
            # Those dropped with a disturbance or a lift are not looked at again.
            pending = set(self._pending_steps)
            self._looks = {s: look for s, look in self._looks.items() if s in pending}
        if (
            self._drop.impacts
            and not self._load_present(now_s)
            and now_s >= self._drop_over_s()
        ):
            out.extend(self._decide_drop(self._drop_over_s()))
        if self._heard.impacts and now_s >= self._heard_over_s():
            self._hand_over_heard()
        out.extend(self._heard_not_weighed(now_s))
        if not out:
            return out  # (three calls in four)
        # Steps are judged in the order their plates settled, but a plate that
        # settled first may have been sure later: events go out in the order
        # decided (contracts.md section 3), ties as judged.
        out.sort(key=lambda e: e.t_decided)
        return self._at_rest(out)

    def next_due(self) -> float | None:
        """The earliest time at which something pending is decided (None: nothing is)."""
        times = [s.t_decided_s + self.hold_s for s in self._pending_steps]
        if self.openings.lift_deadline is not None:
            times.append(self.openings.lift_deadline)
        if self._drop.impacts:
            times.append(self._drop_over_s())
        check = self.slide_signs.next_due(self.impact_delay_s)
        if check is not None:
            times.append(check)
        if self._heard.impacts:
            times.append(self._heard_over_s())
        heard = self.silent_cells.next_due()
        if heard is not None:
            times.append(heard)
        waiting = self.settled_waiting_due()
        if waiting is not None:
            times.append(waiting)
        reweigh = self.reweigh_due()
        if reweigh is not None:
            times.append(reweigh)
        return min(times) if times else None

    def _drop_over_s(self) -> float:
        """When the acoustic drop in progress is known to be over, if no strike comes."""
        return self._drop.impacts[-1].t_s + self._drop_silence_s() + self.impact_delay_s

    def _drop_silence_s(self) -> float:
        """The silence after its last strike that ends the acoustic drop in progress."""
        return self.acoustic_gap.silence_after(loudest_levels(self._drop.impacts[-2:]))

    def _heard_over_s(self) -> float:
        """When the drop heard with the load cells there is over, if no strike comes."""
        return self._heard.impacts[-1].t_s + self.drop_gap_s + self.impact_delay_s

    def _hand_over_heard(self) -> None:
        """Give the drop just heard to the watch over silent cells (``deadcells``)."""
        impacts, self._heard = self._heard.impacts, Drop()
        if self._tower_open:
            return  # hands at work in an open tower
        level, confidence, final = resting_level(self.acoustic, impacts)
        loud = sounded_like_a_cube(impacts, final, level, self._heard_db)
        self.silent_cells.add_drop(HeardDrop(
            t_first_s=impacts[0].t_s, t_last_s=impacts[-1].t_s, level=level,
            t_rest_s=final[-1].t_s, confidence=confidence, cube_loud=loud,
            came_down=any(top > level for top in loudest_levels(impacts)),
        ))

    def _heard_not_weighed(self, now_s: float) -> list[Event]:
        """Landings heard that the load cells cannot show, due by ``now_s``.

        On levels whose cells read nothing (``deadcells``), and on plates
        that keep swinging (``swinging``), whose cubes are weighed later.
        """
        out: list[Event] = []
        for drop in self.silent_cells.take_due(now_s):
            if self._tower_open or self.silent_cells.explained(drop):
                continue
            followed = any(
                drop.t_last_s < imp.t_s <= drop.t_last_s + FOLLOWED_S for imp in self._impacts
            )
            told = self.silent_cells.judge(
                drop, cell_still=self._cell_still(drop), followed=followed
            )
            kept_swinging = not told and drop.cube_loud and self._kept_swinging(drop)
            if kept_swinging:
                # Weighed once the plate stills, when the settled view
                # splits its change by the drops heard since the level's
                # last landing (``_heard_arrivals``): that stays where the
                # load put it.
                self.stats.heard_on_swinging_plates += 1
                unweighed = self._levels[drop.level].heard_unweighed
                unweighed.append(drop.t_rest_s)
                del unweighed[:-swinging.UNWEIGHED_KEPT]
                told = [drop]
            else:
                self.stats.heard_on_silent_cells += len(told)
            for heard in told:
                self.cubes_on[heard.level] += 1
                memory = self._levels[heard.level]
                memory.landings += 1
                if not kept_swinging:
                    memory.landed_t = max(memory.landed_t, heard.t_rest_s)
                out.append(Landing(
                    t=heard.t_rest_s, t_decided=drop.due_s, floor=heard.level, cubes=1,
                    confidence=round(_SILENT_CELL_CONFIDENCE * heard.confidence, 3),
                    source="acoustic",
                ))
        return out

    def _kept_swinging(self, drop: HeardDrop) -> bool:
        """Whether the drop's plate swung on by more than a cube while it came (``swinging``).

        Only a cube heard coming down (or onto the top plate), on a plate
        whose cube size is known (its own, or the one the cells agree on).
        """
        level = drop.level
        if not drop.came_down and level < self.n_levels - 1:
            return False
        unit = self.scale.unit(level)
        if unit is None:
            return False
        history = self.load_history
        before = (drop.t_first_s - swinging.BEFORE_S, drop.t_first_s - BEFORE_STRIKE_S)
        rise = history.level_near(level, drop.due_s - swinging.RISE_TAIL_S, drop.due_s) - (
            history.level_near(level, *before)
        )
        return swinging.keeps_swinging(
            history.middle_range(level, *before),
            history.middle_range(level, drop.due_s - swinging.AT_DUE_S, drop.due_s),
            self.scale.cubes(level, rise),
            unit,
        )

    def _cell_still(self, drop: HeardDrop) -> bool:
        """Whether the drop's level's cell stayed within its noise while the drop was heard."""
        level = drop.level
        noise = self.load_history.noise(level, drop.t_first_s - _NOISE_BEFORE_S, drop.t_first_s)
        swing = self.load_history.swing(
            level, drop.t_first_s - BEFORE_STRIKE_S, drop.t_last_s + _SILENT_SWING_AFTER_S
        )
        return bool(
            np.isfinite(noise) and np.isfinite(swing)
            and swing < STILL_SIGMAS * max(noise, _MIN_NOISE_COUNTS)
        )

    def flush(self, now_s: float) -> list[Event]:
        """Decide whatever is still pending at the end of the stream."""
        out = self.advance(
            now_s
            + max(self.hold_s, LONG_GAP_S + self.impact_delay_s, self.lift_gather_s)
        )
        return out

    def _connection(self, conn: LoadConnection) -> list[Event]:
        # Its load is learnt anew when it is back: modules set back shift plates.
        if not conn.connected and np.isfinite(self.accounted[conn.level]):
            self._before_lift[conn.level] = self.accounted[conn.level]
        self.accounted[conn.level] = np.nan
        self._reconnected[conn.level] = True
        self._reconnected_t[conn.level] = conn.t_s if conn.connected else np.inf
        self._dropped_out[conn.level] = conn.connected and conn.level in self.openings.dropped_out
        if self._dropped_out[conn.level]:
            # Its converter stopped answering, no module left the tower: cubes
            # heard striking its plate while it was silent are looked for once
            # it is still again (``_thrown_back_unseen``).
            self._reconnected_t[conn.level] = self.openings.silent_since(conn.level)
        set_down = self._set_down_heard(conn)
        out = self.openings.connection(conn, set_down_s=set_down)
        if set_down is not None and out:
            # Closed: the modules were back from the set-down on.
            np.minimum(self._reconnected_t, set_down, out=self._reconnected_t,
                       where=np.isfinite(self._reconnected_t))
        if not conn.connected:
            # Steps of a lifted level (hands gripping the module) are moot.
            self._pending_steps = [s for s in self._pending_steps if s.level != conn.level]
        return out

    def _reporting(self, deadline_s: float) -> frozenset[int]:
        """Levels whose converters made readings while the lift now deciding was gathered."""
        since = deadline_s - self.lift_gather_s
        return frozenset(
            level for level in range(self.n_levels)
            if level not in self.openings.disconnected and level not in self.openings.dropped_out
            and self.load_history.fresh_readings(level, since, deadline_s) > 0
        )

    def _set_down_heard(self, conn: LoadConnection) -> float | None:
        """When the modules whose last channel came back with ``conn`` were heard set down.

        The first strike heard on the discs of the lifted modules within
        ``_SET_DOWN_LOOKBACK_READINGS`` readings (``_SET_DOWN_LOOKBACK_S``
        at the least) before the channel came back: their discs hear
        nothing while off the tower. None when
        ``conn`` closes no opening or nothing was heard.
        """
        exposed = self.openings.exposed
        if not conn.connected or exposed is None or self.openings.disconnected != {conn.level}:
            return None
        interval = self.load_history.reading_interval_s(conn.t_s)
        if not np.isfinite(interval):
            return None
        start = conn.t_s - max(_SET_DOWN_LOOKBACK_READINGS * interval, _SET_DOWN_LOOKBACK_S)
        lifted = set(range(exposed + 1, self.n_levels))
        heard = [imp.t_s for imp in self._impacts
                 if start <= imp.t_s < conn.t_s and lifted.intersection(imp.channels)]
        return min(heard, default=None)

    def _history_horizon(self, now_s: float) -> float:
        """The clock by which the load history forgets (``LoadHistory.forget_before``).

        While a level lies open, and for ``_OPEN_HISTORY_AFTER_S`` after the
        close, the readings from just before the lift are kept (at most
        ``_OPEN_HISTORY_S``): the settled view decides the cubes taken out
        only when the hands have left, and the grabs are read back from them.
        """
        last = self.openings.last
        if last is None or now_s - last.closed_s > _OPEN_HISTORY_AFTER_S:
            return now_s
        keep_from = last.lifted_s - PRESS_LOOKBACK_S
        return max(now_s - _OPEN_HISTORY_S, min(now_s, keep_from + self.load_history.keep_s))

    def _on_the_beat(self, loud: list[TimedImpact]) -> bool:
        """Whether a drop heard only on the lowest plates kept the beat of those before."""
        if any(top >= TABLE_LEVELS for top in loudest_levels(loud)):
            return False
        return self.table_beat.on_the_beat(loud[0].t_s)

    def _decide_drop(self, now_s: float) -> list[Event]:
        impacts, told, self._drop = self._drop.impacts, self._drop.told, Drop()
        if not impacts:
            return []
        # The disturbances are judged by the strikes heard over the onset
        # threshold; faint strikes tell only where a cube went on to.
        loud = [imp for imp in impacts if not imp.faint]
        last = loud[-1]
        if len(loud) == 1 and len(last.channels) >= DEFAULT_WIDE_IMPACT_CHANNELS:
            # One strike heard through the whole tower and nothing after it:
            # a knock on the table or the tower (a falling cube strikes hole
            # edges and bounces; our noisy sessions: 44 such drops, all knocks).
            return self._disturbance(last.t_s, now_s)
        if knock_on_the_table(loud) or hands_at_the_tower(loud):
            self._on_the_beat(loud)
            return self._disturbance(last.t_s, now_s)
        if self._on_the_beat(loud):
            self.stats.table_beats += 1
            return []
        if late_strike_of(self._heard_rest, loud):
            # The cube just decided, striking its plate once more.
            self.stats.late_strikes += 1
            return []
        # Faint strikes count only where the drop ended with them (the cube
        # went on below every plate heard loud); faint ones before a loud
        # strike were not the cube (a rumble or ringing, read as a second
        # cube by ``heard_landing``).
        went_on = 0
        while impacts[-1 - went_on].faint:
            went_on += 1
        impacts = loud + impacts[len(impacts) - went_on:]
        last = impacts[-1]
        level, confidence, _ = resting_level(self.acoustic, impacts)
        self.acoustic_gap.decided(last.t_s, level)
        self._heard_rest = HeardRest(last.t_s, level, max(float(np.max(imp.peaks)) for imp in loud))
        self.stats.acoustic_landings += 1
        out = not_told(heard_landing(impacts, level, confidence, now_s, second_cube=not told), told)
        self.stats.knockdowns_seen += int(len(out) > 1)
        return out
