"""Detector policies run by name through the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import simulate
from hedge.traces.workload import Workload

# the first simulation in a process pays the simulator's warm-up (several seconds)
pytestmark = pytest.mark.slow


def workload(n_jobs: int = 3, tasks: int = 30) -> Workload:
    """Jobs of equal 40 s maps; every tenth task is slowed 4x (the true stragglers)."""
    total = n_jobs * tasks
    slow = np.ones(total)
    slow[::10] = 4.0
    return Workload(
        job_ids=[f"job_{i}" for i in range(n_jobs)], arrival=np.arange(n_jobs) * 5.0,
        job_offsets=np.arange(n_jobs + 1) * tasks, task_type=np.zeros(total),
        duration=np.full(total, 40.0), input_bytes=np.full(total, np.nan),
        machine=np.full(total, -1), straggler_factor=slow,
    )


# Without copies every job waits for its 4 x 40 s straggler.
NO_COPY_TIME = 160.0


@pytest.mark.parametrize("policy", ["static", "adaptive", "fresh-rate"])
def test_detector_policy_copies_the_stragglers_and_shortens_jobs(policy) -> None:
    result = simulate(workload(), policy, ClusterConfig(nodes=30, slots=4), seed=1)
    assert (result.detected & result.straggler).sum() == result.straggler.sum()
    assert (result.detected & ~result.straggler).sum() <= result.straggler.sum()
    assert result.job_time.mean() < 0.7 * NO_COPY_TIME
