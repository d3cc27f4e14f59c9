"""What the app believes lies in the tower: the rules engine's :class:`TowerModel`, fed.

The controller tells :class:`TowerBelief` each throw with the detections
that came with it (the thrown cube's landing, and any knock-down: a removal
on one level with a landing lower down), and each confirmed level. The
model's proposal for an opened level fills the confirmation panel.

The model is not journalled: after a resume or an undo it is rebuilt from
the journalled events, each throw taken at its recorded floor and each
confirmation as the truth. Detection detail from before is lost then, which
only makes the first proposals after a resume a little less informed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dsp.detect import events as detected
from hostapp.games import arosa
from hostapp.games.arosa import tower_model as tm


def _as_detection(event: object) -> tm.Detection | None:
    if isinstance(event, detected.Landing):
        return tm.Landing(
            event.t, event.floor, event.cubes, event.confidence,
            maybe_stopped_on=event.maybe_stopped_on, stop_chance=event.stop_chance,
        )
    if isinstance(event, detected.Removal):
        return tm.Removal(event.t, event.floor, event.cubes, event.confidence)
    return None


class TowerBelief:
    """The tower model and the detections waiting to be bound to the next throw."""

    def __init__(self) -> None:
        self.model = tm.TowerModel()
        self._pending: list[tm.Detection] = []

    def note(self, event: object) -> None:
        """A removal or a knocked-down cube's landing, seen while the tower was closed."""
        detection = _as_detection(event)
        if detection is not None:
            self._pending.append(detection)

    def thrown(self, colour: str, landing: object | None, floor: int) -> None:
        """A ``colour`` cube came to rest on ``floor`` (detected, or entered by hand)."""
        detection = _as_detection(landing) if landing is not None else None
        if not isinstance(detection, tm.Landing):
            detection = tm.Landing(t=0.0, floor=floor, cubes=1, confidence=1.0)
        else:
            # a multi-cube landing is bound to one throw at a time
            detection = tm.Landing(
                detection.t, floor, 1, detection.confidence,
                maybe_stopped_on=detection.maybe_stopped_on if floor == detection.floor else None,
                stop_chance=detection.stop_chance,
            )
        self.model.throw(colour, [*self._pending, detection])
        self._pending = []

    def stop_weighed(self, event: detected.Landing) -> None:
        """The detector told late that the last suspected stop on ``event.floor`` was one."""
        if event.knocked_down_to is not None:
            self.model.stop_weighed(event.floor, event.knocked_down_to, event.confidence)

    def confirmed(self, floor: int, found: Mapping[str, int]) -> None:
        """The players saw ``found`` on ``floor``; the cubes are taken out."""
        self.model.confirm(floor, found, take_out=True)
        self._pending = []

    def propose(self, floor: int, colours: Sequence[str]) -> dict[str, int]:
        """``{colour: cubes}`` the model expects on ``floor``, every colour listed."""
        counts = self.model.propose(floor).counts
        return {c: int(counts.get(c, 0)) for c in colours}

    @classmethod
    def from_events(cls, events: Iterable[arosa.Event]) -> TowerBelief:
        """Rebuild the belief from journalled events (after a resume or an undo)."""
        belief = cls()
        for event in events:
            if isinstance(event, arosa.Throw):
                belief.thrown(event.color, None, event.floor)
            elif event.found is not None:
                belief.confirmed(event.floor, event.found)
        return belief
