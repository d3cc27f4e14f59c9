"""``towerear eval``: detection accuracy on simulated towers not used for tuning.

- :mod:`~hostapp.eval.sessions`: make a recording of one simulated session
  through the simulated device's bytes, with its truth in stream time.
- :mod:`~hostapp.eval.runner`: the families, seeds, and scoring.
- :mod:`~hostapp.eval.report`: markdown and PNG plots into ``docs/eval/``.
"""
