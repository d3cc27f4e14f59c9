"""German texts of the simulated tower's refusals (``dsp.sim`` errors).

``dsp`` cannot import :mod:`hostapp`, so these messages arrive as finished
English sentences; :func:`hostapp.i18n.tr_sentence` translates them at the UI
boundary by matching them against these keys. The keys are the templates of
the ``SimulatorError`` messages a user of the app can trigger (the simulated
tower's buttons, the simulated calibration user, a scenario source), plus the
English values of their fields (``what``, ``where``).
"""

MESSAGES = {
    # TowerSimulator.lift
    "the tower is already open at level {level}":
        "der Turm ist bereits bei Ebene {level} geöffnet",
    # TowerSimulator._check_open_at: the generic form, its parts, and the
    # whole sentence for each action (better German word order)
    "cannot {what} level {level}: the tower is {where}":
        "{what} Ebene {level} ist nicht möglich: der Turm ist {where}",
    "take cubes out of": "Würfel herausnehmen aus",
    "put a mass on": "Gewicht legen auf",
    "take a mass off": "Gewicht nehmen von",
    "closed": "geschlossen",
    "open at level {level}": "bei Ebene {level} geöffnet",
    "cannot take cubes out of level {level}: the tower is {where}":
        "aus Ebene {level} können keine Würfel genommen werden: der Turm ist {where}",
    "cannot put a mass on level {level}: the tower is {where}":
        "auf Ebene {level} kann kein Gewicht gelegt werden: der Turm ist {where}",
    "cannot take a mass off level {level}: the tower is {where}":
        "von Ebene {level} kann kein Gewicht genommen werden: der Turm ist {where}",
    # TowerSimulator.throw / close / remove_cubes / masses
    "cannot throw a cube while the tower is open at level {level}":
        "solange der Turm bei Ebene {level} geöffnet ist, kann kein Würfel geworfen werden",
    "cube {cube} is still in the tower": "Würfel {cube} ist noch im Turm",
    "cube {cube} does not exist": "Würfel {cube} gibt es nicht",
    "cannot close the tower: it is not open":
        "der Turm kann nicht geschlossen werden: er ist nicht geöffnet",
    "level {level} does not exist; levels are 0 to {top}":
        "Ebene {level} gibt es nicht; die Ebenen sind 0 bis {top}",
    "cannot take {count} cubes out of level {level}: {n} lie there":
        "aus Ebene {level} können keine {count} Würfel genommen werden: dort liegen {n}",
    "no reference mass lies on level {level}":
        "auf Ebene {level} liegt kein Referenzgewicht",
    "level {level}'s 100 g load cell would be overloaded by {grams} g more":
        "die 100-g-Wägezelle von Ebene {level} würde mit {grams} g mehr überlastet",
    "a reference mass must weigh between 0 and {capacity} g":
        "ein Referenzgewicht muss zwischen 0 und {capacity} g wiegen",
    # scheduled hands (the simulated calibration user)
    "cannot schedule an action at {at} s: the simulator is already at {now} s":
        "eine Handlung bei {at} s ist nicht mehr möglich: die Simulation ist schon bei {now} s",
    # dsp.sim.scenarios (a scenario source)
    "unknown scenario {name}; known: {known}": "unbekanntes Szenario {name}; bekannt: {known}",
    "a scenario needs a positive duration": "ein Szenario braucht eine positive Dauer",
}
