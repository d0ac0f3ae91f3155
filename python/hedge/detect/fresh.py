"""hedge's heartbeat-fresh straggler rules on plain arrays (tasks along the last axis).

The study (:mod:`hedge.detect.study`) and the snapshot detectors
(:mod:`hedge.detect.detectors`, hence the policies) both call these, so the simulator,
the plugin and the study judge tasks the same way. Both work on the fresh estimate
(:func:`hedge.estimate.runtime.fresh_arrays`): ETD_i = ECT_i - s_i, the expected run time
from launch (JVM start-up included), exact under constant speed.

Speed noise. When the job gives no evidence that speeds are constant (its
:func:`hedge.estimate.runtime.speed_noise_arrays` is above ``noise_evidence``, or
unknown), the extrapolation can be wrong either way, so both rules then

- floor a running attempt's ETD at its elapsed time t - s_i (it has not ended yet);
- judge a candidate on an *optimistic* ETD, its estimated remaining time shrunk by
  ``caution`` (it may speed up): early, noisy over-estimates do not flag it;
- lower the bar by ``margin``: a task just past the bar can end between two scans or
  two heartbeats, so it has to be caught a little early.

``fresh-rate``: LATE's rule ``ETD_i >= factor x mean ETD`` (bar ``factor - margin`` when
noisy).

``fresh-score``: the score rule ``NP_i <= mean NP - gap`` (``gap - margin`` when noisy)
on *normalised progress*: the fraction of its run each task has done after running for
the same time H since its own launch, ``NP_i = H / ETD_i`` (not capped at 1). H is the
longest any task has been running, at most ``horizon`` x the mean ETD (about when normal
tasks are done). Raw progress punishes late starters (a task launched 2 s ago shows 0.1
however fast it is) and, at gap 0.2, cannot tell a task 1.2x the mean from a normal
one; normalised progress does both, and keeps a slow JVM start-up against the task.
At the cap the rule flags ETD_i >= about ``horizon / (horizon (1 + cv^2) - gap)`` x the
mean (cv: the spread of the ETDs; the mean of H/ETD exceeds H/mean ETD). Measured on the
study (seeds 0 and 1): ``horizon`` 1.2 flags 5-8 % of normal tasks in the published
grid's skewed-start cells, 1.1 misses more stragglers under noise; 1.15 is the default.
"""

from __future__ import annotations

import warnings

import numpy as np

from hedge.detect.rules import masked_mean

Array = np.ndarray


def _etds(ect: Array, start: Array, sent: Array, now: float | Array, candidates: Array,
          noise: float | Array, caution: float, noise_evidence: float,
          ) -> tuple[Array, Array, Array]:
    """(noisy, central ETD, optimistic ETD); the last two differ from ECT - start only for
    running candidates of noisy jobs (module docstring)."""
    with np.errstate(invalid="ignore"):
        noisy = ~(np.asarray(noise) <= noise_evidence)
        running = noisy & candidates & np.isfinite(ect)
        central = np.where(running, np.fmax(ect, now), ect) - start
        optimistic = np.where(running, np.fmax(ect - caution * (ect - sent), now), ect)
    return noisy, central, optimistic - start


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
    """``ETD_i >= factor x mean ETD`` (noisy: optimistic ETD_i, bar ``factor - margin``).

    ``ect``: fresh ECTs (report send time + estimated remaining time; the send time for
    finished attempts); ``noise``: the job's speed noise
    (:func:`hedge.estimate.runtime.speed_noise_arrays`, NaN = unknown), broadcast
    against the batch axes.
    """
    noisy, central, optimistic = _etds(ect, start, sent, now, candidates, noise, caution,
                                       noise_evidence)
    limit = np.where(noisy, factor - margin, factor) * masked_mean(central, known)[..., None]
    with np.errstate(invalid="ignore"):
        return candidates & (optimistic >= limit)


def fresh_score_rule(
    ect: Array,
    start: Array,
    sent: Array,
    now: float | Array,
    known: Array,
    candidates: Array,
    noise: float | Array,
    gap: float = 0.2,
    horizon: float = 1.15,
    margin: float = 0.02,
    caution: float = 0.5,
    noise_evidence: float = 0.01,
) -> Array:
    """``NP_i <= mean NP - gap`` on normalised progress ``NP_i = H / ETD_i``.

    ``H = min(max_i (t - s_i), horizon x mean ETD)`` over the known tasks with an
    estimate (tasks without one, e.g. no progress yet, are neither flagged nor in the
    mean). Noisy jobs: candidates are judged on their optimistic ETD, the mean uses the
    floored one, the gap is ``gap - margin``. Arguments as in :func:`fresh_rate_rule`.
    """
    noisy, central, optimistic = _etds(ect, start, sent, now, candidates, noise, caution,
                                       noise_evidence)
    usable = known & np.isfinite(central)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows are expected
        running_for = np.nanmax(np.where(usable, now - start, np.nan), axis=-1)
        h = np.fmin(running_for, horizon * masked_mean(central, usable))[..., None]
        limit = masked_mean(h / central, usable)[..., None] - np.where(noisy, gap - margin, gap)
        return candidates & usable & (h / optimistic <= limit)
