"""Fusion: impacts and load changes in, landings and the other events out.

Load evidence decides where cubes are (a lasting step of whole cubes on
exactly one level is a landing, a lasting drop is a removal); piezo
impacts time the landing and teach the acoustic model; when no load
channel can tell (acoustic-only sources) the acoustic model decides.
Disconnected load channels are lifted modules; steps on many levels at
once and tower-wide impacts are disturbances, never landings.

All decisions are taken against the stream clock ``now`` that the caller
advances (:meth:`Fusion.advance`): an event is decided once the data up to
its deadline has been seen, so results do not depend on block sizes.

The decisions are layered, each module a class on the one before:
``base`` (state and shared queries) <- ``hands`` (signs of hands) <-
``landings`` (arrivals and removals) <- ``reweigh`` (suspected stops
weighed once their plate is still) <- ``fastview`` <- ``settledview`` <-
``stream`` (the interface the detector drives).
"""

from dsp.detect.fusion.stream import Fusion

__all__ = ["Fusion"]
