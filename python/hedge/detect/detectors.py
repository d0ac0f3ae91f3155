"""Straggler detectors on one job's snapshot: each returns a boolean mask over its attempts.

Which attempts count (the same for every detector):

- *known*: RUNNING or SUCCEEDED attempts with at least one received heartbeat; they form
  the job-wide means (a finished attempt enters with progress 1 and its real run time);
- *candidates*: RUNNING attempts with a received heartbeat whose last report is below
  progress 1: only they can be flagged.

Detectors (parameters as keyword arguments, defaults from the literature):

=============  ==========================================================================
score          progress PS_i <= mean PS - 0.2 (Hadoop MRv1, Google MapReduce)
rate           ETD_i = t - s_i + (1 - PS_i)/PR_i >= 1.2 x mean ETD (LATE; Mantri: 1.5)
hadoop         legacy run-time estimate > mean + 1.0 std of completed run times (per type)
static         ECT_i > 1.5 x mean ECT, ECT measured from the job's start
adaptive       ECT_i > Th x mean ECT, Th = Q + alpha P + beta R (:func:`adaptive_threshold`)
fresh-score    score on normalised progress (run fraction after a common working time),
               judged by hedge's sequential test on each attempt's duration
fresh-rate     rate on the heartbeat-fresh duration, judged by the same sequential test
=============  ==========================================================================

The fresh-* rules themselves are in :mod:`hedge.detect.fresh`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hedge.detect.fresh import (
    SCAN_INTERVAL,
    Z_CONFIDENT,
    Z_LAST,
    Z_RATE,
    Z_RATE_LAST,
    fresh_rate_rule,
    fresh_score_rule,
)
from hedge.detect.rules import adaptive_threshold, hadoop_rule, ratio_rule, score_rule
from hedge.errors import HedgeError
from hedge.estimate import estimate_ect, legacy_ect
from hedge.estimate.runtime import borrowed_rate_spread_arrays, fresh_arrays, peer_rates
from hedge.model import AttemptState, AttemptTable, Snapshot

Mask = np.ndarray


def known_mask(snapshot: Snapshot) -> Mask:
    """Attempts that enter the job-wide means."""
    a = snapshot.attempts
    live = (a.state == AttemptState.RUNNING) | (a.state == AttemptState.SUCCEEDED)
    return live & a.reported


def candidate_mask(snapshot: Snapshot) -> Mask:
    """Attempts that may be flagged."""
    a = snapshot.attempts
    return a.running & a.reported & (a.progress < 1.0)


def _rule_inputs(snapshot: Snapshot) -> tuple[Mask, Mask]:
    return known_mask(snapshot), candidate_mask(snapshot)


def score(snapshot: Snapshot, gap: float = 0.2) -> Mask:
    """Score-based detection on the reported progress."""
    known, cand = _rule_inputs(snapshot)
    return score_rule(snapshot.attempts.progress, known, cand, gap)


def rate(snapshot: Snapshot, factor: float = 1.2) -> Mask:
    """Rate-based detection on LATE's expected task duration (ECT - attempt start)."""
    known, cand = _rule_inputs(snapshot)
    etd = estimate_ect("rate", snapshot.attempts, snapshot.now) - snapshot.attempts.start
    return ratio_rule(etd, known, cand, factor)


def hadoop(snapshot: Snapshot, k: float = 1.0) -> Mask:
    """Hadoop's default: legacy estimated run time > mean + k std of completed run times."""
    a = snapshot.attempts
    runtime = legacy_ect(a, snapshot.now) - a.start
    cand = candidate_mask(snapshot)
    flagged = np.zeros(len(a), dtype=bool)
    for task_type in np.unique(a.task_type):
        of_type = a.task_type == task_type
        completed = snapshot.job.completed_runtimes(int(task_type))
        flagged |= hadoop_rule(runtime, completed, cand & of_type, k)
    return flagged


def _job_relative_ect(snapshot: Snapshot, estimator: str) -> np.ndarray:
    """ECT measured from the job's start (static and adaptive thresholds are ratios)."""
    return estimate_ect(estimator, snapshot.attempts, snapshot.now) - snapshot.job.start


def static(snapshot: Snapshot, factor: float = 1.5, estimator: str = "rate") -> Mask:
    """Static threshold: ECT_i > factor x mean ECT."""
    known, cand = _rule_inputs(snapshot)
    return ratio_rule(_job_relative_ect(snapshot, estimator), known, cand, factor, strict=True)


def task_progress(snapshot: Snapshot) -> np.ndarray:
    """Reported progress per task of the job (best attempt; 0 for tasks not started)."""
    job, a = snapshot.job, snapshot.attempts
    n_tasks = max(job.n_maps + job.n_reduces, int(a.task.max()) + 1 if len(a) else 0)
    progress = np.zeros(n_tasks)
    np.maximum.at(progress, a.task, np.where(a.reported, a.progress, 0.0))
    return progress


def adaptive_factor(
    snapshot: Snapshot,
    estimator: str = "rate",
    progress_standard: float = 0.5,
    progress_weight: float = 0.5,
    memory_standard: float = 0.6,
    cpu_standard: float = 0.6,
    resource_weight: float = 0.5,
    ect: np.ndarray | None = None,
    known: Mask | None = None,
) -> float:
    """Th for this scan (NaN when no attempt has an estimate yet). ``ect`` (job-relative,
    per attempt) and ``known`` may be passed when the caller already computed them."""
    known = known_mask(snapshot) if known is None else known
    ect = _job_relative_ect(snapshot, estimator) if ect is None else ect
    ects = ect[known]
    if not np.isfinite(ects).any():
        return float("nan")
    deadline = snapshot.job.deadline
    qos = None if deadline is None else deadline - snapshot.job.start
    return adaptive_threshold(
        ects, task_progress(snapshot), snapshot.cluster.cpu_util, snapshot.cluster.mem_util,
        qos=qos, alpha=progress_weight, beta=resource_weight, mu=progress_standard,
        phi=cpu_standard, omega=memory_standard,
    )


def adaptive(snapshot: Snapshot, **params: float | str) -> Mask:
    """Dynamic threshold: ECT_i > Th x mean ECT (parameters of :func:`adaptive_factor`)."""
    known, cand = _rule_inputs(snapshot)
    ect = _job_relative_ect(snapshot, str(params.get("estimator", "rate")))
    th = adaptive_factor(snapshot, **params, ect=ect, known=known)  # type: ignore[arg-type]
    if not np.isfinite(th):
        return np.zeros(len(snapshot.attempts), dtype=bool)
    return ratio_rule(ect, known, cand, th, strict=True)


def fresh_inputs(snapshot: Snapshot) -> tuple[np.ndarray, Mask, Mask, np.ndarray]:
    """What the fresh rules read from a snapshot besides its report times and ``now``: the
    fresh ECT, the known and candidate masks and the borrowed-rate spread (the fresh-*
    policies keep them while the attempt table is unchanged)."""
    known, cand = _rule_inputs(snapshot)
    ect, spread = _fresh_ect_and_spread(snapshot.attempts, snapshot.now)
    return ect, known, cand, spread


def _fresh_ect_and_spread(a: AttemptTable, now: float) -> tuple[np.ndarray, np.ndarray]:
    """``estimate_ect("fresh", a, now)`` and ``borrowed_rate_spread(a)`` (maps and reduces
    each other's peers only), from one :func:`peer_rates` per task type, not one each."""
    ect, spread = np.full(len(a), np.nan), np.full(len(a), np.nan)
    for task_type in np.unique(a.task_type):
        rows = a.task_type == task_type
        columns = (a.start[rows], a.progress[rows], a.report_sent[rows],
                   a.first_progress_time[rows], a.first_progress[rows])
        peers = peer_rates(*columns)
        ect[rows] = fresh_arrays(*columns, now, peers=peers)
        spread[rows] = borrowed_rate_spread_arrays(*columns, peers=peers)
    return ect, spread


def _fresh_args(snapshot: Snapshot, speed_noise: float | None) -> tuple[tuple, np.ndarray]:
    """The fresh rules' leading arguments, and the borrowed-rate spread (their last)."""
    ect, known, cand, spread = fresh_inputs(snapshot)
    a = snapshot.attempts
    noise = np.nan if speed_noise is None else speed_noise
    return (ect, a.start, a.report_sent, a.report_received, snapshot.now, known, cand,
            noise), spread


def fresh_score(snapshot: Snapshot, gap: float = 0.2, horizon: float = 1.2,
                z: float = Z_CONFIDENT, z_last: float = Z_LAST,
                scan_interval: float = SCAN_INTERVAL, speed_noise: float | None = None,
                ) -> Mask:
    """Score-based detection on normalised progress, as a sequential test
    (:func:`hedge.detect.fresh.fresh_score_rule`).

    ``speed_noise``: the job's :func:`hedge.estimate.runtime.speed_noise_arrays`, which
    needs each attempt's previous report (the fresh-* policies remember them); None means
    unknown (only certain bounds are trusted).
    """
    args, spread = _fresh_args(snapshot, speed_noise)
    return fresh_score_rule(*args, gap, horizon, z, z_last, scan_interval, spread)


def fresh_rate(snapshot: Snapshot, factor: float = 1.2, z: float = Z_RATE,
               z_last: float = Z_RATE_LAST, scan_interval: float = SCAN_INTERVAL,
               speed_noise: float | None = None) -> Mask:
    """Rate-based detection on the heartbeat-fresh duration, as a sequential test
    (:func:`hedge.detect.fresh.fresh_rate_rule`); ``speed_noise`` as in
    :func:`fresh_score`."""
    args, spread = _fresh_args(snapshot, speed_noise)
    return fresh_rate_rule(*args, factor, z, z_last, scan_interval, spread)


DETECTORS: dict[str, Callable[..., Mask]] = {
    "score": score,
    "rate": rate,
    "hadoop": hadoop,
    "static": static,
    "adaptive": adaptive,
    "fresh-score": fresh_score,
    "fresh-rate": fresh_rate,
}


def detect(name: str, snapshot: Snapshot, **params: object) -> Mask:
    """Flagged attempts of ``snapshot`` by the detector ``name``."""
    if name not in DETECTORS:
        raise HedgeError(f"unknown detector '{name}', expected one of: {', '.join(DETECTORS)}")
    try:
        return DETECTORS[name](snapshot, **params)
    except TypeError as exc:
        raise HedgeError(f"detector '{name}': bad parameters {params}: {exc}") from None


