"""Published speculation policies, as the original systems describe them.

- ``late``: LATE (Zaharia et al., OSDI'08).
- ``mantri``: Mantri (Ananthanarayanan et al., OSDI'10), restart-free variant (copies + pruning).
- ``dolly``: Dolly (Ananthanarayanan et al., NSDI'13) proactive cloning of small jobs.
- ``spark``: Spark's ``spark.speculation`` rule with Spark 4.0's defaults (quantile 0.9,
  multiplier 3, SPARK-47720); ``spark-legacy``: the same rule with the defaults of Spark 1.x-3.x
  (quantile 0.75, multiplier 1.5).

Hadoop's own rule and ``none`` are in :mod:`hedge.policy.baseline`. Each policy only reads the
``Snapshot`` (what the AM has received) and returns ``Actions``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hedge.model import MAP, REDUCE, Actions, AttemptState, Snapshot
from hedge.model.batch import ScanBatch, SlotView, gate_scratch
from hedge.policy.base import Policy, register
from hedge.policy.baseline import attempts_per_task
from hedge.policy.ranges import ABOVE_0, AT_LEAST_0, AT_LEAST_1, SHARE
from hedge.policy.slot_reports import (
    held_report,
    next_receipt,
    trajectory_end,
    trajectory_progress,
)


def _rate_left_arrays(start: np.ndarray, progress: np.ndarray, sent: np.ndarray,
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Progress rate ``p / (sent - start)`` and time left ``(1 - p) / rate`` (NaN unknown)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(progress > 0, progress, np.nan) / (sent - start)
        left = (1.0 - progress) / rate
    return rate, left


def _below_quantile(values: np.ndarray, q: float) -> np.ndarray:
    """``values < np.quantile(values, q)`` (linear method), exactly: the cut from the two
    sorted neighbours costs a sort where ``np.quantile`` costs ~20 numpy calls (LATE asks
    two or three per scan: issue 21). Where the quantile falls on a sorted value (no
    fraction) that value is the cut in any numpy (its interpolation adds ``0 x diff``, with
    a finite diff); else, where a value lies within rounding of the interpolated cut, the
    comparison is left to ``np.quantile`` itself."""
    v = np.sort(values)
    h = (len(v) - 1) * q
    lo = max(min(math.floor(h), len(v) - 1), 0)
    up = min(lo + 1, len(v) - 1)
    frac = h - lo
    if frac == 0.0 and math.isfinite(v[up] - v[lo]):
        return values < v[lo]
    cut = v[lo] + frac * (v[up] - v[lo])
    if np.any(np.abs(values - cut) <= 1e-9 * (abs(v[lo]) + abs(v[up]))):
        cut = np.quantile(values, q)
    return values < cut


def _cluster_full(free_slots: int | None) -> bool:
    """A gate's free-slot test: the cluster is known to have no free slot (None: unknown),
    so no copy could start; another job's attempt ending can change it at any time."""
    return free_slots is not None and free_slots <= 0


def _rate_left(snapshot: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    """``_rate_left_arrays`` on a snapshot's attempts."""
    a = snapshot.attempts
    return _rate_left_arrays(a.start, a.progress, a.report_sent)


@register
class Late(Policy):
    """``late``: LATE, speculate the slow task with the longest estimated time left.

    Progress rate ``PR = p / (sent - start)``, time left ``(1 - p) / PR``. When a slot is
    free, among running tasks with one attempt, older than ``min_elapsed`` s and whose
    rate is below the ``slow_task_threshold`` quantile of the job's running rates (per task
    type), the one with the longest time left gets one copy, placed away from slow nodes:
    nodes whose mean progress rate (over this job's attempts) is below the
    ``slow_node_threshold`` quantile go into ``avoid_nodes``. At most
    ``speculative_cap`` x cluster slots copies of the job run at once. Behind a live AM,
    which reports no slot counts, the free-slot test and this cap are left to the shim's
    Hadoop caps.
    """

    name = "late"
    param_ranges = {"slow_task_threshold": SHARE, "slow_node_threshold": SHARE,
                    "speculative_cap": SHARE, "min_elapsed": AT_LEAST_0}
    copies_only = True  # stateless, asks only for copies (and nodes to avoid for them)

    def __init__(self, slow_task_threshold: float = 0.25, slow_node_threshold: float = 0.25,
                 speculative_cap: float = 0.1, min_elapsed: float = 60.0) -> None:
        self.slow_task_threshold = slow_task_threshold
        self.slow_node_threshold = slow_node_threshold
        self.speculative_cap = speculative_cap
        self.min_elapsed = min_elapsed
        self._scratch: tuple[np.ndarray, ...] | None = None  # _late_gate's
        self._wake_scratch: tuple[np.ndarray, ...] | None = None  # _late_wake's

    def decide(self, snapshot: Snapshot) -> Actions:
        a, now = snapshot.attempts, snapshot.now
        running = a.state == AttemptState.RUNNING
        copies = int((running & a.speculative).sum())
        cluster = snapshot.cluster
        if cluster.slots_known and (cluster.free_slots <= 0
                                    or copies >= self.speculative_cap * cluster.total_slots):
            return Actions()
        rate, left = _rate_left(snapshot)
        known = running & np.isfinite(rate)
        per_task = attempts_per_task(snapshot)
        able = known & (per_task[a.task] == 1) & (now - a.start >= self.min_elapsed)
        slow = np.zeros(len(a), dtype=bool)
        for task_type in (MAP, REDUCE):
            rows = known & (a.task_type == task_type)
            # a type none of whose attempts could be copied needs no quantile
            if rows.sum() >= 2 and (able & rows).any():
                slow[rows] = _below_quantile(rate[rows], self.slow_task_threshold)
        ok = slow & able
        if not ok.any():
            return Actions()
        rows = np.flatnonzero(ok)
        task = int(a.task[rows[np.argmax(left[rows])]])
        return Actions(speculate_task=[task], avoid_nodes=self._slow_nodes(a.node[known],
                                                                          rate[known]))

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Per attempt: below its job-and-type's slow-task quantile, old enough, uncopied."""
        if _cluster_full(batch.free_slots):
            return np.zeros(len(batch.job), dtype=bool)
        rate, _ = _rate_left_arrays(batch.start, batch.progress, batch.report_sent)
        known = np.flatnonzero((batch.job >= 0) & np.isfinite(rate))
        out = np.zeros(len(batch.job), dtype=bool)
        if len(known) < 2:
            return out
        cell = batch.job[known] * 2 + batch.task_type[known]
        # only cells with a row old enough and uncopied can flag: sort just those
        able = ((batch.task_attempts[known] == 1)
                & (batch.now - batch.start[known] >= self.min_elapsed - 1e-9))
        marked = np.zeros(2 * len(batch.n_tasks), dtype=bool)
        marked[cell[able]] = True
        keep = marked[cell]
        known, cell = known[keep], cell[keep]
        if len(known) < 2:
            return out
        order = np.lexsort((rate[known], cell))
        rows, cell, value = known[order], cell[order], rate[known][order]
        first = np.searchsorted(cell, cell, side="left")
        size = np.searchsorted(cell, cell, side="right") - first
        h = (size - 1) * self.slow_task_threshold  # np.quantile's linear method, per group
        lo = np.floor(h).astype(np.int64)
        frac = h - lo
        upper = np.minimum(lo + 1, size - 1)
        cut = value[first + lo] + frac * (value[first + upper] - value[first + lo])
        # on a sorted value the cut is exact (``_below_quantile``); between two, rounding
        slack = np.where(frac == 0.0, 0.0, 1e-9 * (1 + np.abs(cut)))
        out[rows] = ((size >= 2) & (value < cut + slack)
                     & (batch.task_attempts[rows] == 1)
                     & (batch.now - batch.start[rows] >= self.min_elapsed - 1e-9))
        return out

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``), compiled (``_late_gate``): the
        same rates, cells, quantiles and slack."""
        if _cluster_full(view.free_slots):
            return np.zeros(len(view.due), dtype=bool)
        return self._slow_cells(view)

    def _slow_cells(self, view: SlotView) -> np.ndarray:
        """``needs_scan_slots`` were a slot free (``_late_gate``)."""
        n_cells, n_slots = 2 * len(view.n_tasks), len(view.job)
        self._scratch = gate_scratch(self._scratch, (n_cells, np.bool_, False),
                                     (n_cells, np.int64, -1), (n_slots, float, 0.0),
                                     (n_slots, np.int64, 0))
        return _late_gate(view.now, view.hw, self.slow_task_threshold, self.min_elapsed,
                          view.due, view.job, view.task, view.start, view.k, view.p0,
                          view.p1, view.r0, view.task_type, view.task_attempts,
                          *self._scratch)

    def needs_scan_from(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): when ``needs_scan_slots`` could first want it
        were nothing about the job to change (``hedge.model.batch``; ``_late_wake``): at
        its next report received, or when an uncopied attempt comes of age; never while
        none of its cells could flag; at once where the gate wants it now, or would were
        a slot free (while the cluster has none, another job's attempt ending frees one:
        not an event of this job; until a cell could flag, a free slot changes nothing)."""
        n_cells, n_slots = 2 * len(view.n_tasks), len(view.job)
        self._wake_scratch = gate_scratch(self._wake_scratch, (n_cells, np.int64, 0),
                                          (n_cells, np.int64, 0), (n_slots, np.int64, 0))
        wake = _late_wake(view.now, view.hw, self.min_elapsed, view.due, view.job, view.task,
                          view.start, view.k, view.r0, view.task_type, view.task_attempts,
                          *self._wake_scratch)
        # the wake is asked a tick after the skipped scan: a report received since counts
        wake[self._slow_cells(view)] = view.now
        return wake

    def _slow_nodes(self, node: np.ndarray, rate: np.ndarray) -> np.ndarray:
        """Nodes whose mean progress rate is below the slow-node quantile."""
        if len(node) < 2:
            return np.empty(0, dtype=np.int64)
        # per node index (-1: unknown, a group of its own as under np.unique), summed in
        # row order as over np.unique's inverse, without its sort
        count = np.bincount(node + 1)
        seen = np.flatnonzero(count)
        nodes = seen - 1
        mean = np.bincount(node + 1, weights=rate)[seen] / count[seen]
        if len(nodes) < 2:
            return np.empty(0, dtype=np.int64)
        return nodes[_below_quantile(mean, self.slow_node_threshold)]


@register
class Mantri(Policy):
    """``mantri``: copies for tasks that will clearly outlast a fresh attempt; prune losers.

    When the cluster has a free slot and none of the job's tasks waits for one, every running
    task whose estimated remaining time ``t_rem`` (LATE-style rate on its best attempt)
    exceeds the mean completed run time of its type by ``margin`` s gets one more copy, up
    to ``max_copies`` extra attempts per task, longest ``t_rem`` first, at most one per free
    slot. Every ``prune_every`` s, of a task's running attempts that have reported progress
    only the one with the earliest estimated end is kept; the others are killed.
    """

    name = "mantri"
    param_ranges = {"margin": AT_LEAST_0, "max_copies": AT_LEAST_1, "prune_every": ABOVE_0}
    # a copy asked for comes with no timing, so the gate leaves out a job whose copies the
    # cap would all refuse (on the 97,059-task day, 20,199 of 22,403 scans did only that)
    gate_reads_copy_room = True

    def __init__(self, margin: float = 30.0, max_copies: int = 3, prune_every: float = 30.0,
                 ) -> None:
        self.margin = margin
        self.max_copies = max_copies
        self.prune_every = prune_every
        self._last_prune = -math.inf

    def decide(self, snapshot: Snapshot) -> Actions:
        a, now = snapshot.attempts, snapshot.now
        running = a.state == AttemptState.RUNNING
        _, left = _rate_left(snapshot)
        # age the estimate by the time since its report
        left = left - (now - a.report_sent)
        kills = self._prune(snapshot, running, left)
        waiting = (a.state == AttemptState.WAITING).any()
        # unknown slots (live AM): every candidate, within the shim's Hadoop caps
        free = snapshot.cluster.free_slots if snapshot.cluster.slots_known else len(a)
        if waiting or free <= 0:
            return Actions(kill_attempt=kills)
        per_task = attempts_per_task(snapshot)
        expected = np.full(len(a), np.nan)
        for task_type in (MAP, REDUCE):
            done = snapshot.job.completed_runtimes(task_type)
            if len(done):
                expected[a.task_type == task_type] = done.mean()
        with np.errstate(invalid="ignore"):
            ok = (running & (left > expected + self.margin)
                  & (per_task[a.task] - 1 < self.max_copies))
        rows = np.flatnonzero(ok)
        rows = rows[np.argsort(-left[rows], kind="stable")]
        tasks = list(dict.fromkeys(a.task[rows].tolist()))[:free]
        return Actions(speculate_task=tasks, kill_attempt=kills)

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Per attempt: a pruning candidate, or a task that may deserve another copy."""
        prune, copy = self._scan_rows(batch)
        return prune | copy

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``), where the job's own policy lets a
        pruning candidate count only once its ``prune_every`` has passed (``decide``'s own
        test): of the fitted day's scans that ``needs_scan`` wanted, about half found
        nothing to do for that reason alone (issue 21). A job whose policy is not made yet
        is wanted as before. Copies count only where the cap leaves room (``copy_room``):
        ``decide`` asks for copies the cap refuses, and they would do nothing."""
        return self._wants(view, copies_barred=_cluster_full(view.free_slots))

    def _wants(self, view: SlotView, copies_barred: bool) -> np.ndarray:
        """``needs_scan_slots``, with copies barred (no free slot) or not."""
        want, prunes = _mantri_gate(view.now, view.hw, self.margin, self.max_copies,
                                    copies_barred, view.due, view.job, view.task,
                                    view.start, view.k, view.p0, view.p1, view.r0,
                                    view.task_type, view.task_attempts,
                                    view.completed_mean)
        if view.copy_room is not None:
            want &= view.copy_room
        policies = view.policies or {}
        for j in (np.flatnonzero(prunes & ~want) - 1).tolist():
            policy = policies.get(j)
            want[j + 1] = policy is None or not view.now - policy._last_prune < policy.prune_every
        return want

    def needs_scan_from(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): when ``needs_scan_slots`` could first want it
        were nothing about the job to change (``hedge.model.batch``; ``_mantri_wake``): at
        the first report of a slot that may take a copy whose estimate could pass the copy
        test (on the slot's trajectory, ``_copy_report_at``), where the cap leaves room
        (room moves only when an attempt starts or ends); a pruning candidate's once its
        job's prune timer is due (at once while its policy is not made); at once where the
        gate wants it now, or would were a slot free (while the cluster has none, another
        job's attempt ending frees one: not an event of this job; until a copy test could
        pass, a free slot changes nothing)."""
        walk = view.w is not None
        trajectory = ((view.w, view.r, view.W, view.ws, view.tw) if walk
                      else (np.empty(0),) * 5)
        copy_at, prune_now, prune_at = _mantri_wake(
            view.now, view.hw, self.margin, self.max_copies, walk, view.due, view.job,
            view.task, view.start, view.k, view.p0, view.p1, view.r0, view.task_type,
            view.task_attempts, view.completed_mean, *trajectory)
        # only the due jobs' entries are read, and the others stay inf: work on those alone
        # (tens of thousands of jobs in a trace day's run, a few due)
        due = np.flatnonzero(view.due)
        wake = copy_at
        if view.copy_room is not None:
            wake[due[~view.copy_room[due]]] = np.inf
        policies = view.policies or {}
        for j in (due[prune_now[due] | np.isfinite(prune_at[due])] - 1).tolist():
            policy = policies.get(j)
            due_at = view.now
            if policy is not None:  # now - last >= prune_every from last + prune_every on
                due_at = policy._last_prune + policy.prune_every
                due_at -= 1e-9 * (1.0 + abs(due_at))  # a hair early: rounding
            first = due_at if prune_now[j + 1] else max(due_at, prune_at[j + 1])
            wake[j + 1] = min(wake[j + 1], first)
        # the wake is asked a tick after the skipped scan: a report received since counts
        wake[due[self._wants(view, copies_barred=False)[due]]] = view.now
        wake[due] = np.maximum(wake[due], view.now)
        return wake

    def _scan_rows(self, batch: ScanBatch) -> tuple[np.ndarray, np.ndarray]:
        """Per attempt: a pruning candidate (its task has several attempts and it has an
        estimate), and a task that may deserve another copy (``decide``'s test with slack)."""
        rate, left = _rate_left_arrays(batch.start, batch.progress, batch.report_sent)
        left = left - (batch.now - batch.report_sent)
        cell = np.maximum(batch.job, 0) * 2 + batch.task_type
        expected = batch.completed_mean.ravel()[cell]
        with np.errstate(invalid="ignore"):
            prune = (batch.task_attempts > 1) & np.isfinite(left)
            copy = ((left > expected + self.margin - 1e-6 * (1 + np.abs(expected)))
                    & (batch.task_attempts - 1 < self.max_copies))
        if _cluster_full(batch.free_slots):
            copy[:] = False
        return prune, copy

    def _prune(self, snapshot: Snapshot, running: np.ndarray, left: np.ndarray) -> np.ndarray:
        """Losing attempts to kill, at most once per ``prune_every`` s (counted from the last
        scan that had a task with several reported attempts)."""
        a = snapshot.attempts
        rows = np.flatnonzero(running & np.isfinite(left))
        if not len(rows):
            return np.empty(0, dtype=np.int64)
        tasks, counts = np.unique(a.task[rows], return_counts=True)
        multi = np.isin(a.task[rows], tasks[counts > 1])
        rows = rows[multi]
        if not len(rows) or snapshot.now - self._last_prune < self.prune_every:
            return np.empty(0, dtype=np.int64)
        self._last_prune = snapshot.now
        order = np.lexsort((left[rows], a.task[rows]))
        rows = rows[order]
        first = np.unique(a.task[rows], return_index=True)[1]
        keep = np.zeros(len(rows), dtype=bool)
        keep[first] = True
        return a.attempt[rows[~keep]]


@register
class Dolly(Policy):
    """``dolly``: clone every task of a small job at launch; the first clone to finish wins.

    A job with at most ``max_tasks`` tasks gets ``clones`` extra attempts per task at its
    first scan, provided its clones fit the cloning budget: at most ``budget`` x cluster
    slots, and enough free slots for the job's tasks and all clones (a per-job reading of
    Dolly's 5% cluster budget: a policy object sees one job). Reduces, which start after the
    maps, are cloned at the first scan that sees them waiting. Never acts afterwards.
    """

    name = "dolly"
    param_ranges = {"max_tasks": AT_LEAST_1, "clones": AT_LEAST_1, "budget": SHARE}

    def __init__(self, max_tasks: int = 10, clones: int = 2, budget: float = 0.05) -> None:
        self.max_tasks = max_tasks
        self.clones = clones
        self.budget = budget
        self._cloned: set[int] = set()

    def decide(self, snapshot: Snapshot) -> Actions:
        job, cluster, a = snapshot.job, snapshot.cluster, snapshot.attempts
        n = job.n_maps + job.n_reduces
        extra = n * self.clones
        if n > self.max_tasks or extra > self.budget * cluster.total_slots or \
                cluster.free_slots < n + extra:
            return Actions(next_scan_in=math.inf)
        waiting = np.unique(a.task[a.state == AttemptState.WAITING])
        new = [t for t in waiting.tolist() if t not in self._cloned]
        self._cloned.update(new)
        more = len(self._cloned) < n
        return Actions(speculate_task=new, speculate_copies=[self.clones] * len(new),
                       next_scan_in=None if more else math.inf, wake_on_completion=more)


@register
class Spark(Policy):
    """``spark``: Spark's speculation rule, per stage (task type).

    Once ``quantile`` of a stage's tasks have finished, every running task of that stage
    with a single attempt that has run longer than ``multiplier`` x the median successful
    run time (and at least ``min_runtime`` s) gets one copy.
    """

    name = "spark"
    param_ranges = {"quantile": SHARE, "multiplier": ABOVE_0, "min_runtime": AT_LEAST_0}
    copies_only = True  # stateless, asks only for copies

    # Spark 4.0's defaults (SPARK-47720 made speculation less aggressive after "many requests");
    # min_runtime is spark.speculation.minTaskRuntime's default, 100 ms.
    def __init__(self, quantile: float = 0.9, multiplier: float = 3.0,
                 min_runtime: float = 0.1) -> None:
        self.quantile = quantile
        self.multiplier = multiplier
        self.min_runtime = min_runtime

    def decide(self, snapshot: Snapshot) -> Actions:
        a, now, job = snapshot.attempts, snapshot.now, snapshot.job
        per_task = attempts_per_task(snapshot)
        running = a.state == AttemptState.RUNNING
        chosen = np.zeros(len(a), dtype=bool)
        can_act = False
        for task_type, n_type in ((MAP, job.n_maps), (REDUCE, job.n_reduces)):
            done = job.completed_runtimes(task_type)
            if n_type == 0 or len(done) < math.floor(self.quantile * n_type) or not len(done):
                continue
            can_act = True
            limit = max(self.multiplier * float(np.median(done)), self.min_runtime)
            chosen |= (running & (a.task_type == task_type) & (per_task[a.task] == 1)
                       & (now - a.start > limit))
        if not can_act:
            return Actions(next_scan_in=math.inf, wake_on_completion=True)
        return Actions(speculate_task=np.unique(a.task[chosen]))

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Per attempt: its stage has reached its quantile of finished tasks, it is its
        task's only attempt, and it has run longer than a lower bound of the stage's limit.

        The median of the completed run times is at least their mean minus their
        (population) standard deviation (``|mean - median| <= std`` for any distribution),
        so ``limit >= max(multiplier x (mean - std), min_runtime)`` for ``multiplier >= 0``.
        """
        need = np.maximum(np.floor(self.quantile * batch.n_tasks), 1)
        cell = np.maximum(batch.job, 0) * 2 + batch.task_type
        ready = ((batch.n_tasks > 0) & (batch.completed >= need)).ravel()[cell]
        mean = batch.completed_mean.ravel()[cell]
        std = batch.completed_std.ravel()[cell]
        if self.multiplier >= 0:
            lower = np.maximum(self.multiplier * (mean - std), self.min_runtime)
        else:
            lower = np.maximum(self.multiplier * (mean + std), self.min_runtime)
        slack = 1e-6 * (1.0 + np.abs(lower))  # float error of running sums: err on True
        with np.errstate(invalid="ignore"):
            old = ~(batch.now - batch.start <= lower - slack)  # NaN bound: keep the row
        return ready & (batch.task_attempts == 1) & old

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``) in one compiled pass over the
        slots (``_spark_gate``): the same bound and slack; then, for the few jobs it
        wants, ``decide``'s own test with the median of the completed run times when the
        view holds them (``_over_limit``), so it may want fewer jobs than ``needs_scan``."""
        want = _spark_gate(*self._kernel_args(view))
        if view.task_runtime is None or view.job_offset is None or view.job_maps is None:
            return want
        for j in (np.flatnonzero(want) - 1).tolist():
            want[j + 1] = self._over_limit(view, j)
        return want

    def _kernel_args(self, view: SlotView) -> tuple:
        """``_spark_gate``'s and ``_spark_wake``'s arguments."""
        return (view.now, self.quantile, self.multiplier, self.min_runtime, view.due,
                view.job, view.task, view.start, view.task_type, view.task_attempts,
                view.n_tasks.reshape(-1), view.completed.reshape(-1),
                view.completed_mean.reshape(-1), view.completed_std.reshape(-1))

    def needs_scan_from(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): when ``needs_scan_slots`` could first want it
        were nothing about the job to change (``hedge.model.batch``): a ready stage's
        uncopied attempt passes the age bound at ``start + bound - slack``; nothing else
        moves without a completion or an attempt starting or ending (``_spark_wake``);
        then, for the jobs it could want, the time by ``decide``'s exact limit."""
        wake = _spark_wake(*self._kernel_args(view))
        if view.task_runtime is None or view.job_offset is None or view.job_maps is None:
            return wake
        for j in (np.flatnonzero(np.isfinite(wake)) - 1).tolist():
            now, first = self._over_limit_from(view, j)
            wake[j + 1] = view.now if now else max(first, view.now)
        return wake

    def _over_limit(self, view: SlotView, j: int) -> bool:
        """Would ``decide`` copy a task of job ``j``? (its stage tests and limits, exactly)"""
        return self._over_limit_from(view, j)[0]

    def _over_limit_from(self, view: SlotView, j: int) -> tuple[bool, float]:
        """Would ``decide`` copy a task of job ``j`` now (its stage tests and limits,
        exactly: an uncopied attempt of a ready stage running longer than the limit), and
        if not, from when could it (a hair early; inf: no passing time can make it)?"""
        rows = np.flatnonzero(view.job == j)
        task = view.task[rows]
        off, n_maps = int(view.job_offset[j]), int(view.job_maps[j])
        n_reds = int(view.n_tasks[j, REDUCE])
        first = math.inf
        for task_type, lo, n_type in ((MAP, off, n_maps), (REDUCE, off + n_maps, n_reds)):
            runtime = view.task_runtime[lo:lo + n_type]
            done = runtime[~np.isnan(runtime)]
            if n_type == 0 or len(done) < math.floor(self.quantile * n_type) or not len(done):
                continue
            limit = max(self.multiplier * float(np.median(done)), self.min_runtime)
            able = (view.task_type[task] == task_type) & (view.task_attempts[task] == 1)
            if (able & (view.now - view.start[rows] > limit)).any():
                return True, view.now
            if able.any():  # now - start > limit from start + limit on (a hair before)
                at = float(view.start[rows][able].min()) + limit
                first = min(first, at - 1e-9 * (1.0 + abs(at)))
        return False, first


@njit(cache=True, inline="always")
def _cell(job, task, task_type, s):  # pragma: no cover - compiled
    """LATE's group of slot ``s``: its job and task type (``2 job + type``)."""
    return job[s] * 2 + task_type[task[s]]


@njit(cache=True)
def _late_gate(now, hw, q, min_elapsed, due, job, task, start, k, p0, p1, r0, task_type,
               attempts, mark, group, rate, rows):  # pragma: no cover - compiled
    """``Late.needs_scan`` per due job (without its free-slot test, made by the caller).

    Pass 1, per busy slot of a due job: the AM's report (``k`` once received, else
    ``k - 1``, as ``SlotView.to_batch``), its rate ``p / (sent - start)`` (unrated while
    ``p <= 0``), and a mark on its cell (``2 job + type``) when the slot could be copied
    (its task's only attempt, ``min_elapsed`` old). Pass 2: the rated slots of marked
    cells, grouped by cell. Pass 3, per cell: the ``q`` quantile by ``np.quantile``'s
    linear rule, from the two order statistics it reads (found by partition: a sort of
    thousands of slots cost most of a call); a copyable slot below it (plus slack) in a
    cell of two or more wants its job. After pass 1 only the rated slots are read
    (``rows``: scratch, one per slot). ``mark`` is left all False, ``group`` all -1."""
    want = np.zeros(len(due), np.bool_)
    count = 0
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        p, sent = held_report(now, hw, start[s], k[s], p0[s], p1[s], r0[s])
        if not p > 0:
            continue
        r = p / (sent - start[s])
        if not np.isfinite(r):
            continue
        rate[s] = r
        rows[count] = s
        count += 1
        if attempts[task[s]] == 1 and now - start[s] >= min_elapsed - 1e-9:
            mark[_cell(job, task, task_type, s)] = True
    cells = np.empty(count, np.int64)  # per group: its cell
    size = np.zeros(count + 1, np.int64)  # per group: its rated slots (then its end)
    n_groups = 0
    for i in range(count):
        c = _cell(job, task, task_type, rows[i])
        if not mark[c]:
            continue
        if group[c] < 0:
            group[c] = n_groups
            cells[n_groups] = c
            n_groups += 1
        size[group[c] + 1] += 1
    ends = np.cumsum(size[:n_groups + 1])
    order = np.empty(ends[n_groups], np.int64)  # the rated slots of marked cells, by cell
    fill = ends[:n_groups].copy()
    for i in range(count):
        c = _cell(job, task, task_type, rows[i])
        if mark[c]:
            order[fill[group[c]]] = rows[i]
            fill[group[c]] += 1
    for g in range(n_groups):
        i, e = ends[g], ends[g + 1]
        n = e - i
        if n < 2:
            continue
        h = (n - 1) * q
        lo = math.floor(h)
        frac = h - lo
        values = np.empty(n)
        for x in range(n):
            values[x] = rate[order[i + x]]
        values = np.partition(values, lo)
        v_lo = values[lo]
        v_up = values[lo + 1:].min() if lo + 1 < n else v_lo
        cut = v_lo + frac * (v_up - v_lo)
        # on a sorted value the cut is exact (``_below_quantile``); between two, rounding
        slack = 0.0 if frac == 0.0 else 1e-9 * (1 + abs(cut))
        for x in range(i, e):
            s = order[x]
            if rate[s] < cut + slack and attempts[task[s]] == 1 \
                    and now - start[s] >= min_elapsed - 1e-9:
                want[job[s] + 1] = True
    for i in range(count):
        mark[_cell(job, task, task_type, rows[i])] = False
    for g in range(n_groups):
        group[cells[g]] = -1
    return want


@njit(cache=True)
def _late_wake(now, hw, min_elapsed, due, job, task, start, k, r0, task_type, attempts,
               busy, single, rows):  # pragma: no cover - compiled
    """``Late.needs_scan_from``'s report and age events (the caller adds the jobs the gate
    wants now, or would were a slot free).

    Between two reports the AM receives, ``_late_gate``'s rates stay put; with no attempt
    starting or ending the cells' members and their tasks' attempt counts stay put too.
    So the gate's answer can move only when a report is received or an uncopied attempt
    comes of age (``min_elapsed``). A cell (job, type) can flag only with two busy slots
    (rated or not yet) and one of its task's only attempt: per due job, the least over
    the slots of such cells of their next report's earliest receipt (``r0`` while on its
    way, else its send time ``start + (k + 1) hw``: no report arrives before it is sent)
    and, for an uncopied slot not yet of age, a hair before it comes of age; inf when no
    cell can flag (``next_receipt``). ``busy``/``single``: zeroed per-cell scratch, left
    zeroed; ``rows``: scratch, one per slot (the due jobs' busy slots)."""
    wake = np.full(len(due), np.inf)
    n = 0
    for s in range(len(job)):
        j = job[s]
        if j >= 0 and due[j + 1]:
            c = _cell(job, task, task_type, s)
            busy[c] += 1
            if attempts[task[s]] == 1:
                single[c] += 1
            rows[n] = s
            n += 1
    for i in range(n):
        s = rows[i]
        c = _cell(job, task, task_type, s)
        if busy[c] < 2 or single[c] < 1:
            continue
        at = next_receipt(now, hw, start[s], k[s], r0[s])
        if attempts[task[s]] == 1 and not now - start[s] >= min_elapsed - 1e-9:
            age = start[s] + min_elapsed - 1e-9
            at = min(at, age - 1e-9 * (1.0 + abs(age)))
        wake[job[s] + 1] = min(wake[job[s] + 1], max(at, now))
    for i in range(n):
        c = _cell(job, task, task_type, rows[i])
        busy[c] = 0
        single[c] = 0
    return wake


@njit(cache=True, inline="always", error_model="numpy")
def _aged_left(now, start, p, sent):  # pragma: no cover - compiled
    """``Mantri``'s time left of a report (progress ``p`` sent at ``sent``): ``(1 - p) /
    rate`` at its rate ``p / (sent - start)``, less the time since it was sent (``_scan_rows``'
    order of operations); NaN while ``p <= 0``."""
    if not p > 0:
        return np.nan
    return (1.0 - p) / (p / (sent - start)) - (now - sent)


@njit(cache=True, inline="always")
def _copy_bar(expected, margin):  # pragma: no cover - compiled
    """The time left a slot's estimate must exceed for ``Mantri``'s gate to want a copy:
    its type's completed mean plus ``margin``, less rounding slack (``_scan_rows``')."""
    return expected + margin - 1e-6 * (1 + abs(expected))


@njit(cache=True, error_model="numpy")  # x / 0 as numpy: inf or NaN, never an exception
def _mantri_gate(now, hw, margin, max_copies, copies_barred, due, job, task, start, k, p0,
                 p1, r0, task_type, attempts, completed_mean):  # pragma: no cover - compiled
    """``Mantri._scan_rows`` per due job, in one pass over the slots (issue 21: the numpy
    form gathered a ``ScanBatch`` at every gated step). Per busy slot of a due job: the
    AM's report (``k`` once received, else ``k - 1``, as ``SlotView.to_batch``), its time
    left ``(1 - p) / rate`` aged by the time since the report (NaN while ``p <= 0``).
    Returns per job + 1: a slot that may deserve another copy (``want``), and a pruning
    candidate (``prunes``: its task has several attempts and it has an estimate)."""
    want = np.zeros(len(due), np.bool_)
    prunes = np.zeros(len(due), np.bool_)
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        p, sent = held_report(now, hw, start[s], k[s], p0[s], p1[s], r0[s])
        left = _aged_left(now, start[s], p, sent)  # NaN: neither a candidate nor a copy
        n = attempts[task[s]]
        if n > 1 and np.isfinite(left):
            prunes[j + 1] = True
        if copies_barred or not n - 1 < max_copies:
            continue
        expected = completed_mean[j, task_type[task[s]]]
        if left > _copy_bar(expected, margin):
            want[j + 1] = True
    return want, prunes


@njit(cache=True, inline="always", error_model="numpy")
def _copy_report_at(now, hw, lo, st, k, p0, r0, w, r, W, ws, tw):  # pragma: no cover
    """The earliest time a report of a slot the AM does not hold yet could pass
    ``_mantri_gate``'s copy test (time left ``> lo``) while the slot's rate holds; inf
    when none before the attempt ends (which wakes its job).

    Report ``k``, on its way, is judged as the gate will judge it, at its receipt ``r0``.
    A later report ``k'`` is sent at ``s = start + k' hw`` with progress ``p`` on the
    slot's trajectory (``trajectory_progress``); held from its receipt on, its time left
    is at most ``(1 - p) (s - start) / p`` (its value at ``s``: it only ages), so the
    walk wakes at the first report whose bound passes ``lo``. No later report can pass
    once ``(1 - p) (end - start) / p`` does not (less progress left, no longer a run).
    After 64 reports the walk gives up and answers the next send time (early is safe)."""
    if r0 > now and _aged_left(r0, st, p0, st + k * hw) > lo:
        return r0
    finish = trajectory_end(w, r, W, ws, tw)
    kk = k + 1
    for _ in range(64):
        sent = st + kk * hw
        if not sent < finish:
            return np.inf
        kk += 1
        p = trajectory_progress(sent, w, r, W, ws, tw)
        if not p > 0:
            continue
        if (1.0 - p) * (sent - st) / p > lo:
            return sent
        if (1.0 - p) * (finish - st) / p <= lo:
            return np.inf
    return st + kk * hw


@njit(cache=True, error_model="numpy")  # x / 0 as numpy: inf or NaN, never an exception
def _mantri_wake(now, hw, margin, max_copies, walk, due, job, task, start, k, p0, p1, r0,
                 task_type, attempts, completed_mean, w, r, W, ws,
                 tw):  # pragma: no cover - compiled
    """``Mantri.needs_scan_from``'s slot pass, per due job + 1 (``_mantri_gate``'s reports).

    A held estimate only ages between two reports, and the copy test gets harder as it
    does; so a slot that may take another copy (its type has a completed mean: else no
    test passes until a completion, which wakes the job) can move the gate only at a
    report: ``copy_at``, the least over such slots of ``_copy_report_at`` (with ``walk``,
    the slots' trajectories ``w``, ``r``, ``W``, ``ws``, ``tw``), else of their next
    receipt. A pruning candidate needs a task of several attempts with an estimate:
    ``prune_now`` where one has it, ``prune_at`` (the least next receipt) where one has it
    not yet."""
    copy_at = np.full(len(due), np.inf)
    prune_at = np.full(len(due), np.inf)
    prune_now = np.zeros(len(due), np.bool_)
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        n = attempts[task[s]]
        at = next_receipt(now, hw, start[s], k[s], r0[s])
        expected = completed_mean[j, task_type[task[s]]]
        if n - 1 < max_copies and not math.isnan(expected):
            copy = at
            if walk:  # the gate's threshold, loosened for rounding
                lo = _copy_bar(expected, margin)
                lo -= 2e-6 * (1.0 + abs(lo))
                copy = _copy_report_at(now, hw, lo, start[s], k[s], p0[s], r0[s], w[s], r[s],
                                       W[s], ws[s], tw[s])
            copy_at[j + 1] = min(copy_at[j + 1], copy)
        if n > 1:
            p, sent = held_report(now, hw, start[s], k[s], p0[s], p1[s], r0[s])
            left = _aged_left(now, start[s], p, sent)
            if np.isfinite(left):
                prune_now[j + 1] = True
            else:
                prune_at[j + 1] = min(prune_at[j + 1], at)
    return copy_at, prune_now, prune_at


@njit(cache=True, inline="always")
def _spark_ready(quantile, n_tasks, completed):  # pragma: no cover - compiled
    """A stage is judged once ``max(floor(quantile n_tasks), 1)`` of its tasks finished."""
    return n_tasks > 0 and completed >= max(math.floor(quantile * n_tasks), 1)


@njit(cache=True, inline="always")
def _spark_lower(multiplier, min_runtime, mean, std):  # pragma: no cover - compiled
    """A lower bound of the stage's limit ``max(multiplier median, min_runtime)``
    (``|mean - median| <= std``)."""
    if multiplier >= 0:
        return max(multiplier * (mean - std), min_runtime)
    return max(multiplier * (mean + std), min_runtime)


@njit(cache=True)
def _spark_gate(now, quantile, multiplier, min_runtime, due, job, task, start, task_type,
                attempts, n_tasks, completed, mean, std):  # pragma: no cover - compiled
    """``Spark.needs_scan`` per due job: a busy slot of a due job (cell ``c = 2 job +
    type``) wants its job when the stage is ready (``n_tasks[c] > 0`` and ``completed[c]
    >= max(floor(quantile n_tasks[c]), 1)``), its task has one live attempt and it is not
    younger than the bound ``max(multiplier (mean -/+ std), min_runtime)`` minus slack."""
    want = np.zeros(len(due), np.bool_)
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1] or want[j + 1]:
            continue
        t = task[s]
        c = j * 2 + task_type[t]
        if attempts[t] != 1 or not _spark_ready(quantile, n_tasks[c], completed[c]):
            continue
        lower = _spark_lower(multiplier, min_runtime, mean[c], std[c])
        slack = 1e-6 * (1.0 + abs(lower))
        if not (now - start[s] <= lower - slack):
            want[j + 1] = True
    return want


@njit(cache=True)
def _spark_wake(now, quantile, multiplier, min_runtime, due, job, task, start, task_type,
                attempts, n_tasks, completed, mean, std):  # pragma: no cover - compiled
    """``Spark.needs_scan_from``: per due job, the least over its busy slots that
    ``_spark_gate`` could pass of the time the slot outgrows the bound (``now`` when the
    bound is NaN; a hair earlier than the gate's own comparison, to be safe); inf when
    none could (stage not ready, task already copied)."""
    wake = np.full(len(due), np.inf)
    for s in range(len(job)):
        j = job[s]
        if j < 0 or not due[j + 1]:
            continue
        t = task[s]
        c = j * 2 + task_type[t]
        if attempts[t] != 1 or not _spark_ready(quantile, n_tasks[c], completed[c]):
            continue
        lower = _spark_lower(multiplier, min_runtime, mean[c], std[c])
        slack = 1e-6 * (1.0 + abs(lower))
        at = start[s] + (lower - slack)
        at -= 1e-9 * (1.0 + abs(at))  # the gate compares now - start, not this sum
        if not at > now:  # already old enough, or a NaN bound
            at = now
        if at < wake[j + 1]:
            wake[j + 1] = at
    return wake


@register
class SparkLegacy(Spark):
    """``spark-legacy``: Spark's rule with the defaults it had before 4.0 (quantile 0.75,
    multiplier 1.5), the setting most published comparisons and older clusters use."""

    name = "spark-legacy"

    def __init__(self, quantile: float = 0.75, multiplier: float = 1.5,
                 min_runtime: float = 0.1) -> None:
        super().__init__(quantile, multiplier, min_runtime)
