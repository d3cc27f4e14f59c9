"""The simulator's one exception: a request the physical tower cannot carry out."""

from __future__ import annotations


class SimulatorError(ValueError):
    """An action the tower cannot do in its present state, or a bad argument.

    ``str(err)`` is one sentence a user understands; the host wraps it into its
    own error family at the boundary (``dsp`` imports nothing from ``hostapp``).
    """
