"""German texts of the calibration procedures, health check and report."""

MESSAGES = {
    "Calibrate again: cells creep and cardboard settles.":
        "Neu kalibrieren: Wägezellen kriechen und Karton setzt sich.",
    "Calibration is {days:.0f} days old.": "Die Kalibrierung ist {days:.0f} Tage alt.",
    "Check level {level}'s piezo front end (bias divider, cable shield).":
        "Piezo-Eingang von Ebene {level} prüfen (Spannungsteiler, Kabelschirm).",
    "Empty level {level}'s plate; if it is empty, tare again.":
        "Platte von Ebene {level} leeren; ist sie leer, neu tarieren.",
    "Keep the tower away from fans and vibration; check the cell's wiring.":
        "Turm von Lüftern und Erschütterungen fernhalten; Verkabelung der Wägezelle prüfen.",
    "Level {level} does not report its load.": "Ebene {level} meldet kein Gewicht.",
    "Level {level} is calibrated.": "Ebene {level} ist kalibriert.",
    "Level {level} reports (uncalibrated).": "Ebene {level} meldet sich (unkalibriert).",
    "Level {level}'s load cell reads a constant {value}: it weighs nothing.":
        "Die Wägezelle von Ebene {level} liest immer {value}: sie wiegt nichts.",
    "Check the cell's four wires and the HX711's joints; until then "
    "cubes on level {level} are only heard.":
        "Prüfe die vier Drähte der Zelle und die Lötstellen des HX711; bis dahin "
        "werden Würfel auf Ebene {level} nur gehört.",
    "Level {level}'s load cell is not connected: put the modules below it back on the tower.":
        "Die Wägezelle von Ebene {level} ist nicht verbunden: die Module darunter "
        "wieder aufsetzen.",
    "Level {level}: leave the plate empty and do not touch the tower.":
        "Ebene {level}: Platte leer lassen und den Turm nicht berühren.",
    "Level {level}: load noise {noise:.3f} g.": "Ebene {level}: Gewichtsrauschen {noise:.3f} g.",
    "Level {level}: piezo idles at {bias:.0f} with noise {noise:.1f} codes.":
        "Ebene {level}: Piezo ruht bei {bias:.0f}, Rauschen {noise:.1f} Stufen.",
    "Level {level}: plate reads {grams:+.2f} g.": "Ebene {level}: Platte zeigt {grams:+.2f} g.",
    "Level {level}: put the {mass} in the middle of the plate.":
        "Ebene {level}: {mass} in die Mitte der Platte legen.",
    "Level {level}: put {n} cubes on the plate.": "Ebene {level}: {n} Würfel auf die Platte legen.",
    "Level {level}: take the cubes off the plate.":
        "Ebene {level}: die Würfel von der Platte nehmen.",
    "Level {level}: take the {mass} off the plate.": "Ebene {level}: {mass} von der Platte nehmen.",
    "No calibration for this device.": "Für dieses Gerät gibt es keine Kalibrierung.",
    "Run the calibration, or play uncalibrated: the detector then tares itself on a quiet tower.":
        "Kalibrierung durchführen oder unkalibriert spielen: die Erkennung tariert sich dann "
        "selbst am ruhigen Turm.",
    "Seat the modules firmly; clean the spring contacts above level {level}.":
        "Module fest aufsetzen; Federkontakte über Ebene {level} reinigen.",
    "Lift modules {level} to {top} together to open level {level}.":
        "Module {level} bis {top} gemeinsam anheben, um Ebene {level} zu öffnen.",
    "Put the modules back on: the tower is closed again.":
        "Module wieder aufsetzen: der Turm ist wieder geschlossen.",
    "Calibration finished.": "Kalibrierung abgeschlossen.",
    "Level {level}: leave the cubes on the plate.":
        "Ebene {level}: die Würfel auf der Platte liegen lassen.",
    "Take the top module off to open level {level}.":
        "Das oberste Modul abnehmen, um Ebene {level} zu öffnen.",
    "Level {level}: drop cube {i} of {n} onto the plate from about 3 cm.":
        "Ebene {level}: Würfel {i} von {n} aus etwa 3 cm Höhe auf die Platte fallen lassen.",
}
