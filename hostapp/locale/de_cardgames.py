"""German texts of the card-game pages and score sheets (Crime Hotel, mugshot game)."""
# ruff: noqa: E501 - a translation table reads best one message per line

MESSAGES = {
    # shared
    "Export &JSON": "&JSON exportieren",
    "Score &sheet (HTML)": "&Wertungsblatt (HTML)",
    "Export": "Exportieren",
    "Saved {path}": "Gespeichert: {path}",
    "Tie: {players} share the win.": "Gleichstand: {players} teilen sich den Sieg.",
    "{player} wins!": "{player} gewinnt!",
    "Undo last entry (Alt+U)": "Letzte Eingabe zurücknehmen (Alt+U)",
    "&New game": "&Neues Spiel",
    "&Start the game": "Spiel &starten",
    "Resume a saved game": "Gespeichertes Spiel fortsetzen",
    "&Resume": "&Fortsetzen",
    "Player {n}": "Spieler {n}",
    "name": "Name",
    "optional": "optional",
    "Player": "Spieler",
    "Total": "Summe",
    "Points": "Punkte",
    "The game is over": "Das Spiel ist zu Ende",
    "The game is over.": "Das Spiel ist zu Ende.",
    "The game is not finished.": "Das Spiel ist noch nicht zu Ende.",
    "Winner: {name}": "Sieger: {name}",
    "Tie between {names}": "Gleichstand zwischen {names}",
    # Crime Hotel
    "Crime Hotel: {players}": "Crime Hotel: {players}",
    "New game of Crime Hotel": "Neues Spiel Crime Hotel",
    "Players in seating order (clockwise)": "Spieler in Sitzreihenfolge (im Uhrzeigersinn)",
    "Player 1 (police car)": "Spieler 1 (Polizeiauto)",
    "leave empty for 3 players": "leer lassen bei 3 Spielern",
    "Edition: police station": "Ausgabe: Polizeiwache",
    "Bonus points per bonus space": "Bonuspunkte je Bonusfeld",
    "Spaces: {help}": "Felder: {help}",
    "Middle places may guess instead of taking help":
        "Mittlere Plätze dürfen statt der Hilfe tippen",
    "Investigation {n} of {total}, trick {trick}: ": "Durchgang {n} von {total}, Runde {trick}: ",
    "Investigation {n}": "Durchgang {n}",
    "Investigation {n}: deal 6 cards each, one hidden under the police car.":
        "Durchgang {n}: je 6 Karten austeilen, eine verdeckt unter das Polizeiauto.",
    "Investigation {n}: the murderer was in room {room}.":
        "Durchgang {n}: Der Mörder war in Zimmer {room}.",
    "Type room numbers like 23, separated by spaces.":
        "Zimmernummern wie 23 eingeben, durch Leerzeichen getrennt.",
    "Enter one room card for {player}.": "Eine Zimmerkarte für {player} eingeben.",
    "Deal the cards": "Karten austeilen",
    "e.g. 14 27": "z. B. 14 27",
    "&Face-up cards": "&Offene Karten",
    "&Police car (plays first)": "&Polizeiauto (spielt zuerst aus)",
    "&Deal": "&Austeilen",
    "Enter the {count} cards laid face up on their windows.":
        "Die {count} Karten eingeben, die offen auf ihren Fenstern liegen.",
    "Cards played to the trick, in order": "Ausgespielte Karten der Runde, der Reihe nach",
    "&Play the trick": "Runde &ausspielen",
    "{player} leads the trick.": "{player} spielt aus.",
    "space, e.g. C5": "Feld, z. B. C5",
    "space, e.g. R23": "Feld, z. B. R23",
    "&Guess": "&Tippen",
    "Click a space on the board, or type F1-F3, C1-C9, R11-R39.":
        "Ein Feld am Hotel anklicken oder F1-F3, C1-C9, R11-R39 eingeben.",
    "{player}: guess": "{player}: tippen",
    "{player}: police station": "{player}: Polizeiwache",
    "(or click a space to guess)": "(oder zum Tippen ein Feld anklicken)",
    "&Help": "&Hilfe",
    "&Other player": "&Mitspieler",
    "Move &from": "Versetzen &von",
    "Move &to": "Versetzen na&ch",
    "Take the help (Ctrl+Enter)": "Hilfe nehmen (Strg+Eingabe)",
    "{help} ({free} free)": "{help} ({free} frei)",
    "highest card": "höchste Karte",
    "lowest card": "niedrigste Karte",
    "middle card": "mittlere Karte",
    "{player} ({reason}, {card}) places the card and must guess.":
        "{player} ({reason}, {card}) legt die Karte ins Hotel und muss tippen.",
    "{player} ({reason}, {card}) places the card and goes to the police station.":
        "{player} ({reason}, {card}) legt die Karte ins Hotel und geht zur Polizeiwache.",
    "Five tricks played: everyone places their last card.":
        "Fünf Runden gespielt: Alle legen ihre letzte Karte ins Hotel.",
    "The last card goes straight into the hotel": "Die letzte Karte kommt direkt ins Hotel",
    "&Place the last cards": "Letzte Karten &legen",
    "Room {room} stays dark.": "Zimmer {room} bleibt dunkel.",
    "Turn over the murderer's card": "Die Karte des Mörders aufdecken",
    "Turn the hidden card over and type its number.":
        "Die verdeckte Karte umdrehen und ihre Nummer eingeben.",
    "&Hidden card": "&Verdeckte Karte",
    "the murderer": "den Mörder",
    "Sc&ore the investigation": "Durchgang wer&ten",
    "Three investigations played.": "Drei Durchgänge gespielt.",
    "Rooms the murderer can still be in ({n}): {rooms}":
        "Zimmer, in denen der Mörder noch sein kann ({n}): {rooms}",
    "{player} did not follow floor {floor} but later played {card}":
        "{player} hat Etage {floor} nicht bedient, aber später {card} gespielt",
    "Floor {n}": "Etage {n}",
    "Col. {n}": "Sp. {n}",
    "Floor {n} (2 points)": "Etage {n} (2 Punkte)",
    "Column {n} (5 points)": "Spalte {n} (5 Punkte)",
    "Room {n} (10 points)": "Zimmer {n} (10 Punkte)",
    "move a detective": "Polizisten versetzen",
    "swap cards blind": "Karten blind tauschen",
    "look at a hand": "Handkarten ansehen",
    "share a guess space": "Tipp-Feld doppelt besetzen",
    "bonus points": "Sonderpunkte",
    "no help": "keine Hilfe",
    "Crime Hotel: score sheet": "Crime Hotel: Wertungsblatt",
    "murderer's room {room}": "Zimmer des Mörders {room}",
    "not finished": "nicht beendet",
    "Guesses (points)": "Tipps (Punkte)",
    "Bonus": "Bonus",
    "Bonus per bonus space: {points} points.": "Bonus je Bonusfeld: {points} Punkte.",
    # the animal mugshot game
    "Mugshots: {players}": "Fahndungsfotos: {players}",
    "Mugshots: score sheet": "Fahndungsfotos: Wertungsblatt",
    "New game of the animal mugshot game": "Neues Spiel mit den Tier-Fahndungsfotos",
    "Turn &helper (enter the cards)": "Zug&helfer (Karten eingeben)",
    "Score &pad only (archive counts)": "Nur &Punkteblock (Anzahl im Stapel)",
    "Players in turn order (2 to 6)": "Spieler in Zugreihenfolge (2 bis 6)",
    "Goal card": "Zielkarte",
    "Options": "Optionen",
    "Strict reading: a match in a clue type not named also fails an identification":
        "Strenge Lesart: Auch eine Übereinstimmung in einer nicht angesagten Hinweisart "
        "lässt die Identifizierung scheitern",
    "Module variant: goal cards": "Modulvariante: Zielkarten",
    "Archived cards that end the game": "Fahndungsfotos im Stapel, die das Spiel beenden",
    "per set": "je Set",
    "cards with the pattern": "Fotos mit der Struktur",
    "cards with the colour": "Fotos mit der Farbe",
    "cards with the name": "Fotos mit dem Namen",
    "sets of different animals": "Sets aus unterschiedlichen Tieren",
    "sets of different colours": "Sets aus unterschiedlichen Farben",
    "Card turned face up": "Aufgedeckte Karte",
    "Animal": "Tier",
    "Pattern": "Struktur",
    "Colour": "Farbe",
    "Name": "Name",
    "elephant": "Elefant",
    "owl": "Eule",
    "bear": "Bär",
    "goat": "Ziege",
    "pig": "Schwein",
    "bricks": "Backsteine",
    "wood": "Holz",
    "round tiles": "runde Fliesen",
    "diamond tiles": "diamantförmige Fliesen",
    "wavy": "gewelltes Muster",
    "turquoise": "türkis",
    "yellow": "gelb",
    "orange": "orange",
    "pink": "pink",
    "purple": "lila",
    "Draw it (Alt+D)": "Ziehen (Alt+D)",
    "Named clue:": "Angesagte Hinweisart:",
    "with drawn card {n}": "mit gezogener Karte {n}",
    "Identify (Alt+I)": "Identifizieren (Alt+I)",
    "Challenge: turn it over (Alt+C)": "Challenge: aufdecken (Alt+C)",
    "Collect the cards (Alt+O)": "Karten nehmen (Alt+O)",
    "Advanced mode: name powers": "Fortgeschrittenen-Modus: Fähigkeiten der Namen",
    "swap mugshots": "Fahndungsfotos vertauschen",
    "look under face-down cards in the centre":
        "unter verdeckte Karten in der Tischmitte schauen",
    "A name named as the clue in a successful identification triggers its power, for "
    "example: {examples}. Add each name's power to the name book to list them here.":
        "Wird der Name als Hinweisart angesagt, löst eine erfolgreiche Identifizierung "
        "seine Spezialfähigkeit aus, zum Beispiel: {examples}. Die Fähigkeiten der Namen "
        "im Namensbuch eintragen, dann erscheinen sie hier.",
    "{player}: draw a card and enter it.": "{player}: eine Karte ziehen und eingeben.",
    "{player}: identify (name a clue, turn a centre card over), draw a second card, or "
    "challenge.":
        "{player}: identifizieren (Hinweisart ansagen, eine Karte der Tischmitte "
        "aufdecken), eine zweite Karte ziehen oder eine Challenge.",
    "{player}: two identifications, one centre card for each drawn card.":
        "{player}: zwei Identifizierungen, je eine Karte der Tischmitte pro gezogener Karte.",
    "{player}: turn over another centre card, or collect after {n}.":
        "{player}: eine weitere Karte der Tischmitte aufdecken oder ab {n} Karten nehmen.",
    "Last turn: {player} {verdict} ({reason}).": "Letzter Zug: {player} {verdict} ({reason}).",
    "won {n} cards": "gewinnt {n} Karten",
    "failed": "scheitert",
    "Clue area": "Hinweisbereich",
    "Turned over this turn": "In diesem Zug aufgedeckt",
    "Centre (face down)": "Tischmitte (verdeckt)",
    "Archived cards": "Fotos im Stapel",
    "Goal points": "Zielpunkte",
    "{n} cards": "{n} Karten",
    "{player} {delta} cards": "{player} {delta} Karten",
    "Score pad: first to {n} archived cards ends the game.":
        "Punkteblock: Wer zuerst {n} Fotos im Stapel hat, beendet das Spiel.",
    "{n} turns played, {won} of them successful.": "{n} Züge gespielt, davon {won} erfolgreich.",
    # engine messages: Crime Hotel
    "A Crime Hotel event must be a JSON object.": "Ein Crime-Hotel-Ereignis muss ein JSON-Objekt sein.",
    "A Crime Hotel game must start with a new_game event.":
        "Ein Crime-Hotel-Spiel muss mit einem new_game-Ereignis beginnen.",
    "Unknown Crime Hotel event type {kind!r}.": "Unbekannter Crime-Hotel-Ereignistyp {kind!r}.",
    "That is not possible now: the game is at the {phase} step.":
        "Das geht jetzt nicht: Das Spiel ist beim Schritt „{phase}“.",
    "deal": "Austeilen",
    "trick": "Runde",
    "place": "Platzieren",
    "last_cards": "Letzte Karten",
    "reveal": "Aufdecken",
    "over": "Spielende",
    "{name!r} is not playing in this game.": "{name!r} spielt in diesem Spiel nicht mit.",
    "This game has already started.": "Dieses Spiel hat schon begonnen.",
    "Players must be a list of names.": "Die Spieler müssen eine Liste von Namen sein.",
    "Crime Hotel is played by 3 or 4 players.": "Crime Hotel wird zu dritt oder zu viert gespielt.",
    "Every player needs a name of their own.": "Jeder Spieler braucht einen eigenen Namen.",
    "face_up must be a list of room cards.": "face_up muss eine Liste von Zimmerkarten sein.",
    "With {value} players {wanted} different cards lie face up.":
        "Bei {value} Spielern liegen {wanted} verschiedene Karten offen aus.",
    "The cards must map every player to one room card.":
        "Die Karten müssen jedem Spieler eine Zimmerkarte zuordnen.",
    "Every player gives exactly one card.": "Jeder Spieler gibt genau eine Karte.",
    "Each room card exists only once; two players entered the same.":
        "Jede Zimmerkarte gibt es nur einmal; zwei Spieler haben dieselbe eingegeben.",
    "It is {player}'s turn to place, not {player2}'s.":
        "{player} ist mit Platzieren dran, nicht {player2}.",
    "highest": "höchste",
    "lowest": "niedrigste",
    "middle": "mittlere",
    "{player} played the {reason} card and must guess.":
        "{player} hat die {reason} Karte gespielt und muss tippen.",
    "{player} played the {reason} card and must go to the police station.":
        "{player} hat die {reason} Karte gespielt und muss zur Polizeiwache.",
    "{player} already has a detective on {code}.": "{player} hat schon einen Polizisten auf {code}.",
    "{code} is already shared by two detectives.": "Auf {code} stehen schon zwei Polizisten.",
    "{code} is taken; only the share help lets a second detective in.":
        "{code} ist besetzt; nur die Hilfe „doppelt besetzen“ lässt einen zweiten Polizisten zu.",
    "Unknown help {kind!r}; choose one of {known} or none.":
        "Unbekannte Hilfe {kind!r}; möglich sind {known} oder none.",
    "Every {kind} space at the police station is taken.":
        "Alle Felder „{kind}“ der Polizeiwache sind besetzt.",
    "move": "Versetzen",
    "swap": "Tauschen",
    "look": "Ansehen",
    "share": "Doppelt besetzen",
    "bonus": "Sonderpunkte",
    "{player} has no detective on {code} to move.":
        "{player} hat keinen Polizisten auf {code}, der versetzt werden könnte.",
    "A moved detective must go to another space.":
        "Ein versetzter Polizist muss auf ein anderes Feld.",
    "Room {dark_room} is dark but the hidden card is {card}: a card was entered wrongly; "
    "undo and correct it.":
        "Zimmer {dark_room} ist dunkel, aber die verdeckte Karte ist {card}: Eine Karte wurde "
        "falsch eingegeben; zurücknehmen und korrigieren.",
    "Room {card} lies face up; {player} cannot play it.":
        "Zimmer {card} liegt offen aus; {player} kann es nicht spielen.",
    "Room {card} was already played by {owner}; {player} cannot play it.":
        "Zimmer {card} hat schon {owner} gespielt; {player} kann es nicht spielen.",
    "{player} must choose another player.": "{player} muss einen anderen Spieler wählen.",
    "{value!r} is not a room card; rooms are 11-19, 21-29 and 31-39.":
        "{value!r} ist keine Zimmerkarte; die Zimmer sind 11-19, 21-29 und 31-39.",
    "{code!r} is not a guess space; write F1-F3 (floor), C1-C9 (column) or R11-R39 (room).":
        "{code!r} ist kein Tipp-Feld; F1-F3 (Etage), C1-C9 (Spalte) oder R11-R39 (Zimmer) "
        "eingeben.",
    "{code!r} is not on the board.": "{code!r} gibt es auf dem Spielplan nicht.",
    "The bonus must be a whole number of points from 0 to 99.":
        "Der Bonus muss eine ganze Punktzahl von 0 bis 99 sein.",
    "Unknown help space {value!r}; known ones are {value2}.":
        "Unbekanntes Hilfsfeld {value!r}; bekannt sind {value2}.",
    "Unknown Crime Hotel setting {value!r}.": "Unbekannte Crime-Hotel-Einstellung {value!r}.",
    "The Crime Hotel settings must be a set of named values.":
        "Die Crime-Hotel-Einstellungen müssen benannte Werte sein.",
    "middle_may_guess must be true or false.": "middle_may_guess muss true oder false sein.",
    "help_spaces must map each help kind to a number of spaces.":
        "help_spaces muss jeder Hilfe eine Anzahl Felder zuordnen.",
    "The number of {kind!r} spaces must be from 0 to 9.":
        "Die Anzahl der Felder {kind!r} muss zwischen 0 und 9 liegen.",
    # engine messages: the mugshot game
    "The name book lists no names.": "Das Namensbuch enthält keine Namen.",
    "The name book lists a name twice.": "Das Namensbuch enthält einen Namen doppelt.",
    "A name book is an object with a list of names.":
        "Ein Namensbuch ist ein Objekt mit einer Liste von Namen.",
    "A card must give its animal, pattern, colour and name.":
        "Eine Karte muss Tier, Struktur, Farbe und Namen angeben.",
    "{name!r} is not a name in the name book.": "{name!r} steht nicht im Namensbuch.",
    "{name!r} is not a usable name.": "{name!r} ist kein brauchbarer Name.",
    "Each name in the name book needs a 'name' text.":
        "Jeder Eintrag im Namensbuch braucht einen Text unter 'name'.",
    "The blotted forms of {value!r} must be texts.":
        "Die Formen mit Tintenfleck von {value!r} müssen Texte sein.",
    "The power of {value!r} must be a text.": "Die Fähigkeit von {value!r} muss ein Text sein.",
    "{value!r} is not a card {clue}; choose one of {value2}.":
        "{value!r} ist kein Wert für {clue}; möglich sind {value2}.",
    "The blotted form {shown!r} does not show part of {name!r}.":
        "Die Form mit Tintenfleck {shown!r} zeigt keinen Teil von {name!r}.",
    "animal": "Tier",
    "pattern": "Struktur",
    "colour": "Farbe",
    "{clue} matches": "{clue} stimmt überein",
    "match only in an unnamed clue ({clues})":
        "Übereinstimmung nur in nicht angesagter Hinweisart ({clues})",
    "also matches in an unnamed clue ({clues})":
        "stimmt auch in nicht angesagter Hinweisart überein ({clues})",
    "card {n} matches in {clues}": "Karte {n} stimmt überein in {clues}",
    "{n} cards without a match": "{n} Karten ohne Übereinstimmung",
    "Unknown mugshot-game setting {value!r}.": "Unbekannte Einstellung {value!r}.",
    "The mugshot-game settings must be a set of named values.":
        "Die Einstellungen des Verbrecherbilder-Spiels müssen benannte Werte sein.",
    "The setting {key} must be true or false.": "Die Einstellung {key} muss true oder false sein.",
    "A challenge cannot need more cards than the centre holds.":
        "Eine Challenge kann nicht mehr Karten verlangen, als in der Tischmitte liegen.",
    "A mugshot-game event must be a JSON object.": "Ein Spielereignis muss ein JSON-Objekt sein.",
    "A mugshot game must start with a new_game event.":
        "Ein Spiel muss mit einem new_game-Ereignis beginnen.",
    "Unknown mugshot-game event type {kind!r}.": "Unbekannter Ereignistyp {kind!r}.",
    "{active_player} cannot {doing} now (step: {step}).":
        "{active_player} kann jetzt nicht {doing} (Schritt: {step}).",
    "draw a card": "eine Karte ziehen",
    "identify": "identifizieren",
    "make a challenge": "eine Challenge ausführen",
    "collect the cards": "die Karten nehmen",
    "draw": "Ziehen",
    "choose": "Wählen",
    "identify2": "Zweite Identifizierung",
    "challenge": "Challenge",
    "The mugshot game is scored here for 2 to 8 players.":
        "Gewertet werden hier Spiele mit 2 bis 8 Personen.",
    "Goals must be given per player of this game.":
        "Ziele müssen je Spieler dieses Spiels angegeben werden.",
    "Goal cards are only used in the module variant.":
        "Zielkarten gibt es nur in der Modulvariante.",
    "{clue!r} is not a clue type; name one of {known}.":
        "{clue!r} ist keine Hinweisart; möglich sind {known}.",
    "Each drawn card is compared with one centre card only.":
        "Jede gezogene Karte wird mit nur einer Karte der Tischmitte verglichen.",
    "No face-down card is left in the centre.": "In der Tischmitte liegt keine verdeckte Karte mehr.",
    "A challenge is made with one drawn card.": "Eine Challenge wird mit einer gezogenen Karte gemacht.",
    "No face-down card is left; collect the cards turned over.":
        "Keine verdeckte Karte mehr; die aufgedeckten Karten nehmen.",
    "A challenge turns over at least {minimum} cards before collecting.":
        "Eine Challenge deckt mindestens {minimum} Karten auf, bevor sie genommen werden.",
    "The setting {key} must be a whole number from 1 to 50.":
        "Die Einstellung {key} muss eine ganze Zahl von 1 bis 50 sein.",
    "The goals of {player} must be a list.": "Die Ziele von {player} müssen eine Liste sein.",
    "Unknown goal {kind!r}; choose one of {known}.": "Unbekanntes Ziel {kind!r}; möglich sind {known}.",
    "{value!r} is not a {kind} a goal can ask for.":
        "{value!r} ist kein Wert für {kind}, den ein Ziel verlangen kann.",
    "Goal points must be from 0 to 20.": "Zielpunkte müssen zwischen 0 und 20 liegen.",
    "A set has 2 to 5 different cards.": "Ein Set hat 2 bis 5 unterschiedliche Karten.",
    "A goal must be an object with a kind.": "Ein Ziel muss ein Objekt mit einer Art sein.",
    "A goal needs a kind and whole-number points.": "Ein Ziel braucht eine Art und ganze Punkte.",
    "{path} could not be used ({reason}); using the default names.":
        "{path} war nicht verwendbar ({reason}); die mitgelieferten Namen gelten.",
    "This score pad has already started.": "Dieser Punkteblock hat schon begonnen.",
    "A score pad needs 2 to 8 players with names of their own.":
        "Ein Punkteblock braucht 2 bis 8 Spieler mit eigenen Namen.",
    "The target must be a whole number of cards from 1 to 50.":
        "Das Ziel muss eine ganze Kartenzahl von 1 bis 50 sein.",
    "{player!r} is not on this score pad.": "{player!r} steht nicht auf diesem Punkteblock.",
    "Enter a whole, non-zero number of cards.": "Eine ganze Kartenzahl ungleich 0 eingeben.",
    "{player} cannot have fewer than 0 cards.": "{player} kann nicht weniger als 0 Karten haben.",
    "The game is over: someone has reached the target.":
        "Das Spiel ist zu Ende: Jemand hat das Ziel erreicht.",
    "Unexpected score-pad event {kind!r}.": "Unerwartetes Punkteblock-Ereignis {kind!r}.",
    "Save an editable cop&y": "Bearbeitbare &Kopie speichern",
    "edit {path} and open this page again": "{path} bearbeiten und diese Seite neu öffnen",
    "the names shipped with towerear; save a copy to edit them":
        "die mit towerear gelieferten Namen; zum Bearbeiten eine Kopie speichern",
    "Names on the cards: {names} ({where})": "Namen auf den Karten: {names} ({where})",
    "The name book could not be saved: {reason}": "Das Namensbuch ließ sich nicht speichern: {reason}",
    # export.py: errors writing a score sheet or game file
    "Cannot write into {path}: {reason}.": "In {path} kann nicht geschrieben werden: {reason}.",
    "Cannot write {path}: {reason}.": "{path} kann nicht geschrieben werden: {reason}.",
    "There is no score sheet for a game of kind {game!r}.":
        "Für ein Spiel der Art {game!r} gibt es kein Wertungsblatt.",
}
