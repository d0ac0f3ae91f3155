"""The 'window' and 'hete-aware' policies on hand-built snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.estimate import estimate_ect
from hedge.model import (
    MAP,
    REDUCE,
    AttemptState,
    AttemptTable,
    ClusterFacts,
    FinishedAttempts,
    JobFacts,
    Snapshot,
)
from hedge.policy.base import create
from hedge.policy.node_history import NodeHistory
from hedge.policy.window import HeteAwarePolicy, WindowPolicy

R, W = AttemptState.RUNNING, AttemptState.WAITING
SLOT_NODE = np.array([0, 0, 1, 1, 2, 2])


def snapshot(now, attempts, free_at, node_speed=(), completed=(10.0, 12.0), n_maps=6,
             input_nodes=None, copies=()):
    """``attempts``: (task, attempt, state, node, start, progress) tuples, all maps;
    ``copies``: attempt ids that are speculative copies."""
    cols = np.array(attempts, dtype=float).reshape(-1, 6)
    n = len(cols)
    running = cols[:, 2] == R
    start = np.where(running, cols[:, 4], np.nan)
    sent = np.where(running, now, np.nan)
    table = AttemptTable(
        task=cols[:, 0], attempt=cols[:, 1], task_type=np.full(n, MAP), state=cols[:, 2],
        node=cols[:, 3], start=start, first_progress_time=start, first_progress=np.zeros(n),
        progress=cols[:, 5], report_sent=sent, report_received=sent,
        bytes_processed=np.zeros(n), input_bytes=np.full(n, 1e8),
        speculative=np.isin(cols[:, 1], list(copies)),
    )
    job = JobFacts(job_id="j", start=0.0, n_maps=n_maps, n_reduces=0,
                   completed_map_runtimes=np.array(completed))
    if input_nodes is not None:
        job.input_nodes = np.asarray(input_nodes)
    free_at = np.array(free_at, dtype=float)
    cluster = ClusterFacts(total_slots=6, free_slots=int((free_at <= now).sum()),
                           node_speed=np.array(node_speed), slot_node=SLOT_NODE,
                           slot_free_at=free_at)
    return Snapshot(now=now, job=job, attempts=table, cluster=cluster)


# task 2 on node 2 is the straggler: progress 0.1 after 10 s, ECT 100 (ETD 100 vs 20 and 10)
RUNNING = [(2, 2, R, 2, 0.0, 0.1), (3, 3, R, 1, 0.0, 0.5), (4, 4, R, 0, 5.0, 0.5)]
# slot 1 (node 0) frees at 11, slot 3 (node 1) at 11.5: both inside the 2 s window
FREE_AT = [15, 11, 20, 11.5, 100, 30]


def test_reserves_the_best_slot_then_launches_the_copy_when_it_frees():
    policy = WindowPolicy(slots="cluster")
    first = policy.decide(snapshot(10.0, RUNNING, FREE_AT, node_speed=[1, 0.5, 1]))
    # node 1 is twice as slow (t_C 22 vs 11): slot 1 on node 0 saves more time and energy
    assert first.speculate_task.tolist() == []
    assert first.reserve_slots == 1
    freed = list(FREE_AT)
    freed[1] = 11.0
    second = policy.decide(snapshot(11.0, RUNNING, freed, node_speed=[1, 0.5, 1]))
    assert second.speculate_task.tolist() == [2]
    assert second.prefer_node.tolist() == [0]
    assert second.reserve_slots == 0
    # one copy per task: later windows do not copy task 2 again
    later = policy.decide(snapshot(12.5, RUNNING, [15, 30, 20, 12.5, 100, 30],
                                   node_speed=[1, 0.5, 1]))
    assert later.speculate_task.tolist() == []


def test_avoids_a_slow_node_even_when_its_slot_frees_first():
    # task 4 on node 0 now runs at 0.2 progress after 5 s (ETD 25 s) and task 3 on node 1
    # at 0.5 after 10 s (ETD 20 s): the copy model takes them as the nodes' reference run
    # times, so slot 3 on node 1 beats slot 1 on node 0 although it frees later
    running = RUNNING[:2] + [(4, 4, R, 0, 5.0, 0.2)]
    policy = WindowPolicy(slots="cluster")
    policy.decide(snapshot(10.0, running, FREE_AT))
    out = policy.decide(snapshot(11.0, running, [15, 11, 20, 11.0, 100, 30]))
    assert out.prefer_node.tolist() == [1]


def test_uses_node_speeds_where_the_job_has_seen_nothing():
    # no attempt has reached min_progress (0.2): the mean completed run time (11 s) over
    # the node's relative speed is the reference; node 0 at speed 0.25 needs 44 s
    running = [(2, 2, R, 2, 0.0, 0.1), (3, 3, R, 1, 0.0, 0.15), (4, 4, R, 0, 5.0, 0.15)]
    policy = WindowPolicy(slots="cluster")
    policy.decide(snapshot(10.0, running, FREE_AT, node_speed=[0.25, 1, 1]))
    out = policy.decide(snapshot(11.0, running, [15, 11, 20, 11.0, 100, 30],
                                 node_speed=[0.25, 1, 1]))
    assert out.prefer_node.tolist() == [1]
    policy = WindowPolicy(slots="cluster")
    policy.decide(snapshot(10.0, running, FREE_AT, node_speed=[1, 0.25, 1]))
    out = policy.decide(snapshot(11.0, running, [15, 11, 20, 11.0, 100, 30],
                                 node_speed=[1, 0.25, 1]))
    assert out.prefer_node.tolist() == [0]


def test_own_slots_the_copy_takes_the_container_of_the_jobs_next_finishing_task():
    # task 5 on node 0 is about to end (ECT 11): its container is the job's slot in the
    # window; the copy of straggler task 2 is launched on node 0 once task 5 has finished
    running = RUNNING[:2] + [(5, 5, R, 0, 0.0, 10 / 11)]
    policy = WindowPolicy()
    first = policy.decide(snapshot(10.0, running, [15, 15, 20, 30, 100, 30]))
    assert len(first.speculate_task) == 0 and first.reserve_slots == 1
    still = policy.decide(snapshot(10.5, running, [15, 15, 20, 30, 100, 30]))
    assert len(still.speculate_task) == 0
    done = policy.decide(snapshot(11.0, RUNNING[:2], [15, 11, 20, 30, 100, 30]))
    assert done.speculate_task.tolist() == [2] and done.prefer_node.tolist() == [0]
    assert done.reserve_slots == 0


def test_own_slots_never_put_the_copy_on_the_stragglers_node():
    # the only container freeing in the window is on node 2, the straggler's own node
    running = RUNNING[:2] + [(5, 5, R, 2, 0.0, 10 / 11)]
    out = WindowPolicy().decide(snapshot(10.0, running, [15, 15, 20, 30, 100, 30]))
    assert out.reserve_slots == 0 and len(out.speculate_task) == 0


def test_idle_slots_are_used_at_once():
    # slot 1 (node 0) is idle: an AM knows one slot is free, not where (slots="own": the
    # copy goes where the scheduler puts it); the simulator's whole-cluster view
    # (slots="cluster") places it on node 0
    snap = snapshot(10.0, RUNNING, [15, 10, 20, 30, 100, 30])
    out = WindowPolicy().decide(snap)
    assert out.speculate_task.tolist() == [2] and out.prefer_node.tolist() == [-1]
    out = WindowPolicy(slots="cluster").decide(snap)
    assert out.speculate_task.tolist() == [2] and out.prefer_node.tolist() == [0]


def test_an_ams_window_reads_the_free_slot_count_not_the_simulators_slot_view():
    """slots="own" plans on what a live AM has: the count of free slots and its own
    containers, so the simulator and YARN give it the same input."""
    snap = snapshot(10.0, RUNNING, [15, 10, 20, 30, 100, 30])
    snap.cluster.free_slots = 0  # the slot view still shows slot 1 idle
    assert len(WindowPolicy().decide(snap).speculate_task) == 0
    blind = snapshot(10.0, RUNNING, [15, 10, 20, 30, 100, 30])
    blind.cluster.slot_node, blind.cluster.slot_free_at = np.empty(0, int), np.empty(0)
    out = WindowPolicy().decide(blind)  # a live AM's facts: one free slot, somewhere
    assert out.speculate_task.tolist() == [2] and out.prefer_node.tolist() == [-1]


def test_no_copy_when_no_slot_saves_energy():
    # only slot 5 (node 2) frees in the window and copies there would run 11 / 0.1 = 110 s
    policy = WindowPolicy(slots="cluster")
    out = policy.decide(snapshot(10.0, RUNNING, [15, 30, 20, 30, 100, 11],
                                 node_speed=[1, 1, 0.1]))
    assert out.reserve_slots == 0 and len(out.speculate_task) == 0


def test_nothing_before_a_task_completed():
    out = WindowPolicy().decide(snapshot(10.0, RUNNING, FREE_AT, completed=()))
    assert len(out.speculate_task) == 0 and out.reserve_slots == 0
    # and the job sleeps until one of its tasks completes
    assert out.next_scan_in == np.inf and out.wake_on_completion


def test_with_nothing_reserved_the_next_scan_is_the_next_window():
    # completed 10 and 12 s: w = 0.2 x 10 = 2 s; no slot frees within it
    out = WindowPolicy().decide(snapshot(10.0, RUNNING, [15, 30, 20, 30, 100, 30]))
    assert len(out.speculate_task) == 0 and out.reserve_slots == 0
    # and completions do not wake it: the node history reads the completed attempts
    assert out.next_scan_in == pytest.approx(2.0) and not out.wake_on_completion
    # with a reservation pending the job is scanned at the default period
    held = WindowPolicy(slots="cluster").decide(
        snapshot(10.0, RUNNING, FREE_AT, node_speed=[1, 0.5, 1]))
    assert held.reserve_slots == 1 and held.next_scan_in is None


def test_copy_risk_is_mean_over_mean_of_non_straggling_completions():
    # completed 10, 12, 40: mean 62/3; non-straggling (<= 1.2 x mean = 24.8): 10, 12
    snap = snapshot(10.0, RUNNING, FREE_AT, completed=(10.0, 12.0, 40.0))
    assert WindowPolicy()._copy_risk(snap, MAP) == pytest.approx((62 / 3) / 11)
    assert WindowPolicy()._copy_risk(snapshot(10.0, RUNNING, FREE_AT, completed=()),
                                     MAP) == 1.0


def test_copy_risk_can_rule_out_a_copy():
    # slot 1 (node 0) frees at 11; the straggler ends at 100 (89 s left). Node 0's
    # reference (task 4) takes 10 s: Δt = 100 - 11 - 10 > 10, the copy saves energy. With
    # completions 10, 12, 100, 100 a fresh attempt is expected to take 55.5 / 11 = 5.05 x
    # longer (50.5 s): Δt = 38.5 s < t_C, so it no longer saves energy
    snap = snapshot(10.0, RUNNING, [15, 11, 20, 30, 100, 30], node_speed=[1, 1, 1],
                    completed=(10.0, 12.0, 100.0, 100.0))
    assert WindowPolicy(slots="cluster").decide(snap).reserve_slots == 0
    assert WindowPolicy(slots="cluster", risk_adjust=False).decide(snap).reserve_slots == 1


def test_node_history_keeps_each_nodes_latest_non_straggling_completion():
    # node 0: task 0 took 8 s (ended 13), task 1 took 9 s (ended 20, the latest: kept);
    # node 1: task 2 took 30 s (> 1.2 x the typical 10 s: a straggler, not kept);
    # the reduce (task 3) took 4 s on node 0, which holds its input
    finished = FinishedAttempts(task=np.array([1, 0, 2, 3]), attempt=np.array([1, 0, 2, 3]),
                                node=np.array([0, 0, 1, 0]),
                                start=np.array([11.0, 5.0, 0.0, 0.0]),
                                end=np.array([20.0, 13.0, 30.0, 4.0]),
                                input_bytes=np.array([1.0, 2.0, 3.0, 4.0]))
    job = JobFacts(job_id="j", start=0.0, n_maps=3, n_reduces=1, finished=finished,
                   input_nodes=np.array([[0], [1], [1], [0]]))
    h = NodeHistory.of(job, typical=np.array([10.0, 5.0]), factor=1.2, n_nodes=3)
    assert (h.runtime[MAP, 0], h.input_bytes[MAP, 0], h.local[MAP, 0]) == (9.0, 1.0, False)
    assert np.isnan(h.runtime[MAP, 1:]).all()
    assert (h.runtime[REDUCE, 0], h.local[REDUCE, 0]) == (4.0, True)
    # two ending at once on one node: the higher task index is the latest written
    finished.end[1] = 20.0
    assert NodeHistory.of(job, np.array([10.0, 5.0]), 1.2, 3).runtime[MAP, 0] == 9.0


def test_the_slot_reference_task_is_the_completed_attempt_not_when_a_scan_saw_it():
    # task 4 ran on node 0 from 5 to 12.5 (7.5 s); the scan is at 13 and node 0 runs
    # nothing of the job, so its reference is that attempt's true run time
    snap = snapshot(13.0, RUNNING[:2], [13, 30, 20, 30, 100, 30])
    snap.job.finished = FinishedAttempts(task=np.array([4]), attempt=np.array([4]),
                                         node=np.array([0]),
                                         start=np.array([5.0]), end=np.array([12.5]),
                                         input_bytes=np.array([1e8]))
    typical = np.array([11.0, 11.0])
    a = snap.attempts
    history = NodeHistory.of(snap.job, typical, 1.2, 3)
    runtime, _, _ = WindowPolicy()._node_reference(
        snap, MAP, np.zeros(len(a), bool), estimate_ect("rate", a, snap.now), typical,
        np.zeros(len(a), bool), history)
    assert runtime[0] == pytest.approx(7.5)


def test_hete_aware_waits_until_all_normal_tasks_are_launched():
    waiting = RUNNING + [(5, 5, W, -1, np.nan, 0.0)]
    freed = [15, 11, 20, 11.5, 100, 30]
    policy = HeteAwarePolicy(slots="cluster")
    out = policy.decide(snapshot(11.0, waiting, freed))
    assert out.reserve_slots == 0 and len(out.speculate_task) == 0
    policy = HeteAwarePolicy(slots="cluster")
    out = policy.decide(snapshot(11.0, RUNNING, [15, 11, 20, 11.5, 100, 30], n_maps=5))
    assert out.speculate_task.tolist() == [2] and out.prefer_node.tolist() == [0]


def test_copy_locality_lists_the_slots_on_each_inputs_nodes():
    snap = snapshot(10.0, RUNNING, FREE_AT, input_nodes=[[0, 1]] * 3 + [[2, -1]] * 3)
    ptr, slots = WindowPolicy._copy_locality(snap, np.array([0, 2]), SLOT_NODE)
    # attempt row 0 is task 2 (input on nodes 0, 1), row 2 is task 4 (node 2)
    assert ptr.tolist() == [0, 4, 6]
    assert sorted(slots[:4].tolist()) == [0, 1, 2, 3] and sorted(slots[4:].tolist()) == [4, 5]


@pytest.mark.parametrize("window", [0.0, 1.0, 1.5, -0.2])
def test_window_fraction_outside_0_1_is_rejected(window):
    # every value a user gives reaches the policy through create (hedge.policy.ranges)
    with pytest.raises(HedgeError, match=r"window = .*\(0, 1\)"):
        create("window", window=window)


def test_window_at_or_above_the_mean_task_duration_is_rejected():
    policy = WindowPolicy(window_seconds=11.0)
    with pytest.raises(HedgeError, match=r"window_seconds = 11.*mean task duration \(11 s\)"):
        policy.decide(snapshot(10.0, RUNNING, FREE_AT))
    WindowPolicy(window_seconds=10.9).decide(snapshot(10.0, RUNNING, FREE_AT))


def test_bad_slot_mode_detector_and_estimator_rejected():
    with pytest.raises(HedgeError, match="slots = 'all'.*'own' or 'cluster'"):
        WindowPolicy(slots="all")
    with pytest.raises(HedgeError, match="detector = 'psychic'.*rate"):
        WindowPolicy(detector="psychic")
    with pytest.raises(HedgeError, match="estimator = 'oracle'.*fresh"):
        WindowPolicy(estimator="oracle")


def test_bad_bandwidth_and_power_constants_are_rejected():
    with pytest.raises(HedgeError, match="bandwidth.*> 0"):
        WindowPolicy(bandwidth=0)
    with pytest.raises(HedgeError, match="'static' = -5.*>= 0"):
        WindowPolicy(power={"static": -5})
    with pytest.raises(HedgeError, match="power model"):
        WindowPolicy(power={"watts": 5})


def test_tail_stragglers_are_flagged_against_completed_run_times():
    # only two slow tasks are left (ETD 91 s and 67 s); the completed ones took 10-12 s
    tail = [(2, 2, R, 2, 0.0, 0.11), (3, 3, R, 1, 0.0, 0.15)]
    flags = WindowPolicy(detector_params={"factor": 1.2})._flag(snapshot(10.0, tail, FREE_AT, n_maps=4))
    assert flags.tolist() == [True, True]
    # while normal tasks still wait, the mean is over the running ones (79 s): 91 s is
    # not 1.2 x 79, so nothing is flagged (the first completions are the fast ones)
    waiting = tail + [(5, 5, W, -1, np.nan, 0.0)]
    flags = WindowPolicy(detector_params={"factor": 1.2})._flag(snapshot(10.0, waiting, FREE_AT, n_maps=6))
    assert flags.tolist() == [False, False, False]


def test_default_detector_is_rate_with_factor_1_75_and_params_override_it():
    assert WindowPolicy().detector == "rate"
    assert WindowPolicy().detector_params == {"factor": 1.75}
    assert WindowPolicy(detector_params={"factor": 1.2}).detector_params == {"factor": 1.2}
    assert WindowPolicy(detector="score").detector_params == {}


def test_tail_recopy_gives_a_late_copy_one_more_copy():
    # t=10: task 2's first copy goes to the idle slot (attempt 6, on node 0)
    policies = [WindowPolicy(), WindowPolicy(tail_recopy=False), HeteAwarePolicy()]
    for policy in policies:
        first = policy.decide(snapshot(10.0, RUNNING, [15, 10, 20, 30, 100, 30]))
        assert first.speculate_task.tolist() == [2]
    # t=20: the original (ETD 133 s) and the copy (ETD 210 s) both run late; no task
    # waits (the tail); slot 3 is idle (a node the scheduler picks: the typical 11 s)
    late = [(2, 2, R, 2, 0.0, 0.15), (2, 6, R, 0, 10.0, 0.05), (3, 3, R, 1, 0.0, 0.5),
            (4, 4, R, 0, 5.0, 0.5)]
    snap = snapshot(20.0, late, [30, 30, 30, 20, 100, 30], copies={6})
    out = [p.decide(snap) for p in policies]
    assert out[0].speculate_task.tolist() == [2] and out[0].prefer_node.tolist() == [-1]
    # the first copy (ETD 210 s) ends after the original (133 s): it is killed
    assert out[0].kill_attempt.tolist() == [6]
    assert len(out[1].speculate_task) == 0 and len(out[2].speculate_task) == 0
    assert len(out[1].kill_attempt) == 0 and len(out[2].kill_attempt) == 0
    # never a third copy
    third = policies[0].decide(snapshot(30.0, late[:2] + [(2, 7, R, 1, 20.0, 0.01)],
                                        [40, 40, 40, 40, 100, 30], copies={6, 7}))
    assert len(third.speculate_task) == 0


def test_no_recopy_while_the_copy_has_not_reported_progress():
    policy = WindowPolicy()
    policy.decide(snapshot(10.0, RUNNING, [15, 10, 20, 30, 100, 30]))
    fresh = [(2, 2, R, 2, 0.0, 0.15), (2, 6, R, 0, 10.0, 0.0), (3, 3, R, 1, 0.0, 0.5),
             (4, 4, R, 0, 5.0, 0.5)]
    out = policy.decide(snapshot(20.0, fresh, [30, 30, 30, 20, 100, 30], copies={6}))
    assert len(out.speculate_task) == 0


def test_copies_beyond_hadoops_cap_are_not_counted_as_made():
    # ten copies already wait (Hadoop's cap for a job of up to 1,000 tasks): the reserved
    # copy of task 2 is not launched at t=11, and task 2 stays open for a later window
    capped = RUNNING + [(t, 100 + t, W, -1, np.nan, 0.0) for t in range(10, 20)]
    copies = set(range(110, 120))
    policy = WindowPolicy(slots="cluster")
    policy.decide(snapshot(10.0, capped, FREE_AT, node_speed=[1, 0.5, 1], n_maps=20,
                           copies=copies))
    freed = list(FREE_AT)
    freed[1] = 11.0
    held = policy.decide(snapshot(11.0, capped, freed, node_speed=[1, 0.5, 1], n_maps=20,
                                  copies=copies))
    assert held.speculate_task.tolist() == []
    # the waiting copies have started elsewhere and ended: room again, task 2 is copied
    later = policy.decide(snapshot(12.5, RUNNING, [15, 12.5, 20, 30, 100, 30],
                                   node_speed=[1, 0.5, 1], n_maps=20))
    assert later.speculate_task.tolist() == [2]


def _flag_reference(policy, snap):
    """_flag as it was written before the shortcut: detect() for the rate rule, then the
    wave's tail rule on a separately computed ETD."""
    from hedge.detect import detect
    from hedge.detect.detectors import candidate_mask, known_mask

    flagged = detect(policy.detector, snap, **policy.detector_params)
    factor = float(policy.detector_params.get("factor", 1.2))
    a = snap.attempts
    known, cand = known_mask(snap), candidate_mask(snap)
    etd = estimate_ect("rate", a, snap.now) - a.start
    waiting = (a.state == W) & ~a.speculative
    for ttype in (MAP, REDUCE):
        of_type = a.task_type == ttype
        if (waiting & of_type).any() or (of_type & (a.state == AttemptState.SUCCEEDED)).any():
            continue
        values = np.concatenate([etd[known & of_type], snap.job.completed_runtimes(ttype)])
        values = values[np.isfinite(values)]
        if len(values):
            flagged |= cand & of_type & (etd >= factor * values.mean())
    return flagged


@pytest.mark.parametrize("params", [None, {}, {"factor": 1.2}, {"factor": 3}])
def test_flag_equals_detect_then_the_tail_rule_on_random_snapshots(params):
    rng = np.random.default_rng(7)
    policy = WindowPolicy(detector_params=params)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        state = rng.choice([R, R, R, W], n)
        rows = [(i, i, s, int(rng.integers(0, 3)), float(rng.uniform(0, 20)),
                 float(rng.choice([0.0, rng.uniform(0, 1), 1.0]))) for i, s in enumerate(state)]
        snap = snapshot(30.0, rows, FREE_AT, completed=rng.uniform(5, 40, 3))
        want = _flag_reference(policy, snap)
        ect = estimate_ect("rate", snap.attempts, snap.now)
        assert np.array_equal(policy._flag(snap), want)
        assert np.array_equal(policy._flag(snap, ect), want)


def test_flag_with_bad_rate_params_still_raises():
    policy = WindowPolicy(detector_params={"factor": 1.5, "gap": 0.1})
    with pytest.raises(HedgeError, match="bad parameters"):
        policy._flag(snapshot(10.0, RUNNING, FREE_AT))


def test_first_equal_slots_keeps_the_first_m_of_each_node_and_start_in_order():
    from hedge.policy.window import _first_equal_slots

    node = np.array([3, 1, 3, 3, 1, 2, 3])
    start = np.array([5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 6.0])
    assert _first_equal_slots(node, start, 1).tolist() == [1, 1, 0, 0, 0, 1, 1]
    assert _first_equal_slots(node, start, 2).tolist() == [1, 1, 1, 0, 1, 1, 1]
    assert _first_equal_slots(node, start, 7).all()


@pytest.mark.parametrize("kind", [WindowPolicy, HeteAwarePolicy])
def test_plans_are_the_same_without_the_equal_slots_left_out(monkeypatch, kind):
    """Random snapshots with many idle slots per node: the plan with every predicted slot
    in the problem (the helper disabled) books the same tasks on the same slots."""
    import hedge.policy.window as window

    rng = np.random.default_rng(11)
    full = lambda node, start, m: np.ones(len(node), dtype=bool)  # noqa: E731
    booked = 0
    for _ in range(150):
        n = int(rng.integers(2, 10))
        rows = [(i, i, R, int(rng.integers(0, 3)), float(rng.uniform(0, 8)),
                 float(rng.uniform(0.02, 0.9))) for i in range(n)]
        free_at = rng.choice([5.0, 10.0, 10.5, 40.0], 6)
        snap = snapshot(10.0, rows, free_at, node_speed=rng.uniform(0.5, 1.5, 3),
                        completed=rng.uniform(3, 12, 3), n_maps=n)
        typical = np.array([snap.job.completed_map_runtimes.mean()] * 2)
        for slots in ("own", "cluster"):
            pruned = kind(slots=slots)._plan(snap, 2.0, typical)
            with monkeypatch.context() as m:
                m.setattr(window, "_first_equal_slots", full)
                want = kind(slots=slots)._plan(snap, 2.0, typical)
            assert np.array_equal(pruned, want)
            booked += len(want)
    assert booked > 50  # plans that booked slots were compared
