"""German texts of the Mord im Arosa rule violations (hostapp.games.arosa.engine)."""

MESSAGES = {
    "The hotel: its floors are 0 (ground floor) to 7, there is no floor {floor}.": (
        "Das Hotel: Es hat die Etagen 0 (Erdgeschoss) bis 7, eine Etage {floor} gibt es nicht."
    ),
    "The finale: the game is over, nothing more can happen.": (
        "Finale: Das Spiel ist vorbei, es kann nichts mehr geschehen."
    ),
    "Colours: {color} is not a colour in this game; the players are {players} and "
    "the victims are red.": (
        "Farben: {color} spielt nicht mit; die Spieler sind {players}, die Opfer sind rot."
    ),
    "Throws: no {color} cube is owed now; the rules demand {owed}.": (
        "Würfe: Gerade ist kein Würfel in {color} fällig; die Regeln verlangen {owed}."
    ),
    "Throws: no cube is owed now; it is {player}'s turn to investigate.": (
        "Würfe: Gerade ist kein Wurf fällig; {player} ist als Ermittler an der Reihe."
    ),
    "nothing": "nichts",
    "The prologue: both victims and two clues per player are thrown before "
    "anyone investigates (still owed: {owed}).": (
        "Prolog: Erst werden beide Opfer und zwei Hinweise je Spieler geworfen, dann wird "
        "ermittelt (noch fällig: {owed})."
    ),
    "Throws first: the throws the rules demand ({owed}) come before the next action.": (
        "Erst werfen: Die von den Regeln verlangten Würfe ({owed}) kommen vor der nächsten Aktion."
    ),
    "Players: {by} is not playing.": "Spieler: {by} spielt nicht mit.",
    "Turn order: it is {player}'s turn to investigate, not {by}'s.": (
        "Reihenfolge: {player} ermittelt gerade, nicht {by}."
    ),
    "Act I: until both victims are found the investigator can only inspect a floor, not {kind}.": (
        "Akt I: Bis beide Opfer gefunden sind, kann der Ermittler nur eine Etage untersuchen, "
        "nicht {kind}."
    ),
    "Act II: once both victims are found the investigator suspects other players or "
    "covers his tracks; inspecting for victims is over.": (
        "Akt II: Sind beide Opfer gefunden, verdächtigt der Ermittler andere Spieler oder "
        "verwischt seine Spuren; die Suche nach Opfern ist vorbei."
    ),
    "Suspicion: the investigator names at least one player he suspects.": (
        "Verdächtigen: Der Ermittler nennt mindestens einen Spieler, den er verdächtigt."
    ),
    "Suspicion: {suspect} is not playing.": "Verdächtigen: {suspect} spielt nicht mit.",
    "Suspicion: the investigator suspects other players, not himself.": (
        "Verdächtigen: Der Ermittler verdächtigt andere Spieler, nicht sich selbst."
    ),
    "Suspicion: each suspect is named once.": (
        "Verdächtigen: Jeder Verdächtige wird nur einmal genannt."
    ),
    "Covering tracks: the number of clues removed cannot be negative.": (
        "Spuren verwischen: Die Zahl der entfernten Hinweise kann nicht negativ sein."
    ),
    "Covering tracks: the investigator may remove at most as many of his clues from "
    "floor {floor} of the sheet as he found there in the tower ({found} found, "
    "{on_sheet} on the sheet), not {remove}.": (
        "Spuren verwischen: Der Ermittler darf höchstens so viele eigene Hinweise von Etage "
        "{floor} des Ermittlungsblocks nehmen, wie er dort im Turm gefunden hat ({found} "
        "gefunden, {on_sheet} auf dem Block), nicht {remove}."
    ),
    "Cubes: a floor cannot hold {want} {color} cubes.": (
        "Würfel: Auf einer Etage können nicht {want} Würfel in {color} liegen."
    ),
    "Cubes: only {n} {color} cubes are in the tower, so {want} cannot lie on floor {floor}.": (
        "Würfel: Nur {n} Würfel in {color} sind im Turm, also können nicht {want} auf "
        "Etage {floor} liegen."
    ),
}
