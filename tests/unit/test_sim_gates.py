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


def capped_batch(speculating: int, with_running: bool = True) -> ScanBatch:
    """One map stage: ``speculating`` tasks run two attempts each, then two slow single
    attempts (estimated run time 100 s against completed run times of 10 s)."""
    n_rows = 2 * speculating + 2
    task_attempts = np.r_[np.full(2 * speculating, 2), 1, 1]
    start = np.zeros(n_rows)
    progress = np.r_[np.full(2 * speculating, 0.9), 0.1, 0.1]
    sent = np.full(n_rows, 10.0)
    return ScanBatch(
        now=10.0, job=np.zeros(n_rows, np.int64), task_type=np.zeros(n_rows, np.int8),
        start=start, progress=progress, report_sent=sent, report_received=sent,
        task_attempts=task_attempts, n_tasks=np.array([[100, 0]]),
        completed=np.array([[3.0, 0.0]]), completed_mean=np.array([[10.0, np.nan]]),
        completed_std=np.array([[1.0, np.nan]]), free_slots=10, job_start=np.array([0.0]),
        task_running=np.r_[np.full(2 * speculating, 2), 1, 1] if with_running else None)


def test_hadoop_gate_clears_a_stage_at_its_speculation_cap():
    hadoop = create("hadoop")  # cap max(10, 0.01 x 100 tasks, 0.1 x running tasks) = 10
    assert not hadoop.needs_scan(capped_batch(10)).any()   # 10 speculating: at the cap
    assert hadoop.needs_scan(capped_batch(9)).tolist() == [False] * 18 + [True, True]
    assert hadoop.needs_scan(capped_batch(10, with_running=False)).any()  # unknown: scan
    # decide agrees on the matching snapshot: nothing at the cap, one copy below it
    for speculating, copies in ((10, 0), (9, 1)):
        b = capped_batch(speculating)
        n = len(b.job)
        task = np.r_[np.repeat(np.arange(speculating), 2), speculating, speculating + 1]
        nan = np.full(n, np.nan)
        attempts = AttemptTable(
            task=task, attempt=np.arange(n), task_type=b.task_type,
            state=np.full(n, AttemptState.RUNNING, np.int8), node=np.arange(n),
            start=b.start, first_progress_time=nan, first_progress=nan, progress=b.progress,
            report_sent=b.report_sent, report_received=b.report_received,
            bytes_processed=np.zeros(n), input_bytes=nan, speculative=np.zeros(n, bool))
        # mean 10, std 0.82; 6 of 100 done: Hadoop judges a type from 5% completed on
        done = np.array([9.0, 10.0, 11.0, 9.0, 10.0, 11.0])
        job = JobFacts(job_id="j", start=0.0, n_maps=100, n_reduces=0,
                       completed_map_runtimes=done)
        s = Snapshot(now=10.0, job=job, attempts=attempts,
                     cluster=ClusterFacts(total_slots=100, free_slots=10))
        assert len(create("hadoop").decide(s).speculate_task) == copies
