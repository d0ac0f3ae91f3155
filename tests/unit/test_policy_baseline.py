"""Each baseline policy on hand-built snapshots: flags what it should, not what it shouldn't."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hedge.model import MAP, REDUCE, AttemptState, AttemptTable, ClusterFacts, JobFacts, Snapshot
from hedge.model.batch import ScanBatch
from hedge.policy import create
from hedge.policy.published import _below_quantile

R, W = AttemptState.RUNNING, AttemptState.WAITING


def snapshot(now, rows, n_maps, maps_done=(), reduces_done=(), n_reduces=0, free=4, total=100,
             ) -> Snapshot:
    """rows: (task, state, start, progress, received[, node, speculative, type])."""
    cols = {c: [] for c in AttemptTable.COLUMNS}
    for i, row in enumerate(rows):
        task, state, start, progress, received, *rest = row
        node = rest[0] if len(rest) > 0 else i
        spec = rest[1] if len(rest) > 1 else False
        ttype = rest[2] if len(rest) > 2 else MAP
        waiting = state == W
        cols["task"].append(task)
        cols["attempt"].append(100 + i)
        cols["task_type"].append(ttype)
        cols["state"].append(state)
        cols["node"].append(-1 if waiting else node)
        cols["start"].append(np.nan if waiting else start)
        cols["first_progress_time"].append(np.nan)
        cols["first_progress"].append(np.nan)
        cols["progress"].append(progress)
        cols["report_sent"].append(np.nan if waiting else received)
        cols["report_received"].append(np.nan if waiting else received)
        cols["bytes_processed"].append(0.0)
        cols["input_bytes"].append(np.nan)
        cols["speculative"].append(spec)
    job = JobFacts("job", 0.0, n_maps, n_reduces,
                   completed_map_runtimes=np.asarray(maps_done, float),
                   completed_reduce_runtimes=np.asarray(reduces_done, float))
    cluster = ClusterFacts(total_slots=total, free_slots=free)
    return Snapshot(now=now, job=job, attempts=AttemptTable(**cols), cluster=cluster)


# ---------------------------------------------------------------- none
def test_none_never_acts():
    policy = create("none")
    a = policy.decide(snapshot(50, [(0, R, 0, 0.01, 49)], 2, maps_done=[1.0]))
    assert len(a.speculate_task) == 0 and a.next_scan_in == math.inf
    assert policy.speculates is False


# ---------------------------------------------------------------- hadoop
def test_hadoop_copies_the_task_estimated_past_mean_plus_std():
    # completed: mean 10, std 0; task 3 estimated at 8 / 0.2 = 40 s; task 4 at 8 / 0.9
    s = snapshot(9, [(3, R, 0, 0.2, 8), (4, R, 0, 0.9, 8)], 6, maps_done=[10, 10, 10])
    a = create("hadoop").decide(s)
    assert a.speculate_task.tolist() == [3]
    assert a.next_scan_in == 15.0


def test_hadoop_threshold_uses_the_std():
    # mean 10, std 8: threshold 18; task 3 estimated at 4 / 0.25 = 16 s is under it, but
    # over 10 + 0.5 * 8 = 14; a replacement would end at 5 + 10 = 15 < 16
    s = snapshot(5, [(3, R, 0, 0.25, 4)], 6, maps_done=[2, 18])
    assert create("hadoop").decide(s).speculate_task.tolist() == []
    assert create("hadoop", slow_task_std=0.5).decide(s).speculate_task.tolist() == [3]


def test_hadoop_does_nothing_before_a_completion_and_sleeps_until_one():
    s = snapshot(9, [(3, R, 0, 0.01, 8)], 6)
    a = create("hadoop").decide(s)
    assert a.speculate_task.tolist() == []
    assert a.next_scan_in == math.inf and a.wake_on_completion


def test_hadoop_one_speculation_per_type_per_scan_largest_gain_first():
    rows = [(3, R, 0, 0.2, 8), (4, R, 0, 0.1, 8),            # maps: est 40 and 80
            (7, R, 0, 0.1, 8, 7, False, REDUCE)]             # reduce: est 80
    s = snapshot(9, rows, 6, maps_done=[10, 10], reduces_done=[10], n_reduces=2)
    assert sorted(create("hadoop").decide(s).speculate_task.tolist()) == [4, 7]


def test_hadoop_skips_tasks_already_copied_and_good_or_too_late_estimates():
    rows = [(3, R, 0, 0.2, 8), (3, R, 5, 0.1, 8, 9, True),  # already has a copy
            (4, R, 0, 0.5, 8),                              # est end 16 < now + mean = 30
            (5, R, 0, 0.2, 2)]                              # est end 10 < now (good)
    s = snapshot(20, rows, 6, maps_done=[10, 10])
    assert create("hadoop").decide(s).speculate_task.tolist() == []


def test_hadoop_respects_the_speculation_cap():
    # 10 tasks already speculating: cap = max(10, 0.01*20, 0.1*running) = 10
    rows = []
    for task in range(10):
        rows += [(task, R, 0, 0.2, 8), (task, R, 4, 0.1, 8, 50 + task, True)]
    rows.append((15, R, 0, 0.1, 8))
    s = snapshot(9, rows, 20, maps_done=[10, 10])
    assert create("hadoop").decide(s).speculate_task.tolist() == []
    assert create("hadoop", minimum_allowed=11).decide(s).speculate_task.tolist() == [15]


def test_hadoop_gate_never_skips_a_job_decide_would_act_on():
    rng = np.random.default_rng(0)
    policy = create("hadoop")
    acted = 0
    for _ in range(200):
        n = int(rng.integers(1, 6))
        done = rng.uniform(5, 15, int(rng.integers(0, 4)))
        rows = [(t, R, float(rng.uniform(0, 5)), float(rng.uniform(0.01, 1)), 8.0)
                for t in range(n)]
        s = snapshot(9, rows, n + 2, maps_done=done)
        wants = len(policy.decide(s).speculate_task) > 0
        a = s.attempts
        count = np.array([[len(done), 0]], float)
        batch = ScanBatch(
            now=9, job=np.zeros(n, dtype=np.int64), task_type=a.task_type, start=a.start,
            progress=a.progress, report_sent=a.report_sent, report_received=a.report_received,
            task_attempts=np.ones(n, dtype=np.int64), n_tasks=np.array([[n + 2, 0]]),
            completed=count,
            completed_mean=np.array([[done.mean() if len(done) else np.nan, np.nan]]),
            completed_std=np.array([[done.std() if len(done) else np.nan, np.nan]]))
        gate = bool(policy.needs_scan(batch).any())
        assert gate or not wants
        acted += wants
    assert acted > 10


# ---------------------------------------------------------------- late
def test_late_copies_the_slow_task_with_most_time_left_and_avoids_slow_nodes():
    rows = [(0, R, 0, 0.9, 100, 0), (1, R, 0, 0.8, 100, 1), (2, R, 0, 0.85, 100, 2),
            (3, R, 0, 0.1, 100, 3), (4, R, 0, 0.2, 100, 4)]
    a = create("late").decide(snapshot(101, rows, 5))
    assert a.speculate_task.tolist() == [3]
    assert a.avoid_nodes.tolist() == [3]


def test_late_needs_a_free_slot_room_under_the_cap_and_a_minute_of_runtime():
    rows = [(0, R, 0, 0.9, 100), (1, R, 0, 0.8, 100), (3, R, 0, 0.1, 100)]
    assert create("late").decide(snapshot(101, rows, 4, free=0)).speculate_task.tolist() == []
    young = [(0, R, 70, 0.9, 100), (1, R, 70, 0.8, 100), (3, R, 70, 0.1, 100)]
    assert create("late").decide(snapshot(101, young, 4)).speculate_task.tolist() == []
    capped = rows + [(9, R, 0, 0.5, 100, 9, True)]
    assert create("late", speculative_cap=0.01).decide(
        snapshot(101, capped, 10)).speculate_task.tolist() == []


def test_late_quantile_cut_is_numpys_exactly():
    """LATE's slow-task and slow-node tests compare with the quantile from the two sorted
    neighbours, and leave values within rounding of it to np.quantile: the same flags on
    spread rates, ties (whose cut is a sample) and values one ulp apart."""
    rng = np.random.default_rng(3)
    for i in range(900):
        n = int(rng.integers(2, 40))
        values = [rng.exponential(0.01, n), rng.integers(1, 4, n) / 300.0,
                  np.nextafter(0.0123, rng.integers(0, 2, n).astype(float))][i % 3]
        for q in (0.25, 0.1, 0.9):
            assert np.array_equal(_below_quantile(values, q), values < np.quantile(values, q))


def _late_batch(s: Snapshot) -> ScanBatch:
    """The gate's input for a one-job snapshot of running attempts."""
    a = s.attempts
    n = len(a)
    return ScanBatch(
        now=s.now, job=np.zeros(n, dtype=np.int64), task_type=a.task_type, start=a.start,
        progress=a.progress, report_sent=a.report_sent, report_received=a.report_received,
        task_attempts=np.bincount(a.task)[a.task], n_tasks=np.array([[s.job.n_maps, 0]]),
        completed=np.zeros((1, 2)), completed_mean=np.full((1, 2), np.nan),
        completed_std=np.full((1, 2), np.nan), free_slots=s.cluster.free_slots)


def test_late_gate_is_exact_where_the_quantile_falls_on_a_rate():
    """Five rates at the 0.25 quantile: the cut is the second lowest, and ``decide`` copies
    only a rate strictly below it. With the slowest task copied already, nothing is copied,
    so the gate must not want the job (its rounding slack wanted it: on the 97,059-task day
    6,575 of late's 12,149 scans copied nothing, 41 of 5,615 with the exact cut)."""
    late = create("late")
    rows = [(0, R, 0, 0.9, 100), (1, R, 0, 0.8, 100), (2, R, 0, 0.85, 100), (3, R, 0, 0.1, 100),
            (3, R, 50, 0.5, 100, 4, True)]  # task 3's copy, faster than every original
    s = snapshot(101, rows, 4)
    assert late.decide(s).speculate_task.tolist() == []
    assert not late.needs_scan(_late_batch(s)).any()
    uncopied = snapshot(101, rows[:4] + [(4, R, 50, 0.5, 100)], 5)
    assert late.decide(uncopied).speculate_task.tolist() == [3]
    assert late.needs_scan(_late_batch(uncopied)).tolist() == [False, False, False, True, False]


def test_late_gate_never_skips_a_job_decide_would_act_on():
    """Random rates, ties among them and copied tasks, over cell sizes where the quantile
    falls on a rate and between two."""
    rng = np.random.default_rng(5)
    late = create("late")
    acted = cleared = 0
    for _ in range(400):
        n = int(rng.integers(2, 14))
        progress = rng.choice([rng.uniform(0.01, 1, n), rng.integers(1, 4, n) / 4.0])
        rows = [(t, R, 0.0, float(progress[t]), 100.0) for t in range(n)]
        copied = rng.random(n) < 0.3
        rows += [(t, R, 50.0, float(rng.uniform(0.01, 1)), 100.0, n + t, True)
                 for t in np.flatnonzero(copied)]
        s = snapshot(101, rows, n)
        wants = len(late.decide(s).speculate_task) > 0
        gate = bool(late.needs_scan(_late_batch(s)).any())
        assert gate or not wants
        acted += wants
        cleared += not gate
    assert acted > 50 and cleared > 50


def test_slot_counts_unknown_to_a_live_am_do_not_read_as_a_full_cluster():
    """Behind a real MRAppMaster the shim reports no slots (0 total): LATE and Mantri still
    copy (found on MiniMRYarnCluster, where LATE never copied); Hadoop's caps apply in the shim."""
    rows = [(0, R, 0, 0.9, 100), (1, R, 0, 0.8, 100), (3, R, 0, 0.1, 100)]
    unknown = snapshot(101, rows, 4, free=0, total=0)
    assert create("late").decide(unknown).speculate_task.tolist() == [3]
    slow = [(1, R, 0, 0.1, 10), (2, R, 0, 0.5, 10)]
    assert create("mantri").decide(
        snapshot(10, slow, 4, maps_done=[20], free=0, total=0)).speculate_task.tolist() == [1]


# ---------------------------------------------------------------- mantri
def test_mantri_copies_tasks_outlasting_a_new_attempt_by_30s():
    # mean completed 20 s; task 1: rate 0.1/10 -> 90 s left (> 50); task 2: 10 s left
    rows = [(1, R, 0, 0.1, 10), (2, R, 0, 0.5, 10)]
    a = create("mantri").decide(snapshot(10, rows, 4, maps_done=[20]))
    assert a.speculate_task.tolist() == [1]


def test_mantri_waits_while_tasks_wait_and_caps_copies_per_task():
    rows = [(1, R, 0, 0.1, 10), (3, W, 0, 0, 0)]
    assert create("mantri").decide(snapshot(10, rows, 4, maps_done=[20])).speculate_task.size == 0
    four = [(1, R, 0, 0.1, 10, n, n > 0) for n in range(4)]
    assert create("mantri").decide(snapshot(10, four, 4, maps_done=[20])).speculate_task.size == 0


def test_mantri_prunes_to_the_attempt_with_the_earliest_estimated_end():
    rows = [(1, R, 0, 0.1, 10, 0), (1, R, 2, 0.5, 10, 1, True), (2, R, 0, 0.5, 10, 2)]
    a = create("mantri").decide(snapshot(10, rows, 4, maps_done=[20]))
    assert a.kill_attempt.tolist() == [100]  # the original, far behind its copy


# ---------------------------------------------------------------- dolly
def test_dolly_clones_every_task_of_a_small_job_at_launch():
    rows = [(0, W, 0, 0, 0), (1, W, 0, 0, 0)]
    a = create("dolly").decide(snapshot(0, rows, 2, free=100, total=200))
    assert a.speculate_task.tolist() == [0, 1]
    assert a.speculate_copies.tolist() == [2, 2]
    assert a.next_scan_in == math.inf


def test_dolly_leaves_big_jobs_and_respects_the_budget():
    rows = [(t, W, 0, 0, 0) for t in range(20)]
    assert create("dolly").decide(snapshot(0, rows, 20, free=1000, total=1000)).speculate_task.size == 0
    small = [(0, W, 0, 0, 0), (1, W, 0, 0, 0)]
    # 4 clones > 5% of 40 slots
    assert create("dolly").decide(snapshot(0, small, 2, free=40, total=40)).speculate_task.size == 0


# ---------------------------------------------------------------- spark
def test_spark_legacy_waits_for_the_quantile_then_copies_tasks_past_1_5_median():
    rows = [(3, R, 0, 0.5, 25), (4, R, 20, 0.5, 25)]
    early = snapshot(26, rows, 5, maps_done=[10, 10])   # 2 < floor(0.75 * 5) = 3
    a = create("spark-legacy").decide(early)
    assert a.speculate_task.size == 0 and a.wake_on_completion
    late = snapshot(26, rows, 5, maps_done=[10, 10, 12])  # median 10: limit 15 s
    assert create("spark-legacy").decide(late).speculate_task.tolist() == [3]


def test_spark_has_spark_4_defaults_quantile_0_9_multiplier_3():
    rows = [(3, R, 0, 0.5, 31), (4, R, 20, 0.5, 31), (5, R, 0, 0.5, 31)]
    done = [10] * 9
    # 9 of 10 done = floor(0.9 * 10): acts; median 10, limit 30 s: only task 3 and 5 (31 s)
    assert create("spark").decide(snapshot(31, rows, 10, maps_done=done)).speculate_task.tolist() \
        == [3, 5]
    # 8 of 10 done: 0.75 would act, 0.9 does not
    assert create("spark").decide(snapshot(31, rows, 10, maps_done=done[:8])).speculate_task.size == 0
    # 25 s past a median of 10 is past the legacy 15 s limit, not Spark 4.0's 30 s
    assert create("spark").decide(snapshot(25, rows, 10, maps_done=done)).speculate_task.size == 0


@pytest.mark.parametrize("name", ["none", "hadoop", "late", "mantri", "dolly", "spark",
                                  "spark-legacy"])
def test_every_baseline_accepts_an_empty_snapshot(name):
    a = create(name).decide(snapshot(5, [], 3, free=10))
    assert a.speculate_task.size == 0 and a.kill_attempt.size == 0
