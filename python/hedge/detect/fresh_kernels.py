"""Compiled fresh-* verdict of one job (numba, no fastmath): what
:func:`hedge.detect.fresh.fresh_rate_verdict`, :func:`~hedge.detect.fresh.fresh_score_verdict`
and :func:`~hedge.detect.fresh.quiet_until` compute on 1-D arrays, in one call.

The fresh-* policies test their rule at every scan of a job; as numpy expressions that was
some 150 small calls (~0.5 ms a scan, issue 21), so the call count, not the arithmetic, set
its cost. These kernels give *bit-identical* results to that numpy code (the reference,
compared in ``tests/unit/test_detect_fresh_kernels.py``): the same floating-point
operations in the same order, no fastmath (LLVM neither contracts ``a * b + c`` into an
FMA nor reorders a sum). A sum over the tasks is numpy's pairwise sum
(:func:`hedge.numpy_sum.pairwise_sum`), ``np.fmax`` / ``np.nan_to_num`` are spelled out. The one call they
leave to numpy is ``scipy.special.ndtr`` of fresh-rate's last chance: the kernel marks the
tasks whose verdict needs it (few: those past their last-chance time with a trusted
sigma) and :func:`rate_flags` finishes them with the reference's own expression.

Measured (issue 21, B, 2026-11-26; bench_sim ``--sizes 15000``, 22,102 tasks, CPU s, two
runs of each tree interleaved, min-max, x none in the same run), before (9f87aa4) ->
after (c0481fa: these kernels, ``hedge.estimate.runtime_kernels``, the compiled
``PreviousReports.update``, one ``ReportHistory.check`` per table and the NaN-weight
bound of ``quiet_until``): day fresh-score 56.1-57.5 (234-269x) -> 21.5-22.1 (73-105x),
fresh-rate 79.1-82.0 (342-370x) -> 19.5-21.9 (64-107x), its scans 99,513 -> 43,032
(fresh-score's: 43,032 before and after); burst
fresh-score 62.2-64.1 (219-236x) -> 23.8-23.9 (91-104x), fresh-rate 84.1-95.7
(296-352x) -> 27.0-28.5 (103-125x), its scans 104,375 -> 47,891 (none 0.2-0.3 s). Nearly
every scan left is a table's first (a report arrived); of its cost under cProfile
``ReportHistory.check`` is about 30 %, the simulator's snapshot 15 %, these kernels and
the inputs' about 20 %.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import ndtr

from hedge.numpy_sum import pairwise_sum

_DBL_MAX = np.finfo(np.float64).max


@njit(cache=True, inline="always")
def _fmax(a: float, b: float) -> float:  # pragma: no cover - compiled
    """``np.fmax(a, b)``: the other value where one is NaN."""
    if math.isnan(b):
        return a
    if math.isnan(a):
        return b
    return a if a >= b else b


@njit(cache=True, inline="always")
def _nan_to_num(x: float) -> float:  # pragma: no cover - compiled
    """``np.nan_to_num(x)``: NaN 0, infinities the largest finite values."""
    if math.isnan(x):
        return 0.0
    if x == math.inf:
        return _DBL_MAX
    if x == -math.inf:
        return -_DBL_MAX
    return x


@njit(cache=True)
def _belief(ect, start, sent, received, now, known, cand, noise,
            spread):  # pragma: no cover - compiled
    """:func:`hedge.detect.fresh.duration_belief` of one job: central, certain, sigma,
    elapsed."""
    n = len(ect)
    delay = math.nan
    for i in range(n):
        if known[i]:
            d = received[i] - sent[i]
            if not math.isnan(d) and (math.isnan(delay) or d > delay):
                delay = d
    delay = _nan_to_num(_fmax(delay, 0.0))
    central = np.empty(n)
    certain = np.empty(n)
    sigma = np.empty(n)
    elapsed = np.empty(n)
    for i in range(n):
        el = now - start[i]
        elapsed[i] = el
        if known[i] and not cand[i]:  # finished: the exact duration
            exact = ect[i] - start[i]
            central[i] = exact
            certain[i] = exact
            sigma[i] = 0.0
            continue
        cert = _fmax(sent[i] - start[i], el - delay)
        certain[i] = cert
        extrapolated = _fmax(ect[i] - sent[i], now - sent[i])
        central[i] = _fmax(ect[i] - start[i], cert) if math.isfinite(ect[i]) else math.nan
        borrowed = spread[i] * _fmax(ect[i] - sent[i], 0.0)
        x = noise * extrapolated
        sigma[i] = math.sqrt(x * x + borrowed * borrowed)
    return central, certain, sigma, elapsed


@njit(cache=True)
def _known_mean(x, known):  # pragma: no cover - compiled
    """``(use, mean, count)``: which values are known and finite, and their mean as numpy
    takes it (``np.sum`` of them with zeros elsewhere over their count; NaN when none)."""
    n = len(x)
    use = np.empty(n, np.bool_)
    values = np.zeros(n)
    count = 0
    for i in range(n):
        use[i] = known[i] and math.isfinite(x[i])
        if use[i]:
            values[i] = x[i]
            count += 1
    return use, pairwise_sum(values) / (count if count > 0 else math.nan), count


@njit(cache=True)
def _filled(central, certain, known):  # pragma: no cover - compiled
    """:func:`hedge.detect.fresh._filled`: central estimates, the others the mean of those
    (at least their certain bound)."""
    n = len(central)
    has, mean, _ = _known_mean(central, known)
    out = np.empty(n)
    for i in range(n):
        if has[i]:
            out[i] = central[i]
        else:
            out[i] = _fmax(certain[i], mean) if math.isfinite(mean) else math.nan
    return out


@njit(cache=True)
def _bar_spread(sigma, use, weight):  # pragma: no cover - compiled
    """:func:`hedge.detect.fresh._bar_spread`: ``weight x`` sd of the others' sum."""
    n = len(sigma)
    var = np.zeros(n)
    for i in range(n):
        if use[i] and math.isfinite(sigma[i]):
            var[i] = sigma[i] * sigma[i]
    total = pairwise_sum(var)
    out = np.empty(n)
    for i in range(n):
        out[i] = weight * math.sqrt(_fmax(total - var[i], 0.0))
    return out


@njit(cache=True)
def _sequential(central, certain, sigma, elapsed, bar, bar_sd, cand, z, z_last,
                scan_interval, on_loss, threshold):  # pragma: no cover - compiled
    """:func:`hedge.detect.fresh.sequential_flags`, and with ``on_loss`` the tasks whose
    last chance needs ``ndtr`` (trusted, tau > 0, past their last-chance time, not flagged
    by the confident branch) left unflagged and marked in ``pending``; the tau of every
    task. ``threshold``: ``ndtr(-z_last)``, the loss's level."""
    n = len(central)
    flags = np.zeros(n, np.bool_)
    pending = np.zeros(n, np.bool_)
    tau = np.empty(n)
    for i in range(n):
        bi, sd = bar[i], bar_sd[i]
        t = math.sqrt(sigma[i] * sigma[i] + sd * sd)
        tau[i] = t
        if not cand[i]:
            continue
        trusted = math.isfinite(sigma[i])
        low = _fmax(certain[i], central[i] - z * t) if trusted else certain[i]
        if low >= bi:
            flags[i] = True
            continue
        if not elapsed[i] + scan_interval >= bi:
            continue
        if not trusted:
            flags[i] = central[i] >= bi
        elif not on_loss:
            flags[i] = central[i] + z_last * t >= bi
        elif t > 0:
            pending[i] = True
        else:  # tau 0 (or NaN): whether the central estimate lies in [bar, next scan)
            inside = (bi <= central[i]) and (central[i] < elapsed[i] + scan_interval)
            flags[i] = (1.0 if inside else 0.0) >= threshold
    return flags, pending, tau


@njit(cache=True)
def rate_core(ect, start, sent, received, now, known, cand, noise, spread, factor, z,
              z_last, scan_interval, threshold):  # pragma: no cover - compiled
    """fresh-rate's verdict but for the pending last chances (:func:`_sequential`):
    flags, pending, bar, judged, weight (one value), filled, and the belief's central,
    tau and elapsed for the pending ones."""
    central, certain, sigma, elapsed = _belief(ect, start, sent, received, now, known,
                                               cand, noise, spread)
    n = len(ect)
    filled = _filled(central, certain, known)
    count = 0
    for i in range(n):
        if not known[i]:
            filled[i] = 0.0
        elif math.isfinite(filled[i]):
            count += 1
    weight = factor / (count - factor if count > factor else math.nan)
    summed = np.empty(n)
    for i in range(n):  # np.nansum's NaN -> 0
        summed[i] = 0.0 if math.isnan(filled[i]) else filled[i]
    total = pairwise_sum(summed)
    bar = np.empty(n)
    judged = np.empty(n, np.bool_)
    use = np.empty(n, np.bool_)
    for i in range(n):
        bar[i] = weight * (total - _nan_to_num(filled[i]))
        judged[i] = math.isfinite(filled[i])
        use[i] = known[i] and not math.isnan(filled[i])
    bar_sd = _bar_spread(sigma, use, weight)
    flags, pending, tau = _sequential(central, certain, sigma, elapsed, bar, bar_sd,
                                      cand & judged, z, z_last, scan_interval, True,
                                      threshold)
    return flags, pending, bar, judged, weight, filled, central, tau, elapsed


@njit(cache=True)
def score_core(ect, start, sent, received, now, known, cand, noise, spread, gap, horizon,
               z, z_last, scan_interval):  # pragma: no cover - compiled
    """fresh-score's verdict: flags, bar (one value), judged, weight (one value),
    filled."""
    central, certain, sigma, elapsed = _belief(ect, start, sent, received, now, known,
                                               cand, noise, spread)
    n = len(ect)
    filled = _filled(central, certain, known)
    usable, mean, count = _known_mean(filled, known)
    ratio = horizon / (horizon - gap)
    weight = ratio / (count if count > 0 else math.nan)
    bar_sd = _bar_spread(sigma, usable, weight)
    bar = ratio * mean
    bars = np.full(n, bar)
    flags, _, _ = _sequential(central, certain, sigma, elapsed, bars, bar_sd,
                              cand & usable, z, z_last, scan_interval, False, 0.0)
    return flags, bar, usable, weight, filled


@njit(cache=True)
def quiet_core(bar, judged, weight, summed, ect, start, sent, now, watched, z,
               scan_interval, rel, absolute):  # pragma: no cover - compiled
    """:func:`hedge.detect.fresh.quiet_until` of one job, ``bar`` one value per task."""
    n = len(bar)
    any_watched = False
    for i in range(n):
        if watched[i]:
            any_watched = True
            break
    if not any_watched or math.isnan(weight):  # a NaN weight: NaN bars, never a flag
        return math.inf
    if not (z >= 0.0 and scan_interval >= 0.0):
        return now
    values = np.zeros(n)
    for i in range(n):
        if judged[i]:
            values[i] = abs(summed[i])
    scale = abs(weight) * pairwise_sum(values)
    if not math.isfinite(scale):
        return now
    for i in range(n):
        if watched[i] and not math.isfinite(bar[i]):
            return now
    first = math.inf
    for i in range(n):
        if not watched[i]:
            continue
        b = bar[i] - rel * (abs(bar[i]) + scale)
        s = start[i]
        if _fmax(ect[i] - s, sent[i] - s) >= b:
            return now
        f = s + (b - scan_interval)
        f -= rel * (abs(s) + abs(b) + scan_interval) + absolute
        if f < first:
            first = f
    return first if first > now else now


def rate_flags(ect: np.ndarray, start: np.ndarray, sent: np.ndarray, received: np.ndarray,
               now: float, known: np.ndarray, cand: np.ndarray, noise: float,
               spread: np.ndarray, factor: float, z: float, z_last: float,
               scan_interval: float) -> tuple[np.ndarray, tuple]:
    """fresh-rate's flags (those of :func:`hedge.detect.fresh.fresh_rate_verdict`) and
    what :func:`quiet` needs of the verdict."""
    threshold = ndtr(-z_last)
    flags, pending, bar, judged, weight, filled, central, tau, elapsed = rate_core(
        ect, start, sent, received, now, known, cand, noise, spread, factor, z, z_last,
        scan_interval, float(threshold))
    rows = np.flatnonzero(pending)
    if len(rows):  # the reference's _chance_between on the tasks that need ndtr
        c, t, b = central[rows], tau[rows], bar[rows]
        chance = ndtr((elapsed[rows] + scan_interval - c) / t) - ndtr((b - c) / t)
        flags[rows] = chance >= threshold
    return flags, (bar, judged, weight, filled)


def score_flags(ect: np.ndarray, start: np.ndarray, sent: np.ndarray, received: np.ndarray,
                now: float, known: np.ndarray, cand: np.ndarray, noise: float,
                spread: np.ndarray, gap: float, horizon: float, z: float, z_last: float,
                scan_interval: float) -> tuple[np.ndarray, tuple]:
    """fresh-score's flags (those of :func:`hedge.detect.fresh.fresh_score_verdict`) and
    what :func:`quiet` needs of the verdict."""
    flags, bar, usable, weight, filled = score_core(
        ect, start, sent, received, now, known, cand, noise, spread, gap, horizon, z,
        z_last, scan_interval)
    return flags, (np.full(len(flags), bar), usable, weight, filled)


def quiet(parts: tuple, ect: np.ndarray, start: np.ndarray, sent: np.ndarray, now: float,
          watched: np.ndarray, z: float, scan_interval: float) -> float:
    """:func:`hedge.detect.fresh.quiet_until` from the ``parts`` of a verdict that
    :func:`rate_flags` or :func:`score_flags` returned."""
    from hedge.detect.fresh import _QUIET_ABS, _QUIET_REL

    bar, judged, weight, summed = parts
    return quiet_core(bar, judged, float(weight), summed, ect, start, sent, float(now),
                      watched, float(z), float(scan_interval), _QUIET_REL, _QUIET_ABS)
