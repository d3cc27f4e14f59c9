"""Calibration profiles: one versioned JSON file per device, validated on load.

A profile belongs to the device whose HELLO ``device_id`` it names. It is
written atomically (temporary file, fsync, rename), so a crash or an aborted
calibration leaves the previous profile intact. Loading checks every field and
turns any problem into one :class:`~hostapp.errors.CalibrationError` sentence;
:meth:`ProfileStore.load_for_device` turns that into a fallback to
uncalibrated operation with the reason, never a crash.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hostapp.errors import CalibrationError
from hostapp.i18n import os_reason, tr
from hostapp.paths import config_dir

SCHEMA_VERSION = 1
N_LEVELS = 8
# A profile older than this is flagged by the health check (cells creep and
# cardboard settles; a month is a season of play).
STALE_AFTER_DAYS = 30


@dataclass(frozen=True)
class LoadCellProfile:
    """What calibration learned about one level's load cell."""

    offset_counts: float
    counts_per_gram: float
    counts_per_gram_uncertainty: float
    noise_g_rms: float
    drift_g_per_min: float
    linearity_error_pct: float | None = None
    cube_mass_g: float | None = None
    cube_mass_uncertainty_g: float | None = None


@dataclass(frozen=True)
class AcousticProfile:
    """What the acoustic session learned: per-level signatures and crosstalk.

    ``signatures[k]`` is level k's mean normalised energy pattern across the
    eight piezos for a cube landing on level k (the crosstalk row), so the
    matrix ``signatures`` is the crosstalk model; ``detection_rate[k]`` is the
    share of test drops on level k that the acoustic model placed right.
    """

    signatures: list[list[float]]
    detection_rate: list[float]
    confusion: list[list[int]]
    drops_per_level: int


@dataclass(frozen=True)
class CalibrationProfile:
    """A device's calibration: load cells per level and the acoustic model."""

    device_id: str
    created_utc: str
    load: list[LoadCellProfile | None] = field(default_factory=lambda: [None] * N_LEVELS)
    acoustic: AcousticProfile | None = None
    schema_version: int = SCHEMA_VERSION

    def with_load(self, level: int, cell: LoadCellProfile) -> CalibrationProfile:
        """A copy with one level's load-cell calibration replaced."""
        load = list(self.load)
        load[level] = cell
        return replace(self, load=load, created_utc=now_utc())

    def cube_mass_g(self) -> float | None:
        """The cube mass learned on any level (the mean of those that learned one)."""
        masses = [c.cube_mass_g for c in self.load if c is not None and c.cube_mass_g]
        return sum(masses) / len(masses) if masses else None

    def age_days(self, now: datetime | None = None) -> float:
        """Days since the profile was last written."""
        created = datetime.fromisoformat(self.created_utc)
        return ((now or datetime.now(UTC)) - created).total_seconds() / 86400.0

    def to_json(self) -> dict[str, Any]:
        """The profile as a JSON-ready dict."""
        return asdict(self)


def now_utc() -> str:
    """The current UTC time in ISO 8601, as stored in profiles."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _number(value: Any, where: str, *, positive: bool = False, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CalibrationError(
            tr("profile field {where} must be a finite number, not {value!r}",
               where=where, value=value)
        )
    if positive and value <= 0:
        raise CalibrationError(
            tr("profile field {where} must be positive, not {value!r}", where=where, value=value)
        )
    return float(value)


def _load_cell(raw: Any, level: int) -> LoadCellProfile | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise CalibrationError(
            tr("profile entry load[{level}] must be an object or null", level=level)
        )
    where = f"load[{level}]"
    try:
        return LoadCellProfile(
            offset_counts=_number(raw["offset_counts"], f"{where}.offset_counts"),
            counts_per_gram=_number(raw["counts_per_gram"], f"{where}.counts_per_gram"),
            counts_per_gram_uncertainty=_number(
                raw["counts_per_gram_uncertainty"], f"{where}.counts_per_gram_uncertainty"
            ),
            noise_g_rms=_number(raw["noise_g_rms"], f"{where}.noise_g_rms"),
            drift_g_per_min=_number(raw["drift_g_per_min"], f"{where}.drift_g_per_min"),
            linearity_error_pct=_number(
                raw.get("linearity_error_pct"), f"{where}.linearity_error_pct", optional=True
            ),
            cube_mass_g=_number(
                raw.get("cube_mass_g"), f"{where}.cube_mass_g", positive=True, optional=True
            ),
            cube_mass_uncertainty_g=_number(
                raw.get("cube_mass_uncertainty_g"), f"{where}.cube_mass_uncertainty_g",
                optional=True,
            ),
        )
    except KeyError as exc:
        raise CalibrationError(
            tr("profile entry {where} lacks the field {field}", where=where, field=exc.args[0])
        ) from exc


def _count(value: Any, where: str) -> int:
    """A whole, non-negative number (a JSON integer, or a float with no fraction)."""
    number = _number(value, where)
    if number is None or number < 0 or number != int(number):
        raise CalibrationError(
            tr("profile field {where} must be a whole number, not {value!r}",
               where=where, value=value)
        )
    return int(number)


def _list(raw: Any, length: int, where: str, shape: str) -> list[Any]:
    """``raw`` as a list of ``length`` items, or one sentence naming the ``shape`` it must have."""
    if not isinstance(raw, list) or len(raw) != length:
        raise CalibrationError(
            tr("profile entry {where} must be {shape}", where=where, shape=shape)
        )
    return raw


def _table(raw: Any, where: str) -> list[list[Any]]:
    """``raw`` as one row per level, each of one value per level."""
    shape = tr("{n} rows of {n} numbers", n=N_LEVELS)
    return [_list(row, N_LEVELS, where, shape) for row in _list(raw, N_LEVELS, where, shape)]


def _acoustic(raw: Any) -> AcousticProfile | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise CalibrationError(tr("profile entry acoustic must be an object or null"))
    missing = [k for k in ("signatures", "detection_rate", "confusion", "drops_per_level")
               if k not in raw]
    if missing:
        raise CalibrationError(
            tr("profile entry acoustic lacks the field {field}", field=missing[0])
        )
    signatures = [
        [_number(v, "acoustic.signatures") for v in row]
        for row in _table(raw["signatures"], "acoustic.signatures")
    ]
    rate = [
        _number(v, "acoustic.detection_rate")
        for v in _list(raw["detection_rate"], N_LEVELS, "acoustic.detection_rate",
                       tr("{n} numbers", n=N_LEVELS))
    ]
    confusion = [
        [_count(v, "acoustic.confusion") for v in row]
        for row in _table(raw["confusion"], "acoustic.confusion")
    ]
    drops = _count(raw["drops_per_level"], "acoustic.drops_per_level")
    return AcousticProfile(signatures, rate, confusion, drops)


def profile_from_json(data: Any, *, source: str = "profile") -> CalibrationProfile:
    """Validate a decoded JSON document and build the profile from it."""
    source = tr(source)  # the default "profile" in the user's language
    if not isinstance(data, dict):
        raise CalibrationError(
            tr("{source} is not a calibration profile (not a JSON object)", source=source)
        )
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise CalibrationError(
            tr(
                "{source} has schema version {version!r}; this towerear reads version "
                "{expected}: calibrate again",
                source=source,
                version=version,
                expected=SCHEMA_VERSION,
            )
        )
    device_id = data.get("device_id")
    if not isinstance(device_id, str) or len(device_id) != 16:
        raise CalibrationError(
            tr("{source} names no valid device_id (16 hex digits)", source=source)
        )
    try:
        bytes.fromhex(device_id)
        datetime.fromisoformat(str(data.get("created_utc")))
    except ValueError as exc:
        raise CalibrationError(
            tr("{source} has a malformed device_id or date", source=source)
        ) from exc
    load = data.get("load")
    if not isinstance(load, list) or len(load) != N_LEVELS:
        raise CalibrationError(
            tr("{source} must list the load cells of all {n} levels", source=source, n=N_LEVELS)
        )
    return CalibrationProfile(
        device_id=device_id.lower(),
        created_utc=str(data["created_utc"]),
        load=[_load_cell(raw, level) for level, raw in enumerate(load)],
        acoustic=_acoustic(data.get("acoustic")),
    )


def read_profile(path: Path) -> CalibrationProfile:
    """Read and validate a profile file; one sentence on any problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CalibrationError(tr("no calibration profile at {path}", path=path)) from exc
    except OSError as exc:
        raise CalibrationError(
            tr("cannot read calibration profile {path}: {reason}", path=path, reason=os_reason(exc))
        ) from exc
    except UnicodeDecodeError as exc:
        raise CalibrationError(
            tr(
                "calibration profile {path} is not a profile (not text: a recording, perhaps?)",
                path=path,
            )
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(
            tr(
                "calibration profile {path} is corrupt (invalid JSON at line {line})",
                path=path,
                line=exc.lineno,
            )
        ) from exc
    return profile_from_json(data, source=tr("calibration profile {path}", path=path))


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves either the old or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class ProfileStore:
    """The profiles of all devices, one file each, in the user's config directory."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory else config_dir() / "profiles"

    def path_for(self, device_id: str) -> Path:
        """Where the profile of ``device_id`` (16 hex digits) lives."""
        return self.directory / f"{device_id.lower()}.json"

    def save(self, profile: CalibrationProfile) -> Path:
        """Write a profile atomically; return its path."""
        path = self.path_for(profile.device_id)
        write_atomically(path, json.dumps(profile.to_json(), indent=2) + "\n")
        return path

    def load(self, device_id: str) -> CalibrationProfile:
        """The profile of a device; :class:`CalibrationError` if missing or invalid."""
        profile = read_profile(self.path_for(device_id))
        if profile.device_id != device_id.lower():
            raise CalibrationError(
                tr(
                    "the profile stored for device {device_id} belongs to device {owner}",
                    device_id=device_id,
                    owner=profile.device_id,
                )
            )
        return profile

    def load_for_device(self, device_id: str) -> tuple[CalibrationProfile | None, str | None]:
        """The profile, or ``None`` and the sentence saying why detection runs uncalibrated."""
        try:
            return self.load(device_id), None
        except CalibrationError as exc:
            return None, tr("{reason}; running uncalibrated", reason=exc)

    def export(self, device_id: str, destination: Path) -> Path:
        """Copy a device's profile to ``destination`` (validated on the way)."""
        profile = self.load(device_id)
        write_atomically(Path(destination), json.dumps(profile.to_json(), indent=2) + "\n")
        return Path(destination)

    def import_file(self, source: Path, *, device_id: str | None = None) -> CalibrationProfile:
        """Import a profile file; refuse one made for another device than ``device_id``."""
        profile = read_profile(Path(source))
        if device_id is not None and profile.device_id != device_id.lower():
            raise CalibrationError(
                tr(
                    "{source} was made for device {owner}, not for the connected "
                    "device {device_id}; nothing was changed",
                    source=source,
                    owner=profile.device_id,
                    device_id=device_id.lower(),
                )
            )
        self.save(profile)
        return profile

    def device_ids(self) -> list[str]:
        """Devices that have a profile file (valid or not)."""
        if not self.directory.exists():
            return []
        return sorted(p.stem for p in self.directory.glob("*.json"))
