"""Compiled fresh estimates of one job's attempt table (numba, no fastmath): what the
fresh-* policies read from a table that changed, in one call (issue 21).

:func:`fresh_table` gives, bit for bit, what the numpy code of
:mod:`hedge.estimate.runtime` and :mod:`hedge.detect.detectors` gives (the reference,
compared in ``tests/unit/test_estimate_runtime_kernels.py``):

- the fresh ECT and the borrowed-rate spread per attempt, maps and reduces each other's
  peers only (``hedge.detect.detectors.fresh_inputs``: :func:`~hedge.estimate.runtime.peer_rates`,
  :func:`~hedge.estimate.runtime.fresh_arrays`,
  :func:`~hedge.estimate.runtime.borrowed_rate_spread_arrays` per task type);
- the known and candidate masks (``known_mask``, ``candidate_mask``);
- the job's speed noise (:func:`~hedge.estimate.runtime.speed_noise_arrays` over the known
  attempts, given each one's previous report).

Same floating-point operations in the same order: a mean is numpy's pairwise sum over
every value (NaN as 0) over the count (``np.nanmean``), a median the middle value or the
mean of the two middle ones. One case is left to the numpy code: a peers' median rate of
exactly zero, whose sign ``np.nanmedian`` decides (``ok`` False; rates are positive, so it
does not happen in practice).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hedge.estimate.runtime import JVM_EVIDENCE, MIN_PEERS
from hedge.model import AttemptState
from hedge.numpy_sum import pairwise_sum

_RUNNING, _SUCCEEDED = int(AttemptState.RUNNING), int(AttemptState.SUCCEEDED)


@njit(cache=True, error_model="numpy")
def _median(values: np.ndarray, m: int) -> float:  # pragma: no cover - compiled
    """Median of ``values[:m]`` (no NaN among them; NaN when m = 0), as
    ``hedge.estimate.runtime._nanmedian_last`` takes it."""
    if m == 0:
        return math.nan
    x = np.sort(values[:m])
    h = m // 2
    return x[h] if m % 2 else (x[h - 1] + x[h]) / 2


@njit(cache=True, error_model="numpy")
def _peers(start, progress, sent, fpt, fp, known):  # pragma: no cover - compiled
    """``peer_rates`` of these attempts: two_reports, own, median, startup; and whether
    the median rate is not zero (else its sign is np.nanmedian's: not ok)."""
    n = len(start)
    two = np.empty(n, np.bool_)
    own = np.empty(n)
    rates = np.empty(n)
    delays = np.empty(n)
    m = d = 0
    for i in range(n):
        gained = progress[i] - fp[i]
        since_fp = sent[i] - fpt[i]
        two[i] = gained > 0 and since_fp > 0
        own[i] = gained / (since_fp if two[i] else math.nan)
        if known[i] and two[i]:
            if not math.isnan(own[i]):
                rates[m] = own[i]
                m += 1
            delay = fpt[i] - fp[i] / own[i] - start[i]
            if not math.isnan(delay):
                delays[d] = delay
                d += 1
    median = _median(rates, m)
    counted = 0
    for i in range(n):
        if known[i] and two[i]:
            counted += 1
    startup = _median(delays, d) if counted >= MIN_PEERS else math.nan
    return two, own, median, startup, median != 0


@njit(cache=True, error_model="numpy")
def _fresh_type(start, progress, sent, fpt, fp, jvm_evidence):  # pragma: no cover - compiled
    """``fresh_arrays`` and ``borrowed_rate_spread_arrays`` of one task type's attempts
    (every attempt counted among the peers), and whether the median rate was not 0."""
    n = len(start)
    two, own, median, startup, ok = _peers(start, progress, sent, fpt, fp,
                                           np.ones(n, np.bool_))
    ect = np.empty(n)
    squares = np.zeros(n)
    count = 0
    for i in range(n):
        p = progress[i]
        launch = (p if p > 0 else math.nan) / (sent[i] - start[i])
        single = median if startup > jvm_evidence else launch
        if not (math.isfinite(startup) and p > 0):
            single = math.nan
        rate = own[i] if two[i] else single
        if not rate > 0:
            rate = math.nan
        ect[i] = sent[i] if p >= 1.0 else sent[i] + (1.0 - p) / rate
        x = own[i] / median - 1.0
        x = x * x
        if not math.isnan(x):
            squares[i] = x
            count += 1
    spread = math.sqrt(pairwise_sum(squares) / count)
    out = np.empty(n)
    for i in range(n):
        borrowed = not two[i] and progress[i] > 0 and startup > jvm_evidence
        out[i] = spread if borrowed else 0.0
    return ect, out, ok


@njit(cache=True, error_model="numpy")
def fresh_table(task_type, state, start, progress, sent, fpt, fp, prev_progress, prev_sent,
                jvm_evidence=JVM_EVIDENCE):  # pragma: no cover - compiled
    """Per attempt: fresh ECT, borrowed-rate spread, known, candidate; the job's speed
    noise; ok (False: a zero median rate, use the numpy code); the number of running
    attempts."""
    n = len(start)
    known = np.empty(n, np.bool_)
    cand = np.empty(n, np.bool_)
    running = 0
    for i in range(n):
        running += state[i] == _RUNNING
        reported = not math.isnan(sent[i])
        known[i] = (state[i] == _RUNNING or state[i] == _SUCCEEDED) and reported
        cand[i] = state[i] == _RUNNING and reported and progress[i] < 1.0
    ect = np.full(n, math.nan)
    spread = np.full(n, math.nan)
    ok = True
    for kind in np.unique(task_type):
        rows = np.flatnonzero(task_type == kind)
        e, s, fine = _fresh_type(start[rows], progress[rows], sent[rows], fpt[rows],
                                 fp[rows], jvm_evidence)
        ect[rows] = e
        spread[rows] = s
        ok = ok and fine
    # speed noise: every attempt of the job, the known ones counted
    _, _, _, startup, _ = _peers(start, progress, sent, fpt, fp, known)
    squares = np.zeros(n)
    count = 0
    for i in range(n):
        if not known[i]:
            continue
        pp, ps = prev_progress[i], prev_sent[i]
        recent = (progress[i] - pp) / (sent[i] - ps)
        if ps > fpt[i]:
            before = (pp - fp[i]) / (ps - fpt[i])
        elif startup <= jvm_evidence:
            before = pp / (ps - start[i])
        else:
            before = math.nan
        if not (pp > 0 and before > 0):
            before = math.nan
        change = abs(recent / before - 1.0)
        x = change * change
        if not math.isnan(x):
            squares[i] = x
            count += 1
    noise = math.sqrt(pairwise_sum(squares) / count)
    return ect, spread, known, cand, noise, ok, running
