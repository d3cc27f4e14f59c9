"""Game engines: pure, deterministic rules with no I/O and no Qt.

Each game lives in its own subpackage (``arosa``, ``crimehotel``, ``mugshots``).
An engine takes an event, checks it against the rules and returns a new state
or raises :class:`hostapp.errors.IllegalMoveError`; the crash-proof
:mod:`hostapp.journal` stores the events, so replaying them rebuilds the game.
"""
