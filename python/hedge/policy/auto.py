"""``hedge-auto``: copy a task only where the copy is expected to pay for its slot time.

Per task type, once ``min_completed`` tasks of it have completed (their run times ``D``, median
``m``, residuals ``e = log(D / m)``), each running task with one live attempt is judged:

- its remaining time ``R`` and total run time ``T`` from the JVM-aware rate estimate (the
  rate measured from the first progress report, so JVM start-up does not look like slowness);
- what a copy would take, under the trace straggler model (docs/trace-model.md): ``C = m *
  exp((1 - lam) * log(T / m) + lam * e)`` over every completed residual ``e`` (an exact
  expectation over the empirical distribution, no random draw), for each ``lam`` of a grid
  weighted by this job's belief about ``lam`` (below);
- the job's own horizon ``H``: the longest remaining time of the other running tasks of its
  type (and ``m`` while a task of the type still waits for a slot): saving time on a task
  that would not be last does not shorten the job;
- **benefit** ``B = E[(R - max(C, H))+]``: seconds of job time the copy saves;
  **cost** ``K = cost_weight * busy * E[min(C, R)]``: the copy's slot-seconds, weighted by the
  share of the cluster's slots in use (``assumed_busy`` when the AM does not know);
- **copy** when ``B > K`` and ``B >= min_saving``; at most one copy per task.

Two guards keep it from wasting:

- **Skew triage:** a task whose input is ``skew_ratio`` x its type's median input or more is
  slow because it has more data; a copy would do the same work, so it is not copied (its
  slowness is put down to skew; ``hedge imkp`` evens reducer input for the job's next run).
- **Learning from its own races:** the belief about ``lam`` starts as a normal prior around
  ``lam`` (width ``prior_width``) and is updated by Bayes' rule with every race of this job
  (P(the copy wins) under each ``lam``), so a job whose copies lose (its slowness is the
  tasks' own work: nothing to gain) believes ``lam`` near 0 after a few races and stops.

Placement: copies avoid the nodes their originals run on (``avoid_nodes``) and prefer the
fastest node the node ranking knows (``prefer_node``), where it knows one. Every decision is
logged at debug level (logger ``hedge.policy.auto``) with its numbers.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from hedge.estimate.runtime import jvm_ect
from hedge.model import MAP, REDUCE, Actions, AttemptState, Snapshot
from hedge.policy.base import Policy, register

log = logging.getLogger("hedge.policy.auto")
LAMBDAS = np.linspace(0.0, 1.0, 11)  # the lam values the belief is kept over


@register
class HedgeAuto(Policy):
    """Cost-aware copies with skew triage and race learning (see the module docstring).

    - ``cost_weight``: seconds of job time one slot-second of a copy must buy on a fully
      busy cluster (scaled by the share of busy slots);
    - ``assumed_busy``: the busy share used when the AM does not report slots (live AM);
    - ``lam``: the transient share of a task's slowness (the calibrated trace model's 0.8);
    - ``min_completed``: completed tasks of a type needed before its tasks are judged;
    - ``min_saving``: the smallest expected saving (s) worth a copy;
    - ``skew_ratio``: input at least this many times its type's median: skew, no copy;
    - ``prior_width``: the spread of the prior belief about ``lam`` (a normal's sigma).
    """

    name = "hedge-auto"

    def __init__(self, cost_weight: float = 1.0, assumed_busy: float = 0.5, lam: float = 0.8,
                 min_completed: int = 3, min_saving: float = 1.0, skew_ratio: float = 1.5,
                 prior_width: float = 0.2) -> None:
        self.cost_weight = float(cost_weight)
        self.assumed_busy = float(assumed_busy)
        self.lam = float(lam)
        self.min_completed = int(min_completed)
        self.min_saving = float(min_saving)
        self.skew_ratio = float(skew_ratio)
        self.prior_width = float(prior_width)
        # copied task -> [P(copy wins) under each LAMBDAS value, copy ahead at the last scan]
        self._races: dict[int, list] = {}
        self._log_belief = -0.5 * ((LAMBDAS - self.lam) / max(self.prior_width, 1e-3)) ** 2

    @property
    def belief(self) -> np.ndarray:
        """This job's belief about lam: one probability per ``LAMBDAS`` value."""
        w = np.exp(self._log_belief - self._log_belief.max())
        return w / w.sum()

    @property
    def lam_estimate(self) -> float:
        """The belief's mean lam (the prior's ``lam`` until a race has ended)."""
        return float(self.belief @ LAMBDAS)

    def decide(self, snapshot: Snapshot) -> Actions:
        a = snapshot.attempts
        remaining = jvm_ect(a, snapshot.now) - snapshot.now
        self._follow_races(snapshot, remaining)
        live = (a.state == AttemptState.RUNNING) | (a.state == AttemptState.WAITING)
        n_tasks = snapshot.job.n_maps + snapshot.job.n_reduces
        per_task = np.bincount(a.task[live], minlength=n_tasks)
        chosen: list[int] = []
        judged = False
        for task_type in (MAP, REDUCE):
            done = snapshot.job.completed_runtimes(task_type)
            done = done[done > 0]
            of_type = (a.state == AttemptState.RUNNING) & (a.task_type == task_type)
            if len(done) < self.min_completed or not of_type.any():
                continue
            judged = True
            chosen += self._judge(snapshot, task_type, done, of_type, per_task, remaining)
        if not judged:
            return Actions(next_scan_in=math.inf, wake_on_completion=True)
        running = a.state == AttemptState.RUNNING
        avoid = np.unique(a.node[running & np.isin(a.task, chosen) & (a.node >= 0)])
        prefer = self._fastest(snapshot, avoid)
        return Actions(speculate_task=chosen, prefer_node=[prefer] * len(chosen),
                       avoid_nodes=avoid if chosen else [])

    def _judge(self, snapshot: Snapshot, task_type: int, done: np.ndarray, of_type: np.ndarray,
               per_task: np.ndarray, remaining: np.ndarray) -> list[int]:
        """The tasks of one type worth a copy now."""
        a, now = snapshot.attempts, snapshot.now
        m = float(np.median(done))
        residual = np.log(done / m)
        rows = np.flatnonzero(of_type & (per_task[a.task] == 1) & ~a.speculative
                              & np.isfinite(remaining) & (remaining > 0))
        rows = rows[[int(a.task[r]) not in self._races for r in rows]]
        if not len(rows):
            return []
        waiting = ((a.state == AttemptState.WAITING) & (a.task_type == task_type)).any()
        rest = remaining[of_type]
        busy = self._busy(snapshot)
        skewed = self._skewed(snapshot, of_type)
        chosen = []
        for r in rows:
            task, left = int(a.task[r]), float(remaining[r])
            if skewed[r]:
                log.debug("no copy task=%d reason=skew input=%.0f", task, a.input_bytes[r])
                continue
            total = max(now - float(a.start[r]) + left, 1e-9)
            lam = LAMBDAS[:, None]  # rows: lam values; columns: completed residuals
            copy = m * np.exp((1 - lam) * math.log(total / m) + lam * residual)
            others = rest[(a.task[of_type] != task)]
            horizon = max(float(others.max()) if len(others) else 0.0, m if waiting else 0.0)
            win = (copy < left).mean(axis=1)
            belief = self.belief
            benefit = float(belief @ np.maximum(left - np.maximum(copy, horizon), 0).mean(axis=1))
            cost = self.cost_weight * busy * float(belief @ np.minimum(copy, left).mean(axis=1))
            if benefit > cost and benefit >= self.min_saving:
                chosen.append(task)
                self._races[task] = [win, False]
                log.debug("copy task=%d remaining=%.1f horizon=%.1f p_win=%.2f benefit=%.1f "
                          "cost=%.1f lam=%.2f", task, left, horizon, float(belief @ win),
                          benefit, cost, self.lam_estimate)
        return chosen

    def _busy(self, snapshot: Snapshot) -> float:
        c = snapshot.cluster
        if c.total_slots <= 0:
            return self.assumed_busy
        return 1.0 - c.free_slots / c.total_slots

    def _skewed(self, snapshot: Snapshot, of_type: np.ndarray) -> np.ndarray:
        """Per attempt row: its input is ``skew_ratio`` x its type's median or more."""
        inputs = snapshot.attempts.input_bytes
        known = of_type & np.isfinite(inputs) & (inputs > 0)
        if known.sum() < 2:
            return np.zeros(len(inputs), dtype=bool)
        median = float(np.median(inputs[known]))
        return known & (inputs >= self.skew_ratio * median)

    def _fastest(self, snapshot: Snapshot, avoid: np.ndarray) -> int:
        """The node the ranking rates fastest, not among ``avoid`` (-1: none known)."""
        speed = snapshot.cluster.node_speed
        if not len(speed):
            return -1
        speed = speed.astype(float).copy()
        speed[avoid[avoid < len(speed)]] = -np.inf
        best = int(np.argmax(speed))
        return best if np.isfinite(speed[best]) and speed[best] > 1.0 else -1

    def _follow_races(self, snapshot: Snapshot, remaining: np.ndarray) -> None:
        """Note which attempt of each raced task is ahead; a task gone from the snapshot has
        completed, and the attempt that was ahead at its last scan is taken as the winner
        (neither the AM's nor the simulator's snapshot says who won)."""
        if not self._races:
            return
        a = snapshot.attempts
        running = a.state == AttemptState.RUNNING
        for task in list(self._races):
            rows = np.flatnonzero(running & (a.task == task))
            if not len(rows):
                p_win, ahead = self._races.pop(task)
                likelihood = p_win if ahead else 1 - p_win
                self._log_belief += np.log(np.clip(likelihood, 0.01, 1.0))
                continue
            copy, orig = remaining[rows][a.speculative[rows]], remaining[rows][~a.speculative[rows]]
            if len(copy) and len(orig) and np.isfinite(copy).any():
                self._races[task][1] = bool(np.nanmin(copy) < np.nanmin(orig))
            elif len(copy) and not len(orig):
                self._races[task][1] = True  # the original is gone, the copy runs on
