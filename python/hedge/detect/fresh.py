"""hedge's heartbeat-fresh straggler rules on plain arrays (tasks along the last axis).

The study (:mod:`hedge.detect.study`) and the snapshot detectors
(:mod:`hedge.detect.detectors`, hence the policies) both call these, so the simulator,
the plugin and the study judge tasks the same way.

``fresh-rate``: LATE's rule ``ETD_i >= factor x mean ETD`` on the fresh estimate
(:func:`hedge.estimate.runtime.fresh_arrays`), which is exact under constant speed. When
the job gives no evidence that speeds are constant (its
:func:`hedge.estimate.runtime.speed_noise_arrays` is above ``noise_evidence``, or
unknown), the extrapolation can be wrong either way, so:

- a running attempt's duration is at least its elapsed time: ETD >= t - s_i;
- a candidate is judged on an optimistic ETD, its estimated remaining time shrunk by
  ``caution`` (it might speed up): early, noisy over-estimates do not flag it;
- the bar is ``(factor - margin) x mean ETD``: a task just past ``factor`` x the mean
  can end between two scans or between two heartbeats, so it is caught a little early.

``fresh-score``: the score rule ``NP_i <= mean NP - gap`` on *normalised progress*: the
progress each task would show after working for the same time H, ``NP_i = rate_i x H``
(rate after JVM start-up, not capped at 1), where H is the longest any task has been
working, at most ``horizon`` x the mean estimated work duration (beyond it, normal
tasks are done). Raw progress punishes late starters (a task launched 2 s ago has
progress 0.1 however fast it is) and at ``gap`` = 0.2 it cannot separate a task 1.2x
the mean from a normal one; normalised progress does both.
"""

from __future__ import annotations

import warnings

import numpy as np

from hedge.detect.rules import masked_mean, score_rule

Array = np.ndarray


def fresh_rate_rule(
    ect: Array,
    start: Array,
    sent: Array,
    now: float | Array,
    known: Array,
    candidates: Array,
    noise: float | Array,
    factor: float = 1.2,
    margin: float = 0.05,
    caution: float = 0.5,
    noise_evidence: float = 0.01,
) -> Array:
    """Flag candidates whose (optimistic) ETD >= bar x mean ETD; see the module docstring.

    ``ect``: fresh ECTs (report send time + estimated remaining time; the send time for
    finished attempts); ``noise``: the job's speed noise
    (:func:`hedge.estimate.runtime.speed_noise_arrays`, NaN = unknown), broadcast
    against the batch axes. Constant speed: exactly
    ``ETD_i >= factor x mean ETD``.
    """
    with np.errstate(invalid="ignore"):
        noisy = ~(np.asarray(noise) <= noise_evidence)
        running = noisy & candidates & np.isfinite(ect)
        central = np.where(running, np.fmax(ect, now), ect)
        optimistic = np.where(running, np.fmax(ect - caution * (ect - sent), now), ect)
        bar = np.where(noisy, factor - margin, factor)
        limit = bar * masked_mean(central - start, known)[..., None]
        return candidates & (optimistic - start >= limit)


def fresh_score_rule(
    rate: Array,
    work_start: Array,
    now: float | Array,
    known: Array,
    candidates: Array,
    gap: float = 0.2,
    horizon: float = 1.2,
) -> Array:
    """Score rule on normalised progress ``NP_i = rate_i x H`` (module docstring).

    ``H = min(max_i (t - w_i), horizon x mean_i (1 / rate_i))`` over the known tasks with
    a rate, ``w_i`` = work start. Tasks without a rate (no progress yet) are neither
    flagged nor in the mean.
    """
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows are expected
        usable = known & np.isfinite(rate)
        working = np.nanmax(np.where(usable, now - work_start, np.nan), axis=-1)
        duration = masked_mean(1.0 / rate, usable)
        h = np.fmin(working, horizon * duration)[..., None]
        return score_rule(rate * h, usable, candidates & usable, gap)
