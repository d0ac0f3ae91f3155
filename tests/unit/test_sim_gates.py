"""Detector gates on single snapshots: a job the gate clears is one ``decide`` leaves alone."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.model import AttemptState, AttemptTable, ClusterFacts, JobFacts, Snapshot
from hedge.model.batch import ScanBatch
from hedge.policy import create


def random_snapshot(rng: np.random.Generator, n: int) -> Snapshot:
    now = 100.0
    start = rng.uniform(0, 60, n)
    reported = rng.random(n) < 0.85
    sent = np.where(reported, rng.uniform(start, now - 0.5), np.nan)
    recv = np.where(reported, sent + rng.uniform(0, 0.5, n), np.nan)
    progress = np.where(reported, rng.uniform(0, 1, n) ** rng.uniform(0.3, 3, n), 0.0)
    progress[rng.random(n) < 0.05] = 1.0
    progress = np.where(reported, progress, 0.0)
    nan = np.full(n, np.nan)
    attempts = AttemptTable(
        task=np.arange(n), attempt=np.arange(n), task_type=np.zeros(n, np.int8),
        state=np.full(n, AttemptState.RUNNING, np.int8), node=np.arange(n) % 7, start=start,
        first_progress_time=nan, first_progress=nan, progress=progress, report_sent=sent,
        report_received=recv, bytes_processed=np.zeros(n), input_bytes=nan,
        speculative=np.zeros(n, bool))
    job = JobFacts(job_id="j", start=0.0, n_maps=n, n_reduces=0)
    return Snapshot(now=now, job=job, attempts=attempts,
                    cluster=ClusterFacts(total_slots=100, free_slots=10))


def batch_of(s: Snapshot) -> ScanBatch:
    """The engine's batch for this one job (unreported rows: NaN receive time)."""
    a, n = s.attempts, len(s.attempts)
    return ScanBatch(
        now=s.now, job=np.zeros(n, np.int64), task_type=a.task_type, start=a.start,
        progress=a.progress, report_sent=a.report_sent, report_received=a.report_received,
        task_attempts=np.ones(n, np.int64), n_tasks=np.array([[n, 0]]),
        completed=np.zeros((1, 2)), completed_mean=np.full((1, 2), np.nan),
        completed_std=np.full((1, 2), np.nan), free_slots=10, job_start=np.array([0.0]))


@pytest.mark.parametrize("policy,params", [("static", {}), ("static", {"estimator": "legacy"}),
                                           ("score", {}), ("score", {"gap": 0.05}),
                                           ("rate", {}), ("rate", {"factor": 1.02})])
def test_detector_gate_never_clears_a_job_decide_would_act_on(policy, params):
    rng = np.random.default_rng(7)
    acted = cleared = 0
    for _ in range(300):
        s = random_snapshot(rng, int(rng.integers(1, 12)))
        p = create(policy, **params)
        gate = bool(p.needs_scan(batch_of(s)).any())
        wants = len(p.decide(s).speculate_task) > 0
        assert gate or not wants
        acted += wants
        cleared += not gate
    assert acted > 20 and cleared > 20  # both outcomes were exercised


def test_a_task_with_a_live_copy_is_not_a_gate_candidate():
    s = random_snapshot(np.random.default_rng(1), 6)
    b = batch_of(s)
    b.task_attempts[:] = 2
    for policy in ("static", "score", "rate"):
        assert not create(policy).needs_scan(b).any()
