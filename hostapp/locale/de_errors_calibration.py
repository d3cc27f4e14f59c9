"""German texts of the calibration layer's errors (profiles, sessions, files)."""

MESSAGES = {
    # profile.py: reading and checking a profile
    "profile": "das Profil",
    "calibration profile {path}": "das Kalibrierprofil {path}",
    "profile field {where} must be a finite number, not {value!r}":
        "das Profilfeld {where} muss eine endliche Zahl sein, nicht {value!r}",
    "profile field {where} must be positive, not {value!r}":
        "das Profilfeld {where} muss positiv sein, nicht {value!r}",
    "profile entry load[{level}] must be an object or null":
        "der Profileintrag load[{level}] muss ein Objekt oder null sein",
    "profile entry {where} lacks the field {field}":
        "dem Profileintrag {where} fehlt das Feld {field}",
    "profile field {where} must be a whole number, not {value!r}":
        "das Profilfeld {where} muss eine ganze Zahl sein, nicht {value!r}",
    "profile entry {where} must be {shape}": "der Profileintrag {where} muss {shape} enthalten",
    "{n} rows of {n} numbers": "{n} Zeilen mit je {n} Zahlen",
    "{n} numbers": "{n} Zahlen",
    "profile entry acoustic must be an object or null":
        "der Profileintrag acoustic muss ein Objekt oder null sein",
    "profile entry acoustic lacks the field {field}":
        "dem Profileintrag acoustic fehlt das Feld {field}",
    "{source} is not a calibration profile (not a JSON object)":
        "{source} ist kein Kalibrierprofil (kein JSON-Objekt)",
    "{source} has schema version {version!r}; this towerear reads version "
    "{expected}: calibrate again":
        "{source} hat die Schemaversion {version!r}; dieses towerear liest Version "
        "{expected}: bitte neu kalibrieren",
    "{source} names no valid device_id (16 hex digits)":
        "{source} nennt keine gültige device_id (16 Hexadezimalziffern)",
    "{source} has a malformed device_id or date":
        "{source} hat eine fehlerhafte device_id oder ein fehlerhaftes Datum",
    "{source} must list the load cells of all {n} levels":
        "{source} muss die Wägezellen aller {n} Ebenen aufführen",
    "no calibration profile at {path}": "kein Kalibrierprofil unter {path}",
    "cannot read calibration profile {path}: {reason}":
        "das Kalibrierprofil {path} kann nicht gelesen werden: {reason}",
    "calibration profile {path} is not a profile (not text: a recording, perhaps?)":
        "das Kalibrierprofil {path} ist kein Profil (kein Text: vielleicht eine Aufnahme?)",
    "calibration profile {path} is corrupt (invalid JSON at line {line})":
        "das Kalibrierprofil {path} ist beschädigt (ungültiges JSON in Zeile {line})",
    "the profile stored for device {device_id} belongs to device {owner}":
        "das für Gerät {device_id} gespeicherte Profil gehört zu Gerät {owner}",
    "{reason}; running uncalibrated": "{reason}; die Erkennung läuft unkalibriert",
    "{source} was made for device {owner}, not for the connected "
    "device {device_id}; nothing was changed":
        "{source} wurde für Gerät {owner} erstellt, nicht für das angeschlossene "
        "Gerät {device_id}; nichts wurde geändert",
    # tower_session.py, load_session.py, simulated.py
    "choose a reference mass (a coin or a typed mass) first":
        "zuerst ein Referenzgewicht wählen (eine Münze oder eine eingegebene Masse)",
    "choose at least one level to calibrate": "mindestens eine Ebene zum Kalibrieren wählen",
    "the previous profile belongs to device {owner}, not {device_id}":
        "das bisherige Profil gehört zu Gerät {owner}, nicht zu {device_id}",
    "the calibration stopped at level {level}; the previous profile is unchanged":
        "die Kalibrierung brach bei Ebene {level} ab; das bisherige Profil bleibt unverändert",
    "no empty-plate reading yet": "noch keine Messung der leeren Platte",
    "the calibration of level {level} is not finished; nothing was saved":
        "die Kalibrierung von Ebene {level} ist nicht abgeschlossen; nichts wurde gespeichert",
    "the simulated calibration of tower {seed} did not finish":
        "die simulierte Kalibrierung von Turm {seed} wurde nicht fertig",
    "a reference mass of {grams} g is outside 0.5-90 g (the cell holds ~100 g)":
        "ein Referenzgewicht von {grams} g liegt außerhalb von 0,5-90 g "
        "(die Wägezelle trägt etwa 100 g)",
    # detector_bridge.py, report.py
    "no calibration file at {path}": "keine Kalibrierdatei unter {path}",
    "calibration file {path} is not readable JSON":
        "die Kalibrierdatei {path} ist kein lesbares JSON",
    "calibration file {path} is not valid: {reason}":
        "die Kalibrierdatei {path} ist ungültig: {reason}",
    "cannot write the calibration report into {directory}: {reason}":
        "der Kalibrierbericht kann nicht in {directory} geschrieben werden: {reason}",
}
