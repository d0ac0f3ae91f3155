"""Speculation policies built from one straggler detector each.

Every policy here copies each flagged task once (one extra attempt, at most one copy per
task over the job's life) and caps concurrent speculation like Hadoop's
DefaultSpeculator: running speculative attempts <= max(10, 0.01 x total tasks,
0.1 x running attempts). When the cap leaves room for fewer copies than flagged tasks,
the tasks whose attempt is estimated to finish last go first.

Snapshots are validated on the way in (:class:`hedge.detect.ReportHistory`): bad data
from the AM raises HedgeError instead of producing a decision.

Scan gates (``needs_scan``, :mod:`hedge.model.batch`): ``static`` (legacy or rate
estimator), ``score`` and ``rate`` re-apply their detector to every job at once (job-wide
means by ``bincount``, with a small tolerance so rounding never skips a job the detector
would flag), keeping only rows whose task has exactly one live attempt (a task with
more already has a copy, which ``decide`` never copies again). The ``ReportHistory`` they
keep only validates, so skipping a scan cannot change a decision. ``adaptive`` recomputes
its threshold per job from the batch (deadline, per-task progress, mean utilisation:
``_adaptive_limit``, a lower bound within the same tolerance). In the compiled simulator
these four gates run as one pass over the slot arrays each (``needs_scan_slots``,
:mod:`hedge.policy.detector_kernels`), with the same answers, except that they also leave
out the tasks the job's policy asked to copy before (``SlotView.task_asked``), which a
batch does not hold: ``decide`` never asks for a task twice. The ``fresh-*`` policies
remember each attempt's previous report as seen at the scans (``PreviousReports``), so
skipping a scan at which a report had arrived would change what they remember; their
gate (``FreshPolicy``, compiled simulator only: it reads each job's own policy) skips
only scans that see the table of the job's last scan, before the time the rule could
first flag a task it could still copy (a bound on the rule under a fixed table,
``hedge.detect.fresh.quiet_until``), and such a scan recomputes only the time-dependent
test.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from hedge.detect import fresh_kernels
from hedge.detect.detectors import DETECTORS, fresh_inputs, known_mask
from hedge.detect.fresh import (
    SCAN_INTERVAL,
    Z_CONFIDENT,
    Z_LAST,
    Z_RATE,
    Z_RATE_LAST,
    Verdict,
    fresh_rate_verdict,
    fresh_score_verdict,
)
from hedge.estimate import check_estimator, estimate_ect
from hedge.estimate.runtime import (
    legacy_arrays,
    rate_arrays,
    speed_noise_arrays,
)
from hedge.estimate.runtime_kernels import fresh_table
from hedge.model import Actions, AttemptState, Snapshot
from hedge.model.batch import ScanBatch, SlotView, gate_scratch
from hedge.model.validate import ReportHistory
from hedge.policy import detector_kernels as kernels
from hedge.policy.base import OwnStateGate, Policy, register
from hedge.policy.quiet import table_quiet
from hedge.policy.ranges import ABOVE_0, AT_LEAST_0, SHARE

# relative tolerance of the gates' comparisons (bincount and np.sum round differently)
_GATE_TOL = 1e-9
_SUCCEEDED = int(AttemptState.SUCCEEDED)


# Hadoop's cap on a job's concurrently running speculative attempts: at least this many,
# or these fractions of its tasks and of its running attempts if more (speculation_cap)
CAP_MINIMUM, CAP_TOTAL_FRACTION, CAP_RUNNING_FRACTION = 10, 0.01, 0.1


def speculation_cap(total_tasks: int, running: int, minimum: int = CAP_MINIMUM,
                    total_fraction: float = CAP_TOTAL_FRACTION,
                    running_fraction: float = CAP_RUNNING_FRACTION) -> int:
    """Hadoop's cap on concurrently running speculative attempts of one job."""
    return int(max(minimum, total_fraction * total_tasks, running_fraction * running))


class DetectorPolicy(Policy):
    """Speculate each task the detector ``detector`` flags, once."""

    detector: ClassVar[str] = ""
    # estimator that orders flagged tasks when the cap binds (latest ECT first)
    order_by: ClassVar[str] = "rate"
    gate_needs_an_attempt = True  # their gates read the running attempts' reports only

    def __init__(self) -> None:
        self._copied = np.empty(0, dtype=np.int64)
        self._history = ReportHistory()

    def detector_params(self) -> dict[str, object]:
        """Keyword arguments for the detector function (the policy's own parameters)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def decide(self, snapshot: Snapshot) -> Actions:
        self._check(snapshot)
        a = snapshot.attempts
        flagged = self._flags(snapshot)
        if not flagged.any():  # the usual scan: no set test over every attempt
            return Actions.nothing()
        # at most one copy per task ever: ours, or one the AM already reports
        rows = np.flatnonzero(flagged)
        tasks = a.task[rows]
        flagged[rows] = ~(_member(tasks, self._copied) | _member(tasks, a.task[a.speculative]))
        if not flagged.any():
            return Actions.nothing()
        running = a.running
        total = snapshot.job.n_maps + snapshot.job.n_reduces
        room = speculation_cap(total, int(running.sum())) - int((running & a.speculative).sum())
        if room <= 0:
            return Actions.nothing()
        rows = np.flatnonzero(flagged)
        ect = estimate_ect(self.order_by, a, snapshot.now)[rows]
        rows = rows[np.argsort(-np.nan_to_num(ect, nan=-np.inf), kind="stable")]
        tasks = a.task[rows]
        _, first = np.unique(tasks, return_index=True)
        tasks = tasks[np.sort(first)][:room]
        self._copied = np.concatenate([self._copied, tasks])
        return Actions(speculate_task=tasks)

    def _check(self, snapshot: Snapshot) -> None:
        """Validate the snapshot against the job's earlier ones (HedgeError if bad)."""
        self._history.check(snapshot)

    def _flags(self, snapshot: Snapshot) -> np.ndarray:
        """The detector's straggler mask over the snapshot's attempts."""
        return DETECTORS[self.detector](snapshot, **self.detector_params())


def _member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """``np.isin(values, pool)`` for task indices, by a lookup table over 0..max index.

    A policy asks this on every scan where its detector flags something (a task already
    copied stays flagged); ``np.isin`` costs ~0.1 ms of set-up per call even for a few
    values, the table a few microseconds. Negative values (not task indices) use isin.
    """
    if len(values) == 0 or len(pool) == 0:
        return np.zeros(len(values), dtype=bool)
    if values.min() < 0 or pool.min() < 0:
        return np.isin(values, pool)
    table = np.zeros(int(max(values.max(), pool.max())) + 1, dtype=bool)
    table[pool] = True
    return table[values]


def _gate_rows(batch: ScanBatch) -> tuple[np.ndarray, np.ndarray]:
    """Rows entering the job-wide means (reported), and candidates that ``decide`` could
    copy (reported, progress < 1, the task's only live attempt)."""
    known = (batch.job >= 0) & np.isfinite(batch.report_received)
    return known, known & (batch.progress < 1.0) & (batch.task_attempts == 1)


def _job_mean(batch: ScanBatch, values: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Per row: the mean of ``values`` over its job's known rows with a finite value."""
    use = known & np.isfinite(values)
    n = len(batch.n_tasks)
    count = np.bincount(batch.job[use], minlength=n)
    total = np.bincount(batch.job[use], weights=values[use], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / np.where(count > 0, count, np.nan)
    return mean[np.maximum(batch.job, 0)]


def _ratio_gate(batch: ScanBatch, values: np.ndarray, factor: float) -> np.ndarray:
    """Conservative ``candidate & value >= factor x job mean`` (strict or not alike)."""
    known, cand = _gate_rows(batch)
    limit = factor * _job_mean(batch, values, known)
    with np.errstate(invalid="ignore"):
        return cand & (values >= limit - _GATE_TOL * (np.abs(limit) + np.abs(values)))


# decide's cap, for the compiled gates (detector_kernels.room_left)
_CAP = np.array([CAP_MINIMUM, CAP_TOTAL_FRACTION, CAP_RUNNING_FRACTION], dtype=np.float64)
_NO_CAP = np.empty(0)


def _asked(view: SlotView) -> np.ndarray:
    """Per task row: did its job's policy ask to copy it before (``SlotView.task_asked``)?
    ``decide`` never asks twice, so such a task is no gate's candidate, though a copy the
    caps refused leaves it one attempt. All False where the view does not say."""
    if view.task_asked is not None:
        return view.task_asked
    return np.zeros(len(view.task_attempts), np.bool_)


def _mean_rule_wants(policy: StaticPolicy | ScorePolicy | RatePolicy, view: SlotView,
                     rule: int, param: float) -> np.ndarray:
    """``needs_scan`` of a mean rule (``detector_kernels.mean_rule_gate``) per due job,
    without the tasks asked for before (``_asked``) and, where the view holds the
    attempts' copy flags, the jobs whose copies fill ``decide``'s cap. The policy keeps the
    kernel's scratch (per job: count and sum of the values, running attempts and copies;
    per slot: value)."""
    n_jobs, n_slots = len(view.n_tasks), len(view.job)
    policy._scratch = gate_scratch(policy._scratch, (n_jobs, np.int64, 0), (n_jobs, float, 0),
                                   (n_slots, float, 0), (n_jobs, np.int64, 0),
                                   (n_jobs, np.int64, 0))
    job_start = view.job_start if view.job_start is not None else np.zeros(n_jobs)
    return kernels.mean_rule_gate(view.now, view.hw, rule, param, _GATE_TOL, view.due,
                                  view.job, view.task, view.start, view.k, view.p0, view.p1,
                                  view.r0, view.r1, view.task_attempts, _asked(view),
                                  job_start, *_cap_args(view), view.n_tasks, *policy._scratch)


def _cap_args(view: SlotView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The compiled gates' ``cap``, ``aid`` and ``attempt_copy``: ``decide``'s cap where the
    view holds the attempts' copy flags, else an empty ``cap`` (no cap test)."""
    if view.aid is None or view.attempt_copy is None:
        return _NO_CAP, np.zeros(0, np.int64), np.zeros(0, np.bool_)
    return _CAP, view.aid, view.attempt_copy


@register
class StaticPolicy(DetectorPolicy):
    """Static threshold: speculate when ECT > ``factor`` x mean ECT (from job start)."""

    name = "static"
    param_ranges = {"factor": ABOVE_0}
    detector = "static"

    def __init__(self, factor: float = 1.5, estimator: str = "rate") -> None:
        super().__init__()
        self.factor = factor
        self.estimator = check_estimator(estimator, f"policy '{self.name}': estimator")
        self._scratch: tuple[np.ndarray, ...] | None = None  # mean_rule_gate's, left zeroed

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Rows the static rule could flag: ECT - job start > factor x job mean."""
        if self.estimator not in ("legacy", "rate") or batch.job_start is None:
            return batch.job >= 0  # no cheap batch form of this estimator: scan
        if self.estimator == "legacy":
            ect = legacy_arrays(batch.start, batch.progress, batch.report_sent,
                                batch.report_received)
        else:
            ect = rate_arrays(batch.start, batch.progress, batch.report_sent, batch.now)
        return _ratio_gate(batch, ect - batch.job_start[np.maximum(batch.job, 0)],
                           self.factor)

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``) in one compiled pass over the
        slots (``detector_kernels.mean_rule_gate``)."""
        if self.estimator not in ("legacy", "rate") or view.job_start is None:
            return view.due.copy()
        rule = kernels.STATIC_LEGACY if self.estimator == "legacy" else kernels.STATIC_RATE
        return _mean_rule_wants(self, view, rule, self.factor)


@register
class AdaptivePolicy(DetectorPolicy):
    """Dynamic threshold Th = Q + alpha P + beta R, recomputed every scan.

    Parameters carry the mapred-site.xml names: ``hedge.adaptive.progress.standard`` (mu),
    ``.progress.weight`` (alpha), ``.memory.standard`` (omega), ``.cpu.standard`` (phi),
    ``.resource.weight`` (beta). Q comes from the job's deadline (JobFacts.deadline), the
    utilisations from ClusterFacts.
    """

    name = "adaptive"
    param_ranges = {
        "progress_standard": SHARE, "progress_weight": AT_LEAST_0, "memory_standard": SHARE,
        "cpu_standard": SHARE, "resource_weight": AT_LEAST_0,
    }
    detector = "adaptive"
    param_aliases = {"mu": "progress_standard", "alpha": "progress_weight",
                     "omega": "memory_standard", "phi": "cpu_standard",
                     "beta": "resource_weight"}

    def __init__(
        self,
        progress_standard: float = 0.5,
        progress_weight: float = 0.5,
        memory_standard: float = 0.6,
        cpu_standard: float = 0.6,
        resource_weight: float = 0.5,
        estimator: str = "rate",
    ) -> None:
        super().__init__()
        self.progress_standard = progress_standard
        self.progress_weight = progress_weight
        self.memory_standard = memory_standard
        self.cpu_standard = cpu_standard
        self.resource_weight = resource_weight
        self.estimator = check_estimator(estimator, f"policy '{self.name}': estimator")
        self._scratch: tuple[np.ndarray, ...] | None = None  # adaptive_gate's, left zeroed

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Rows the adaptive rule could flag: ECT > Th x job mean ECT, with Th as
        ``adaptive_factor`` computes it for the job (``_adaptive_limit``)."""
        if (self.estimator not in ("legacy", "rate") or batch.job_start is None
                or batch.task is None or batch.job_deadline is None
                or batch.cluster_util is None):
            return batch.job >= 0  # something the threshold needs is unknown: scan
        job = np.maximum(batch.job, 0)
        if self.estimator == "legacy":
            ect = legacy_arrays(batch.start, batch.progress, batch.report_sent,
                                batch.report_received)
        else:
            ect = rate_arrays(batch.start, batch.progress, batch.report_sent, batch.now)
        ect = ect - batch.job_start[job]
        known, cand = _gate_rows(batch)
        limit, scale = _adaptive_limit(self, batch, ect, known)
        with np.errstate(invalid="ignore"):
            return cand & (ect > limit[job] - _GATE_TOL * (scale[job] + np.abs(ect)))

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``) in one compiled pass over the
        slots (``adaptive_gate``): the same estimates, bounds and tolerance."""
        if (self.estimator not in ("legacy", "rate") or view.job_start is None
                or view.job_deadline is None or view.cluster_util is None):
            return view.due.copy()
        n_jobs, n_tasks, n_slots = len(view.n_tasks), len(view.task_attempts), len(view.job)
        self._scratch = gate_scratch(
            self._scratch, (n_jobs, float, 0), (n_jobs, float, 0), (n_jobs, float, np.inf),
            (n_jobs, float, 0), (n_tasks, float, 0), (n_slots, float, 0),
            (n_jobs, np.int64, 0), (n_jobs, np.int64, 0))
        return kernels.adaptive_gate(
            view.now, view.hw, self.estimator == "legacy", self.progress_standard,
            self.progress_weight, self.resource_weight,
            view.cluster_util - min(self.memory_standard, self.cpu_standard), _GATE_TOL,
            view.due, view.job, view.task, view.start, view.k, view.p0, view.p1, view.r0,
            view.r1, view.task_attempts, _asked(view), view.n_tasks, view.job_start,
            view.job_deadline, *_cap_args(view), *self._scratch)


@register
class ScorePolicy(DetectorPolicy):
    """Score-based: speculate when progress <= mean progress - ``gap``."""

    name = "score"
    param_ranges = {"gap": SHARE}
    detector = "score"

    def __init__(self, gap: float = 0.2) -> None:
        super().__init__()
        self.gap = gap
        self._scratch: tuple[np.ndarray, ...] | None = None  # mean_rule_gate's, left zeroed

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Rows the score rule could flag: progress <= job mean progress - gap."""
        known, cand = _gate_rows(batch)
        limit = _job_mean(batch, batch.progress, known) - self.gap
        with np.errstate(invalid="ignore"):
            return cand & (batch.progress <= limit + _GATE_TOL * (1.0 + np.abs(limit)))

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``) in one compiled pass over the
        slots (``detector_kernels.mean_rule_gate``)."""
        return _mean_rule_wants(self, view, kernels.SCORE, self.gap)


@register
class RatePolicy(DetectorPolicy):
    """Rate-based (LATE): speculate when ETD >= ``factor`` x mean ETD."""

    name = "rate"
    param_ranges = {"factor": ABOVE_0}
    detector = "rate"

    def __init__(self, factor: float = 1.2) -> None:
        super().__init__()
        self.factor = factor
        self._scratch: tuple[np.ndarray, ...] | None = None  # mean_rule_gate's, left zeroed

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """Rows the rate rule could flag: ETD >= factor x job mean ETD."""
        etd = rate_arrays(batch.start, batch.progress, batch.report_sent, batch.now) \
            - batch.start
        return _ratio_gate(batch, etd, self.factor)

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """``needs_scan`` per due job (index ``job + 1``) in one compiled pass over the
        slots (``detector_kernels.mean_rule_gate``)."""
        return _mean_rule_wants(self, view, kernels.RATE, self.factor)


def _adaptive_limit(p: AdaptivePolicy, batch: ScanBatch, ect: np.ndarray, known: np.ndarray,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per job: a lower bound of ``Th x mean ECT`` (``hedge.detect.rules.adaptive_threshold``)
    and the size of its terms (for the comparison's tolerance); NaN where no known row has
    a finite ECT (then ``decide`` flags nothing).

    ``Th x mean = Q x mean + (alpha P + beta R) x mean``: ``Q x mean`` is 1.5 x mean without
    a deadline, else ``qos`` when no ECT exceeds it, else the smallest ECT above it; taken
    as ``min(qos, smallest ECT above qos - tolerance)``, never above the exact value.
    ``P``: the job's mean per-task progress (best reported attempt per task, 0 for tasks
    not running) minus ``mu``; ``R``: the mean utilisation minus ``min(omega, phi)``.
    """
    n_jobs = len(batch.n_tasks)
    use = known & np.isfinite(ect)
    job = batch.job[use]
    count = np.bincount(job, minlength=n_jobs)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(job, weights=ect[use], minlength=n_jobs) / \
            np.where(count > 0, count, np.nan)
    qos = batch.job_deadline - batch.job_start
    slack = _GATE_TOL * (1.0 + np.abs(qos[job]))
    above = ect[use] > qos[job] - slack
    smallest = np.full(n_jobs, np.inf)
    np.minimum.at(smallest, job[above], ect[use][above])
    q_mean = np.where(np.isnan(qos), 1.5 * mean, np.minimum(qos, smallest))
    # best reported progress per task (rows sorted by task, then progress: each task's last)
    rows = np.flatnonzero(batch.job >= 0)
    reported = np.where(np.isfinite(batch.report_received[rows]), batch.progress[rows], 0.0)
    order = np.lexsort((reported, batch.task[rows]))
    task = batch.task[rows][order]
    last = np.r_[task[1:] != task[:-1], True] if len(task) else np.zeros(0, dtype=bool)
    best = np.bincount(batch.job[rows][order][last], weights=reported[order][last],
                       minlength=n_jobs)
    with np.errstate(invalid="ignore", divide="ignore"):
        progress = best / batch.n_tasks.sum(axis=1) - p.progress_standard
    resource = batch.cluster_util - min(p.memory_standard, p.cpu_standard)
    p_term = p.progress_weight * progress * mean
    r_term = p.resource_weight * resource * mean
    return q_mean + p_term + r_term, np.abs(q_mean) + np.abs(p_term) + np.abs(r_term)


class PreviousReports:
    """Remembers, per attempt, its last report and the one before (send time, progress).

    The AttemptTable carries only the last report and the first progress report; the
    fresh-* policies see every scan, so it keeps the previous one itself to measure how
    much speeds change between reports (:func:`speed_noise_arrays`).
    """

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int64)
        self._last = np.empty((0, 2))  # (sent, progress)
        self._prev = np.empty((0, 2))
        self._distinct = True  # every table recorded had distinct attempt ids

    def update(self, snapshot: Snapshot) -> tuple[np.ndarray, np.ndarray]:
        """Record this snapshot's reports; per attempt: (prev send time, prev progress),
        NaN until a second distinct report has been seen. One compiled pass
        (``_lookup_reports``) looks every attempt up and, while the ids are distinct,
        records the ones seen before in place."""
        a = snapshot.attempts
        prev, current, seen, distinct = _lookup_reports(
            self._ids, self._last, self._prev, a.attempt, a.report_sent, a.progress,
            self._distinct)
        self._distinct = distinct
        if not distinct:
            self._merge(a.attempt, current, prev)
        elif not seen.all():
            self._append(a.attempt, seen, current, prev)
        return prev[:, 0], prev[:, 1]

    def update_reference(self, snapshot: Snapshot) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`update` in numpy (the reference its compiled pass is tested against)."""
        a = snapshot.attempts
        current = np.column_stack([a.report_sent, a.progress])
        prev = np.full((len(a.attempt), 2), np.nan)
        seen = np.zeros(len(a.attempt), dtype=bool)
        pos = seen.astype(np.int64)
        if len(self._ids):
            pos = np.minimum(np.searchsorted(self._ids, a.attempt), len(self._ids) - 1)
            seen = self._ids[pos] == a.attempt
            last, before = self._last[pos], self._prev[pos]
            with np.errstate(invalid="ignore"):
                newer = seen & (a.report_sent > last[:, 0])
            prev = np.where(newer[:, None], last, np.where(seen[:, None], before, np.nan))
            current = np.where((seen & ~newer & ~np.isfinite(a.report_sent))[:, None],
                               last, current)
        self._distinct = self._distinct and _distinct(a.attempt)
        if self._distinct:
            self._record(a.attempt, pos, seen, current, prev)
        else:
            self._merge(a.attempt, current, prev)
        return prev[:, 0], prev[:, 1]

    def _append(self, ids: np.ndarray, seen: np.ndarray, current: np.ndarray,
                prev: np.ndarray) -> None:
        """Sort the ids not seen before in among the remembered ones (distinct ids)."""
        new = ~seen
        all_ids = np.concatenate([self._ids, ids[new]])
        order = np.argsort(all_ids, kind="stable")
        self._ids = all_ids[order]
        self._last = np.concatenate([self._last, current[new]])[order]
        self._prev = np.concatenate([self._prev, prev[new]])[order]

    def _record(self, ids: np.ndarray, pos: np.ndarray, seen: np.ndarray,
                current: np.ndarray, prev: np.ndarray) -> None:
        """``_merge`` when every id is distinct, remembered ones included: the rows of
        ids seen before are overwritten where they are (``pos``), new ids are added and
        sorted in (usually none: no sort)."""
        rows = pos[seen]
        self._last[rows] = current[seen]
        self._prev[rows] = prev[seen]
        if not seen.all():
            self._append(ids, seen, current, prev)

    def _merge(self, ids: np.ndarray, current: np.ndarray, prev: np.ndarray) -> None:
        """Remember ``current`` and ``prev`` for these ids, the other ids as they were."""
        keep = ~np.isin(self._ids, ids)
        all_ids = np.concatenate([self._ids[keep], ids])
        order = np.argsort(all_ids, kind="stable")
        self._ids = all_ids[order]
        self._last = np.concatenate([self._last[keep], current])[order]
        self._prev = np.concatenate([self._prev[keep], prev])[order]

    def speed_noise(self, snapshot: Snapshot) -> float:
        """The job's speed noise after recording ``snapshot`` (NaN: no evidence yet)."""
        prev_sent, prev_progress = self.update(snapshot)
        a = snapshot.attempts
        known = known_mask(snapshot)
        return float(speed_noise_arrays(a.start, a.progress, a.report_sent,
                                        a.first_progress_time, a.first_progress,
                                        prev_progress, prev_sent, known)[0])


def _distinct(ids: np.ndarray) -> bool:
    """No id twice."""
    return len(ids) < 2 or bool((np.diff(np.sort(ids)) != 0).all())


@njit(cache=True)
def _lookup_reports(ids, last, before, attempt, sent, progress,
                    distinct):  # pragma: no cover - compiled
    """``PreviousReports.update_reference``'s lookup of each attempt among the remembered
    ``ids`` (sorted): its (prev, current) reports as (sent, progress) rows, whether it was
    seen, and whether every table so far had distinct ids (``distinct`` and these ids);
    then, if so, the seen attempts' rows of ``last`` and ``before`` written in place."""
    n, m = len(attempt), len(ids)
    prev = np.full((n, 2), np.nan)
    current = np.empty((n, 2))
    seen = np.zeros(n, np.bool_)
    pos = np.zeros(n, np.int64)
    for i in range(n):
        current[i, 0], current[i, 1] = sent[i], progress[i]
        if m == 0:
            continue
        p = min(np.searchsorted(ids, attempt[i]), m - 1)
        pos[i] = p
        if ids[p] != attempt[i]:
            continue
        seen[i] = True
        if sent[i] > last[p, 0]:  # a newer report: the last one becomes the previous
            prev[i, 0], prev[i, 1] = last[p, 0], last[p, 1]
        else:
            prev[i, 0], prev[i, 1] = before[p, 0], before[p, 1]
            if not np.isfinite(sent[i]):
                current[i, 0], current[i, 1] = last[p, 0], last[p, 1]
    if distinct and n > 1 and not (attempt[1:] > attempt[:-1]).all():
        order = np.sort(attempt)  # (ids in increasing order, as a live AM sends them, are)
        distinct = (order[1:] != order[:-1]).all()
    if distinct:
        for i in range(n):
            if seen[i]:
                p = pos[i]
                last[p, 0], last[p, 1] = current[i, 0], current[i, 1]
                before[p, 0], before[p, 1] = prev[i, 0], prev[i, 1]
    return prev, current, seen, distinct


class FreshPolicy(OwnStateGate, DetectorPolicy):
    """A fresh-* detector policy: passes the job's speed noise, measured from the
    previous reports it remembers, to its detector.

    Ungated, most of its scans see the same attempt table as the scan before (no report
    arrived, no attempt started or ended: 63 % of 17,325 scans of 2,773 tasks of the
    fitted day), and then everything but the time-dependent test is as before: remembering the
    reports again changes nothing (``PreviousReports.update`` of an unchanged table) and
    the speed noise, fresh ECTs, borrowed-rate spreads and masks are the same, so they
    are kept (``_FreshInputs``) and only the test at ``now`` runs again.

    Scan gate (compiled simulator only, ``SlotView.policies``): such a scan changes no
    state, and it acts only once the rule flags a task not yet copied. At the first scan
    of each table the policy bounds when that could first happen were the table to stay
    (``hedge.detect.fresh.quiet_until``); a job sleeps until then, or until its table
    could change: the first report that could reach the AM (its send time), or an
    attempt's start or end, which wake it anyway (``_quiet_until``).

    Cost (issue 21, B, 2026-11-26): with the gate nearly every scan is a table's first
    (3,000 tasks of the fitted day: 13,425 of 13,427 scans for either rule), so a scan's
    work is one compiled pass for the table's inputs (``_FreshInputs.of``:
    ``PreviousReports.update``'s ``_lookup_reports`` and
    ``hedge.estimate.runtime_kernels.fresh_table``) and one for the verdict and its bound
    (``hedge.detect.fresh_kernels``); ``ReportHistory.check`` runs once per table.
    """

    order_by = "fresh"

    def __init__(self) -> None:
        super().__init__()
        self._reports = PreviousReports()
        self._speed_noise = float("nan")
        self._inputs: _FreshInputs | None = None  # of the last table that differed

    def decide(self, snapshot: Snapshot) -> Actions:
        key = _table_key(snapshot)
        if self._inputs is None or self._inputs.key != key:
            self._inputs = _FreshInputs.of(snapshot, self._reports, key)
            self._speed_noise = self._inputs.noise
        return super().decide(snapshot)

    def _check(self, snapshot: Snapshot) -> None:
        """``ReportHistory.check``, skipped where it cannot fail: on the table it last
        passed (every column it reads is in ``_table_key``) at a finite scan time no
        earlier than then. Its checks of one snapshot against ``now`` only get easier as
        ``now`` grows, and against the history it remembered from that same table they
        compare each report with itself (its memory stays as it is).

        A new table's rows are checked by one compiled pass (``_rows_valid``, the
        conditions of ``hedge.model.validate._checks``); where it finds them all valid
        the history checks a copy marked ``validated`` (``validate_snapshot`` would
        pass: it returns at once), else the snapshot itself, to raise the reference's
        error."""
        i, now = self._inputs, snapshot.now
        if i.checked <= now and math.isfinite(now):
            return
        if not snapshot.validated and math.isfinite(now):
            a = snapshot.attempts
            if _rows_valid(a.progress, a.report_sent, a.start, a.report_received,
                           a.first_progress_time, a.first_progress, a.state, float(now)):
                snapshot = copy.copy(snapshot)
                snapshot.validated = True
        self._history.check(snapshot)
        i.checked = now

    def detector_params(self) -> dict[str, object]:
        return {**super().detector_params(), "speed_noise": self._speed_noise}

    def _flags(self, snapshot: Snapshot) -> np.ndarray:
        """The detector's flags from the kept inputs (as ``DETECTORS[detector]`` computes
        them from the snapshot), tested at ``now``; at the table's first scan, also until
        when they could not flag a task this policy could still copy."""
        i, a = self._inputs, snapshot.attempts
        flags, parts = self._kernel(i.ect, a.start, a.report_sent, a.report_received,
                                    snapshot.now, i.known, i.candidates, i.noise, i.spread,
                                    *(getattr(self, name) for name in self._kernel_params))
        if np.isnan(i.quiet):
            copyable = ~(_member(a.task, self._copied) | _member(a.task, a.task[a.speculative]))
            i.quiet = fresh_kernels.quiet(parts, i.ect, a.start, a.report_sent, snapshot.now,
                                          i.candidates & parts[1] & copyable, self.z,
                                          self.scan_interval)
        return flags

    def _quiet_until(self, view: SlotView, j: int, slots: np.ndarray) -> float:
        """``view.now`` if this job's table could differ from the one its kept inputs were
        made from (a report received since, an attempt started, one fewer running) or
        the rule could flag now; else the earlier of the rule's bound and the send time
        of the next report any of its attempts could deliver (a report's latency is
        >= 0). A waiting attempt leaves the table only by starting, and joins it only as a
        copy this policy asked for (its flag bound was then now)."""
        i, now = self._inputs, view.now
        if i is None or not i.quiet > now or len(slots) != i.running:
            return now  # (quiet is NaN only if decide raised before testing the rule)
        return min(i.quiet, table_quiet(slots, view.start, view.k, view.r0, view.r1,
                                        view.hw, now, i.since))

    # the verdict of hedge.detect.fresh each subclass tests (fresh_score_verdict, ...):
    # the reference of _kernel
    _verdict: ClassVar[Callable[..., Verdict]]
    # the same verdict compiled (hedge.detect.fresh_kernels.score_flags, ...; bit-identical
    # to _verdict): the flags and what fresh_kernels.quiet reads, of the columns and kept
    # inputs _flags passes followed by the rule's parameters, the attributes named here
    _kernel: ClassVar[Callable[..., tuple[np.ndarray, tuple]]]
    _kernel_params: ClassVar[tuple[str, ...]]


@njit(cache=True)
def _rows_valid(progress, sent, start, received, fpt, fp, state,
                now):  # pragma: no cover - compiled
    """No row fails a check of ``hedge.model.validate._checks`` (the same comparisons:
    NaN fails none of them but the progress range)."""
    late = now + 1e-9
    for i in range(len(progress)):
        p = progress[i]
        if not (p >= 0 and p <= 1) or sent[i] < start[i] or received[i] < sent[i] \
                or received[i] > late or fpt[i] > sent[i] or sent[i] > late \
                or fpt[i] < start[i] or fp[i] > p + 1e-12 \
                or (state[i] == _SUCCEEDED and p < 1):
            return False
    return True


@dataclass
class _FreshInputs:
    """What the fresh rules read from an attempt table that does not depend on ``now``
    (``hedge.detect.detectors.fresh_inputs``), the table's key (``_table_key``) to tell an
    unchanged table, and for the scan gate: when the table was first seen (``since``), its
    running attempts and the rule's flag bound (``quiet``; NaN until the first test)."""

    key: bytes
    ect: np.ndarray
    known: np.ndarray
    candidates: np.ndarray
    spread: np.ndarray
    noise: float
    since: float
    running: int
    quiet: float = math.nan
    checked: float = math.inf  # scan time at which ReportHistory.check passed this table

    @classmethod
    def of(cls, snapshot: Snapshot, reports: PreviousReports, key: bytes) -> _FreshInputs:
        """The inputs of a table seen for the first time (``key``: its ``_table_key``), its
        reports recorded in ``reports``: one compiled pass
        (``hedge.estimate.runtime_kernels.fresh_table``, bit-identical to ``fresh_inputs``
        and ``PreviousReports.speed_noise``)."""
        prev_sent, prev_progress = reports.update(snapshot)
        a = snapshot.attempts
        ect, spread, known, candidates, noise, ok, running = fresh_table(
            a.task_type, a.state, a.start, a.progress, a.report_sent, a.first_progress_time,
            a.first_progress, prev_progress, prev_sent)
        if not ok:  # a median rate of zero, whose sign np.nanmedian decides
            ect, known, candidates, spread = fresh_inputs(snapshot)
        return cls(key, ect, known, candidates, spread, float(noise), snapshot.now, running)


def _table_key(snapshot: Snapshot) -> bytes:
    """The bytes of the attempt-table columns that the speed noise (with
    ``PreviousReports``), the fresh ECT, the borrowed-rate spread, the known /
    candidate masks and ``ReportHistory.check`` read. Equal bytes: equal columns (each
    row adds the same number of bytes, so equal lengths mean equal row counts); a
    difference in bits alone (another NaN, -0.0) only costs a recomputation."""
    a = snapshot.attempts
    return b"".join(np.ascontiguousarray(c).tobytes() for c in (
        a.report_sent, a.progress, a.attempt, a.task_type, a.state, a.start,
        a.first_progress_time, a.first_progress, a.report_received))


@register
class FreshScorePolicy(FreshPolicy):
    """Score-based on normalised progress (run fraction after a common running time)."""

    name = "fresh-score"
    param_ranges = {"gap": SHARE, "horizon": ABOVE_0, "z": AT_LEAST_0, "z_last": AT_LEAST_0,
                    "scan_interval": ABOVE_0}
    detector = "fresh-score"
    _verdict = staticmethod(fresh_score_verdict)
    _kernel = staticmethod(fresh_kernels.score_flags)
    _kernel_params = ("gap", "horizon", "z", "z_last", "scan_interval")

    def __init__(self, gap: float = 0.2, horizon: float = 1.2, z: float = Z_CONFIDENT,
                 z_last: float = Z_LAST, scan_interval: float = SCAN_INTERVAL) -> None:
        super().__init__()
        self.gap = gap
        self.horizon = horizon
        self.z = z
        self.z_last = z_last
        self.scan_interval = scan_interval


@register
class FreshRatePolicy(FreshPolicy):
    """Rate-based on the heartbeat-fresh estimate, as a sequential test on noisy speeds
    (parameters of :func:`hedge.detect.fresh.fresh_rate_rule`)."""

    name = "fresh-rate"
    param_ranges = {"factor": ABOVE_0, "z": AT_LEAST_0, "z_last": AT_LEAST_0,
                    "scan_interval": ABOVE_0}
    detector = "fresh-rate"
    _verdict = staticmethod(fresh_rate_verdict)
    _kernel = staticmethod(fresh_kernels.rate_flags)
    _kernel_params = ("factor", "z", "z_last", "scan_interval")

    def __init__(self, factor: float = 1.2, z: float = Z_RATE, z_last: float = Z_RATE_LAST,
                 scan_interval: float = SCAN_INTERVAL) -> None:
        super().__init__()
        self.factor = factor
        self.z = z
        self.z_last = z_last
        self.scan_interval = scan_interval
