"""``replicate`` policy on hand-built snapshots."""

from __future__ import annotations

import math

import numpy as np

from hedge.analysis import replication
from hedge.model import MAP, AttemptState, AttemptTable, ClusterFacts, JobFacts, Snapshot
from hedge.policy import create

R = AttemptState.RUNNING


def snap(done, running_tasks, copied=(), progress=0.1):
    """10 maps at t = 10: ``done`` completed run times; one running attempt per
    ``running_tasks`` task (attempt id = task), and a second one (id 100 + task) for
    ``copied`` tasks. Every attempt started at 0, reported progress 0.1 first at t = 1 and
    ``progress`` at t = 5: with 0.1 the JVM-aware estimate does not exist yet, with 0.5 it
    is 10 + 0.5 * 9 / 0.4 = 21.25, i.e. a run time of 21.25."""
    tasks = list(running_tasks) + list(copied)
    ids = list(running_tasks) + [100 + t for t in copied]
    n = len(tasks)
    table = AttemptTable(
        task=tasks, attempt=ids, task_type=np.full(n, MAP), state=np.full(n, R),
        node=np.zeros(n), start=np.zeros(n), first_progress_time=np.ones(n),
        first_progress=np.full(n, 0.1), progress=np.full(n, progress), report_sent=np.full(n, 5.0),
        report_received=np.full(n, 5.0), bytes_processed=np.zeros(n),
        input_bytes=np.full(n, math.nan), speculative=np.array(ids) >= 100)
    job = JobFacts("j", 0.0, 10, 0, None, completed_map_runtimes=np.asarray(done, float))
    return Snapshot(10.0, job, table, ClusterFacts(total_slots=20, free_slots=10))


PRIOR = np.random.default_rng(1).pareto(1.5, 400) + 1.0
DONE = [1.0, 1.2, 1.1, 1.5, 1.3]


def test_waits_for_the_fork_point_then_replicates_once():
    params = dict(cost_weight=0.5, p_grid=(0.5,), r_grid=(2,), prior=PRIOR)
    p, r, keep = replication.best_policy(np.concatenate([DONE[:4], PRIOR]), 10, 0.5, (0.5,), (2,))
    policy = create("replicate", **params)
    act = policy.decide(snap(DONE[:4], [4, 5, 6, 7, 8, 9]))   # 4 < (1 - 0.5) 10 done
    assert len(act.speculate_task) == 0 and len(act.kill_attempt) == 0
    assert policy.plans[MAP] == (p, r, keep)
    assert act.next_scan_in == math.inf and act.wake_on_completion
    act = policy.decide(snap(DONE, [5, 6, 7, 8, 9], copied=[9]))
    plan = policy.plans[MAP]
    assert act.speculate_task.tolist() == [5, 6, 7, 8]   # task 9 already has two attempts
    assert act.speculate_copies.tolist() == [plan[1]] * 4
    assert act.kill_attempt.tolist() == ([] if plan[2] else [5, 6, 7, 8])
    again = policy.decide(snap(DONE + [2.0], [5, 6, 7]))
    assert len(again.speculate_task) == 0 and len(again.kill_attempt) == 0


def test_kill_mode_kills_originals_and_requests_r_replicas():
    # exponential durations: keep and kill are equal in expectation; force kill via the grid
    policy = create("replicate", cost_weight=0.0, p_grid=(0.5,), r_grid=(1,), prior=PRIOR)
    policy.plans[MAP] = (0.5, 1, False)
    policy._planned_on[MAP] = len(DONE)
    act = policy.decide(snap(DONE, [5, 6]))
    assert act.kill_attempt.tolist() == [5, 6]
    assert act.speculate_task.tolist() == [5, 6] and act.speculate_copies.tolist() == [1, 1]


def test_replans_as_durations_are_learned():
    grid = (0.5, 0.8)  # 0.8: a fork may come after (1 - 0.8) 10 = 2 completions
    policy = create("replicate", cost_weight=0.1, min_samples=3, p_grid=grid)
    policy.decide(snap([1.0, 1.1], [2, 3, 4, 5, 6, 7, 8, 9]))
    assert MAP not in policy.plans                      # 2 < min_samples
    policy.decide(snap([1.0, 1.1, 9.0], [3, 4, 5, 6, 7, 8, 9]))
    first = policy.plans[MAP]
    assert first == replication.best_policy([1.0, 1.1, 9.0], 10, 0.1, grid)
    policy.decide(snap([1.0, 1.1, 9.0, 1.0], [4, 5, 6, 7, 8, 9]))
    assert policy.plans[MAP] == replication.best_policy([1.0, 1.1, 9.0, 1.0], 10, 0.1, grid)


def test_no_plan_where_no_fork_could_follow():
    """With the default grid (p <= 0.5) 10 maps fork after 5 completions at the earliest,
    and with min_samples = 3 known every later plan is made afresh: 3 and 4 completions
    are left alone, and the gate skips such a job; 5 completions plan again."""
    policy = create("replicate", cost_weight=0.1, min_samples=3)
    act = policy.decide(snap([1.0, 1.1, 9.0], [3, 4, 5, 6, 7, 8, 9]))
    assert MAP not in policy.plans and not policy._planned_on
    assert act.next_scan_in == math.inf and act.wake_on_completion
    n_tasks = np.array([[10, 0], [10, 0], [10, 0], [10, 2]])
    completed = np.array([[3.0, 0], [2.0, 0], [5.0, 0], [4.0, 0]])
    # idle; too few known; may fork; maps idle but reduces have none completed
    assert policy._want(n_tasks, completed).tolist() == [False, True, True, True]
    policy.decide(snap([1.0, 1.1, 9.0, 1.0, 1.2], [5, 6, 7, 8, 9]))
    assert policy.plans[MAP] == replication.best_policy([1.0, 1.1, 9.0, 1.0, 1.2], 10, 0.1)


def test_a_job_whose_types_all_forked_is_not_woken_again():
    policy = create("replicate", cost_weight=0.5, p_grid=(0.5,), r_grid=(2,), prior=PRIOR)
    act = policy.decide(snap(DONE, [5, 6, 7, 8, 9]))   # 10 maps, no reduce: forks now
    assert len(act.speculate_task) and not act.wake_on_completion
    assert act.next_scan_in == math.inf


def test_running_estimates_join_the_sample():
    """Tasks still running are the tail: their JVM-aware run times are planned on too."""
    policy = create("replicate", cost_weight=0.1, min_samples=3)
    policy.decide(snap([1.0, 1.1], [2, 3, 4, 5], progress=0.5))
    want = replication.best_policy([1.0, 1.1, 21.25, 21.25, 21.25, 21.25], 10, 0.1)
    assert policy.plans[MAP] == want


def test_a_plan_no_fork_could_follow_is_made_only_when_read(monkeypatch):
    """With the default grid (p <= 0.5) 10 maps fork after 5 completions at the earliest:
    a plan at 2 completions is put off (on the 97,059-task day 831 of 1,830 plans were
    made then, never read), and made from the same sample once read."""
    made = []
    best = replication.best_policy
    monkeypatch.setattr(replication, "best_policy", lambda *a: made.append(a) or best(*a))
    policy = create("replicate", cost_weight=0.1, min_samples=3)
    act = policy.decide(snap([1.0, 1.1], [2, 3, 4, 5], progress=0.5))
    assert not made and act.wake_on_completion
    want = best([1.0, 1.1, 21.25, 21.25, 21.25, 21.25], 10, 0.1)
    assert policy.plans[MAP] == want and len(made) == 1
    policy.decide(snap([1.0, 1.1, 2.0, 1.2, 1.3], [5, 6, 7, 8, 9]))  # 5 done: may fork
    assert len(made) == 2
