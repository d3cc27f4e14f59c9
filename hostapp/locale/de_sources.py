"""German texts of the sources' errors (serial port, audio, replay, simavr, pty)."""

MESSAGES = {
    # serial_port.py
    "no serial ports seen": "keine seriellen Schnittstellen gefunden",
    "ports seen: {ports}": "gefundene Schnittstellen: {ports}",
    "no towerear device found (USB ids {wanted}); {seen}":
        "kein towerear-Gerät gefunden (USB-IDs {wanted}); {seen}",
    # audio.py
    "the audio sample rate must be positive": "die Abtastrate des Audiosignals muss positiv sein",
    "map at least one audio input to a level":
        "mindestens einen Audioeingang einer Ebene zuordnen",
    "each level 0..7 may be mapped from at most one audio input":
        "jeder Ebene 0..7 darf höchstens ein Audioeingang zugeordnet sein",
    "the audio sample rate is too high to be decimated":
        "die Abtastrate des Audiosignals ist zu hoch zum Heruntertakten",
    "the channel map names {n} inputs but the device has {n_inputs}":
        "die Kanalzuordnung nennt {n} Eingänge, das Gerät hat aber {n_inputs}",
    "audio input needs the PortAudio library (libportaudio2)":
        "Audioeingang braucht die PortAudio-Bibliothek (libportaudio2)",
    "cannot list audio devices: {reason}": "Audiogeräte können nicht aufgelistet werden: {reason}",
    "no audio input device found: plug in the audio interface":
        "kein Audioeingang gefunden: das Audio-Interface anschließen",
    "audio input device {device!r} not found": "Audioeingang {device!r} nicht gefunden",
    "cannot open audio input {name!r}: {reason}":
        "Audioeingang {name!r} kann nicht geöffnet werden: {reason}",
    # recording_replay.py
    "replay speed must be 1..{max:g} (or as fast as possible)":
        "die Wiedergabegeschwindigkeit muss 1..{max:g} sein (oder so schnell wie möglich)",
    "recording {path} cannot be opened: {reason}":
        "die Aufnahme {path} kann nicht geöffnet werden: {reason}",
    "recording {path} is empty": "die Aufnahme {path} ist leer",
    "replay finished": "Wiedergabe beendet",
    # pty_server.py
    "cannot create a pseudo-terminal: {reason}":
        "es kann kein Pseudoterminal angelegt werden: {reason}",
    # simavr.py
    "building the firmware needs {tool!r}; run tools/setup.sh to install the AVR "
    "toolchain and simavr":
        "zum Bauen der Firmware wird {tool!r} gebraucht; tools/setup.sh ausführen, um die "
        "AVR-Toolchain und simavr zu installieren",
    "no firmware sources in {path}": "keine Firmware-Quellen in {path}",
    "make exited with {code}": "make endete mit {code}",
    "the firmware build failed: {reason}": "das Bauen der Firmware schlug fehl: {reason}",
    "the simavr harness did not finish {duration:g} s in time":
        "die simavr-Umgebung hat {duration:g} s Simulation nicht rechtzeitig beendet",
    "cannot run the simavr harness: {reason}":
        "die simavr-Umgebung kann nicht ausgeführt werden: {reason}",
    "exit status {code}": "Exit-Status {code}",
    "the simavr harness failed: {reason}": "die simavr-Umgebung schlug fehl: {reason}",
    "cannot start the simavr harness: {reason}":
        "die simavr-Umgebung kann nicht gestartet werden: {reason}",
    "the simavr harness is not running": "die simavr-Umgebung läuft nicht",
    "the simavr harness stopped: {reason}": "die simavr-Umgebung wurde beendet: {reason}",
    "no reason given": "ohne Angabe eines Grundes",
    # errors of the app's source handling that arrive as English sentences
    # (translated at the UI boundary by hostapp.i18n.tr_sentence)
    "choose a recording file to replay": "eine Aufnahmedatei zur Wiedergabe wählen",
    "no source is streaming, so there is nothing to record":
        "keine Quelle liefert Daten, es gibt also nichts aufzunehmen",
    "cannot create the recording {path}: {reason}":
        "die Aufnahme {path} kann nicht angelegt werden: {reason}",
}
