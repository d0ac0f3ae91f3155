"""Compiled per-step kernels (hedge.sim.kernels, the hadoop and mantri needs_scan_slots) against
their numpy references: bit-identical state and results, and a gate that never clears a
job the numpy gate wants scanned."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

from hedge.model import MAP, REDUCE
from hedge.model.batch import SlotView
from hedge.policy import create
from hedge.sim import kernels
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import EPS, Simulator
from hedge.sim.heartbeat import Latency, heartbeats_numpy
from hedge.traces.synthetic import default_workload

from .test_sim_invariants import CLUSTER, random_workload

_FIELDS = ("nhb", "end", "start", "aid", "ws", "tw", "w", "r", "W", "k", "p0", "p1", "r0",
           "r1", "fpp")


def _random_live(rng: np.random.Generator, n: int, t: float, hw: float) -> SimpleNamespace:
    """Slots as the engine keeps them just before a step ending at ``t``: some due to
    report (some several reports late), some ended, some idle."""
    start = t - rng.uniform(0, 60, n)
    k = np.floor((t - rng.uniform(0.0, 3 * hw, n) - start) / hw).astype(np.int64)
    k = np.maximum(k, 0)
    ws = start + rng.choice([0.0, 1.0, 2.5], n)
    tw = np.where(rng.random(n) < 0.5, start, start + rng.uniform(0, 30, n))
    W = rng.uniform(1, 100, n)
    live = SimpleNamespace(
        nhb=start + (k + 1) * hw, end=t + rng.uniform(-2, 50, n), start=start,
        aid=rng.integers(0, 10**6, n), ws=ws, tw=tw, w=rng.uniform(0, 1, n) * W * 0.5,
        r=rng.uniform(0.2, 2.0, n), W=W, k=k, p0=rng.uniform(0, 1, n),
        p1=rng.uniform(0, 1, n), r0=rng.uniform(0, t, n), r1=rng.uniform(0, t, n),
        fpp=np.full(n, np.nan))
    idle = rng.random(n) < 0.1  # empty slots: never report, never end
    live.nhb[idle], live.end[idle] = np.inf, np.inf
    live.start[idle] = live.ws[idle] = 1e18
    live.W[idle] = np.inf
    return live


@pytest.mark.parametrize("seed", range(6))
def test_heartbeat_kernel_is_bit_identical_to_numpy(seed):
    rng = np.random.default_rng(seed)
    hw, t = float(rng.choice([1.0, 3.0, 6.0])), 200.0
    latency = Latency(lambda u: 0.3 * u, hw, seed)
    for step in (0.2, 1.0, 2 * hw, 5 * hw):  # short and long steps (several reports)
        kfp = int(rng.integers(1, 4))
        live = _random_live(rng, 500, t, hw)
        ref, before = copy.deepcopy(live), copy.deepcopy(live)
        ended = np.flatnonzero(live.end <= t + EPS)
        heartbeats_numpy(ref, t, step, ended, hw, EPS, kfp, latency)
        kernels.heartbeats(t, step, hw, EPS, kfp, latency.table,
                           *(getattr(live, f) for f in _FIELDS))
        reported = live.k != before.k
        assert reported.sum() > 50  # the case was exercised
        if step > 0.5 * hw:
            assert (live.k - before.k > 1).any()  # several reports in one step


def test_heartbeat_kernel_writes_the_hand_computed_report():
    # one slot, started at 0, work 10 at rate 1 from t=1 (JVM start-up): at t=4 with
    # hw=3 its report 1 is sent at 3 with progress (3 - 1) / 10 = 0.2
    live = SimpleNamespace(
        nhb=np.array([3.0]), end=np.array([11.0]), start=np.array([0.0]),
        aid=np.array([7]), ws=np.array([1.0]), tw=np.array([0.0]), w=np.array([0.0]),
        r=np.array([1.0]), W=np.array([10.0]), k=np.array([0]), p0=np.array([0.0]),
        p1=np.array([0.0]), r0=np.array([0.1]), r1=np.array([np.nan]),
        fpp=np.array([np.nan]))
    table = np.full(1 << 16, 0.25)
    kernels.heartbeats(4.0, 1.0, 3.0, EPS, 1, table, *(getattr(live, f) for f in _FIELDS))
    assert live.k[0] == 1 and live.p0[0] == 0.2 and live.r0[0] == 3.25
    assert live.p1[0] == 0.0 and live.r1[0] == 0.1 and live.nhb[0] == 6.0
    assert live.fpp[0] == 0.2  # report 1 is the first with progress (kfp = 1)


def _random_view(rng: np.random.Generator, n_slots: int, n_jobs: int) -> SlotView:
    per_job = rng.integers(1, 12, n_jobs)
    n_tasks = int(per_job.sum())
    task_job = np.repeat(np.arange(n_jobs), per_job)
    task_type = np.append(np.where(rng.random(n_tasks) < 0.7, MAP, REDUCE), MAP).astype(np.int8)
    busy = rng.random(n_slots) < 0.8
    # a task occupies at most a few slots (its copies)
    task = np.where(busy, rng.integers(0, n_tasks, n_slots) // rng.choice([1, 1, 2], n_slots), n_tasks)
    job = np.where(busy, task_job[np.minimum(task, n_tasks - 1)], -1)
    now = 100.0
    start = np.where(busy, rng.uniform(0, 90, n_slots), 1e18)
    k = np.maximum(np.floor((now - start) / 3.0), 0).astype(np.int64)
    k[~busy] = 0
    p0 = np.where(rng.random(n_slots) < 0.05, 1.0, rng.uniform(0, 1, n_slots) ** 2)
    p1 = np.where(rng.random(n_slots) < 0.2, 0.0, p0 * rng.uniform(0.5, 1, n_slots))
    r0 = start + k * 3.0 + rng.uniform(0, 1.5, n_slots)
    r1 = np.where(k > 0, start + (k - 1) * 3.0 + 0.2, np.nan)
    # as the engine counts them: running attempts = slots holding the task; live ones
    # add the waiting copies
    running = np.bincount(task, minlength=n_tasks + 1)
    attempts = running + rng.choice([0, 0, 0, 1], n_tasks + 1)
    running[-1] = attempts[-1] = 0
    completed = np.where(rng.random((n_jobs, 2)) < 0.7, rng.integers(0, 5, (n_jobs, 2)), 0)
    mean = np.where(completed > 0, rng.uniform(5, 60, (n_jobs, 2)), np.nan)
    std = np.where(completed > 0, rng.uniform(0, 20, (n_jobs, 2)), np.nan)
    due = np.append(False, rng.random(n_jobs) < 0.7)
    return SlotView(now=now, hw=3.0, due=due, job=job, task=task, start=start, k=k, p0=p0,
                    p1=p1, r0=r0, r1=r1, task_type=task_type, task_attempts=attempts,
                    task_running=running, n_tasks=rng.integers(1, 30, (n_jobs, 2)),
                    completed=completed.astype(float), completed_mean=mean,
                    completed_std=std, free_slots=5, job_start=np.zeros(n_jobs))


def _batch_wants(policy, view: SlotView) -> np.ndarray:
    """The reference of a compiled gate: per job + 1, ``needs_scan`` over ``to_batch()``
    has a row of it."""
    batch = view.to_batch()
    want = np.zeros(len(view.due), dtype=bool)
    want[batch.job[policy.needs_scan(batch)] + 1] = True
    return want


# {"minimum_allowed": 0, ...}: the cap from the proportions alone; since the cap is a whole
# number as in Hadoop (int of the max), proportion_running 0.5 keeps it above 0 for these sizes
@pytest.mark.parametrize("params", [{}, {"minimum_allowed": 1, "proportion_running": 0.0},
                                    {"slow_task_std": 0.0},
                                    {"minimum_allowed": 0, "proportion_running": 0.5}])
def test_hadoop_slot_gate_equals_the_numpy_gate(params):
    rng = np.random.default_rng(11)
    policy = create("hadoop", **params)
    wanted = cleared = 0
    for _ in range(300):
        view = _random_view(rng, int(rng.integers(1, 80)), int(rng.integers(1, 8)))
        ref = _batch_wants(policy, view)
        got = policy.needs_scan_slots(view)
        assert got.dtype == bool and len(got) == len(view.due)
        assert not (ref & ~got).any()  # conservative: never clears a job the reference wants
        assert np.array_equal(got, ref)  # and in fact the same answer
        assert not got[~view.due].any()  # only due jobs
        wanted += int(got.any())
        cleared += int(view.due.any() and not got.any())
    assert wanted > 30 and cleared > 30  # both outcomes exercised
    mark, acc_run, acc_spec = policy._scratch
    assert not mark.any() and not acc_run.any() and not acc_spec.any()  # scratch left zeroed


@pytest.mark.parametrize("params", [{}, {"max_copies": 1}, {"margin": 0.0}])
def test_mantri_slot_gate_equals_the_numpy_gate(params):
    """With no job's policy made yet (``view.policies`` None) every pruning candidate's job
    is wanted, so the compiled gate must want exactly the jobs of ``needs_scan``'s rows."""
    rng = np.random.default_rng(12)
    policy = create("mantri", **params)
    wanted = cleared = barred = 0
    for _ in range(300):
        view = _random_view(rng, int(rng.integers(1, 80)), int(rng.integers(1, 8)))
        view.free_slots = int(rng.choice([0, 5]))
        if rng.random() < 0.4:  # fewer candidates: tasks of one attempt, longer means
            view.task_attempts = np.minimum(view.task_attempts, 1)
            view.completed_mean = view.completed_mean + rng.uniform(0, 100)
        ref = _batch_wants(policy, view)
        got = policy.needs_scan_slots(view)
        assert got.dtype == bool and np.array_equal(got, ref)
        wanted += int(got.any())
        cleared += int(view.due.any() and not got.any())
        barred += int(view.free_slots == 0 and got.any())
    assert wanted > 30 and cleared > 30 and barred > 10  # every outcome exercised


@pytest.mark.parametrize("policy, params", [("score", {}), ("score", {"gap": 0.0}),
                                             ("rate", {}), ("rate", {"factor": 1.0}),
                                             ("static", {}), ("static", {"estimator": "legacy"})])
def test_mean_rule_slot_gates_equal_the_numpy_gates(policy, params):
    """score, rate and static: the compiled gate wants exactly the due jobs with a row that
    ``needs_scan`` over ``to_batch()`` wants, and leaves its scratch zeroed."""
    rng = np.random.default_rng(13)
    gate = create(policy, **params)
    wanted = cleared = 0
    for _ in range(300):
        view = _random_view(rng, int(rng.integers(1, 80)), int(rng.integers(1, 8)))
        view.job_start = rng.uniform(0, 50, len(view.n_tasks))
        if rng.random() < 0.3:  # a time equal to some starts: rates of x / 0
            view.now = float(view.start[rng.integers(0, len(view.start))])
        ref = _batch_wants(gate, view)
        got = gate.needs_scan_slots(view)
        assert got.dtype == bool and np.array_equal(got, ref)
        wanted += int(got.any())
        cleared += int(view.due.any() and not got.any())
    assert wanted > 30 and cleared > 30  # both outcomes exercised
    assert not any(a.any() for a in gate._scratch[:2])  # per-job scratch left zeroed


@pytest.mark.parametrize("policy", ["score", "rate", "static", "adaptive"])
def test_slot_gates_leave_out_tasks_asked_for_before(policy):
    """A task its job's policy asked to copy before (``SlotView.task_asked``; ``decide``
    never asks twice, and a copy the caps refused leaves the task one attempt) is no
    candidate: the compiled gate wants what it wants of the view in which those tasks have
    a second attempt. (The oracle's exact gate is checked on whole runs:
    ``test_policy_oracle``.)"""
    rng = np.random.default_rng(14)
    gate = create(policy)
    changed = 0
    for _ in range(300):
        view = _random_view(rng, int(rng.integers(1, 80)), int(rng.integers(1, 8)))
        n_jobs = len(view.n_tasks)
        view.job_start = rng.uniform(0, 50, n_jobs)
        view.job_deadline = np.where(rng.random(n_jobs) < 0.5, np.nan, 150.0)
        view.cluster_util = 0.6
        unmarked = gate.needs_scan_slots(view)  # task_asked None: nothing asked
        view.task_asked = rng.random(len(view.task_attempts)) < 0.2
        bumped = copy.copy(view)
        bumped.task_asked = None
        bumped.task_attempts = view.task_attempts + view.task_asked
        got = gate.needs_scan_slots(view)
        assert np.array_equal(got, gate.needs_scan_slots(bumped))
        changed += int((got != unmarked).any())
    assert changed > 10  # what was asked mattered


@pytest.mark.parametrize("policy", ["score", "rate", "static", "adaptive"])
def test_slot_gates_leave_out_jobs_whose_copies_fill_the_cap(policy):
    """With the attempts' copy flags in the view, a job whose running copies fill
    ``decide``'s cap (``speculation_cap`` of its tasks and running attempts) is not wanted:
    the gate wants what the reference wants of the other jobs."""
    from hedge.policy.detectors import speculation_cap

    rng = np.random.default_rng(15)
    gate = create(policy)
    capped = 0
    for _ in range(1000):
        view = _random_view(rng, int(rng.integers(40, 160)), int(rng.integers(1, 3)))
        view.job_start = rng.uniform(0, 50, len(view.n_tasks))
        view.job_deadline = np.where(rng.random(len(view.n_tasks)) < 0.5, np.nan, 150.0)
        view.cluster_util = 0.6
        ref = _batch_wants(gate, view)
        busy = view.job >= 0
        view.aid = np.where(busy, np.arange(len(view.job)), -1)
        view.attempt_copy = rng.random(len(view.job)) < rng.choice([0.05, 0.7])
        for j in range(len(view.n_tasks)):
            slots = view.job == j
            cap = speculation_cap(int(view.n_tasks[j].sum()), int(slots.sum()))
            if int((view.attempt_copy & slots).sum()) >= cap:
                capped += int(ref[j + 1])
                ref[j + 1] = False
        assert np.array_equal(gate.needs_scan_slots(view), ref)
    assert capped >= 5  # the cap cut jobs the reference wants (rate, static: 7 of these views)
    assert not any(a.any() for a in gate._scratch[-2:])  # running, copies left zeroed


def _maps_view(hw: float, n_slots: int = 2, start0: float = 45.0) -> SlotView:
    """One job whose maps run on ``n_slots`` slots (tasks 0, 1, ...; task ``n_slots`` is the
    empty slots'), each its task's only attempt, at ``now`` 100: slot 0 started at
    ``start0`` and works at half the others' rate (0.005 progress/s; they started at 0).
    Each holds its latest report, received 0.1 s after it was sent."""
    start = np.array([start0] + [0.0] * (n_slots - 1))
    rate = np.array([0.005] + [0.01] * (n_slots - 1))
    k = np.floor((100.0 - 0.1 - start) / hw).astype(np.int64)
    tasks = np.arange(n_slots + 1)
    ones = np.ones(n_slots + 1, dtype=np.int64)
    ones[-1] = 0
    return SlotView(
        now=100.0, hw=hw, due=np.array([False, True]), job=np.zeros(n_slots, np.int64),
        task=tasks[:-1], start=start, k=k, p0=rate * k * hw, p1=rate * (k - 1) * hw,
        r0=start + k * hw + 0.1, r1=start + (k - 1) * hw + 0.1,
        task_type=np.full(n_slots + 1, MAP, np.int8), task_attempts=ones, task_running=ones,
        n_tasks=np.array([[n_slots, 0]]), completed=np.zeros((1, 2)),
        completed_mean=np.full((1, 2), np.nan), completed_std=np.full((1, 2), np.nan),
        free_slots=3)


def test_late_wakes_a_job_when_its_slow_attempt_comes_of_age_before_its_next_report():
    late = create("late")  # min_elapsed 60: slot 0 comes of age at 105
    view = _maps_view(hw=40.0)  # next reports sent at 125 (slot 0) and 120
    assert not late.needs_scan_slots(view)[1]
    wake = late.needs_scan_from(view)[1]
    assert 105.0 - 1e-6 < wake <= 105.0
    view.now = 105.0
    assert late.needs_scan_slots(view)[1]  # the slow slot now flags: woken in time
    view.now = 104.9
    assert not late.needs_scan_slots(view)[1]


def test_late_wakes_a_job_at_its_next_report_and_never_where_no_cell_could_flag():
    late = create("late")
    flags = _maps_view(hw=3.0, start0=0.0)  # of age and slower: flags now, so wakes now
    assert late.needs_scan_slots(flags)[1] and late.needs_scan_from(flags)[1] == flags.now
    view = _maps_view(hw=3.0)  # slot 0 of age at 105; both send their next report at 102
    assert not late.needs_scan_slots(view)[1]
    assert late.needs_scan_from(view)[1] == 102.0
    view.r0[1] = 100.5  # slot 1's report on its way: received at 100.5
    assert late.needs_scan_from(view)[1] == 100.5
    assert late.needs_scan_from(_maps_view(3.0, n_slots=1, start0=0.0))[1] == np.inf  # alone
    copied = _maps_view(hw=3.0, start0=0.0)
    copied.task_attempts[:2] = 2  # every task copied already: no slot can flag
    assert late.needs_scan_from(copied)[1] == np.inf
    # no free slot: a slot freed by another job is no change of this one, so a job that
    # would flag were a slot free wakes at once, and one that would not sleeps as before
    full = _maps_view(hw=3.0, start0=0.0)
    full.free_slots = 0
    assert not late.needs_scan_slots(full)[1] and late.needs_scan_from(full)[1] == full.now
    full = _maps_view(hw=3.0)
    full.free_slots = 0
    assert late.needs_scan_from(full)[1] == 102.0
    busy, single, _ = late._wake_scratch
    assert not busy.any() and not single.any()  # scratch left zeroed


def test_mantri_wakes_a_job_at_a_report_or_when_its_prune_timer_is_due():
    gate = create("mantri", max_copies=1)
    # slot 0 holds report 1 (sent 85, progress 0.2): 160 s left at its rate, 145 by now
    view = _maps_view(hw=40.0)  # next reports sent at 125 (slot 0) and 120 (slot 1)
    view.completed_mean[:] = 200.0  # 145 < 200 + 30: no copy, and less as time passes
    assert not gate.needs_scan_slots(view)[1]
    assert gate.needs_scan_from(view)[1] == 120.0
    view.completed_mean[:] = 100.0  # 145 > 100 + 30: a copy now
    assert gate.needs_scan_from(view)[1] == view.now
    view = _maps_view(hw=40.0)
    view.completed_mean[:] = 200.0
    view.task_attempts[:2] = 2  # both copied: no more copies, both pruning candidates
    assert gate.needs_scan_from(view)[1] == view.now  # no policy made yet: at once
    own = create("mantri", max_copies=1)
    own._last_prune = 80.0  # prune_every 30: due at 110
    view.policies = {0: own}
    assert not gate.needs_scan_slots(view)[1]
    assert 110.0 - 1e-6 < gate.needs_scan_from(view)[1] <= 110.0
    view.now = 110.0
    assert gate.needs_scan_slots(view)[1]


def test_mantri_wakes_a_job_at_the_first_report_its_trajectory_lets_pass():
    """With the slots' trajectories, mantri's wake walks the reports to come: slot 0 (start
    45, 0.005/s) sends 0.4 at 125 and 0.6 at 165, at most 120 and 80 s left, and after
    those no report can show more than 133 s left; slot 1 ends at 100 (no report to come)."""
    gate = create("mantri")
    view = _maps_view(hw=40.0)
    view.w, view.r, view.W = np.array([0.0, 0.0]), np.array([0.005, 0.01]), np.ones(2)
    view.ws, view.tw = np.array([45.0, 0.0]), np.array([45.0, 0.0])
    view.completed_mean[:] = 200.0  # 230 s left to pass: never on these trajectories
    assert not gate.needs_scan_slots(view)[1]
    assert gate.needs_scan_from(view)[1] == np.inf
    view.completed_mean[:] = 150.0  # 180 s: slot 0 stalls at 90 (0.001/s from 0.225)
    view.w[0], view.r[0], view.tw[0] = 0.225, 0.001, 90.0
    assert not gate.needs_scan_slots(view)[1]
    assert gate.needs_scan_from(view)[1] == 125.0  # 0.26 sent at 125: up to 228 s left
    view.free_slots = 0  # a slot another job frees is no change of this job: the same wake
    assert gate.needs_scan_from(view)[1] == 125.0
    view.completed_mean[:] = 100.0  # 145 s left passes now: no copy without a free slot,
    assert not gate.needs_scan_slots(view)[1]  # but one could free at any time
    assert gate.needs_scan_from(view)[1] == view.now
    view.completed_mean[:] = np.nan  # no completed task: no copy test passes until one
    assert gate.needs_scan_from(view)[1] == np.inf


def _fingerprint(result) -> tuple:
    a = result.attempts
    return tuple(np.ascontiguousarray(x).tobytes() for x in (
        a.start, a.end, a.node, a.task, a.outcome, a.copy, result.finish, result.detected)) + (
        result.scans,)


@pytest.mark.parametrize("policy", ["hadoop", "late", "mantri", "none", "dolly", "score", "rate",
                                    "static"])
def test_compiled_and_numpy_runs_are_bit_identical(policy, monkeypatch):
    runs = [(random_workload(3 + seed), CLUSTER, seed) for seed in (1, 2)]
    runs.append((default_workload(1, n_jobs=15),
                 ClusterConfig(nodes=20, slots=2, scheduler="fair", straggler_ratio=0.1,
                               hw=6.0, latency="exp:0.4", startup=1.0), 5))
    for workload, cluster, seed in runs:
        compiled = Simulator(workload, cluster, policy, seed=seed).run()
        monkeypatch.setattr(Simulator, "compiled", False)
        reference = Simulator(workload, cluster, policy, seed=seed).run()
        monkeypatch.setattr(Simulator, "compiled", True)
        if policy in ("mantri", "score", "rate", "static"):  # their compiled gates also
            # read what the reference gate cannot see (mantri's prune timers; for the
            # detector policies the tasks asked for before and the jobs' running copies):
            # the same results from fewer scans
            assert _fingerprint(compiled)[:-1] == _fingerprint(reference)[:-1]
            assert compiled.scans <= reference.scans
            assert policy != "mantri" or compiled.scans < reference.scans
            continue
        assert _fingerprint(compiled) == _fingerprint(reference)
