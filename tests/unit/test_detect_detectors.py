"""Detectors, the adaptive threshold and input validation on hand-built snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.detect import ReportHistory, adaptive_factor, adaptive_threshold, detect
from hedge.detect.rules import hadoop_rule, masked_mean, ratio_rule, score_rule
from hedge.errors import HedgeError
from hedge.model import AttemptState, ClusterFacts, JobFacts, Snapshot
from tests.unit.test_estimate_runtime import NAN, table


def snap(attempts, now: float, deadline: float | None = None, completed=(),
         cpu=(), mem=()) -> Snapshot:
    job = JobFacts("job_1", start=0.0, n_maps=len(attempts), n_reduces=0, deadline=deadline,
                   completed_map_runtimes=np.asarray(completed, dtype=float))
    cluster = ClusterFacts(total_slots=100, free_slots=50, cpu_util=np.asarray(cpu, float),
                           mem_util=np.asarray(mem, float))
    return Snapshot(now=now, job=job, attempts=attempts, cluster=cluster)


# Three tasks of equal speed 0.05/s launched at 0 (first progress 0.3 at 6 s); at the scan
# (t = 11.9) A and B reported at 11.8, C's last report is the stale one from 6 s.
STALE = table(start=[0, 0, 0], first_progress_time=[6, 6, 6], first_progress=[0.3, 0.3, 0.3],
              progress=[0.59, 0.59, 0.3], report_sent=[11.8, 11.8, 6],
              report_received=[11.8, 11.8, 6])

# Four tasks at t = 20, fresh reports; task 2 is a real straggler (progress 0.2).
SLOW = table(start=[0, 0, 0, 0], first_progress_time=[2, 2, 3, 2],
             first_progress=[0.1, 0.1, 0.05, 0.1], progress=[0.8, 0.7, 0.2, 0.6],
             report_sent=[20, 20, 20, 20], report_received=[20, 20, 20, 20])


def test_array_rules_by_hand() -> None:
    known = np.array([True, True, True, False])
    cand = np.array([True, True, True, True])
    values = np.array([1.0, 2.0, 3.0, 100.0])
    assert masked_mean(values, known) == pytest.approx(2.0)
    np.testing.assert_array_equal(ratio_rule(values, known, cand, 1.5), [0, 0, 1, 1])
    np.testing.assert_array_equal(ratio_rule(values, known, cand, 1.5, strict=True),
                                  [0, 0, 0, 1])
    progress = np.array([0.9, 0.8, 0.5, 0.1])
    np.testing.assert_array_equal(score_rule(progress, known, cand), [0, 0, 1, 1])
    np.testing.assert_array_equal(hadoop_rule(values, [2.0, 4.0], cand), [0, 0, 0, 1])
    assert not hadoop_rule(values, [], cand).any()
    # batch axes broadcast: two jobs at once, per-job means
    batch = np.array([[1.0, 1.0, 5.0], [5.0, 5.0, 5.0]])
    ones = np.ones_like(batch, dtype=bool)
    np.testing.assert_array_equal(ratio_rule(batch, ones, ones, 1.2), [[0, 0, 1], [0, 0, 0]])


def test_stale_heartbeat_fools_rate_but_not_fresh_rate() -> None:
    s = snap(STALE, 11.9)
    np.testing.assert_array_equal(detect("rate", s), [False, False, True])
    assert not detect("fresh-rate", s).any()
    assert not detect("score", s).any()  # 0.3 > mean 0.493 - 0.2


def test_real_straggler_is_flagged_by_every_detector() -> None:
    s = snap(SLOW, 20.0, completed=[20.0, 22.0])
    expected = [False, False, True, False]
    for name in ("score", "rate", "static", "adaptive", "fresh-score", "fresh-rate"):
        # fresh-*: constant speed measured (with the noise unknown they wait for certainty)
        params = {"speed_noise": 0.0} if name.startswith("fresh") else {}
        np.testing.assert_array_equal(detect(name, s, **params), expected, err_msg=name)
    # hadoop: legacy run time 20/p = 25, 28.6, 100, 33.3 vs mean 31 + std 1 of completed
    s = snap(SLOW, 20.0, completed=[30.0, 32.0])
    np.testing.assert_array_equal(detect("hadoop", s), [False, False, True, True])
    assert not detect("hadoop", snap(SLOW, 20.0)).any()  # nothing completed yet


def test_finished_and_unreported_attempts_are_never_flagged() -> None:
    attempts = table(start=[0, 0, 5], progress=[1.0, 0.1, 0.0],
                     first_progress_time=[3, 3, NAN], first_progress=[0.2, 0.1, NAN],
                     report_sent=[10, 11, NAN], report_received=[10, 11, NAN],
                     state=[AttemptState.SUCCEEDED, AttemptState.RUNNING,
                            AttemptState.RUNNING])
    s = snap(attempts, 12.0)
    for name in ("score", "rate", "fresh-rate", "fresh-score", "static"):
        flagged = detect(name, s)
        assert not flagged[0] and not flagged[2], name
    assert detect("score", s)[1]  # 0.1 <= mean(1.0, 0.1) - 0.2


def test_adaptive_threshold_by_hand() -> None:
    ects, half = [10.0, 20.0, 30.0], [0.5, 0.5, 0.5]
    assert adaptive_threshold(ects, half, [0.6], [0.6]) == pytest.approx(1.5)
    # Q = 40/20, P = 0.9 - 0.5, R = max(0.9 - 0.6, 0.5 - 0.6)
    th = adaptive_threshold(ects, [0.9] * 3, [0.5], [0.8, 1.0], qos=40.0)
    assert th == pytest.approx(2.0 + 0.5 * 0.4 + 0.5 * 0.3)
    assert adaptive_threshold(ects, half, [0.6], [0.6], qos=15.0) == pytest.approx(1.0)
    assert adaptive_threshold(ects, half, [0.6], [0.6], qos=30.0) == pytest.approx(1.5)
    # no utilisation known: no resource term; weights apply
    assert adaptive_threshold(ects, [0.1] * 3, [], [], alpha=1.0) == pytest.approx(1.1)
    with pytest.raises(HedgeError, match="'cpu_util' = 1.5"):
        adaptive_threshold(ects, half, [1.5], [0.2])


def test_adaptive_factor_uses_deadline_and_cluster_load() -> None:
    s = snap(SLOW, 20.0, deadline=200.0, cpu=[0.9, 0.9], mem=[0.1, 0.1])
    ects = 20.0 / np.array([0.8, 0.7, 0.2, 0.6])
    progress = np.array([0.8, 0.7, 0.2, 0.6])
    expected = 200.0 / ects.mean() + 0.5 * (progress.mean() - 0.5) + 0.5 * 0.3
    assert adaptive_factor(s) == pytest.approx(expected)
    # a deadline that is far away raises Th above every ratio: nothing flagged
    assert not detect("adaptive", s).any()


def test_bad_input_is_rejected_with_a_clear_message() -> None:
    bad = table(start=[0], progress=[1.2], report_sent=[5], report_received=[5])
    with pytest.raises(HedgeError, match="job_1: attempt 0: field .progress. = 1.2 expected a fraction"):
        ReportHistory().check(snap(bad, 6.0))
    back = table(start=[0], progress=[0.2], report_sent=[5], report_received=[4])
    with pytest.raises(HedgeError, match="'report_received' = 4.0 is before the report"):
        ReportHistory().check(snap(back, 6.0))
    ended = table(start=[0], progress=[0.7], report_sent=[5], report_received=[5],
                  state=[AttemptState.SUCCEEDED])
    with pytest.raises(HedgeError, match="after the attempt's end"):
        ReportHistory().check(snap(ended, 6.0))
    with pytest.raises(HedgeError, match="unknown detector 'late'"):
        detect("late", snap(SLOW, 20.0))


def test_history_rejects_time_going_backwards_across_scans() -> None:
    history = ReportHistory()
    history.check(snap(table(start=[0, 0], progress=[0.5, 1.0], report_sent=[10, 9],
                             report_received=[10, 9],
                             state=[AttemptState.RUNNING, AttemptState.SUCCEEDED]), 10.0))
    history.check(snap(table(start=[0, 0], progress=[0.6, 1.0], report_sent=[12, 9],
                             report_received=[12, 9],
                             state=[AttemptState.RUNNING, AttemptState.SUCCEEDED]), 12.0))
    with pytest.raises(HedgeError, match="older than the report seen at an earlier scan"):
        history.check(snap(table(start=[0, 0], progress=[0.4, 1.0], report_sent=[8, 9],
                                 report_received=[8, 9]), 13.0))
    with pytest.raises(HedgeError, match="already ended"):
        history.check(snap(table(start=[0, 0], progress=[0.6, 1.0], report_sent=[12, 11],
                                 report_received=[12, 11]), 13.0))
