"""German texts of the desktop app's window, source bar, live view and Mord im Arosa screens."""

MESSAGES = {
    "The contact microphone of level {level} hears about {db:.0f} dB more than the others: "
    "landings are heard as if it did not, but check its amplifier's gain.":
        "Das Kontaktmikrofon von Ebene {level} hört etwa {db:.0f} dB mehr als die anderen: "
        "Landungen werden gehört, als täte es das nicht, aber prüfe die Verstärkung seines "
        "Verstärkers.",
    "The contact microphone of level {level} hears about {db:.0f} dB less than the others: "
    "landings are heard as if it did not, but check its glue and its amplifier's gain.":
        "Das Kontaktmikrofon von Ebene {level} hört etwa {db:.0f} dB weniger als die anderen: "
        "Landungen werden gehört, als täte es das nicht, aber prüfe seine Klebung und die "
        "Verstärkung seines Verstärkers.",
    "The contact microphones pick up mains hum ({hz} Hz): it is filtered out, but faint "
    "landings may be missed. A ground loop: try another USB port or unplug chargers near "
    "the tower.":
        "Die Kontaktmikrofone fangen Netzbrummen auf ({hz} Hz): es wird herausgefiltert, aber "
        "leise Landungen können verloren gehen. Eine Brummschleife: versuche einen anderen "
        "USB-Anschluss oder zieh Ladegeräte in der Nähe des Turms ab.",
    "The tower shakes with what it stands on (a moving train or boat, a machine nearby): "
    "the shaking, the same on every load cell, is taken out of their readings. Faint "
    "landings may still be missed; a felt pad under the tower helps.":
        "Der Turm wird von seiner Unterlage geschüttelt (ein fahrender Zug oder ein Schiff, "
        "eine Maschine in der Nähe): das Schütteln, auf allen Wägezellen gleich, wird aus "
        "ihren Messwerten herausgerechnet. Leise Landungen können trotzdem verloren gehen; "
        "eine Filzunterlage unter dem Turm hilft.",
    "The tower rocks on its table (about {hz:.1f} times a second): landings come late "
    "or are missed while it does. Stand it on a firm, heavy table with a felt pad under it.":
        "Der Turm schaukelt auf seinem Tisch (etwa {hz:.1f}-mal pro Sekunde): Landungen "
        "kommen spät oder gehen verloren, solange er das tut. Stell ihn auf einen festen, "
        "schweren Tisch mit einer Filzunterlage.",
    "The contact microphones of levels {levels} hear none of their plates' landings. "
    "Check their wires and glue.":
        "Die Kontaktmikrofone der Ebenen {levels} hören keine Landung auf ihren Böden. "
        "Prüfe Drähte und Klebung.",
    "The contact microphone of level {levels} hears none of its plate's landings. "
    "Check its wire and glue.":
        "Das Kontaktmikrofon von Ebene {levels} hört keine Landung auf seinem Boden. "
        "Prüfe Draht und Klebung.",
    "The load cell of level {levels} stopped answering now and then with no module lifted. "
    "Check its solder joints and its wire.":
        "Die Wägezelle von Ebene {levels} hat ab und zu nicht geantwortet, ohne dass ein Modul "
        "abgehoben war. Prüfe ihre Lötstellen und ihren Draht.",
    "The load cells of levels {levels} stopped answering now and then with no module lifted. "
    "Check their solder joints and their wires.":
        "Die Wägezellen der Ebenen {levels} haben ab und zu nicht geantwortet, ohne dass ein "
        "Modul abgehoben war. Prüfe ihre Lötstellen und Drähte.",
    "The load cells of levels {levels} read nothing: cubes landing there are only heard. "
    "Check their wires.":
        "Die Wägezellen der Ebenen {levels} lesen nichts: Würfel, die dort landen, werden "
        "nur gehört. Prüfe ihre Drähte.",
    "The load cell of level {levels} reads nothing: cubes landing there are only heard. "
    "Check its wires.":
        "Die Wägezelle von Ebene {levels} liest nichts: Würfel, die dort landen, werden nur "
        "gehört. Prüfe ihre Drähte.",
    # window and menus
    "towerear": "towerear",
    "&File": "&Datei",
    "&Quit": "&Beenden",
    "&View": "&Ansicht",
    "&Language": "&Sprache",
    "Mord im Arosa": "Mord im Arosa",
    "Live view": "Live-Ansicht",
    "Calibration": "Kalibrierung",
    "Crime Hotel": "Crime Hotel",
    "Mugshots": "Fahndungsfotos",
    "Calibration: run 'towerear calibrate' in a terminal for the guided procedure.": (
        "Kalibrierung: Für die geführte Kalibrierung 'towerear calibrate' in einem"
        " Terminal starten."
    ),
    "Crime Hotel is not installed.": "Crime Hotel ist nicht installiert.",
    "Mugshots is not installed.": "Fahndungsfotos ist nicht installiert.",
    "Something went wrong inside towerear; the details are in {where}.": (
        "In towerear ist etwas schiefgegangen; die Einzelheiten stehen in {where}."
    ),
    "the terminal": "dem Terminal",
    # source bar
    "Simulated tower": "Simulierter Turm",
    "Sensor device (USB)": "Sensorgerät (USB)",
    "Firmware in simavr": "Firmware in simavr",
    "Audio interface": "Audio-Interface",
    "Recording replay": "Aufnahme abspielen",
    "USB device": "USB-Gerät",
    "firmware in simavr": "Firmware in simavr",
    "audio interface": "Audio-Interface",
    "audio interface {device}": "Audio-Interface {device}",
    "simulated tower {seed}": "simulierter Turm {seed}",
    "recording {file}": "Aufnahme {file}",
    "in process": "im Programm",
    "connected": "verbunden",
    "NOT CONNECTED - reconnecting": "NICHT VERBUNDEN - verbinde neu",
    "firmware {version}": "Firmware {version}",
    "{rate:.0f} msg/s \u2022 lost {lost} \u2022 CRC errors {crc} \u2022 overruns {over}"
    " \u2022 reconnects {rec}": (
        "{rate:.0f}/s \u2022 verloren {lost} \u2022 CRC {crc} \u2022 Überlauf {over}"
        " \u2022 neu verbunden {rec}"
    ),
    "Source": "Quelle",
    "Source:": "Quelle:",
    "Replay speed": "Abspielgeschwindigkeit",
    "no source": "keine Quelle",
    "\u25cf Recor&d": "\u25cf Aufnehmen (&d)",
    "Save the raw stream as a recording file": "Den Rohdatenstrom als Aufnahmedatei speichern",
    "Open a recording": "Aufnahme öffnen",
    "Recordings (*.bin)": "Aufnahmen (*.bin)",
    # simulated tower controls
    "Simulated tower:": "Simulierter Turm:",
    "Throw a cube": "Würfel werfen",
    "Level to open": "Zu öffnende Ebene",
    "Lift above level": "Über Ebene anheben",
    "Take cubes out": "Würfel herausnehmen",
    "Close the tower": "Turm schließen",
    "Throw back what was taken out": "Herausgenommene zurückwerfen",
    "Lift the tower first: no level is open.": "Erst den Turm anheben: keine Ebene ist offen.",
    # colours
    "yellow": "gelb",
    "blue": "blau",
    "brown": "braun",
    "gray": "grau",
    "black": "schwarz",
    "white": "weiß",
    "red": "rot",
    "Ye": "Ge",
    "Bu": "Bl",
    "Br": "Br",
    "Gy": "Gr",
    "Bk": "Sw",
    "Wh": "Ws",
    "Re": "Ro",
    # live view
    "The live view is locked during a game: the sensor traces would show where the"
    " cubes landed.": (
        "Die Live-Ansicht ist während eines Spiels gesperrt: Die Sensorkurven würden"
        " zeigen, wo die Würfel gelandet sind."
    ),
    "&Unlock the live view...": "Live-Ansicht &entsperren ...",
    "Unlock the live view?": "Live-Ansicht entsperren?",
    "Everyone at the table will be able to see where cubes landed. The unlock is written"
    " into the game journal. Unlock?": (
        "Alle am Tisch können dann sehen, wo Würfel gelandet sind. Das Entsperren wird"
        " im Spielprotokoll vermerkt. Entsperren?"
    ),
    "Detected events": "Erkannte Ereignisse",
    "Levels": "Ebenen",
    "L{level}": "E{level}",
    "Level {level}: connected": "Ebene {level}: verbunden",
    "Level {level}: lifted / no signal": "Ebene {level}: angehoben / kein Signal",
    "Piezo (ADC codes)": "Piezo (ADC-Werte)",
    "Piezo (±{codes} ADC codes)": "Piezo (±{codes} ADC-Werte)",
    "{cubes} cubes landed on floor {floor} ({sure} % sure)":
        "{cubes} Würfel auf Ebene {floor} gelandet ({sure} % sicher)",
    "a cube landed on floor {floor} ({sure} % sure)":
        "Würfel auf Ebene {floor} gelandet ({sure} % sicher)",
    "{cubes} cubes left floor {floor} ({sure} % sure)":
        "{cubes} Würfel von Ebene {floor} weg ({sure} % sicher)",
    "a cube left floor {floor} ({sure} % sure)":
        "Würfel von Ebene {floor} weg ({sure} % sicher)",
    "heard only": "nur gehört",
    "knocked down from floor {floor}": "von Ebene {floor} heruntergestoßen",
    "knocked down": "heruntergestoßen",
    "perhaps knocked down from floor {floor}": "vielleicht von Ebene {floor} heruntergestoßen",
    "the thrown cube stopped here and knocked the one on floor {floor} down":
        "der geworfene Würfel blieb hier liegen und stieß den auf Ebene {floor} hinunter",
    "the tower was opened: level {level} lies open":
        "der Turm wurde geöffnet: Ebene {level} liegt offen",
    "the tower was closed": "der Turm wurde geschlossen",
    "a disturbance (not a landing)": "eine Störung (keine Landung)",
    "Load": "Last",
    "g": "g",
    "counts": "Counts",
    # Mord im Arosa: start and setup
    "The app calls out every throw, listens for the landing and keeps the investigation"
    " sheet. It never tells where a cube landed.": (
        "Die App sagt jeden Wurf an, hört auf die Landung und führt den Ermittlungsbogen."
        " Sie verrät nie, wo ein Würfel gelandet ist."
    ),
    "&New game": "&Neues Spiel",
    "Games to resume:": "Spiele zum Fortsetzen:",
    "Games to resume": "Spiele zum Fortsetzen",
    "&Resume the selected game": "Gewähltes Spiel &fortsetzen",
    "{when} UTC \u2022 {names} \u2022 {n} steps": "{when} UTC \u2022 {names} \u2022 {n} Schritte",
    "New game of Mord im Arosa": "Neues Spiel Mord im Arosa",
    "Click the players' colours in seating order, clockwise, starting with the first"
    " investigator (2 to 6 players). Click again to remove.": (
        "Die Farben der Spieler in Sitzreihenfolge im Uhrzeigersinn anklicken, beginnend"
        " mit dem ersten Ermittler (2 bis 6 Spieler). Erneut klicken entfernt sie."
    ),
    "&Who throws the victims (last to hold a knife)?": (
        "&Wer wirft die Opfer (wer zuletzt ein Messer in der Hand hatte)?"
    ),
    "&Sensors hear the landings": "&Sensoren hören die Landungen",
    "&Manual: enter each landing by hand (no sensors)": (
        "&Manuell: jede Landung von Hand eingeben (ohne Sensoren)"
    ),
    "S&tart the game": "Spiel s&tarten",
    "&Back": "&Zurück",
    "Seating (clockwise): {order}": "Sitzreihenfolge (im Uhrzeigersinn): {order}",
    "No players chosen yet.": "Noch keine Spieler gewählt.",
    # Mord im Arosa: play
    "{who}: throw a victim": "{who}: wirf ein Opfer",
    "The victims' thrower": "Wer die Opfer wirft",
    "{who}: throw back a clue ({colour})": "{who}: wirf einen Hinweis zurück ({colour})",
    "{who}: throw a clue": "{who}: wirf einen Hinweis",
    "{who}: throw a clue ({colour})": "{who}: wirf einen Hinweis ({colour})",
    "A victim landed.": "Ein Opfer ist gelandet.",
    "A clue ({colour}) landed.": "Ein Hinweis ({colour}) ist gelandet.",
    "Landed.": "Gelandet.",
    "Listening for the landing\u2026": "Ich höre auf die Landung \u2026",
    "Enter the floor it landed on.": "Die Etage eingeben, auf der er gelandet ist.",
    "{n} more throw(s) queued.": "Noch {n} Wurf/Würfe ausstehend.",
    "Close the tower, then throw.": "Den Turm schließen, dann werfen.",
    "Where did it land?": "Wo ist er gelandet?",
    "Whoever enters the floor should be the only one looking at the keys.": (
        "Nur wer die Etage eingibt, sollte auf die Tasten schauen."
    ),
    "&Enter this landing by hand": "Diese Landung von &Hand eingeben",
    "Your turn": "Dein Zug",
    "&Inspect a floor": "Etage &untersuchen",
    "&Suspect players": "Spieler &verdächtigen",
    "&Cover your tracks": "Spuren &verwischen",
    "Lift the tower at the floor you choose, or pick it here:": (
        "Den Turm an der gewählten Etage anheben oder sie hier wählen:"
    ),
    "{who}: inspect a floor": "{who}: untersuche eine Etage",
    "{who}: suspect or cover your tracks": "{who}: verdächtige oder verwische deine Spuren",
    "{floor} is open": "{floor} ist offen",
    "The sensors saw the tower opened at this floor.": (
        "Die Sensoren haben gesehen, dass der Turm an dieser Etage geöffnet wurde."
    ),
    "This is what the app believes lies there. Correct it to what you see, then confirm.": (
        "Das glaubt die App, was dort liegt. Auf das Gesehene korrigieren, dann bestätigen."
    ),
    "C&onfirm what lies there": "Inhalt &bestätigen",
    "&Not this floor": "&Nicht diese Etage",
    "Choose at least one player to suspect.": "Mindestens einen Spieler zum Verdächtigen wählen.",
    "One {colour} cube fewer": "Ein Würfel {colour} weniger",
    "One {colour} cube more": "Ein Würfel {colour} mehr",
    "What happened": "Was geschah",
    "Supplies": "Vorräte",
    "&Undo last step": "Letzten Schritt &rückgängig",
    "Unloc&k the live view...": "Live-Ansicht entsperren (&k) ...",
    "Unknown action.": "Unbekannte Aktion.",
    # outcomes and the public log
    "New game: {n} players.": "Neues Spiel: {n} Spieler.",
    "Game resumed.": "Spiel fortgesetzt.",
    "The last step was undone.": "Der letzte Schritt wurde zurückgenommen.",
    "The live view was unlocked.": "Die Live-Ansicht wurde entsperrt.",
    "The live view was unlocked at {time} UTC, after {n} steps.": (
        "Die Live-Ansicht wurde um {time} UTC entsperrt, nach {n} Schritten."
    ),
    "Nobody unlocked the live view during the game.": (
        "Niemand hat die Live-Ansicht während des Spiels entsperrt."
    ),
    "The game is over.": "Das Spiel ist zu Ende.",
    "Victim found! The floor is a crime scene.": "Opfer gefunden! Die Etage ist ein Tatort.",
    "{who} puts {n} clue(s) on the sheet.": "{who} legt {n} Hinweis(e) auf den Bogen.",
    "{who} takes {n} clue(s) off the sheet.": "{who} nimmt {n} Hinweis(e) vom Bogen.",
    "{who} was wrongly suspected.": "{who} wurde zu Unrecht verdächtigt.",
    "Ground floor without an own clue: the suspicion fails.": (
        "Erdgeschoss ohne eigenen Hinweis: Der Verdacht läuft ins Leere."
    ),
    "Sloppy work: {who} throws {n} penalty clue(s).": (
        "Schlampig ermittelt: {who} wirft {n} Strafhinweis(e)."
    ),
    "the ground floor": "dem Erdgeschoss",
    "floor {floor}": "Etage {floor}",
    "{who} inspected {place}.": "{who} hat auf {place} ermittelt.",
    "{who} suspected {names} on {place}.": "{who} hat {names} auf {place} verdächtigt.",
    "{who} covered tracks on {place}.": "{who} hat auf {place} Spuren verwischt.",
    # sheet, score and reveal
    "Investigation sheet": "Ermittlungsbogen",
    "Ground floor": "Erdgeschoss",
    "Floor {floor}": "Etage {floor}",
    "Crime scene": "Tatort",
    "{points} pt": "{points} Pkt.",
    "red: victim": "Rot: Opfer",
    "Culprit: {culprits}": "Täter: {culprits}",
    "Winner: {winners}": "Gewinner: {winners}",
    "Player": "Spieler",
    "Suspicion points": "Verdachtspunkte",
    "culprit": "Täter",
    "winner": "Gewinner",
    "&Reveal the tower": "Turm &aufdecken",
    "What the app tracked in the tower": "Was die App im Turm verfolgt hat",
    "{n} throw(s) landed here": "{n} Wurf/Würfe hier gelandet",
    "Every throw in order: {history}": "Alle Würfe der Reihe nach: {history}",
    "&Back to the score": "&Zurück zur Wertung",
    "The app's guess of an opened level was right {right} of {checked} times.": (
        "Die Vermutung der App über eine geöffnete Etage stimmte {right} von {checked} Mal."
    ),
}
