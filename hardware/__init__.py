"""The towerear sensor kit's hardware design as code.

``pinout.json`` is the single source of truth for the Nano's pins; the modules
here build the schematic from it (:mod:`hardware.schematic`), hold the piezo
front end's component values and arithmetic (:mod:`hardware.frontend`), check
that arithmetic with ngspice (:mod:`hardware.spice`), read the bill of
materials (:mod:`hardware.bom`) and write the generated sections of the docs
(:mod:`hardware.docgen`). Run them from the repository root, e.g.
``python -m hardware.docgen``.
"""
