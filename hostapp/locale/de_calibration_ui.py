"""German texts of the calibration wizard page."""

MESSAGES = {
    "Waiting for a device ...": "Warte auf ein Gerät ...",
    "Set-up": "Einrichtung",
    "Levels:": "Ebenen:",
    "Reference mass:": "Referenzmasse:",
    "Second mass (linearity):": "Zweite Masse (Linearität):",
    "Cubes to weigh per level:": "Zu wiegende Würfel je Ebene:",
    "Let a simulated user do the handwork":
        "Einen simulierten Benutzer die Handgriffe machen lassen",
    "&Start calibration": "Kalibrierung &starten",
    "&Abort": "&Abbrechen",
    "&Health check": "&Zustandsprüfung",
    "Write &report": "&Bericht schreiben",
    "E&xport profile ...": "Profil e&xportieren ...",
    "&Import profile ...": "Profil &importieren ...",
    "Choose the levels and the reference mass, then start.":
        "Ebenen und Referenzmasse wählen, dann starten.",
    "typed mass": "eingegebene Masse",
    "Device {device}: {why}": "Gerät {device}: {why}",
    "Device {device}: calibrated {when}.": "Gerät {device}: kalibriert am {when}.",
    "Calibration aborted; the previous profile is unchanged.":
        "Kalibrierung abgebrochen; das bisherige Profil ist unverändert.",
    "Saved to {path}.": "Gespeichert in {path}.",
    "Listening to the quiet tower ...": "Höre dem ruhigen Turm zu ...",
    "Report written to {path}.": "Bericht geschrieben nach {path}.",
    "Exported to {path}.": "Exportiert nach {path}.",
    "Imported {path}.": "{path} importiert.",
    "Export profile": "Profil exportieren",
    "Import profile": "Profil importieren",
    "Calibrate level {level}": "Ebene {level} kalibrieren",
    "Level {level}": "Ebene {level}",
    "Health check:": "Zustandsprüfung:",
    "none": "keine",
    "No device is streaming: connect one or choose the simulated tower in the source bar.":
        "Kein Gerät sendet Daten: eines anschließen oder in der Quellenleiste den "
        "simulierten Turm wählen.",
    "No device is streaming, so there is nothing to check.":
        "Kein Gerät sendet Daten, also gibt es nichts zu prüfen.",
    "No load readings arrived: is the device streaming?":
        "Es kamen keine Gewichtswerte an: sendet das Gerät?",
    "This device has no calibration yet: calibrate first.":
        "Dieses Gerät ist noch nicht kalibriert: zuerst kalibrieren.",
    "Connect the device first: a profile belongs to one device.":
        "Zuerst das Gerät anschließen: ein Profil gehört zu genau einem Gerät.",
    "The profile could not be saved: {why}": "Das Profil konnte nicht gespeichert werden: {why}",
    "pass": "bestanden",
    "fail: ": "nicht bestanden: ",
    "load cell not calibrated": "Wägezelle nicht kalibriert",
    "scale uncertain (readings unsteady)": "Skala unsicher (Messwerte unruhig)",
    "noise {noise} g above {limit} g": "Rauschen {noise} g über {limit} g",
    "one cube only {snr}x the noise": "ein Würfel nur {snr}-mal das Rauschen",
    "nonlinear by {error} %": "nichtlinear um {error} %",
    "acoustic detection {rate} %": "akustische Erkennung {rate} %",
    "counts/g": "Counts/g",
    "noise g": "Rauschen g",
    "drift g/min": "Drift g/min",
    "linearity %": "Linearität %",
    "cube g": "Würfel g",
    "grade": "Bewertung",
}
