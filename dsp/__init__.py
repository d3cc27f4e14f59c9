"""towerear signal processing: pure numpy/scipy, no Qt, no I/O, no threads.

Subpackages hold the streaming detectors (piezo, load cell, fusion), the
physical tower simulator (:mod:`dsp.sim`) and the evaluation metrics.
"""
