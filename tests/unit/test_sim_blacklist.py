"""Blacklisted nodes get no container (originals, copies, relaunches); fixed deadlines."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import Actions, Snapshot
from hedge.policy import base
from hedge.policy.base import Policy
from hedge.sim.cluster import Blacklist, ClusterConfig, parse_blacklist
from hedge.sim.engine import Simulator, simulate
from hedge.traces.workload import Workload

from .test_sim_invariants import CLUSTER, random_workload


class _CloneAndSpy(Policy):
    """Test policy: two copies of every task at its first scan; records the blacklists."""

    name = "_test-clone-spy"
    seen: list[np.ndarray] = []

    def __init__(self) -> None:
        self._done = False

    def decide(self, snapshot: Snapshot) -> Actions:
        type(self).seen.append(snapshot.cluster.blacklist.copy())
        if self._done:
            return Actions.nothing()
        self._done = True
        tasks = np.unique(snapshot.attempts.task)
        return Actions(speculate_task=tasks, speculate_copies=np.full(len(tasks), 2))


@pytest.fixture(autouse=True)
def _spy_registered():
    """Register the test policy for this module only (``--policy all`` must not see it)."""
    base._REGISTRY[_CloneAndSpy.name] = _CloneAndSpy
    yield
    base._REGISTRY.pop(_CloneAndSpy.name, None)


@pytest.mark.parametrize("policy", ["none", "hadoop", "mantri", "_test-clone-spy"])
def test_no_attempt_starts_on_a_blacklisted_node(policy):
    wl = random_workload(5)
    banned = [0, 3, 4, 17, 29]
    r = simulate(wl, policy, CLUSTER, seed=1, blacklist=banned)
    assert not np.isin(r.attempts.node, banned).any()
    assert np.isfinite(r.finish).all()
    won = r.attempts.outcome != 2
    assert np.array_equal(np.sort(r.attempts.task[won]), np.arange(wl.n_tasks))


def test_clusterfacts_reports_the_blacklist_and_copies_avoid_it():
    _CloneAndSpy.seen = []
    wl = random_workload(6)
    r = simulate(wl, "_test-clone-spy", CLUSTER, seed=0, blacklist=[2, 5])
    assert r.attempts.copy.any()
    assert not np.isin(r.attempts.node, [2, 5]).any()
    assert _CloneAndSpy.seen and all(b.tolist() == [2, 5] for b in _CloneAndSpy.seen)


def test_a_timed_blacklist_applies_only_in_its_period():
    # one job of 40 x 10 s tasks on 4 nodes x 1 slot; node 0 banned during [0, 25)
    wl = Workload.from_jobs(["j"], [0.0], [np.full(40, 10.0)])
    cfg = ClusterConfig(nodes=4, slots=1)
    bl = Blacklist(np.array([0]), np.array([0.0]), np.array([25.0]))
    r = simulate(wl, "none", cfg, blacklist=bl)
    assert r.blacklist is bl
    on0 = r.attempts.node == 0
    # nodes 1-3 start 3 tasks at t = 0, 10, 20, ...; node 0 at t = 25, 35, ...: 4 tasks
    # per 10 s from t = 25 on: 9 started by t = 20, 37 by t = 90, 38 at t = 95, the last
    # two at t = 100 (ending at 110; 100 without the blacklist)
    assert r.attempts.start[on0].min() == 25.0
    assert r.attempts.start[~on0].min() == 0.0
    assert r.finish.tolist() == [110.0]


def test_blacklisting_every_node_forever_is_reported_as_a_stall():
    wl = Workload.from_jobs(["j"], [0.0], [np.full(3, 1.0)])
    with pytest.raises(HedgeError, match="stalled"):
        simulate(wl, "none", ClusterConfig(nodes=2, slots=1), blacklist=[0, 1])


def test_blacklist_input_is_checked():
    with pytest.raises(HedgeError, match="node 7 does not exist"):
        Simulator(random_workload(1), ClusterConfig(nodes=4), blacklist=[7])
    with pytest.raises(HedgeError, match="NODE@START-END"):
        parse_blacklist("3@x-y")
    bl = parse_blacklist("3@100-500,7")
    assert bl.node.tolist() == [3, 7]
    assert bl.mask_at(50.0, 8).tolist() == [False] * 7 + [True]
    assert bl.mask_at(100.0, 8)[3] and not bl.mask_at(500.0, 8)[3]


def test_fixed_deadline_is_arrival_plus_d():
    wl = random_workload(2)
    r = simulate(wl, "none", CLUSTER, seed=0, deadline=120.0)
    assert np.array_equal(r.deadline, r.arrival + 120.0)
    with pytest.raises(HedgeError, match="not both"):
        simulate(wl, "none", CLUSTER, deadline=10.0, deadline_factor=2.0)
    with pytest.raises(HedgeError, match="--deadline=-1"):
        simulate(wl, "none", CLUSTER, deadline=-1.0)


def test_fixed_deadline_pocd_matches_chronos_closed_form_for_none():
    from hedge.analysis import chronos

    # iid Pareto(10, 1.5) tasks, 10 per job, a slot each, D = 60 s: PoCD = (1 - (1/6)^1.5)^10
    jobs, n, t_min, beta, d = 1000, 10, 10.0, 1.5, 60.0
    rng = np.random.default_rng(0)
    wl = Workload.from_jobs([f"j{i}" for i in range(jobs)], np.zeros(jobs),
                            [np.full(n, t_min)] * jobs)
    wl.straggler_factor[:] = rng.uniform(size=jobs * n) ** (-1 / beta)
    r = simulate(wl, "none", ClusterConfig(nodes=jobs * n, slots=1), deadline=d)
    model = chronos.pocd("none", n, d, t_min, beta, 0)
    assert abs(np.mean(r.finish <= r.deadline) - model) <= 3 * np.sqrt(model * (1 - model) / jobs)


def test_data_local_placement_skips_blacklisted_input_nodes():
    # every task's input lives on a blacklisted node: none may run there, all complete
    wl = random_workload(8)
    wl.input_bytes[:] = 1e8
    wl.machine[:] = np.arange(wl.n_tasks) % 4  # nodes 0-3 hold the inputs
    r = simulate(wl, "hadoop", CLUSTER, seed=2, blacklist=[0, 1, 2])
    assert not np.isin(r.attempts.node, [0, 1, 2]).any()
    assert np.isfinite(r.finish).all()
    assert (r.attempts.node == 3).any()  # node 3's inputs are still placed locally
