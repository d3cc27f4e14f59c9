"""Streaming detection: where each cube came to rest, and the tower's other events.

Pure numpy/scipy; no I/O, no threads. Every processor takes blocks of any
size and gives the same results as one big block (tests prove it).

Public API
----------
:class:`~dsp.detect.detector.Detector` is the whole pipeline::

    from dsp.detect.detector import Detector
    from dsp.detect.calibration import DetectorCalibration

    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0,
                   calibration=None)            # or a DetectorCalibration
    events = det.feed_piezo(t0_s, samples)       # samples: (n, 8) ADC codes
    events += det.feed_load(t_s, values, valid)  # (m,), (m, 8) counts, (m, 8) bool
    events += det.finish()                       # at the end of the stream
    for e in events:
        print(e.to_json())                       # contracts.md section 3

Feed both streams in arrival order, in blocks of up to about a second each
(a stream more than 2.5 s ahead of the other is taken as the other being
absent: acoustic-only). Events come out in the order decided; their
``t_decided`` is the stream time at which the data allowed the decision.
``det.diagnostics()`` gives counters; ``det.learnt_calibration()`` what was
learnt (the acoustic signatures), to start the next session from.

Events (:mod:`~dsp.detect.events`): :class:`~dsp.detect.events.Landing`,
:class:`~dsp.detect.events.Removal`, :class:`~dsp.detect.events.Lift`,
:class:`~dsp.detect.events.Closed`, :class:`~dsp.detect.events.Disturbance`.

Stages
------
- :mod:`~dsp.detect.conditioning`: high-pass, frame-peak envelope.
- :mod:`~dsp.detect.biquad`: that high-pass's filter, without importing scipy.signal.
- :mod:`~dsp.detect.noisefloor`: adaptive floor per channel.
- :mod:`~dsp.detect.onsets`: threshold, scan and mask times, retrigger decay.
- :mod:`~dsp.detect.grouping`: simultaneous onsets on several levels -> one impact.
- :mod:`~dsp.detect.motion`: when each plate starts and stops making sound.
- :mod:`~dsp.detect.piezo`: the piezo chain on a stream-time grid (gaps, duplicates).
- :mod:`~dsp.detect.acoustic`: crosstalk prior and self-learning level signatures.
- :mod:`~dsp.detect.loadcell`: stability windows, steps, (dis)connections.
- :mod:`~dsp.detect.ringing`: a ringing plate's load, from balanced or fitted windows.
- :mod:`~dsp.detect.cubes`: size and sign of one cube per level, learnt or given.
- :mod:`~dsp.detect.strikes`: what a drop's strikes tell (passes, runs, a cube that stayed).
- :mod:`~dsp.detect.loadhistory`: recent load readings (present? how far a plate swung).
- :mod:`~dsp.detect.stops`: a thrown cube that stopped on a plate, knocking its cube down.
- :mod:`~dsp.detect.trust`: whether a load step is a cube's, by ear and by its plate's swing.
- :mod:`~dsp.detect.slides`: signs of a tower whose cubes rest a moment and slide on.
- :mod:`~dsp.detect.flatdiscs`: whether the discs tell the plates apart (strikes stand out).
- :mod:`~dsp.detect.dropgap`: how long a silence ends a drop heard without load cells.
- :mod:`~dsp.detect.deadcells`: load cells that read nothing; their levels' cubes heard.
- :mod:`~dsp.detect.deafdiscs`: contact microphones that hear none of their plate's landings.
- :mod:`~dsp.detect.topmodule`: the top module lifted alone (level 7 opened, no channel shows).
- :mod:`~dsp.detect.converter`: whether a slow converter's spikes allow short windows.
- :mod:`~dsp.detect.fusion`: landings, removals, lifts, closures, disturbances.
- :mod:`~dsp.detect.calibration`: :class:`~dsp.detect.calibration.DetectorCalibration`.
- :mod:`~dsp.detect.synthetic`: simple synthetic tower signals for tests.

See docs/detection.md for the design, the parameters and the evaluation.
"""
