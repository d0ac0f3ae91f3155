"""``oracle``: the clairvoyant reference, simulator only: what speculation could gain at most.

Before each scan the simulator tells it the truth (``hedge.model.truth.Truth``): how long
each running attempt still needs and what a copy launched now would take. Per task type, it
walks the running tasks from the one that would finish last: a task is copied when its copy
would end before the task would (by more than ``margin`` seconds, the scheduler's delay to
place the copy) and the task would otherwise be the type's last to finish, so the copy
shortens the job; it stops at the first task that does not pay, since every task after it
ends sooner still. It never kills and never copies a task twice.

With ``after_reports`` = 1 or 2 it is the same oracle held to when the AM could first
act: it copies a task only once its attempt's first progress report (1), or a second one,
the first moment a rate free of JVM start-up exists (2), has reached the AM. The gap between
``oracle`` and ``oracle:after_reports=2`` is what waiting for heartbeats costs any policy
that detects from them, however clairvoyant its judgement; ``tests/bench/bench_policies.py``
prints both shares.

With ``copy`` = ``median`` it knows each attempt's true remaining time but only the
distribution a copy's slowdown is drawn from (the trace model's pool of the task's job and
phase), not the draw: it is told the pool's median, so it copies a task when its copy is more
likely than not to end first (and shortens the job). The gap between ``oracle`` and
``oracle:copy=median`` is what knowing the copy's luck in advance is worth, which no policy
can know; ``tests/bench/bench_policies.py`` prints its share too.

Its blind spots are the copy's node (it assumes a typical one; the copy may land on a slower
or busier node), the wait for a free slot, and what its copies' slots cost other jobs: it is
a clairvoyant reference line on a comparison, not a strict bound. Nor does it copy a task
twice: a policy that does (mantri's restarts, hedge-auto's ``recopy``) draws a second copy
where the first drew a slow share, and can beat it. On Google 2011 part 1 under
the calibrated model, ``adaptive`` came out 0.3% below it (0.952 vs 0.955 of none's mean job
time) by copying far more (1,752 copies against 656). Copying every task whose copy would win,
instead of only those that shorten their type's finish, was worse on the MRv1 sample (0.932
vs 0.897) and no better on a synthetic grid (0.755 vs 0.760): extra copies hold slots that
other jobs' tasks wait for.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE, Actions, AttemptState, Snapshot
from hedge.model.batch import ScanBatch, SlotView, gate_scratch
from hedge.model.truth import Truth
from hedge.policy.base import Policy, register
from hedge.policy.ranges import AT_LEAST_0


@register
class Oracle(Policy):
    """Copies exactly the tasks whose copy ends first and shortens the job (see module)."""

    name = "oracle"
    param_ranges = {"margin": AT_LEAST_0}
    clairvoyant = True
    live_am_supported = False
    live_am_reason = ("it needs the true remaining time of every attempt, which only a "
                      "simulator knows; it exists to bound what any policy can gain")

    def __init__(self, margin: float = 1.0, after_reports: int = 0,
                 copy: str = "draw") -> None:
        """``margin``: seconds a copy must end before its task (the delay to place it);
        ``after_reports``: progress reports the AM must have received from a task's attempt
        before it may be copied (0: at launch; 1: one; 2: two, a start-up-free rate);
        ``copy``: what it knows of a copy's time, its very draw (``draw``) or the median of
        the distribution it is drawn from (``median``)."""
        if after_reports not in (0, 1, 2):
            raise HedgeError(f"oracle: after_reports={after_reports!r}, expected 0, 1 or 2")
        if copy not in ("draw", "median"):
            raise HedgeError(f"oracle: copy={copy!r}, expected draw or median")
        self.copy_told = copy
        self.margin = float(margin)
        self.after_reports = int(after_reports)
        self._truth: Truth | None = None
        self._copied: set[int] = set()
        self._scratch: tuple[np.ndarray, ...] | None = None  # _oracle_first_gate's

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Per running attempt: is it its task's only live attempt, and would a copy of
        the task end before it (by ``margin``)? A task ``decide`` copies has every running
        attempt ending later than the copy, and is not one it copied before (only this
        policy adds attempts to a task: a task with two has been copied); the same
        arithmetic as ``hedge.sim.copies.truth`` and ``decide``, with a hair of slack."""
        if batch.remaining is None or batch.copy_time is None:
            return batch.job >= 0  # no truth in the batch: scan
        copy = batch.copy_time + self.margin
        return ((batch.job >= 0) & (batch.task_attempts == 1)
                & (copy < batch.remaining + 1e-9 * (1.0 + copy)))

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): with ``after_reports`` 0 and the tasks asked for
        before in the view (``SlotView.task_asked``: ``decide``'s ``_copied``, as it asks
        for each task once), exactly whether ``decide`` would copy a task
        (``_oracle_first_gate``: per task type, the first task of its walk that it did not
        copy before pays or the walk stops there); else ``needs_scan``, compiled
        (``_oracle_gate``). ``needs_scan`` wanted every job with a task whose copy would
        win, though ``decide`` copies only where that shortens the job: 14,560 of its
        14,707 scans on the 97,059-task fitted day copied nothing (issue 21)."""
        if view.end is None or view.copy_time is None:
            return view.due.copy()
        if self.after_reports or view.task_asked is None or view.job_offset is None:
            return _oracle_gate(view.now, self.margin, view.due, view.job, view.task,
                                view.end, view.copy_time, view.task_attempts)
        n_tasks, n_cells = len(view.copy_time), 2 * len(view.job_offset)
        self._scratch = gate_scratch(self._scratch, (n_tasks, float, np.inf),
                                     (n_tasks, np.bool_, False), (n_cells, np.int64, -1),
                                     (n_cells, float, 0), (n_cells, np.int8, 0))
        return _oracle_first_gate(view.now, self.margin, view.due, view.job, view.task,
                                  view.end, view.copy_time, view.task_type, view.task_asked,
                                  *self._scratch)

    def needs_scan_from(self, view: SlotView) -> np.ndarray:
        """Per due job: ``now`` when ``needs_scan_slots`` wants it now, else inf: every
        slot's time left shrinks as fast as time passes (the walk's order and the gaps
        between its tasks stay; a copy only gets less worth it), so only a change to the
        job's attempts (a rate, a start, an end) or a copy it asks for can make it copy
        later (``hedge.model.batch``)."""
        want = self.needs_scan_slots(view)
        return np.where(want, view.now, np.inf)

    def see(self, truth: Truth) -> None:
        self._truth = truth

    def decide(self, snapshot: Snapshot) -> Actions:
        truth, a = self._truth, snapshot.attempts
        if truth is None:
            return Actions()
        running = a.state == AttemptState.RUNNING
        seen = self._reported(snapshot)
        chosen: list[int] = []
        for task_type in (MAP, REDUCE):
            rows = np.flatnonzero(running & (a.task_type == task_type))
            tasks, where = np.unique(a.task[rows], return_inverse=True)
            left = np.full(len(tasks), np.inf)  # a task ends with its first attempt to end
            np.minimum.at(left, where, truth.remaining[rows])
            ready = np.zeros(len(tasks), dtype=bool)
            ready[where[seen[rows]]] = True
            order = np.argsort(-left, kind="stable")
            for k, i in enumerate(order):
                task = int(tasks[i])
                after = left[order[k + 1]] if k + 1 < len(order) else 0.0
                if task in self._copied or not ready[i]:
                    continue  # already racing, or not yet seen: look at the next one
                copy = float(truth.copy_time[task]) + self.margin
                if not (copy < left[i] and left[i] > after):
                    break
                chosen.append(task)
                self._copied.add(task)
        return Actions(speculate_task=chosen)

    def _reported(self, snapshot: Snapshot) -> np.ndarray:
        """Per attempt: whether the AM has had the reports ``after_reports`` asks for."""
        a = snapshot.attempts
        if self.after_reports == 0:
            return np.ones(len(a), dtype=bool)
        first = np.isfinite(a.first_progress_time)
        if self.after_reports == 1:
            return first
        return first & (a.report_sent > a.first_progress_time)


@njit(cache=True)
def _oracle_gate(now, margin, due, job, task, end, copy_time, attempts
                 ):  # pragma: no cover - compiled
    """``Oracle.needs_scan`` per due job: a busy slot whose task has one live attempt and
    whose true end is later than a copy's (``copy_time + margin < end - now``, slack as
    there)."""
    want = np.zeros(len(due), np.bool_)
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1] or want[j + 1]:
            continue
        t = task[s]
        copy = copy_time[t] + margin
        if attempts[t] == 1 and copy < (end[s] - now) + 1e-9 * (1.0 + copy):
            want[j + 1] = True
    return want


@njit(cache=True)
def _oracle_first_gate(now, margin, due, job, task, end, copy_time, task_type, copied, left,
                       seen, best, after, state):  # pragma: no cover - compiled
    """Would ``Oracle.decide`` (``after_reports`` 0) copy a task of each due job? Per
    (job, type) cell it walks the running tasks from the one that ends last (ties: lowest
    task first, as its stable sort), skips those it copied (``copied``, per task row) and
    copies the first other one only if a copy ends first (``copy_time + margin < left``)
    and it ends after the next task of the walk (``after``, 0 for the last): so a cell
    wants its job exactly when its first uncopied task pays. ``left``: a task's least
    ``end - now`` over its slots, as ``truth``'s remaining times and decide's
    ``np.minimum.at``. Scratch, given as left here: ``left`` inf, ``seen`` False, per cell
    ``best`` -1, ``after`` 0, ``state`` 0 (1: a task follows ``best``; 2: one ties it
    from behind, so ``best`` cannot end after it)."""
    want = np.zeros(len(due), np.bool_)
    n = len(job)
    for s in range(n):  # each running task's time left
        j = job[s]
        if j >= 0 and due[j + 1]:
            x = end[s] - now
            if x < left[task[s]]:
                left[task[s]] = x
    for s in range(n):  # per cell, the uncopied task that ends last (ties: lowest)
        j = job[s]
        if j < 0 or not due[j + 1] or copied[task[s]]:
            continue
        t = task[s]
        c = 2 * j + task_type[t]
        b = best[c]
        if b < 0 or left[t] > left[b] or (left[t] == left[b] and t < b):
            best[c] = t
    for s in range(n):  # the next task after it in the walk, copied or not
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        t = task[s]
        c = 2 * j + task_type[t]
        b = best[c]
        if b < 0 or t == b or seen[t]:
            continue
        seen[t] = True
        if left[t] < left[b]:
            if state[c] == 0 or left[t] > after[c]:
                after[c] = left[t]
            if state[c] == 0:
                state[c] = 1
        elif left[t] == left[b] and t > b:
            state[c] = 2
    for s in range(n):  # the verdicts
        j = job[s]
        if j < 0 or not due[j + 1] or want[j + 1]:
            continue
        c = 2 * j + task_type[task[s]]
        b = best[c]
        if b >= 0:
            nxt = after[c] if state[c] == 1 else 0.0
            if state[c] != 2 and copy_time[b] + margin < left[b] and left[b] > nxt:
                want[j + 1] = True
    for s in range(n):  # the scratch as given
        j = job[s]
        if j >= 0 and due[j + 1]:
            t = task[s]
            c = 2 * j + task_type[t]
            left[t], seen[t], best[c], after[c], state[c] = np.inf, False, -1, 0.0, 0
    return want
