"""German texts of the games' file and replay errors.

Mord im Arosa scripts and saved games, card-game sessions (the score-sheet
export's errors are in de_cardgames, which its test reads).
"""

MESSAGES = {
    # arosa/script.py
    "a script must be a JSON object with 'players' and 'events'":
        "ein Skript muss ein JSON-Objekt mit 'players' und 'events' sein",
    "a script has only 'players' and 'events', not {keys}":
        "ein Skript hat nur 'players' und 'events', nicht {keys}",
    "a script needs both 'players' and 'events'":
        "ein Skript braucht sowohl 'players' als auch 'events'",
    "'events' must be a list": "'events' muss eine Liste sein",
    "event {index}: {reason}": "Ereignis {index}: {reason}",
    "cannot read {path}: {reason}": "{path} kann nicht gelesen werden: {reason}",
    "{path} is not JSON: {reason} (line {line})": "{path} ist kein JSON: {reason} (Zeile {line})",
    "{path} is not a valid script: {reason}": "{path} ist kein gültiges Skript: {reason}",
    "event {index} ({kind}): {reason}": "Ereignis {index} ({kind}): {reason}",
    # arosa/events.py
    "'{key}' must be a whole number, not {value}":
        "'{key}' muss eine ganze Zahl sein, nicht {value}",
    "'{key}' must be a colour name, not {value}": "'{key}' muss ein Farbname sein, nicht {value}",
    "'found' must map colours to cube counts":
        "'found' muss Farben auf Würfelanzahlen abbilden",
    "'found' counts cannot be negative": "die Anzahlen in 'found' dürfen nicht negativ sein",
    "an event must be a JSON object, not {value}":
        "ein Ereignis muss ein JSON-Objekt sein, nicht {value}",
    "'do' must be one of {known}, not {value}": "'do' muss eines von {known} sein, nicht {value}",
    "a {kind} event needs the key(s) {keys}": "ein {kind}-Ereignis braucht die Schlüssel {keys}",
    "a {kind} event has unknown key(s) {keys}":
        "ein {kind}-Ereignis hat unbekannte Schlüssel {keys}",
    "'suspects' must be a list of colours": "'suspects' muss eine Liste von Farben sein",
    # arosa/state.py
    "not a saved Mord im Arosa state ({reason!r})":
        "kein gespeicherter Spielstand von Mord im Arosa ({reason!r})",
    "not a saved Mord im Arosa state (phase {phase!r})":
        "kein gespeicherter Spielstand von Mord im Arosa (Phase {phase!r})",
    "'players' must be a list of colours": "'players' muss eine Liste von Farben sein",
    "Mord im Arosa is played by {low} to {high} players, not {n}":
        "Mord im Arosa spielen {low} bis {high} Spieler, nicht {n}",
    "{colour!r} is not a player colour (choose from {known})":
        "{colour!r} ist keine Spielerfarbe (zur Wahl stehen {known})",
    "each player colour may be seated only once": "jede Spielerfarbe darf nur einmal mitspielen",
    # arosa/session.py
    "the game {game_id!r} is {kind!r}, not Mord im Arosa":
        "das Spiel {game_id!r} ist {kind!r}, nicht Mord im Arosa",
    "{name} has no valid seating order: {reason}":
        "{name} hat keine gültige Sitzreihenfolge: {reason}",
    "{name} cannot be replayed at event {index}: {reason}":
        "{name} lässt sich bei Ereignis {index} nicht nachspielen: {reason}",
    # cardsession.py
    "the saved game {game_id!r} is not a {kind} game":
        "das gespeicherte Spiel {game_id!r} ist kein {kind}-Spiel",
    "the saved game {game_id!r} cannot be replayed: {reason}":
        "das gespeicherte Spiel {game_id!r} lässt sich nicht nachspielen: {reason}",
}
