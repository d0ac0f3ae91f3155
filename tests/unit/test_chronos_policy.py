"""chronos-clone / -restart / -resume on hand-built snapshots."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hedge.analysis import chronos
from hedge.model import MAP, AttemptState, AttemptTable, ClusterFacts, JobFacts, Snapshot
from hedge.policy import create
from hedge.policy.limits import SpeculationSettings, limit
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import simulate
from hedge.traces.workload import Workload

R, W = AttemptState.RUNNING, AttemptState.WAITING
NAN = math.nan
# job: 4 maps, starts at 0, deadline 30; model Pareto(t_min = 10, beta = 1.5) given
JOB = dict(n=4, deadline=30.0, t_min=10.0, beta=1.5)
PARAMS = dict(t_min=10.0, beta=1.5, theta=1e-4, max_extra=3)


def attempts(rows):
    """rows: (task, attempt, state, start, first_progress_time, first_progress, progress, sent)."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * 8
    task, aid, state, start, fpt, fp, prog, sent = (np.array(c, dtype=float) for c in cols)
    n = len(task)
    return AttemptTable(
        task=task.astype(int), attempt=aid.astype(int), task_type=np.full(n, MAP),
        state=state.astype(int), node=np.zeros(n), start=start, first_progress_time=fpt,
        first_progress=fp, progress=prog, report_sent=sent, report_received=sent,
        bytes_processed=np.zeros(n), input_bytes=np.full(n, NAN),
        speculative=aid >= 100)


def snap(now, rows, deadline=JOB["deadline"], done=(), n=JOB["n"]):
    job = JobFacts("j", 0.0, n, 0, deadline,
                   completed_map_runtimes=np.asarray(done, dtype=float))
    return Snapshot(now, job, attempts(rows), ClusterFacts(total_slots=20, free_slots=10))


def expected(strategy):
    return chronos.optimal_r(strategy, JOB["n"], JOB["deadline"], JOB["t_min"], JOB["beta"],
                             theta=1e-4, r_max=3)[0]


def test_taus_for_this_job():
    # D = 30, t_min = 10: tau_est = 3, tau_kill = 3 + min(3, 10 * 0.9) = 6
    assert chronos.default_taus(30.0, 10.0) == (3.0, 6.0)


def test_clone_copies_every_task_once_including_waiting_ones():
    policy = create("chronos-clone", **PARAMS)
    r = expected("clone")
    assert r >= 1
    rows = [(0, 0, R, 0.0, NAN, NAN, 0.0, NAN), (1, 1, R, 0.5, NAN, NAN, 0.0, NAN),
            (2, 2, W, NAN, NAN, NAN, 0.0, NAN)]
    act = policy.decide(snap(1.0, rows))
    assert act.speculate_task.tolist() == [0, 1, 2]
    assert act.speculate_copies.tolist() == [r, r, r]
    assert len(act.kill_attempt) == 0
    # the copies are now live: nothing new for 0-2; task 3 shows up and is cloned
    rows2 = rows + [(t, 100 + t, W, NAN, NAN, NAN, 0.0, NAN) for t in (0, 1, 2)] + [
        (3, 3, R, 1.5, NAN, NAN, 0.0, NAN)]
    act = policy.decide(snap(2.0, rows2))
    assert act.speculate_task.tolist() == [3]


def test_clone_keeps_best_progress_at_tau_kill():
    policy = create("chronos-clone", **PARAMS)
    policy.decide(snap(0.0, [(0, 0, R, 0.0, NAN, NAN, 0.0, NAN)]))
    rows = [(0, 0, R, 0.0, 2.0, 0.1, 0.3, 5.5),     # original
            (0, 100, R, 1.0, 3.0, 0.1, 0.5, 5.5),   # best progress: kept
            (0, 101, W, NAN, NAN, NAN, 0.0, NAN)]   # never got a slot: killed
    assert len(policy.decide(snap(5.0, rows)).kill_attempt) == 0  # before tau_kill = 6
    act = policy.decide(snap(6.0, rows))
    assert sorted(act.kill_attempt.tolist()) == [0, 101]
    assert len(policy.decide(snap(7.0, rows)).kill_attempt) == 0  # decided once


def _fills_the_cap(policy, snapshot):
    """r = 3 copies for each of 5+ tasks: tasks 0-2 get 3, task 3 the cap's last of 10, and
    the AM (Hadoop's default caps) grants every copy asked (nothing is cut)."""
    act = policy.decide(snapshot)
    assert act.speculate_task.tolist() == [0, 1, 2, 3]
    assert act.speculate_copies.tolist() == [3, 3, 3, 1]
    assert limit(act, snapshot, SpeculationSettings()) is act


def _copies(first_id, state, start, counts):
    """Copy rows: ``counts`` (task, copies); attempt ids first_id + 10 x task + k."""
    return [(t, first_id + 10 * t + k, state, start, NAN, NAN, 0.0, NAN)
            for t, c in counts for k in range(c)]


def test_clone_asks_only_what_the_cap_allows_and_the_rest_once_room_frees():
    # 6 tasks running, r = 3 copies each = 18 > the cap's 10: tasks 0-2 get 3, task 3 one
    policy = create("chronos-clone", **PARAMS)
    assert expected("clone") == 3
    originals = [(t, t, R, 0.0, 2.0, 0.1, 0.3, 5.5) for t in range(6)]
    _fills_the_cap(policy, snap(1.0, originals, n=6))
    copies = _copies(100, W, NAN, ((0, 3), (1, 3), (2, 3), (3, 1)))
    assert len(policy.decide(snap(2.0, originals + copies, n=6)).speculate_task) == 0  # full
    # tasks 0 and 1 finished: room for 6 more; task 3 gets its last 2, then 4 and 5
    left = [row for row in originals + copies if row[0] >= 2]
    act = policy.decide(snap(3.0, left, n=6))
    assert act.speculate_task.tolist() == [3, 4, 5]
    assert act.speculate_copies.tolist() == [2, 3, 1]
    assert (policy.copies_planned, policy.copies_asked) == (18, 16)  # task 5 owes 2
    # tau_kill = 6 after launch: tasks 2 and 3 (first copies at once) are decided at 6
    # (the original leads); tasks 4 and 5, whose copies the cap held back 2 s, at 8
    rows = left + _copies(200, W, NAN, ((3, 2), (4, 3), (5, 1)))
    kills = policy.decide(snap(6.0, rows, n=6)).kill_attempt.tolist()
    assert sorted(kills) == [120, 121, 122, 130, 230, 231]
    rows = [row for row in rows if row[1] not in kills]
    assert len(policy.decide(snap(7.0, rows, n=6)).kill_attempt) == 0
    assert sorted(policy.decide(snap(8.0, rows, n=6)).kill_attempt) == [240, 241, 242, 250]


def test_restart_copies_the_cap_refused_start_when_room_frees():
    # 5 tasks late at tau_est (ECT 40.6 > 30): 15 copies owed, 10 fit (tasks 0-2 and one of 3)
    policy = create("chronos-restart", **PARAMS)
    late = [(t, t, R, 0.0, 1.0, 0.01, 0.06, 3.0) for t in range(5)]
    _fills_the_cap(policy, snap(3.0, late, n=5))
    # task 0 finished with its copies: task 3 gets 2 more and task 4 one
    rows = late[1:] + _copies(100, R, 3.5, ((1, 3), (2, 3), (3, 1)))
    act = policy.decide(snap(4.0, rows, n=5))
    assert act.speculate_task.tolist() == [3, 4]
    assert act.speculate_copies.tolist() == [2, 1]


@pytest.mark.parametrize("name", ["chronos-clone", "chronos-restart"])
def test_simulated_job_copies_more_tasks_than_the_cap_at_once(name):
    # one job of 40 Pareto(10, 1.5) tasks, D = 30, r = 3: the cap takes 10 copies at a time,
    # so asked once per task only 4 tasks were ever copied; owed copies start as room frees
    n = 40
    workload = Workload.from_jobs(["j"], np.zeros(1), [np.full(n, 10.0)])
    workload.straggler_factor[:] = np.random.default_rng(1).uniform(size=n) ** (-1 / 1.5)
    result = simulate(workload, name, ClusterConfig(nodes=4 * n, slots=1, startup=0.0),
                      seed=1, policy_params=PARAMS, deadline=30.0)
    att = result.attempts
    assert len(np.unique(att.task[att.copy])) > SpeculationSettings().minimum_allowed_tasks


def test_a_run_says_which_jobs_plans_copy_nothing_and_why():
    # a deadline shorter than any attempt: the plan is r = 0, and only a note can say so
    workload = Workload.from_jobs(["a", "b"], np.array([0.0, 5.0]), [np.full(6, 10.0)] * 2)
    late = simulate(workload, "chronos-clone", ClusterConfig(nodes=12, slots=1), seed=0,
                    policy_params={"t_min": 10.0, "beta": 2.0}, deadline=5.0)
    assert late.attempts.copy.sum() == 0
    assert late.policy_notes == [
        "chronos-clone: 2 of 2 jobs' plans gave r = 0 extra attempts, so those jobs got no "
        "copy (the first: D = 5 s <= t_min = 10 s: no attempt can finish by the deadline)"]
    feasible = simulate(workload, "chronos-clone", ClusterConfig(nodes=12, slots=1), seed=0,
                        policy_params={"t_min": 10.0, "beta": 2.0}, deadline=30.0)
    assert feasible.attempts.copy.sum() > 0 and feasible.policy_notes == []


def _restart_rows(now):
    # three tasks started at 0; JVM-aware ECT = now + (1 - p)(now - t_fp)/(p - p_fp)
    return [
        (0, 0, R, 0.0, 1.0, 0.01, 0.06, now),   # ECT = 3 + 0.94 * 2 / 0.05 = 40.6 > 30
        (1, 1, R, 0.0, 1.0, 0.01, 0.21, now),   # ECT = 3 + 0.79 * 2 / 0.2 = 10.9
        (2, 2, R, 0.0, NAN, NAN, 0.0, NAN),     # no estimate yet
    ]


def test_restart_speculates_estimated_deadline_missers_at_tau_est():
    policy = create("chronos-restart", **PARAMS)
    r = expected("restart")
    assert len(policy.decide(snap(2.0, _restart_rows(2.0))).speculate_task) == 0
    act = policy.decide(snap(3.0, _restart_rows(3.0)))
    assert act.speculate_task.tolist() == [0]
    assert act.speculate_copies.tolist() == [r]
    # task 2 gets no estimate within tau_kill - tau_est = 3 s: counted as never finishing
    assert len(policy.decide(snap(5.0, _restart_rows(5.0))).speculate_task) == 0
    act = policy.decide(snap(6.0, _restart_rows(6.0)))
    assert act.speculate_task.tolist() == [2]


def test_restart_keeps_smallest_estimated_completion():
    policy = create("chronos-restart", **PARAMS)
    policy.decide(snap(3.0, _restart_rows(3.0)))  # task 0 copied at t = 3
    rows = [(0, 0, R, 0.0, 1.0, 0.01, 0.10, 6.0),     # ECT = 6 + 0.9 * 5 / 0.09 = 56
            (0, 100, R, 3.5, 4.0, 0.05, 0.45, 6.0),   # ECT = 6 + 0.55 * 2 / 0.4 = 8.75: kept
            (0, 101, R, 3.5, 4.0, 0.05, 0.25, 6.0),   # ECT = 6 + 0.75 * 2 / 0.2 = 13.5
            (1, 1, R, 0.0, 1.0, 0.01, 0.5, 6.0)]
    act = policy.decide(snap(6.0, rows))
    assert sorted(act.kill_attempt.tolist()) == [0, 101]


def test_restart_waits_for_copies_estimates_up_to_the_grace():
    policy = create("chronos-restart", **PARAMS)
    policy.decide(snap(3.0, _restart_rows(3.0)))
    rows = [(0, 0, R, 0.0, 1.0, 0.01, 0.10, 6.0), (0, 100, R, 3.5, NAN, NAN, 0.0, NAN)]
    assert len(policy.decide(snap(6.0, rows)).kill_attempt) == 0   # copy has no estimate
    act = policy.decide(snap(9.0, rows))                           # grace over: keep original
    assert act.kill_attempt.tolist() == [100]


def test_resume_kills_and_resumes_with_r_plus_one():
    policy = create("chronos-resume", **PARAMS)
    r = expected("resume")
    act = policy.decide(snap(3.0, _restart_rows(3.0)))
    assert act.resume_task.tolist() == [0]
    assert act.resume_copies.tolist() == [r + 1]
    assert len(act.speculate_task) == 0
    assert policy.live_am_supported is False
    assert "partial map output" in policy.live_am_reason


def test_no_deadline_means_no_speculation():
    policy = create("chronos-clone", **PARAMS)
    act = policy.decide(snap(1.0, [(0, 0, R, 0.0, NAN, NAN, 0.0, NAN)], deadline=None))
    assert len(act.speculate_task) == 0 and act.next_scan_in == math.inf


def test_plan_fitted_from_jvm_estimates_when_not_given():
    policy = create("chronos-restart", theta=1e-4)
    rows = [(t, t, R, 0.0, 1.0, 0.01, 0.01 + 0.05 * (t + 1), 3.0) for t in range(4)]
    policy.decide(snap(3.0, rows, n=6))
    assert policy.plan is None  # 4 estimates < min_samples = 5
    policy.decide(snap(3.0, rows, done=[12.0, 15.0], n=6))
    assert policy.plan is not None and "Pareto(t_min" in policy.plan[3]
    ect = 3.0 + (1 - np.array([0.06, 0.11, 0.16, 0.21])) * 2 / np.array([0.05, 0.1, 0.15, 0.2])
    assert "t_min = " + f"{min(12.0, ect.min()):.4g}" in policy.plan[3]


def test_a_job_too_small_to_fit_is_left_alone_for_good():
    """4 tasks never give min_samples = 5 durations: no plan, and no scan again."""
    policy = create("chronos-clone", theta=1e-4)
    rows = [(t, t, R, 0.0, 1.0, 0.01, 0.5, 3.0) for t in range(4)]
    act = policy.decide(snap(3.0, rows))
    assert policy.plan is None and act.next_scan_in == math.inf
    assert not act.wake_on_completion and len(act.speculate_task) == 0
    given = create("chronos-clone", **PARAMS)  # t_min and beta given: no fit needed
    assert given.decide(snap(3.0, rows)).next_scan_in is None and given.plan is not None


def test_deadline_below_t_min_gives_up():
    policy = create("chronos-clone", t_min=40.0, beta=1.5)
    act = policy.decide(snap(1.0, [(0, 0, R, 0.0, NAN, NAN, 0.0, NAN)]))
    assert policy.plan[0] == 0 and act.next_scan_in == math.inf


@pytest.mark.parametrize("name", ["chronos-clone", "chronos-restart", "chronos-resume"])
def test_bad_parameters_are_hedge_errors(name):
    from hedge.errors import HedgeError

    with pytest.raises(HedgeError, match="bad parameters"):
        create(name, nonsense=1)
