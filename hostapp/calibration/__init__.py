"""Sensor calibration: profiles per device, the load-cell and acoustic procedures,
the health check before a game, and the calibration report.

Both faces, ``towerear calibrate`` in the terminal and the wizard in the app,
drive the same transport-free session objects: they feed load readings and
piezo blocks in, and show the session's prompt and progress.
"""
