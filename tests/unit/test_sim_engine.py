"""Hand-computed simulator scenarios: exact job times, costs and what the AM sees."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE, Actions, AttemptState, Snapshot
from hedge.policy.base import Policy, register
from hedge.sim.cluster import ClusterConfig, parse_cluster
from hedge.sim.engine import simulate
from hedge.sim.heartbeat import last_received
from hedge.sim.metrics import summarize
from hedge.sim.results import KILLED, NORMAL, WON
from hedge.traces.workload import Workload

EXACT = dict(latency="const:0", hw=1.0)


def one_job(durations, types=None, arrival=0.0) -> Workload:
    types = None if types is None else [np.asarray(types, dtype=np.int8)]
    return Workload.from_jobs(["j"], [arrival], [np.asarray(durations, float)], types)


@register
class _CopySlowest(Policy):
    """Test policy: once a task completed, copy every running task that has one attempt."""

    name = "test-copy-running"

    def decide(self, snapshot: Snapshot) -> Actions:
        a = snapshot.attempts
        if not len(snapshot.job.completed_map_runtimes):
            return Actions()
        running = a.task[(a.state == AttemptState.RUNNING)]
        tasks, counts = np.unique(a.task, return_counts=True)
        single = set(tasks[counts == 1].tolist())
        return Actions(speculate_task=[t for t in running.tolist() if t in single])


class _Once(Policy):
    """Test policy base: ``act`` once, at the first scan where ``ready`` holds (default:
    once a map completed); no action at every other scan."""

    def __init__(self) -> None:
        self.done = False

    def ready(self, snapshot: Snapshot) -> bool:
        return bool(len(snapshot.job.completed_map_runtimes))

    def act(self, snapshot: Snapshot) -> Actions:
        raise AssertionError("a test policy must define act")

    def decide(self, snapshot: Snapshot) -> Actions:
        if self.done or not self.ready(snapshot):
            return Actions()
        self.done = True
        return self.act(snapshot)


@register
class _ResumeRunning(_Once):
    """Test policy: once a task completed, resume every other running task once."""

    name = "test-resume-running"

    def act(self, snapshot: Snapshot) -> Actions:
        a = snapshot.attempts
        running = np.unique(a.task[a.state == AttemptState.RUNNING])
        return Actions(resume_task=running, resume_copies=np.ones(len(running), dtype=np.int64))


_SEEN: list[Snapshot] = []


@register
class _Recorder(Policy):
    """Test policy: remembers every snapshot, never acts."""

    name = "test-recorder"

    def decide(self, snapshot: Snapshot) -> Actions:
        _SEEN.append(snapshot)
        return Actions()


@register
class _CopyAndRecordFinished(_CopySlowest):
    """Test policy: copies as test-copy-running, reading ``JobFacts.finished``."""

    name = "test-copy-finished"
    reads_finished = True

    def decide(self, snapshot: Snapshot) -> Actions:
        _SEEN.append(snapshot)
        return super().decide(snapshot)


def test_finished_facts_are_each_completed_tasks_winning_attempt():
    _SEEN.clear()
    wl = one_job([9, 2, 3, 8, 2, 2])
    r = simulate(wl, "test-copy-finished", ClusterConfig(nodes=3, slots=2, heterogeneity=2,
                                                         startup=1.0), seed=4)
    a = r.attempts
    won = a.outcome != KILLED
    assert (a.outcome == WON).any()  # some copy or original won a race
    last = _SEEN[-1]
    f = last.job.finished
    assert len(f) == len(np.concatenate([last.job.completed_map_runtimes,
                                         last.job.completed_reduce_runtimes])) > 0
    for task, node, start, end in zip(f.task, f.node, f.start, f.end, strict=True):
        row = np.flatnonzero(won & (a.task == task))
        assert len(row) == 1
        assert (a.node[row[0]], a.start[row[0]], a.end[row[0]]) == (node, start, end)
        assert end <= last.now
    # a policy that does not read them gets none
    _SEEN.clear()
    simulate(wl, "test-recorder", ClusterConfig(nodes=3, slots=2), seed=4)
    assert all(len(s.job.finished) == 0 for s in _SEEN)


def test_two_nodes_three_tasks_fifo_exact():
    r = simulate(one_job([4, 2, 3]), "none", ClusterConfig(nodes=2, slots=1, **EXACT))
    assert r.job_time.tolist() == [5.0]
    order = np.argsort(r.attempts.task)
    assert r.attempts.start[order].tolist() == [0.0, 0.0, 2.0]
    assert r.attempts.end[order].tolist() == [4.0, 2.0, 5.0]
    row = summarize(r)
    assert row["machine_time"] == 9.0
    assert row["makespan"] == 5.0
    assert row["copies_launched"] == 0
    assert set(r.attempts.outcome.tolist()) == {NORMAL}


def test_heterogeneity_slowest_node_is_h_times_slower():
    r = simulate(one_job([4, 4]), "none", ClusterConfig(nodes=2, slots=1, heterogeneity=4,
                                                        **EXACT))
    assert sorted(r.node_speed.tolist()) == [0.5, 2.0]
    assert sorted(r.attempts.end.tolist()) == [2.0, 8.0]
    assert summarize(r)["machine_time"] == 10.0


def test_contention_stretch_and_release():
    # one node, 2 slots, c=2: both tasks run at rate 1/2 until the short one ends at 4,
    # then the other runs alone at rate 1: 2 of 4 units left -> ends at 6
    r = simulate(one_job([2, 4]), "none", ClusterConfig(nodes=1, slots=2, contention=2, **EXACT))
    assert sorted(r.attempts.end.tolist()) == [4.0, 6.0]
    assert r.job_time.tolist() == [6.0]


def test_copy_on_other_node_wins_and_original_is_killed():
    # speeds 2 and 0.5: the fast node finishes its task at 2, then copies the slow task
    # (4 units at speed 2 -> ends at 4); the original is killed at 4
    cfg = ClusterConfig(nodes=2, slots=1, heterogeneity=4, **EXACT)
    r = simulate(one_job([4, 4]), "test-copy-running", cfg)
    assert r.job_time.tolist() == [4.0]
    a = r.attempts
    assert a.copy.sum() == 1
    copy = np.flatnonzero(a.copy)[0]
    assert (a.start[copy], a.end[copy], a.outcome[copy]) == (2.0, 4.0, WON)
    original = np.flatnonzero(~a.copy & (a.task == a.task[copy]))[0]
    assert (a.end[original], a.outcome[original]) == (4.0, KILLED)
    assert a.node[copy] != a.node[original]
    row = summarize(r)
    assert row["machine_time"] == 2.0 + 4.0 + 2.0
    assert (row["copies_launched"], row["copies_won"], row["copies_killed"]) == (1, 1, 0)


@pytest.mark.parametrize("copies", ["apart", "stock"])
def test_a_stock_am_may_put_a_copy_beside_its_original(copies: str) -> None:
    """One node of three slots, tasks of 1 and 6 units: once the short one completes, the
    long one is copied. ``apart`` has no node for the copy (its only node runs the task), so
    none runs; ``stock`` (a stock MapReduce AM, MAPREDUCE-7169) puts it beside its original."""
    cfg = ClusterConfig(nodes=1, slots=3, copies=copies, **EXACT)
    a = simulate(one_job([1, 6]), "test-copy-running", cfg).attempts
    if copies == "apart":
        assert a.copy.tolist() == [False, False]
    else:  # the copy of task 1 started at 1 s on node 0, beside its original, and lost
        assert (a.task.tolist(), a.copy.tolist(), a.node.tolist()) == (
            [0, 1, 1], [False, False, True], [0, 0, 0])
        assert (a.start[2], a.end[2], a.outcome[2]) == (1.0, 6.0, KILLED)


def test_copies_placement_is_checked() -> None:
    with pytest.raises(HedgeError, match=r"cluster: copies='beside', expected 'apart' or "
                                         r"'stock'"):
        parse_cluster("copies=beside")


def test_a_clone_of_a_waiting_task_waits_for_its_original_in_fifo_order():
    # Issue 16: dolly's clones at launch were placed before every original task, so a job
    # arriving behind a FIFO queue ran its clone at once while its original (and the
    # earlier job's waiting tasks) waited; on SWIM it cut none's p95 job time by 64% with
    # copies that could not be faster. A clone now starts once its task's original has a
    # slot: job b (arriving at 2, one task) starts only when job a's waiting tasks have.
    wl = Workload.from_jobs(["a", "b"], [0.0, 2.0], [np.full(4, 2.0), np.array([1.0])])
    r = simulate(wl, "dolly", ClusterConfig(nodes=2, slots=1, **EXACT),
                 policy_params={"clones": 1, "budget": 1.0})
    a = r.attempts
    assert a.start[a.job == 1].min() >= a.start[a.job == 0].max() == 2.0
    assert r.finish.tolist() == [4.0, 5.0]
    b = np.flatnonzero(a.job == 1)
    started = sorted(zip(a.start[b].tolist(), a.copy[b].tolist(), strict=True))
    assert started == [(4.0, False), (4.0, True)]  # the original, and its clone beside it
    assert len(set(a.node[b].tolist())) == 2


def test_a_copy_waits_behind_its_jobs_waiting_originals():
    # A MapReduce AM serves its pending map requests in the order they were made, and every
    # original asked at the job's start: a copy asked later waits behind the job's waiting
    # originals (issue 16, session 31; until then copies went first, and on a busy cluster
    # even the oracle made jobs slower than none). Task 1 ends at 1, task 0 (4 s) is copied
    # then, but tasks 2 and 3 take the free slot first; the copy starts at 3 and loses.
    r = simulate(one_job([4, 1, 1, 1]), "test-copy-running",
                 ClusterConfig(nodes=2, slots=1, **EXACT))
    a = r.attempts
    assert sorted(a.start[~a.copy].tolist()) == [0.0, 0.0, 1.0, 2.0]
    assert a.start[a.copy].tolist() == [3.0] and a.outcome[a.copy].tolist() == [KILLED]
    assert r.job_time.tolist() == [4.0]


@pytest.mark.parametrize(("scheduler", "b_finish"), [("fifo", 5.0), ("fair", 3.0)])
def test_across_jobs_copies_take_their_jobs_turn(scheduler, b_finish):
    # Job a's copy (asked at 1) against the two originals of job b (arrived at 1), one free
    # slot: by arrival (FIFO) job a is served first, its copy included, and b waits until
    # a's task ends at 4; max-min fair serves b first (a already runs one task), a's copy
    # once b's originals have slots.
    wl = Workload.from_jobs(["a", "b"], [0.0, 1.0], [np.array([4.0, 1.0]), np.ones(2)])
    r = simulate(wl, "test-copy-running",
                 ClusterConfig(nodes=2, slots=1, scheduler=scheduler, **EXACT))
    a = r.attempts
    assert r.finish.tolist() == [4.0, b_finish]
    assert a.start[a.copy].tolist() == ([1.0] if scheduler == "fifo" else [3.0])


def test_resume_does_only_the_remaining_work():
    cfg = ClusterConfig(nodes=2, slots=1, heterogeneity=4, **EXACT)
    r = simulate(one_job([4, 4]), "test-resume-running", cfg)
    a = r.attempts
    resumed = np.flatnonzero(a.copy)[0]
    # the slow attempt did 2 s x 0.5 = 1 of 4 units; 3 units remain from t=2
    speed = r.node_speed[a.node[resumed]]
    assert a.start[resumed] == 2.0
    assert a.end[resumed] == pytest.approx(2.0 + 3.0 / speed)
    killed = np.flatnonzero(a.outcome == KILLED)
    assert a.end[killed].tolist() == [2.0]


def test_fifo_and_fair_share_slots_differently():
    wl = Workload.from_jobs(["a", "b"], [0.0, 0.0], [np.ones(4), np.ones(4)])
    fifo = simulate(wl, "none", ClusterConfig(nodes=1, slots=2, scheduler="fifo", **EXACT))
    fair = simulate(wl, "none", ClusterConfig(nodes=1, slots=2, scheduler="fair", **EXACT))
    assert fifo.finish.tolist() == [2.0, 4.0]
    assert fair.finish.tolist() == [4.0, 4.0]


def test_reduces_start_after_maps_and_pay_shuffle():
    wl = one_job([2, 2, 3], types=[MAP, MAP, REDUCE])
    r = simulate(wl, "none", ClusterConfig(nodes=2, slots=1, shuffle=1.0, **EXACT))
    reduce_row = np.flatnonzero(r.attempts.task == 2)[0]
    assert r.attempts.start[reduce_row] == 2.0
    assert r.job_time.tolist() == [6.0]


def test_arrivals_and_deadline_hit_rate():
    wl = Workload.from_jobs(["a", "b"], [0.0, 10.0], [np.array([3.0]), np.array([2.0, 2.0])])
    r = simulate(wl, "none", ClusterConfig(nodes=1, slots=1, **EXACT), deadline_factor=1.5)
    assert r.finish.tolist() == [3.0, 14.0]
    # deadlines: 0 + 1.5*3 = 4.5 (met), 10 + 1.5*2 = 13 (missed: 2 tasks share one slot)
    assert r.deadline.tolist() == [4.5, 13.0]
    assert summarize(r)["deadline_hit_rate"] == 0.5


def test_startup_delay_postpones_work():
    r = simulate(one_job([3]), "none", ClusterConfig(nodes=1, slots=1, startup=2.0, **EXACT))
    assert r.job_time.tolist() == [5.0]


def test_heartbeats_the_am_sees_only_received_reports():
    _SEEN.clear()
    cfg = ClusterConfig(nodes=1, slots=1, hw=3.0, latency="const:0.5")
    simulate(one_job([10]), "test-recorder", cfg)
    by_time = {s.now: s for s in _SEEN}
    at4 = by_time[4.0].attempts
    # report 1 sent at 3 (progress 0.3) arrived at 3.5
    assert at4.progress.tolist() == [pytest.approx(0.3)]
    assert (at4.report_sent[0], at4.report_received[0]) == (3.0, 3.5)
    assert (at4.first_progress_time[0], at4.first_progress[0]) == (3.0, pytest.approx(0.3))
    at6 = by_time[6.0].attempts
    # report 2 (sent at 6) is still in flight at 6: the AM still holds report 1
    assert at6.progress.tolist() == [pytest.approx(0.3)]
    assert by_time[7.0].attempts.progress.tolist() == [pytest.approx(0.6)]
    at0 = by_time[0.0].attempts
    assert at0.state.tolist() == [AttemptState.WAITING]
    assert math.isnan(at0.report_sent[0])


def test_last_received_prefers_the_newest_arrived_report():
    index, progress, sent, recv = last_received(
        now=10.0, start=np.array([0.0, 0.0, 9.0]), k=np.array([3, 3, 0]),
        p_k=np.array([0.9, 0.9, 0.0]), p_prev=np.array([0.6, 0.6, 0.0]),
        recv_k=np.array([9.5, 10.5, 11.0]), recv_prev=np.array([6.5, 6.5, np.nan]), hw=3.0)
    assert index.tolist() == [3, 2, -1]
    assert progress.tolist() == [0.9, 0.6, 0.0]
    assert sent[:2].tolist() == [9.0, 6.0] and math.isnan(sent[2])
    assert recv[:2].tolist() == [9.5, 6.5]


def test_cluster_parsing_and_errors():
    cfg = parse_cluster("nodes=10,slots=2,heterogeneity=3,contention=2.5,scheduler=fair")
    assert (cfg.nodes, cfg.slots, cfg.heterogeneity, cfg.scheduler) == (10, 2, 3.0, "fair")
    with pytest.raises(HedgeError, match="bogus"):
        parse_cluster("bogus=1")
    with pytest.raises(HedgeError, match="heterogeneity"):
        parse_cluster("heterogeneity=0.5")
    with pytest.raises(HedgeError, match="latency"):
        parse_cluster("latency=gauss:1")
    with pytest.raises(HedgeError, match="expected a number"):
        parse_cluster("nodes=many")


def test_degradation_is_ground_truth_in_results():
    wl = Workload.from_jobs([f"j{i}" for i in range(20)], np.arange(20.0) * 50,
                            [np.full(5, 30.0)] * 20)
    cfg = ClusterConfig(nodes=10, slots=2, degraded=0.3, degrade_factor=4, degrade_gap=200,
                        degrade_period=300)
    r = simulate(wl, "none", cfg, seed=3)
    d = r.degradation
    assert len(d) > 0 and set(d.node.tolist()) <= set(range(10))
    assert len(set(d.node.tolist())) == 3
    assert (d.end > d.start).all() and (d.factor == 4).all()
    healthy = simulate(wl, "none", ClusterConfig(nodes=10, slots=2), seed=3)
    assert summarize(r)["machine_time"] > summarize(healthy)["machine_time"]


def test_unknown_policy_is_a_clear_error():
    with pytest.raises(HedgeError, match="unknown policy 'nope'"):
        simulate(one_job([1]), "nope")


@register
class _KillFirst(_Once):
    """Test policy: at t >= 1 kill every running attempt once."""

    name = "test-kill-once"

    def ready(self, snapshot: Snapshot) -> bool:
        return snapshot.now >= 1

    def act(self, snapshot: Snapshot) -> Actions:
        a = snapshot.attempts
        return Actions(kill_attempt=a.attempt[a.state == AttemptState.RUNNING])


@register
class _PlaceCopy(_Once):
    """Test policy: after a completion, copy task 0 preferring / avoiding given nodes."""

    name = "test-place-copy"

    def __init__(self, mode: str = "prefer") -> None:
        super().__init__()
        self.mode = mode

    def act(self, snapshot: Snapshot) -> Actions:
        a = snapshot.attempts
        busy = int(a.node[(a.task == 0) & (a.state == AttemptState.RUNNING)][0])
        others = sorted({0, 1, 2} - {busy})
        if self.mode == "prefer":
            return Actions(speculate_task=[0], prefer_node=[others[1]])
        return Actions(speculate_task=[0], avoid_nodes=[others[1]])


@register
class _Reserve(Policy):
    """Test policy: always holds one slot back for copies."""

    name = "test-reserve-one"

    def decide(self, snapshot: Snapshot) -> Actions:
        return Actions(reserve_slots=1)


def test_killing_the_only_attempt_is_refused_as_on_a_cluster():
    # Until issue 17 the simulator carried this kill out and relaunched the task (killed at
    # 1.0, a fresh attempt 1.0-5.0, job time 5.0). The shim never kills a task's last running
    # attempt, and the simulator now applies the same limits (hedge.policy.limits, rule 4):
    # the kill is dropped and the only attempt runs to its end.
    r = simulate(one_job([4]), "test-kill-once", ClusterConfig(nodes=1, slots=1, **EXACT))
    a = r.attempts
    rows = zip(a.start.tolist(), a.end.tolist(), a.outcome.tolist(), strict=True)
    assert sorted(rows) == [(0.0, 4.0, NORMAL)]
    assert r.job_time.tolist() == [4.0]
    assert summarize(r)["machine_time"] == 4.0
    assert summarize(r)["copies_launched"] == 0


@pytest.mark.parametrize("mode", ["prefer", "avoid"])
def test_copies_honour_prefer_node_and_avoid_nodes(mode):
    cfg = ClusterConfig(nodes=3, slots=1, copies="apart", **EXACT)
    r = simulate(one_job([4, 1]), "test-place-copy", cfg, policy_params={"mode": mode})
    a = r.attempts
    copy = np.flatnonzero(a.copy)[0]
    original = np.flatnonzero((a.task == 0) & ~a.copy)[0]
    others = sorted({0, 1, 2} - {int(a.node[original])})
    assert a.node[copy] == (others[1] if mode == "prefer" else others[0])
    assert a.start[copy] == 1.0


def test_reserved_slots_are_kept_from_original_tasks():
    cfg = ClusterConfig(nodes=2, slots=1, **EXACT)
    assert simulate(one_job([2, 2]), "none", cfg).job_time.tolist() == [2.0]
    assert simulate(one_job([2, 2]), "test-reserve-one", cfg).job_time.tolist() == [4.0]


def test_every_snapshot_passes_the_control_plane_validation():
    _SEEN.clear()
    wl = Workload.from_jobs(["a", "b"], [0.0, 3.0], [np.full(6, 7.0), np.full(4, 5.0)])
    simulate(wl, "test-recorder", ClusterConfig(nodes=2, slots=2, heterogeneity=2,
                                                contention=1.5, startup=1.0), seed=2)
    assert len(_SEEN) > 10
    for s in _SEEN:
        s.attempts.validate(s.now)
        running = s.attempts.state == AttemptState.RUNNING
        assert (s.attempts.start[running] <= s.now).all()
        assert s.cluster.total_slots == 4
        assert s.cluster.slot_node.tolist() == [0, 0, 1, 1]


def test_remote_input_pays_bytes_over_bandwidth():
    wl = one_job([2, 2])
    wl.machine[:] = 0  # both inputs live on node 0
    wl.input_bytes[:] = 1e8
    r = simulate(wl, "none", ClusterConfig(nodes=2, slots=1, bandwidth=1e8, **EXACT))
    a = r.attempts
    local = a.node == 0
    assert a.end[local].tolist() == [2.0]       # on its input's node: no transfer
    assert a.end[~local].tolist() == [3.0]      # 1e8 bytes at 1e8 B/s: one extra second


def test_sim_drawn_stragglers_are_ground_truth():
    wl = Workload.from_jobs(["j"], [0.0], [np.full(200, 10.0)])
    r = simulate(wl, "none", ClusterConfig(nodes=50, slots=4, straggler_ratio=0.3,
                                           slowdown="3:3", **EXACT), seed=1)
    slow = r.straggler
    assert 0.2 < slow.mean() < 0.4
    durations = r.attempts.duration[np.argsort(r.attempts.task)]
    assert np.allclose(durations[slow], 30.0) and np.allclose(durations[~slow], 10.0)


def test_snapshots_name_each_tasks_input_node():
    _SEEN.clear()
    wl = Workload.from_jobs(["a", "b"], [0.0, 0.0], [np.full(3, 4.0), np.full(2, 4.0)])
    wl.machine[:] = [5, 2, 2, 2, 4]  # 5 and 4 wrap to nodes 2 and 1 on a 3-node cluster
    wl.input_bytes[:] = 1e8
    r = simulate(wl, "test-recorder", ClusterConfig(nodes=3, slots=2, bandwidth=1e8, **EXACT))
    by_job = {s.job.job_id: s.job.input_nodes for s in _SEEN}
    assert by_job["a"].tolist() == [[2], [2], [2]]
    assert by_job["b"].tolist() == [[2], [1]]
    assert not by_job["a"].flags.writeable  # a view of the simulator's state
    # the model the rows describe: an attempt on its row's node pays no transfer (4 s), else 5 s
    home = np.array([2, 2, 2, 2, 1])[r.attempts.task]
    assert (r.attempts.duration == np.where(r.attempts.node == home, 4.0, 5.0)).all()
    assert (r.attempts.node != home).any() and (r.attempts.node == home).any()
    _SEEN.clear()
    simulate(one_job([2, 2]), "test-recorder", ClusterConfig(nodes=2, slots=1, **EXACT))
    assert all(s.job.input_nodes.shape == (0, 0) for s in _SEEN)  # no sizes: unknown
