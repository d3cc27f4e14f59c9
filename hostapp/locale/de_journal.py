"""German texts of the game journal's errors and repairs (hostapp/journal.py)."""

MESSAGES = {
    "cannot use the journal directory: {reason}":
        "das Spielprotokoll-Verzeichnis ist nicht nutzbar: {reason}",
    "{game_id!r} is not a game id (letters, digits, '-' and '_')":
        "{game_id!r} ist keine Spielkennung (Buchstaben, Ziffern, '-' und '_')",
    "an event must be plain JSON to be journalled ({reason})":
        "ein Ereignis muss reines JSON sein, um protokolliert zu werden ({reason})",
    "{name} is not a towerear journal or its header is damaged":
        "{name} ist kein towerear-Spielprotokoll, oder sein Kopf ist beschädigt",
    "{name} was written by a newer towerear (journal schema {schema}, "
    "this one reads up to {supported})":
        "{name} wurde von einem neueren towerear geschrieben (Protokollschema {schema}, "
        "dieses liest bis {supported})",
    "{name} is damaged at byte {offset} with intact records after it; "
    "it was not a torn write, so it is not repaired automatically":
        "{name} ist bei Byte {offset} beschädigt, und danach folgen intakte Einträge; "
        "es war kein abgebrochener Schreibvorgang, daher wird es nicht automatisch repariert",
    "{name} has record {seq!r} where {expected} was expected":
        "{name} hat Eintrag {seq!r}, wo {expected} erwartet wurde",
    "{name} has a record {seq} that makes no sense here ({kind!r})":
        "{name} hat einen Eintrag {seq}, der hier keinen Sinn ergibt ({kind!r})",
    "{name}: dropped a damaged last record ({dropped} bytes, "
    "probably cut off by a crash or power loss); everything before it is kept":
        "{name}: ein beschädigter letzter Eintrag wurde verworfen ({dropped} Bytes, "
        "vermutlich durch einen Absturz oder Stromausfall abgeschnitten); alles davor "
        "bleibt erhalten",
    "a game {game_id!r} already exists": "ein Spiel {game_id!r} gibt es schon",
    "cannot create the journal {path}: {reason}":
        "das Spielprotokoll {path} kann nicht angelegt werden: {reason}",
    "there is no saved game {game_id!r}": "es gibt kein gespeichertes Spiel {game_id!r}",
    "cannot open the journal {path}: {reason}":
        "das Spielprotokoll {path} kann nicht geöffnet werden: {reason}",
    "there is nothing to undo": "es gibt nichts rückgängig zu machen",
    "the journal {name} is closed": "das Spielprotokoll {name} ist geschlossen",
    "the game {game_id!r} is open in another window":
        "das Spiel {game_id!r} ist in einem anderen Fenster geöffnet",
    "cannot write the journal {name}: {reason}":
        "das Spielprotokoll {name} kann nicht geschrieben werden: {reason}",
    "cannot read the journal {name}: {reason}":
        "das Spielprotokoll {name} kann nicht gelesen werden: {reason}",
    "cannot delete {name}: {reason}": "{name} kann nicht gelöscht werden: {reason}",
}
