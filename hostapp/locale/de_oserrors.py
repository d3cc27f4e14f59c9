"""German for the operating system's reasons (``OSError.strerror``, C locale).

Read by :func:`hostapp.i18n.os_reason` where an error names why a file or
device could not be used, and by :func:`hostapp.i18n.tr_sentence` for such a
reason inside an English sentence.
"""

MESSAGES = {
    "Permission denied": "Zugriff verweigert",
    "Operation not permitted": "Vorgang nicht erlaubt",
    "No such file or directory": "Datei oder Verzeichnis nicht gefunden",
    "Is a directory": "ist ein Verzeichnis",
    "Not a directory": "ist kein Verzeichnis",
    "File exists": "Datei existiert bereits",
    "Directory not empty": "Verzeichnis nicht leer",
    "No space left on device": "kein Platz mehr auf dem Gerät",
    "Disk quota exceeded": "Speicherkontingent überschritten",
    "Read-only file system": "Dateisystem nur lesbar",
    "Input/output error": "Ein-/Ausgabefehler",
    "Device or resource busy": "Gerät oder Ressource belegt",
    "No such device": "Gerät nicht gefunden",
    "No such device or address": "Gerät oder Adresse nicht gefunden",
    "Too many open files": "zu viele offene Dateien",
    "File name too long": "Dateiname zu lang",
    "Resource temporarily unavailable": "Ressource vorübergehend nicht verfügbar",
}
