"""hedge-auto's small jobs lean on the cluster: pooled residuals and race evidence
(hedge.policy.cluster_memory), shared through Policy.join."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np

from hedge.model import MAP, Snapshot
from hedge.policy import create
from hedge.policy.auto import LAMBDAS
from hedge.policy.cluster_memory import MIN_POOLED, ClusterMemory
from tests.unit.test_policy_auto import snapshot


def small_job(now: float, progress: float, maps: int = 2,
              done: tuple[float, ...] = ()) -> Snapshot:
    """A job of ``maps`` maps (too few ever to judge itself) whose task 0 started at 0,
    reported 0.01 at 1 s and ``progress`` now, its others completed in ``done`` seconds or
    not yet started; 10 of 100 slots busy."""
    s = snapshot(now, [(0, progress, 3)], done=list(done))
    return replace(s, job=replace(s.job, n_maps=maps))


def taught_memory(spread: float = 1.0, races: int = 2) -> ClusterMemory:
    """A cluster memory holding 100 residuals evenly over [-spread, spread] for maps and
    ``races`` races that taught nothing (a flat likelihood)."""
    memory = ClusterMemory(len(LAMBDAS))
    memory.replace(MAP, None, ClusterMemory.histogram(np.linspace(-spread, spread, 100)))
    for _ in range(races):
        memory.learn(np.zeros(len(LAMBDAS)))
    return memory


def joined(memory: ClusterMemory):
    policy = create("hedge-auto", pool_small=True)
    policy.join({"hedge-auto": memory})
    return policy


def test_a_small_job_is_judged_on_the_clusters_residuals() -> None:
    # ~990 s left at 3 s: a copy drawn from a wide pool beats it about half the time
    s = small_job(3.0, 0.012)
    assert joined(taught_memory()).decide(s).speculate_task.tolist() == [0]
    alone = create("hedge-auto", pool_small=True).decide(s)  # no cluster: it cannot judge
    assert len(alone.speculate_task) == 0 and alone.next_scan_in == math.inf
    off = create("hedge-auto", pool_small=False)  # small jobs not pooled
    off.join({"hedge-auto": taught_memory()})
    assert len(off.decide(s).speculate_task) == 0


def test_a_small_jobs_slow_task_is_judged_against_its_siblings() -> None:
    # its other task completed in 10 s, task 0 has ~990 s left at 3 s: even a narrow pool
    # (copies take their job's median) says a copy at the job's median pays
    narrow = taught_memory(spread=0.01)
    assert joined(narrow).decide(small_job(3.0, 0.012, done=(10.0,))).speculate_task.tolist() == [0]
    assert len(joined(narrow).decide(small_job(3.0, 0.012)).speculate_task) == 0  # alone


def test_a_one_task_job_is_not_copied() -> None:
    # no sibling can show its task slow: a copy would win only by its draw
    a = joined(taught_memory()).decide(small_job(3.0, 0.012, maps=1))
    assert len(a.speculate_task) == 0


def test_a_narrow_pool_says_a_copy_would_not_pay() -> None:
    # the cluster's tasks all take their job's median: a copy would take as long
    s = small_job(3.0, 0.012)
    assert len(joined(taught_memory(spread=0.01)).decide(s).speculate_task) == 0


def test_a_small_job_waits_for_the_cluster_to_have_probed_the_model() -> None:
    s = small_job(3.0, 0.012)
    early = joined(taught_memory(races=1)).decide(s)  # one race taught: not yet
    assert len(early.speculate_task) == 0
    # but it keeps scanning: no completion of its own will come to wake it
    assert early.next_scan_in is None and not early.wake_on_completion


def test_a_large_job_does_not_lean_on_the_cluster() -> None:
    # 20 maps, none completed, one running: it waits for its own peers as before
    s = snapshot(3.0, [(0, 0.012, 3)], done=[])
    a = joined(taught_memory()).decide(s)
    assert len(a.speculate_task) == 0 and a.next_scan_in == math.inf


def test_a_job_pools_its_residuals_once_and_replaces_them_as_it_learns() -> None:
    memory = ClusterMemory(len(LAMBDAS))
    policy = joined(memory)
    policy.decide(snapshot(20.0, [(7, 0.5, 3)], done=[10.0, 11.0, 9.0, 10.5]))
    assert memory.residuals(MAP, 4) is None  # four completed: too few to pool
    done = [10.0, 11.0, 9.0, 10.5, 9.5]
    policy.decide(snapshot(20.0, [(7, 0.5, 3)], done=done))  # 5 completed + 1 estimate
    policy.decide(snapshot(21.0, [(7, 0.55, 3)], done=done))  # nothing new completed
    assert memory._counts[MAP].sum() == 6
    policy.decide(snapshot(22.0, [(7, 0.6, 3)], done=done + [10.2]))
    assert memory._counts[MAP].sum() == 7  # replaced, not added


def test_pooled_quantiles_follow_the_counts() -> None:
    memory = ClusterMemory(len(LAMBDAS))
    values = np.r_[np.zeros(MIN_POOLED - 1)]
    memory.replace(MAP, None, ClusterMemory.histogram(values))
    assert memory.residuals(MAP, 8) is None
    old = ClusterMemory.histogram(values)
    new = ClusterMemory.histogram(np.r_[np.full(MIN_POOLED, -1.0), np.full(MIN_POOLED, 1.0)])
    memory.replace(MAP, old, new)
    q = memory.residuals(MAP, 4)
    assert q is not None and np.allclose(q, [-1.0, -1.0, 1.0, 1.0], atol=0.03)


def test_a_small_jobs_task_is_weighed_once_then_the_job_sleeps() -> None:
    # a narrow pool: no copy at the first estimate; the estimate only ages from there (the
    # later a copy starts, the less it can save), so the job is not scanned again until a
    # completion
    policy = joined(taught_memory(spread=0.01))
    waiting = policy.decide(small_job(1.5, 0.01))  # no estimate yet: keep scanning
    assert waiting.next_scan_in is None
    first = policy.decide(small_job(3.0, 0.012))
    assert len(first.speculate_task) == 0
    later = policy.decide(small_job(4.0, 0.013))
    assert later.next_scan_in == math.inf and later.wake_on_completion


def test_every_job_of_a_simulation_shares_one_memory(monkeypatch) -> None:
    from hedge.policy.auto import HedgeAuto
    from hedge.sim.engine import simulate
    from hedge.traces.synthetic import default_workload

    from .test_sim_golden import RUNS

    seen: list[ClusterMemory | None] = []
    join = HedgeAuto.join

    def recording_join(self, shared):
        join(self, shared)
        seen.append(self._memory)

    monkeypatch.setattr(HedgeAuto, "join", recording_join)
    _, cluster, seed = RUNS[1]
    simulate(default_workload(1, n_jobs=8), "hedge-auto", cluster, seed=seed,
             policy_params={"pool_small": True})
    assert len(seen) >= 2 and seen[0] is not None and all(m is seen[0] for m in seen)
    # a new simulation starts with a memory of its own
    simulate(default_workload(1, n_jobs=2), "hedge-auto", cluster, seed=seed,
             policy_params={"pool_small": True})
    assert seen[-1] is not seen[0]


def test_every_session_of_a_server_shares_one_memory() -> None:
    from hedge.server.session import Limits, SessionRegistry

    registry = SessionRegistry(Limits(), lambda nodes, t, f, container: None)
    first = registry.open("job_1", "hedge-auto", {"pool_small": True}).policy
    second = registry.open("job_2", "hedge-auto", {"pool_small": True}).policy
    assert first._memory is not None and first._memory is second._memory


def test_a_new_job_believes_what_the_clusters_races_taught() -> None:
    """``pool_races`` (the default): a job's copies that lost teach every job of the
    cluster, so a job that has run no race of its own does not probe the model again;
    with ``pool_races=false`` it starts from the prior and copies."""
    shared: dict[str, object] = {}
    first = create("hedge-auto")
    first.join(shared)
    for task in range(6):  # races its copies lose, without a pace of their own
        now = 20.0 + 10 * task
        if not first.decide(snapshot(now, [(task, 0.1, 3)])).speculate_task.size:
            break
        first.decide(snapshot(now + 1, [(task, 0.5, 3), (task, 0.01, 4, True)]))
        first.decide(snapshot(now + 2, []))
    task = snapshot(20.0, [(99, 0.1, 3)])
    second = create("hedge-auto")
    second.join(shared)
    assert second.lam_estimate < 0.3 and not second.decide(task).speculate_task.size
    alone = create("hedge-auto", pool_races=False)
    alone.join(shared)
    assert alone.decide(task).speculate_task.tolist() == [99]


def test_a_small_jobs_task_with_more_input_is_expected_to_copy_slower() -> None:
    # 4 maps: task 0 slow, tasks 1 and 2 running at their pace, one completed in 10 s. With
    # 1.4x its siblings' input (under skew_ratio: not skew) task 0's copy is expected to take
    # 1.4x the job's median, as any task's: a smaller benefit and a longer slot than where
    # inputs are unknown or equal
    def benefit_and_cost(inputs: tuple[float, float, float]) -> tuple[float, float]:
        rows = [(task, progress, 3 + task, False, size)
                for task, progress, size in zip((0, 1, 2), (0.012, 0.5, 0.5), inputs,
                                                strict=True)]
        s = snapshot(3.0, rows, done=[10.0])
        a = joined(taught_memory(spread=0.01)).decide(replace(s, job=replace(s.job, n_maps=4)))
        assert a.speculate_task.tolist() == [0], a.why
        found = re.search(r"benefit=([\d.]+) cost=([\d.]+)", a.why)
        assert found, a.why
        return float(found[1]), float(found[2])

    unknown = benefit_and_cost((math.nan, math.nan, math.nan))
    assert benefit_and_cost((1e6, 1e6, 1e6)) == unknown
    more = benefit_and_cost((1.4e6, 1e6, 1e6))
    assert more[0] < unknown[0] - 5 and more[1] > unknown[1]
