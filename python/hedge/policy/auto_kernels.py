"""Compiled numeric core of ``hedge-auto``'s scan (:mod:`hedge.policy.auto`; numba, no
fastmath).

A judged scan weighs up to 32 candidates x 11 lam values x 64 residuals; as numpy
expressions that was some 60 small calls (~1.5 ms a scan, issue 21), so the call count, not
the arithmetic, set its cost. These kernels do the same work in a few compiled calls.

They give *bit-identical* results to the numpy code they replace (the expressions quoted in
each docstring, kept as the reference in ``tests/unit/test_policy_auto_kernels.py``): the
same floating-point operations in the same order, with no fastmath (LLVM neither contracts
``a * b + c`` into an FMA nor reorders a sum). Where numpy's order is not the obvious one it
is spelled out: a mean over an axis is numpy's pairwise sum (:func:`hedge.numpy_sum.pairwise_sum`), a median the
mean of the two middle values, a quantile numpy's ``linear`` method with its ``_lerp``;
``exp`` and ``log`` are the C library's in both (numpy has no SIMD float64 ``exp``/``log``
below AVX-512, where the tests would catch a difference).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hedge.numpy_sum import pairwise_sum


@njit(cache=True, inline="always")
def _maximum(a: float, b: float) -> float:
    """``np.maximum(a, b)`` (NaN in either gives NaN)."""
    return a if a >= b or math.isnan(a) else b


@njit(cache=True, inline="always")
def _minimum(a: float, b: float) -> float:
    """``np.minimum(a, b)`` (NaN in either gives NaN)."""
    return a if a <= b or math.isnan(a) else b


@njit(cache=True)
def median(x: np.ndarray) -> float:
    """``np.median(x)`` of a 1-D array without NaN (NaN when empty): the middle value, or
    the mean of the two middle values as numpy takes it (``(0 + a + b) / 2``)."""
    n = len(x)
    if n == 0:
        return math.nan
    s = np.sort(x)
    h = n // 2
    if n % 2:
        return s[h]
    return ((0.0 + s[h - 1]) + s[h]) / 2.0


def log_residuals(runtimes: np.ndarray, quantiles: np.ndarray) -> tuple[float, np.ndarray]:
    """``(m, r)``: ``m = np.median(runtimes)`` and ``r = np.log(runtimes / m)``, or, when
    there are more than ``len(quantiles)`` of them, ``np.quantile(r, quantiles)`` (numpy's
    ``linear`` method: index ``(n - 1) q`` between its floor and the next value, interpolated
    by ``_lerp``: ``a + (b - a) t``, or ``b - (b - a)(1 - t)`` where ``t >= 0.5``).
    ``runtimes``: positive, no NaN; ``quantiles`` in [0, 1).

    numpy sorts: its vectorised sort is some 7x numba's on 100,000 values (1.3 ms against
    9.5 on this machine), and every running original's estimate is among them (issue 21)."""
    return _log_residuals_sorted(runtimes, np.sort(runtimes), quantiles)


@njit(cache=True)
def _log_residuals_sorted(runtimes: np.ndarray, ordered: np.ndarray,
                          quantiles: np.ndarray) -> tuple[float, np.ndarray]:
    """``log_residuals`` given ``ordered``, the run times sorted."""
    n = len(runtimes)
    if n == 0:
        return math.nan, np.empty(0)
    h = n // 2
    m = ordered[h] if n % 2 else ((0.0 + ordered[h - 1]) + ordered[h]) / 2.0  # median()
    if n <= len(quantiles):
        r = np.empty(n)
        for i in range(n):
            r[i] = math.log(runtimes[i] / m)
        return m, r
    # the residuals of the sorted run times are the same values, in order unless rounding
    # broke the order somewhere (then they are sorted again): one sort, not two
    s = np.empty(n)
    monotone = True
    for i in range(n):
        s[i] = math.log(ordered[i] / m)
        monotone = monotone and (i == 0 or s[i] >= s[i - 1])
    if not monotone:
        s = np.sort(s)
    out = np.empty(len(quantiles))
    for j in range(len(quantiles)):
        virtual = float(n - 1) * quantiles[j]
        lower = math.floor(virtual)
        below = int(lower)
        if virtual >= n - 1:  # numpy's index above bounds: the largest value
            out[j] = s[n - 1]
            continue
        t = virtual - float(below)
        a, b = s[below], s[below + 1]
        d = b - a
        out[j] = b - d * (1.0 - t) if t >= 0.5 else a + d * t
    return m, out


@njit(cache=True)
def judge_core(lambdas: np.ndarray, belief: np.ndarray, typical: np.ndarray,
               total: np.ndarray, left: np.ndarray, residual: np.ndarray, check: float,
               kill_z: float, width: float, e_close: float, e_tie: float, finish: float,
               rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per lam value and candidate: the mean saving of the type's finish and the mean slot
    time over the residuals (``saving``, ``slot``, each ``(len(lambdas), len(typical))``),
    as these numpy expressions (axes lam, candidate, residual; ``lam = lambdas[:, None,
    None]``, ``left`` and ``rest`` broadcast as ``[None, :, None]``)::

        copy = (typical * exp((1 - lam) * log(maximum(total, 1e-9) / typical))
                * exp(lam * residual))
        race = minimum(copy, left); ahead = copy < left
        slot = where(ahead, copy, _loser_slot(copy, left, check, kill_z))
        end = maximum.accumulate(race, axis=1)
        saving = maximum(finish - maximum(end, rest), 0).mean(axis=2)
        slot = slot.mean(axis=2)

    except that the rows of a lam value whose ``belief`` is exactly 0 are 0 where every
    input is finite and far from overflow: the caller only weighs the rows by ``belief``
    (``belief @ saving``), and there a finite value times 0 adds a zero, so the sums are
    the same bit for bit (on a cluster that has seen many races, 4-5 of the 11 values
    have underflowed to 0). ``width = kill_z * ESTIMATE_LOG_SD``, ``e_close = exp(width)``,
    ``e_tie = exp(width * ERROR_FLOOR)`` (as ``_loser_slot`` computes them)."""
    n_lam, n_cand, n_res = len(lambdas), len(typical), len(residual)
    saving = np.empty((n_lam, n_cand))
    slot_mean = np.empty((n_lam, n_cand))
    log_ratio = np.empty(n_cand)
    for k in range(n_cand):
        log_ratio[k] = math.log(_maximum(total[k], 1e-9) / typical[k])
    # exp dominates the cost: the copy time is a product of one factor per (lam,
    # candidate) and one per (lam, residual), 11 x (32 + 64) exps a scan instead of
    # 11 x 32 x 64 (``_copies`` computes the same product in the same order)
    finite = True
    for r in range(n_res):
        finite = finite and math.isfinite(residual[r])
    # every saving and slot time finite (no NaN, no overflow: each exp below e^200, a
    # typical run time below 1e100): a row may be skipped
    tame = finite and abs(finish) < 1e100
    for r in range(n_res):
        tame = tame and abs(residual[r]) < 100.0
    for k in range(n_cand):
        tame = (tame and abs(log_ratio[k]) < 100.0 and 0.0 < typical[k] < 1e100
                and abs(left[k]) < 1e100 and abs(rest[k]) < 1e100)
    drawn = np.empty(n_res)  # exp(lam * residual) for the lam at hand
    copies = np.empty(n_res)
    end = np.empty(n_res)  # the latest of the top k copies' ends, per residual
    save_row = np.empty(n_res)
    slot_row = np.empty(n_res)
    for li in range(n_lam):
        if tame and belief[li] == 0.0:
            saving[li, :] = 0.0
            slot_mean[li, :] = 0.0
            continue
        lam = lambdas[li]
        stay = 1.0 - lam
        for r in range(n_res):
            drawn[r] = math.exp(lam * residual[r])
        for k in range(n_cand):
            kept = typical[k] * math.exp(stay * log_ratio[k])
            for r in range(n_res):
                copies[r] = kept * drawn[r]
            t = left[k]
            close_at, tie_at = t * e_close, t * e_tie
            far = _minimum(t, check)  # a loser far behind: killed at its first estimate
            for r in range(n_res):
                copy = copies[r]
                race = _minimum(copy, t)
                end[r] = race if k == 0 else _maximum(end[r], race)
                save_row[r] = _maximum(finish - _maximum(end[r], rest[k]), 0.0)
                if copy < t:
                    slot_row[r] = copy
                elif kill_z <= 0:
                    slot_row[r] = far
                elif copy <= close_at:
                    if copy > tie_at:  # a near tie: killed at p* of its run, if before
                        p_kill = (1.0 - math.log(copy / t) / width) * copy
                        slot_row[r] = _minimum(t, _maximum(check, p_kill))
                    else:  # within the error's floor: runs until its original ends
                        slot_row[r] = t
                else:
                    slot_row[r] = far
            saving[li, k] = pairwise_sum(save_row) / n_res
            slot_mean[li, k] = pairwise_sum(slot_row) / n_res
    return saving, slot_mean


@njit(cache=True)
def finish_bounds(remaining: np.ndarray, task: np.ndarray, typed: np.ndarray,
                  rows: np.ndarray, m: float, tail: float) -> tuple[float, np.ndarray]:
    """The type's finish and, per K, what else bounds it once the top K candidates are
    copied (``HedgeAuto._finish_bounds``).

    ``remaining``, ``task``: per attempt row, its remaining time and task; ``typed``: the
    rows of the type's running attempts; ``rows``: the candidates' rows, slowest first;
    ``tail``: ``m`` while a task of the type waits for a slot, else 0. An attempt without a
    finite estimate needs ``m`` more; each task ends with its first attempt
    (``np.minimum.at`` per task); the finish is the latest task end (``max``); the tasks not
    candidates bound it from outside (``max``, 0 unless positive); then per K the candidates
    after the K-th (a reversed ``maximum.accumulate``, 0 after the last)."""
    n = len(typed)
    top = -1
    for i in range(n):
        top = max(top, task[typed[i]])
    first = np.full(top + 1, np.inf)
    for i in range(n):
        x = remaining[typed[i]]
        bound = x if math.isfinite(x) else m
        first[task[typed[i]]] = _minimum(first[task[typed[i]]], bound)
    chosen = np.zeros(len(remaining), np.bool_)
    for k in range(len(rows)):
        chosen[rows[k]] = True
    finish = -np.inf
    outside = -np.inf
    others = False
    for i in range(n):
        end = first[task[typed[i]]]
        finish = end if i == 0 else _maximum(finish, end)
        if not chosen[typed[i]]:
            outside = end if not others else _maximum(outside, end)
            others = True
    if not (others and outside > 0):
        outside = 0.0
    k_all = len(rows)
    rest = np.empty(k_all)
    after = 0.0
    for k in range(k_all - 1, -1, -1):
        rest[k] = _maximum(_maximum(after, outside), tail)
        left = remaining[rows[k]]
        after = left if k == k_all - 1 else _maximum(after, left)
    return finish, rest


@njit(cache=True)
def candidates(of_type: np.ndarray, per_task: np.ndarray, task: np.ndarray,
               speculative: np.ndarray, remaining: np.ndarray, total: np.ndarray,
               input_ratio: np.ndarray, scale: np.ndarray, raced: np.ndarray,
               skew_ratio: float, m: float, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, skewed)``: the rows of running originals of the type (``of_type``) with one
    live attempt (``per_task``), a finite positive remaining time, a task not in ``raced``
    and no skew, slowest first (a stable sort on ``-remaining``), at most ``limit``; and the
    rows left out for skew (input ratio ``>= skew_ratio`` and ``total / scale <= skew_ratio
    * m``: ``HedgeAuto._candidates``).

    Only ``limit`` rows are kept, so they are picked in one pass (``_keep_slowest``), not
    by sorting every candidate: at 100,000 running attempts the sort took 10 ms a scan."""
    excluded = np.zeros(len(per_task), np.bool_)
    for i in range(len(raced)):
        excluded[raced[i]] = True
    slowest = np.empty(limit, np.int64)
    skew = np.empty(len(task), np.int64)
    n_slowest = n_skew = 0
    bar = skew_ratio * m
    for i in range(len(task)):
        x = remaining[i]
        if not (of_type[i] and per_task[task[i]] == 1 and not speculative[i]
                and math.isfinite(x) and x > 0 and not excluded[task[i]]):
            continue
        if input_ratio[i] >= skew_ratio and total[i] / scale[i] <= bar:
            skew[n_skew] = i
            n_skew += 1
        else:
            n_slowest = _keep_slowest(slowest, n_slowest, i, remaining)
    return slowest[:n_slowest], skew[:n_skew]


@njit(cache=True, inline="always")
def _keep_slowest(slowest: np.ndarray, n: int, row: int, remaining: np.ndarray) -> int:
    """Put ``row`` in ``slowest[:n]``, the rows seen so far with the most remaining time,
    most first, at most ``len(slowest)`` of them; rows come in increasing order, so a row
    goes after those with as much remaining time, as a stable sort would put it. Returns
    the new count."""
    x = remaining[row]
    if n == len(slowest):
        if n == 0 or x <= remaining[slowest[n - 1]]:
            return n
        n -= 1  # the last one drops out
    j = n
    while j > 0 and remaining[slowest[j - 1]] < x:
        slowest[j] = slowest[j - 1]
        j -= 1
    slowest[j] = row
    return n + 1


@njit(cache=True)
def typical_runtimes(done: np.ndarray, of_type: np.ndarray, speculative: np.ndarray,
                     total: np.ndarray, min_completed: int, peers_needed: int) -> np.ndarray:
    """``HedgeAuto._typical_runtimes``: the completed run times ``done`` followed by the
    estimated run times ``total`` of the type's running originals with a finite one, those
    above 0; empty unless ``min_completed`` completed or ``peers_needed`` originals have an
    estimate."""
    out = np.empty(len(done) + len(total))
    n = 0
    for i in range(len(done)):
        out[n] = done[i]
        n += 1
    for i in range(len(total)):
        if of_type[i] and not speculative[i] and math.isfinite(total[i]):
            out[n] = total[i]
            n += 1
    if len(done) < min_completed and n - len(done) < peers_needed:
        return out[:0]
    kept = 0
    for i in range(n):
        if out[i] > 0:
            out[kept] = out[i]
            kept += 1
    return out[:kept]


@njit(cache=True)
def check_time(first_progress_time: np.ndarray, start: np.ndarray,
               of_type: np.ndarray) -> float:
    """``HedgeAuto._check_time``: twice the median of the type's finite delays from start
    to first report (inf when none)."""
    delay = np.empty(len(start))
    n = 0
    for i in range(len(start)):
        if of_type[i]:
            x = first_progress_time[i] - start[i]
            if math.isfinite(x):
                delay[n] = x
                n += 1
    return 2.0 * median(delay[:n]) if n else math.inf


@njit(cache=True)
def race_facts(task: np.ndarray, running: np.ndarray, speculative: np.ndarray,
               remaining: np.ndarray, start: np.ndarray, progress: np.ndarray,
               raced: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per raced task (``raced``), from its running attempts (``HedgeAuto._follow_races``):
    ``counts`` (copies, originals), ``ends`` (the soonest finite remaining time of its copies
    and of its originals, inf where none has one) and ``copy`` (the latest
    start and the highest progress of its copies, NaN where it has none, ``max`` with
    numpy's NaN)."""
    n = len(raced)
    counts = np.zeros((n, 2), np.int64)
    ends = np.full((n, 2), np.inf)
    copy = np.full((n, 2), np.nan)
    top = -1
    for j in range(n):
        top = max(top, raced[j])
    index = np.full(top + 1, -1, np.int64)
    for j in range(n):
        index[raced[j]] = j
    for i in range(len(task)):
        if not running[i] or task[i] > top or index[task[i]] < 0:
            continue
        j = index[task[i]]
        side = 0 if speculative[i] else 1
        if side == 0:
            if counts[j, 0] == 0:
                copy[j, 0], copy[j, 1] = start[i], progress[i]
            else:
                copy[j, 0] = _maximum(copy[j, 0], start[i])
                copy[j, 1] = _maximum(copy[j, 1], progress[i])
        counts[j, side] += 1
        x = remaining[i]
        if math.isfinite(x) and x < ends[j, side]:
            ends[j, side] = x
    return counts, ends, copy


@njit(cache=True)
def race_pairs(task: np.ndarray, running: np.ndarray, speculative: np.ndarray,
               remaining: np.ndarray, attempt: np.ndarray,
               tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The races of ``tasks`` that can be judged again (``HedgeAuto._reopened``): a task with
    exactly two running attempts, one of them its original, both with a finite remaining
    time. Per such task, in ascending task order: the task, its original's row, the other
    row and the attempt that would end later (the first row's on a tie, as ``np.argmax``
    over the two rows in row order), as this numpy loop found them::

        rows = np.flatnonzero(running & np.isin(task, tasks))
        rows = rows[np.argsort(task[rows], kind="stable")]
        ids, first, counts = np.unique(task[rows], return_index=True, return_counts=True)
        for t, i, n in zip(ids, first, counts):
            pair = rows[i:i + n]
            original = pair[~speculative[pair]]
            if n != 2 or len(original) != 1 or not np.isfinite(remaining[pair]).all():
                continue
            later = attempt[pair[np.argmax(remaining[pair])]]"""
    top = -1
    for j in range(len(tasks)):
        top = max(top, tasks[j])
    wanted = np.zeros(top + 1, np.bool_)
    for j in range(len(tasks)):
        wanted[tasks[j]] = True
    count = np.zeros(top + 1, np.int64)
    pair = np.full((top + 1, 2), -1, np.int64)  # the first two running rows, in row order
    for i in range(len(task)):
        t = task[i]
        if not running[i] or t > top or not wanted[t]:
            continue
        if count[t] < 2:
            pair[t, count[t]] = i
        count[t] += 1
    n = 0
    out = np.empty((top + 1, 4), np.int64)
    for t in range(top + 1):
        if count[t] != 2:
            continue
        a, b = pair[t, 0], pair[t, 1]
        if speculative[a] == speculative[b]:
            continue  # two copies, or two originals: no single original
        if not (math.isfinite(remaining[a]) and math.isfinite(remaining[b])):
            continue
        original, other = (b, a) if speculative[a] else (a, b)
        later = b if remaining[b] > remaining[a] else a
        out[n, 0], out[n, 1], out[n, 2], out[n, 3] = t, original, other, attempt[later]
        n += 1
    return out[:n, 0].copy(), out[:n, 1].copy(), out[:n, 2].copy(), out[:n, 3].copy()


@njit(cache=True)
def input_ratio(inputs: np.ndarray, of_type: np.ndarray) -> tuple[np.ndarray, int]:
    """``(k, known)``: per attempt row, its input over the median input of the type's rows
    with a finite positive one (``known`` of them), 1 elsewhere; all 1 while fewer than two
    are known (``HedgeAuto._input_scale``)."""
    k = np.ones(len(inputs))
    known = np.empty(len(inputs), np.int64)
    n = 0
    for i in range(len(inputs)):
        if of_type[i] and math.isfinite(inputs[i]) and inputs[i] > 0:
            known[n] = i
            n += 1
    if n < 2:
        return k, n
    values = np.empty(n)
    for j in range(n):
        values[j] = inputs[known[j]]
    mid = median(values)
    for j in range(n):
        k[known[j]] = inputs[known[j]] / mid
    return k, n


@njit(cache=True)
def copies_behind(ends: np.ndarray, copies: np.ndarray, now: float, kill_z: float,
                  log_sd: float, floor: float) -> np.ndarray:
    """Per race (``race_facts``' ``ends`` and ``copies``): whether its copy's own estimate
    puts it behind its original beyond doubt, to be killed (``HedgeAuto._follow_races``).

    To tie, the copy's run time would have to be shorter than estimated by more than
    ``kill_z`` times the estimate's error (log scale: ``log_sd`` at the copy's start,
    shrinking in proportion to the work it has left, down to ``floor`` of it). An estimate
    from two early reports can be off by tens of percent, and a copy killed on a near tie
    may be the one that would have won; as the copy runs, its estimate sharpens and a copy
    truly behind is killed a few reports later. With ``kill_z <= 0``: as soon as its
    estimate ends later."""
    n = len(ends)
    out = np.zeros(n, np.bool_)
    for j in range(n):
        copy_end, orig_end = ends[j, 0], ends[j, 1]
        if not copy_end > orig_end:
            continue
        if kill_z <= 0:
            out[j] = True
            continue
        start, progress = copies[j, 0], copies[j, 1]
        need = now + orig_end - start  # the run time at which the copy ties
        estimate = now + copy_end - start
        if not need > 0:
            out[j] = True
            continue
        left = 1.0 - progress
        sd = log_sd * (floor if floor > left else left)  # Python's max(left, floor)
        out[j] = math.log(estimate / need) > kill_z * sd
    return out


@njit(cache=True)
def best_count(benefit: np.ndarray, slot: np.ndarray, weight: float,
               min_saving: float) -> tuple[int, float, float]:
    """``(K, benefit, cost)`` of the K top candidates whose copies' expected saving beats
    their summed cost by most (``HedgeAuto._best_count``; K = 0 when none pays): ``cost =
    cumsum(weight * slot)``, ``net = where(benefit >= min_saving, benefit - cost, 0)``, the
    first K with the largest ``net``, if above 0."""
    best, top, total = -1, 0.0, 0.0
    undefined = False  # a NaN net: numpy's max is NaN, and nothing is copied
    cost = np.empty(len(slot))
    for k in range(len(slot)):
        total += weight * slot[k]
        cost[k] = total
        net = benefit[k] - total if benefit[k] >= min_saving else 0.0
        if math.isnan(net):
            undefined = True
        elif best < 0 or net > top:  # the first of the largest, as argmax
            best, top = k, net
    if undefined or not top > 0:
        return 0, 0.0, 0.0
    return best + 1, benefit[best], cost[best]
