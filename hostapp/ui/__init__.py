"""The PyQt6 desktop app.

:mod:`hostapp.ui.app` is the composition root: it is the only module that
builds sources, the detection worker, the game controller and the window and
wires them together. Every page receives an :class:`hostapp.ui.context.AppContext`
and nothing else, so pages can be built in tests with the real parts.
"""
