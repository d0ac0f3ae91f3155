"""Compiled scan gates of the detector policies (:mod:`hedge.policy.detectors`; numba, no
fastmath).

Each gate answers, per due job, whether ``needs_scan`` over ``SlotView.to_batch()`` has a
row of it, walking the slot arrays instead of gathering the batch: the same estimates, the
same sums in the same order (a job's slots ascending, as ``np.bincount`` adds a batch's
rows) and the same tolerances, so the answers are equal (``tests/unit/test_sim_kernels.py``
compares them on random views). Scratch arrays are passed in zeroed and left zeroed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hedge.policy.slot_reports import held_received, held_report

# mean_rule_gate's rules: the value each slot's held report gives, and the test against
# the job's mean of it (hedge.policy.detectors: ScorePolicy, RatePolicy, StaticPolicy)
SCORE = 0  # progress <= mean - gap
RATE = 1  # ETD = rate ECT - start >= factor x mean
STATIC_RATE = 2  # rate ECT - job start >= factor x mean
STATIC_LEGACY = 3  # legacy ECT - job start >= factor x mean


@njit(cache=True, inline="always", error_model="numpy")
def held_ect(legacy, now, p, recv, sent, start):  # pragma: no cover - compiled
    """``legacy_arrays`` or ``rate_arrays`` of one held report: its send time once progress
    is 1, NaN while progress is 0 (x / 0 as numpy: inf, never an exception)."""
    if p >= 1.0:
        return sent
    if not p > 0:
        return np.nan
    if legacy:
        return start + (recv - start) / p
    return now + (1.0 - p) / (p / (now - start))


@njit(cache=True, inline="always")
def room_left(cap, n_tasks, running, copies):  # pragma: no cover - compiled
    """Does ``detectors.speculation_cap`` leave a job room for a copy: ``int(max(minimum,
    total x tasks, running x running attempts))`` above its running copies? (``cap``:
    minimum, total and running fractions)"""
    return int(max(max(cap[0], cap[1] * n_tasks), cap[2] * running)) - copies > 0


@njit(cache=True, inline="always")
def _copyable(now, hw, start, k, p0, p1, r0, r1, attempts, asked, cap, n_tasks, running,
              copies):  # pragma: no cover - compiled
    """Could ``decide`` copy this slot's task (``_gate_rows``' candidates): a report
    received, progress below 1, its task's only live attempt, not asked for before, and
    room under its job's cap (``room_left``, where there is a ``cap``; ``n_tasks``,
    ``running``, ``copies``: the job's)."""
    p = held_report(now, hw, start, k, p0, p1, r0)[0]
    if not (np.isfinite(held_received(now, r0, r1)) and p < 1.0 and attempts == 1
            and not asked):
        return False
    return not len(cap) or room_left(cap, n_tasks, running, copies)


@njit(cache=True, error_model="numpy")
def mean_rule_gate(now, hw, rule, param, tol, due, job, task, start, k, p0, p1, r0, r1,
                   attempts, copied, job_start, cap, aid, attempt_copy, n_tasks, count,
                   total, value, running, copies):  # pragma: no cover - compiled
    """``needs_scan`` of score, rate or static (``rule``; ``param``: gap or factor) per due
    job (index ``job + 1``), in two passes over the slots.

    Pass 1: each busy slot's value from the report the AM holds, and per job the count and
    sum of the finite values of slots with a received report (``_job_mean``). Pass 2: a
    candidate (a received report, progress < 1, its task's only live attempt) past the
    rule's bound of the job's mean wants the job (``_ratio_gate``, ``ScorePolicy``'s test),
    unless its job's policy copied the task before (``copied``, per task row: ``decide``
    never copies a task twice, though a copy the cap refused leaves it one attempt), or
    its job's copies fill ``decide``'s cap (``room_left``; ``cap``: the cap's minimum and
    fractions, or an empty array when the view has no copy flags: ``aid``,
    ``attempt_copy``). Scratch per job (``count``, ``total``, ``running``, ``copies``)
    and per slot (``value``), zero on entry and left zeroed.
    """
    n = len(job)
    want = np.zeros(len(due), np.bool_)
    for s in range(n):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        p, sent = held_report(now, hw, start[s], k[s], p0[s], p1[s], r0[s])
        recv = held_received(now, r0[s], r1[s])
        if rule == SCORE:
            v = p
        elif rule == RATE:
            v = held_ect(False, now, p, recv, sent, start[s]) - start[s]
        else:
            v = held_ect(rule == STATIC_LEGACY, now, p, recv, sent, start[s]) - job_start[j]
        value[s] = v
        if np.isfinite(recv) and np.isfinite(v):
            count[j] += 1
            total[j] += v
        if len(cap):
            running[j] += 1
            copies[j] += attempt_copy[aid[s]]
    for s in range(n):
        j = job[s]
        if j < 0 or not due[j + 1] or want[j + 1] or count[j] == 0:
            continue
        t = task[s]
        if not _copyable(now, hw, start[s], k[s], p0[s], p1[s], r0[s], r1[s], attempts[t],
                         copied[t], cap, n_tasks[j, 0] + n_tasks[j, 1], running[j],
                         copies[j]):
            continue
        mean = total[j] / count[j]
        v = value[s]
        if rule == SCORE:
            limit = mean - param
            hit = v <= limit + tol * (1.0 + abs(limit))
        else:
            limit = param * mean
            hit = v >= limit - tol * (abs(limit) + abs(v))
        if hit:
            want[j + 1] = True
    for s in range(n):  # leave the scratch as given
        j = job[s]
        if j >= 0:
            count[j], total[j], running[j], copies[j] = 0, 0.0, 0, 0
    return want


@njit(cache=True, error_model="numpy")  # x / 0 as numpy: inf or NaN, never an exception
def adaptive_gate(now, hw, legacy, mu, alpha, beta, resource, tol, due, job, task, start, k,
                  p0, p1, r0, r1, attempts, copied, n_tasks, job_start, job_deadline, cap,
                  aid, attempt_copy, count, total, smallest, best, task_best, ect, running,
                  copies):  # pragma: no cover - compiled
    """``AdaptivePolicy.needs_scan`` per due job, walking the slot arrays three times.

    The AM's report of a slot is ``k`` once received (``r0 <= now``), else ``k - 1``
    (``SlotView.to_batch``). Pass 1: each slot's job-relative ECT (legacy or rate, the
    send time once progress is 1), the job's count and sum of finite known ECTs, its
    smallest ECT above ``qos - tolerance`` and each task's best reported progress. Pass 2:
    the job's sum of its tasks' best progress. Pass 3: a candidate (known, progress < 1,
    its task's only attempt, not copied before: ``copied``) above ``_adaptive_limit``'s
    bound wants its job scanned, unless its copies fill ``decide``'s cap (as in
    ``mean_rule_gate``: ``cap``, ``aid``, ``attempt_copy``, ``running``, ``copies``).
    ``resource``: the mean utilisation minus ``min(omega, phi)``. ``n_tasks``: per job,
    (maps, reduces), added where a due job reads them (summing every job's at each call cost
    O(jobs) a gated step: about 120 s of 293 at 959,229 tasks, issue 21). The scratch arrays
    (per job, per task, per slot) are left as given: zeros, and inf for ``smallest``.
    """
    n = len(job)
    want = np.zeros(len(due), np.bool_)
    for s in range(n):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        p, sent = held_report(now, hw, start[s], k[s], p0[s], p1[s], r0[s])
        recv = held_received(now, r0[s], r1[s])
        e = held_ect(legacy, now, p, recv, sent, start[s]) - job_start[j]
        ect[s] = e
        if not np.isfinite(recv):
            continue
        if np.isfinite(e):
            count[j] += 1
            total[j] += e
            qos = job_deadline[j] - job_start[j]
            if e > qos - tol * (1.0 + abs(qos)) and e < smallest[j]:
                smallest[j] = e
        t = task[s]
        if p > task_best[t]:
            task_best[t] = p
        if len(cap):
            running[j] += 1
            copies[j] += attempt_copy[aid[s]]
    for s in range(n):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        t = task[s]
        best[j] += task_best[t]
        task_best[t] = 0.0
    for s in range(n):
        j = job[s]
        if j < 0 or not due[j + 1] or want[j + 1] or count[j] == 0:
            continue
        t = task[s]
        if not _copyable(now, hw, start[s], k[s], p0[s], p1[s], r0[s], r1[s], attempts[t],
                         copied[t], cap, n_tasks[j, 0] + n_tasks[j, 1], running[j],
                         copies[j]):
            continue
        mean = total[j] / count[j]
        qos = job_deadline[j] - job_start[j]
        q_mean = 1.5 * mean if np.isnan(qos) else min(qos, smallest[j])
        p_term = alpha * (best[j] / (n_tasks[j, 0] + n_tasks[j, 1]) - mu) * mean
        r_term = beta * resource * mean
        limit = q_mean + p_term + r_term
        scale = abs(q_mean) + abs(p_term) + abs(r_term)
        if ect[s] > limit - tol * (scale + abs(ect[s])):
            want[j + 1] = True
    for s in range(n):  # leave the scratch as given
        j = job[s]
        if j >= 0:
            count[j], total[j], smallest[j], best[j] = 0.0, 0.0, np.inf, 0.0
            running[j], copies[j] = 0, 0
    return want
