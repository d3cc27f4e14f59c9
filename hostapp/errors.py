"""The host application's exception family.

Every error that can reach a user is a :class:`TowerearError` whose message is
one sentence saying what is wrong; the CLI prints it on one line and exits 2,
the UI shows it in a dialog. Raise these at the boundary, chained from the
cause (``raise RecordingError("...") from exc``).
"""


class TowerearError(Exception):
    """Base of every user-facing error; ``str(err)`` is one clear sentence."""


class RecordingError(TowerearError):
    """A recording file cannot be read or used."""


class SourceError(TowerearError):
    """A sensor source (serial port, audio device, simulator) failed."""


class ScriptError(TowerearError):
    """A game script or saved game is not valid."""


class IllegalMoveError(TowerearError):
    """A game action breaks a rule; the message names the rule."""


class CalibrationError(TowerearError):
    """A calibration profile is missing, corrupt or belongs to another device."""


class JournalError(TowerearError):
    """A game journal cannot be opened or written."""
