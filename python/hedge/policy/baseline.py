"""The baselines every comparison starts from, as Hadoop has them.

- ``none``: never speculates.
- ``hadoop``: MRv2 ``DefaultSpeculator`` with ``LegacyTaskRuntimeEstimator``.

The published speculators (LATE, Mantri, Dolly, Spark's rule) are in
:mod:`hedge.policy.published`. Each policy only reads the ``Snapshot`` (what the AM has
received) and returns ``Actions``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hedge.estimate.runtime import legacy_arrays
from hedge.model import MAP, REDUCE, Actions, AttemptState, Snapshot
from hedge.model.batch import ScanBatch, SlotView, gate_scratch
from hedge.policy.base import Policy, register
from hedge.policy.ranges import ABOVE_0, AT_LEAST_0, SHARE
from hedge.policy.slot_reports import trajectory_end, trajectory_progress


def attempts_per_task(snapshot: Snapshot) -> np.ndarray:
    """Live (running or waiting) attempts per job task index."""
    a = snapshot.attempts
    n = snapshot.job.n_maps + snapshot.job.n_reduces
    live = (a.state == AttemptState.RUNNING) | (a.state == AttemptState.WAITING)
    return np.bincount(a.task[live], minlength=n)


def _legacy_end(snapshot: Snapshot) -> np.ndarray:
    """Estimated end per attempt row: ``start + (received - start) / progress`` (NaN unknown)."""
    a = snapshot.attempts
    return legacy_arrays(a.start, a.progress, a.report_sent, a.report_received)


@register
class NoSpeculation(Policy):
    """``none``: never launches a copy. The simulator never scans jobs under it."""

    name = "none"
    speculates = False

    def decide(self, snapshot: Snapshot) -> Actions:
        return Actions(next_scan_in=math.inf)


def _too_few_completed(completed: int, n_type: int) -> bool:
    """Hadoop judges a task type only once ``completed / tasks >= 0.05`` (compared in
    float32, as ``StartEndTimesBase.thresholdRuntime`` does)."""
    return bool(np.float32(completed) / np.float32(max(n_type, 1)) < np.float32(0.05))


@register
class HadoopDefault(Policy):
    """``hadoop``: MRv2 DefaultSpeculator semantics.

    Per task type (map, reduce), once at least one task of the type has completed:

    - an attempt's estimated run time is ``(received - start) / progress``
      (LegacyTaskRuntimeEstimator) and its estimated end ``start + run time``;
    - a new attempt is expected to take the mean completed run time, ending
      ``now + mean``;
    - a task with exactly one live attempt is a candidate when its estimated run time
      exceeds ``mean + slow_task_std * std`` of completed run times, its estimated end is
      not already past (``PROGRESS_IS_GOOD``) and a replacement would end earlier
      (otherwise ``TOO_LATE_TO_SPECULATE``);
    - the candidate with the largest ``estimated end - replacement end`` gets one copy,
      one per task type per scan, while the type's running speculations stay below
      ``int(max(minimum_allowed, proportion_total * tasks, proportion_running * running
      tasks))`` (Hadoop truncates the cap to an integer);
    - a type is judged only once at least 5% of its tasks have completed (Hadoop's
      ``StartEndTimesBase.thresholdRuntime``: ``Long.MAX_VALUE`` before that).

    One step is hedge's, not Hadoop's: ``DefaultSpeculator`` asks the estimator for the
    threshold only to see whether it is ``Long.MAX_VALUE`` and never compares a run time
    with it (2.7.3 and 3.3.6 alike); hedge (here and in the shim's fallback) copies only
    attempts past it. tests/data/hadoop_default_vectors.tsv holds the two sides equal.

    The next scan is after ``retry_after_speculate`` s when it speculated, else the default
    period; with no completed task of any running type it sleeps until a task completes.
    """

    name = "hadoop"
    param_ranges = {
        "slow_task_std": AT_LEAST_0, "minimum_allowed": AT_LEAST_0,
        "proportion_total": SHARE, "proportion_running": SHARE,
        "retry_after_speculate": ABOVE_0,
    }

    def __init__(self, slow_task_std: float = 1.0, minimum_allowed: int = 10,
                 proportion_total: float = 0.01, proportion_running: float = 0.1,
                 retry_after_speculate: float = 15.0) -> None:
        self.slow_task_std = slow_task_std
        self.minimum_allowed = minimum_allowed
        self.proportion_total = proportion_total
        self.proportion_running = proportion_running
        self.retry_after_speculate = retry_after_speculate
        self._scratch: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # gate cells

    def decide(self, snapshot: Snapshot) -> Actions:
        a = snapshot.attempts
        per_task = attempts_per_task(snapshot)
        end = _legacy_end(snapshot)
        running = a.state == AttemptState.RUNNING
        chosen: list[int] = []
        can_act = False
        for task_type, n_type in ((MAP, snapshot.job.n_maps), (REDUCE, snapshot.job.n_reduces)):
            done = snapshot.job.completed_runtimes(task_type)
            of_type = running & (a.task_type == task_type)
            if not len(done) or not of_type.any() or _too_few_completed(len(done), n_type):
                continue
            can_act = True
            task = self._pick(snapshot, of_type, per_task, end, done, n_type)
            if task >= 0:
                chosen.append(task)
        if not can_act:
            return Actions(next_scan_in=math.inf, wake_on_completion=True)
        wait = self.retry_after_speculate if chosen else None
        return Actions(speculate_task=chosen, next_scan_in=wait)

    def _pick(self, snapshot: Snapshot, of_type: np.ndarray, per_task: np.ndarray,
              end: np.ndarray, done: np.ndarray, n_type: int) -> int:
        """The best candidate task of one type, or -1."""
        a, now = snapshot.attempts, snapshot.now
        mean, std = float(done.mean()), float(done.std())
        running_tasks = np.unique(a.task[of_type])
        speculating = int((per_task[running_tasks] > 1).sum())
        if speculating >= self._cap(n_type, len(running_tasks)):
            return -1
        runtime = end - a.start
        replacement_end = now + mean
        with np.errstate(invalid="ignore"):
            ok = (of_type & (per_task[a.task] == 1) & (runtime > mean + self.slow_task_std * std)
                  & (end >= now) & (end > replacement_end))
        if not ok.any():
            return -1
        rows = np.flatnonzero(ok)
        return int(a.task[rows[np.argmax(end[rows] - replacement_end)]])

    def _cap(self, n_type: int, running: int) -> int:
        """Running speculations a task type may have: ``int(max(minimum_allowed,
        proportion_total x its tasks, proportion_running x its running tasks))``, truncated
        as Hadoop's ``(int) Math.max(...)``."""
        return math.floor(max(self.minimum_allowed, self.proportion_total * n_type,
                              self.proportion_running * running))

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Per attempt: could it be ``decide``'s candidate? (conservative; hedge.model.batch)"""
        end = legacy_arrays(batch.start, batch.progress, batch.report_sent,
                            batch.report_received)
        cell = np.maximum(batch.job, 0) * 2 + batch.task_type  # row-major (job, type)
        count = batch.completed.ravel()[cell]
        mean = batch.completed_mean.ravel()[cell]
        threshold = mean + self.slow_task_std * batch.completed_std.ravel()[cell]
        slack = 1e-6 * (1.0 + np.abs(threshold))  # float error of running sums: err on True
        with np.errstate(invalid="ignore"):
            ok = ((count > 0) & (batch.task_attempts == 1)
                  & (end - batch.start > threshold - slack) & (end >= batch.now - slack)
                  & (end > batch.now + mean - slack))
        if batch.task_running is not None and ok.any():
            ok &= ~self._capped(batch, cell, ok)
        return ok

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``) in one compiled pass over the
        slots (``_hadoop_gate``): the same formulas, slack and cap, so a job is wanted
        exactly when ``needs_scan(view.to_batch())`` has a True row of it."""
        mark, acc_run, acc_spec = self._cells(view)
        return _hadoop_gate(
            view.now, view.hw, self.slow_task_std, self.minimum_allowed, self.proportion_total,
            self.proportion_running, view.due, view.job, view.task, view.start, view.k,
            view.p0, view.p1, view.r0, view.r1, view.task_type, view.task_attempts,
            view.task_running, view.n_tasks.reshape(-1), view.completed.reshape(-1),
            view.completed_mean.reshape(-1), view.completed_std.reshape(-1), mark, acc_run,
            acc_spec)

    def _cells(self, view: SlotView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The compiled gates' zeroed scratch per (job, type) cell: mark, running tasks,
        speculating tasks (``_open_cells``)."""
        cells = view.completed.size
        self._scratch = gate_scratch(self._scratch, (cells, np.int8, 0), (cells, float, 0),
                                     (cells, float, 0))
        return self._scratch

    def needs_scan_from(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): the earliest time ``needs_scan_slots`` could
        want it were nothing about the job to change (``hedge.model.batch``): the report
        it holds and one on its way are judged by the gate's own test; later reports, on
        the slot's trajectory, by an upper bound of their estimate (``_hadoop_wake``)."""
        if view.w is None or view.latency_max is None:
            return np.where(view.due, view.now, np.inf)
        mark, acc_run, acc_spec = self._cells(view)
        return _hadoop_wake(
            view.now, view.hw, view.latency_max, self.slow_task_std, self.minimum_allowed,
            self.proportion_total, self.proportion_running, view.due, view.job, view.task,
            view.start, view.k, view.p0, view.p1, view.r0, view.r1, view.w, view.r, view.W,
            view.ws, view.tw, view.task_type, view.task_attempts, view.task_running,
            view.n_tasks.reshape(-1), view.completed.reshape(-1),
            view.completed_mean.reshape(-1), view.completed_std.reshape(-1), mark, acc_run,
            acc_spec, np.full(len(view.job), np.inf))

    def _capped(self, batch: ScanBatch, cell: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """Per row: its (job, type) already runs ``decide``'s cap of speculations (only
        computed for the cells of ``ok`` rows, typically one or two; False elsewhere).

        Distinct running tasks of a cell are the sum of ``1 / task_running`` over its rows;
        speculating ones, the same sum over rows whose task has more than one live attempt
        (exact integers once rounded), so the cap is ``_pick``'s (``_cap``).
        """
        blocked = np.zeros(len(cell), dtype=bool)
        n_tasks = batch.n_tasks.ravel()
        for c in np.unique(cell[ok]).tolist():
            in_cell = (cell == c) & (batch.job >= 0)
            share = 1.0 / np.maximum(batch.task_running[in_cell], 1)
            running = round(float(share.sum()))
            speculating = round(float(share[batch.task_attempts[in_cell] > 1].sum()))
            if speculating >= self._cap(n_tasks[c], running):
                blocked |= in_cell
        return blocked


@njit(cache=True)
def _hadoop_gate(now, hw, std_k, min_allowed, prop_total, prop_running, due, job, task, start,
                 k, p0, p1, r0, r1, task_type, attempts, running, n_tasks, completed, mean, std,
                 mark, acc_run, acc_spec):  # pragma: no cover - compiled
    """``HadoopDefault.needs_scan`` per due job, walking the slot arrays once.

    Pass 1, per busy slot of a due job (cell ``c = 2 job + type``): the AM's report is
    ``k`` once received (``r0 <= now``), else ``k - 1``; ``end = start + (received -
    start) / p`` (the send time when ``p >= 1``; none when ``p <= 0``); the row is a
    candidate when ``completed[c] > 0``, its task has one live attempt and, with
    ``thr = mean + std_k std`` and ``slack = 1e-6 (1 + |thr|)``: ``end - start > thr -
    slack``, ``end >= now - slack`` and ``end > now + mean - slack``. Pass 2, only for
    cells holding a candidate: running tasks ``R = round(sum 1 / running)`` and speculating
    ones ``P`` (same sum over rows whose task has several attempts); the cell is blocked
    when ``P >= floor(max(min_allowed, prop_total n_tasks[c], prop_running R))``. A job is
    wanted when it has a candidate in an unblocked cell. ``mark``/``acc_*``: zeroed scratch per
    cell, left zeroed.
    """
    n = len(job)
    want = np.zeros(len(due), np.bool_)
    ok = np.zeros(n, np.bool_)
    n_ok = 0
    for s in range(n):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        t = task[s]
        c = j * 2 + task_type[t]
        if not completed[c] > 0:
            continue
        if r0[s] <= now:
            p, received, index = p0[s], r0[s], k[s]
        else:
            p, received, index = p1[s], r1[s], k[s] - 1
        st = start[s]
        if p >= 1.0:
            end = st + index * hw
        elif p > 0:
            end = st + (received - st) / p
        else:
            continue
        m = mean[c]
        thr = m + std_k * std[c]
        slack = 1e-6 * (1.0 + abs(thr))
        # the task's live attempts last: a random read into a large per-task array
        if end - st > thr - slack and end >= now - slack and end > now + m - slack \
                and attempts[t] == 1:
            ok[s] = True
            mark[c] = 1
            n_ok += 1
    if n_ok == 0:
        return want
    _open_cells(ok, min_allowed, prop_total, prop_running, due, job, task, task_type,
                attempts, running, n_tasks, mark, acc_run, acc_spec)
    for s in range(n):
        if ok[s] and mark[job[s] * 2 + task_type[task[s]]] == 3:
            want[job[s] + 1] = True
    _clear_cells(ok, job, task, task_type, mark, acc_run, acc_spec)
    return want


@njit(cache=True)
def _open_cells(cand, min_allowed, prop_total, prop_running, due, job, task, task_type,
                attempts, running, n_tasks, mark, acc_run, acc_spec
                ):  # pragma: no cover - compiled
    """The cap of each cell holding a candidate slot (``cand``; ``mark`` 1 there): its
    running tasks ``R = round(sum 1 / running)`` and speculating ones ``P`` (the same sum
    over slots whose task has several attempts) over the due jobs' slots; ``mark`` becomes
    2 where ``P >= floor(max(min_allowed, prop_total n_tasks, prop_running R))``, else 3."""
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        t = task[s]
        c = j * 2 + task_type[t]
        if mark[c]:
            share = 1.0 / max(running[t], 1)
            acc_run[c] += share
            if attempts[t] > 1:
                acc_spec[c] += share
    for s in range(len(job)):
        if not cand[s]:
            continue
        c = job[s] * 2 + task_type[task[s]]
        if mark[c] == 1:  # first candidate of the cell: decide its cap
            cap = math.floor(max(float(min_allowed), prop_total * n_tasks[c],
                                 prop_running * round(acc_run[c])))
            mark[c] = 2 if round(acc_spec[c]) >= cap else 3


@njit(cache=True)
def _clear_cells(cand, job, task, task_type, mark, acc_run, acc_spec
                 ):  # pragma: no cover - compiled
    """Leave ``_open_cells``' scratch zeroed."""
    for s in range(len(job)):
        if cand[s]:
            c = job[s] * 2 + task_type[task[s]]
            mark[c] = 0
            acc_run[c] = 0.0
            acc_spec[c] = 0.0


@njit(cache=True, inline="always")
def _hadoop_row(p, received, index, st, hw, now, thr, m, slack):  # pragma: no cover
    """``_hadoop_gate``'s test of one report (progress ``p``, received, its index) at
    ``now``, before the task's attempts and the cap."""
    if p >= 1.0:
        end = st + index * hw
    elif p > 0:
        end = st + (received - st) / p
    else:
        return False
    return end - st > thr - slack and end >= now - slack and end > now + m - slack


@njit(cache=True)
def _hadoop_wake(now, hw, lat_max, std_k, min_allowed, prop_total, prop_running, due, job,
                 task, start, k, p0, p1, r0, r1, w, r, W, ws, tw, task_type, attempts,
                 running, n_tasks, completed, mean, std, mark, acc_run, acc_spec, at
                 ):  # pragma: no cover - compiled
    """``HadoopDefault.needs_scan_from``: per due job, the least over its busy slots of
    the earliest time the slot could pass ``_hadoop_gate``'s test; inf when none could.

    A slot counts only where the gate would look at it (its cell has a completion, its
    task one live attempt, and the cell runs fewer speculations than its cap, counted as
    ``_hadoop_gate`` does: these change only with the job). Its report held at
    ``now`` and the one on its way (received at ``r0``) are judged exactly, the latter at
    ``r0`` (every test gets harder as time passes). A later report ``k'`` is sent at ``s =
    start + k' hw`` with progress on the slot's trajectory (``min((w + r max(s - b, 0)) /
    W, 1)``, ``b = max(ws, tw)``, as ``hedge.sim.kernels.heartbeats`` will record it while
    the rate holds); it is received before ``s + lat_max``, so its estimated end is at
    most ``E = start + (s + lat_max - start) / p`` and it could pass only if ``E - start``
    exceeds the threshold and ``E`` exceeds ``s + mean`` (then ``s`` is its wake). The walk
    over later reports stops when no later one can pass: the run-time bound is monotone
    in ``s`` (a ratio of linear functions), so it stays below the threshold past ``s`` once
    it is below at ``s`` and at the attempt's end; and ``E - s`` is at most ``start +
    (end + lat_max - start) / p(s) - s`` for every later report. After 64 reports the walk
    gives up and answers ``s`` (early is safe). ``mark``/``acc_*``: zeroed scratch per
    cell, left zeroed; ``at``: per slot, inf."""
    wake = np.full(len(due), np.inf)
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        t = task[s]
        c = j * 2 + task_type[t]
        if not completed[c] > 0 or attempts[t] != 1:
            continue
        st = start[s]
        m = mean[c]
        thr = m + std_k * std[c]
        slack = 1e-6 * (1.0 + abs(thr))
        if r0[s] <= now:
            held = _hadoop_row(p0[s], r0[s], k[s], st, hw, now, thr, m, slack)
        else:
            held = _hadoop_row(p1[s], r1[s], k[s] - 1, st, hw, now, thr, m, slack)
        if held:
            at[s] = now
            mark[c] = 1
            continue
        best = np.inf
        if r0[s] > now and _hadoop_row(p0[s], r0[s], k[s], st, hw, r0[s], thr, m, slack):
            best = min(best, r0[s])
        # later reports, on the trajectory (bounds loosened by twice the gate's slack)
        lo, loose = thr - 2.0 * slack, 2.0 * slack
        finish = trajectory_end(w[s], r[s], W[s], ws[s], tw[s])
        at_end = finish + lat_max - st  # the run-time bound at the last report
        walked = 0
        kk = k[s] + 1
        while True:
            sent = st + kk * hw
            if not sent < finish or not sent < best:
                break
            p = trajectory_progress(sent, w[s], r[s], W[s], ws[s], tw[s])
            kk += 1
            if not p > 0:
                continue
            if p >= 1.0:
                bound = sent - st
                e_hi = sent
            else:
                bound = (sent + lat_max - st) / p
                e_hi = st + bound
            if bound > lo and e_hi >= sent - loose and e_hi > sent + m - loose:
                best = sent
                break
            if bound <= lo and at_end <= lo:
                break  # the run-time bound stays below the threshold from here on
            if st + (finish + lat_max - st) / p - sent <= m - loose:
                break  # no later report's estimate ends past its send time + mean
            walked += 1
            if walked >= 64:
                best = min(best, sent)
                break
        if best < np.inf:
            at[s] = best
            mark[c] = 1
    cand = at < np.inf
    _open_cells(cand, min_allowed, prop_total, prop_running, due, job, task, task_type,
                attempts, running, n_tasks, mark, acc_run, acc_spec)
    for s in range(len(job)):
        j = job[s]
        if cand[s] and mark[j * 2 + task_type[task[s]]] == 3 and at[s] < wake[j + 1]:
            wake[j + 1] = at[s]
    _clear_cells(cand, job, task, task_type, mark, acc_run, acc_spec)
    return wake
