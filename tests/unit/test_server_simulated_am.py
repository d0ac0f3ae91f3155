"""The simulator as a client of the control plane (hedge.server.simulated_am): decisions
made by a session from the frames the shim would send equal the policy's own in the
simulator, where the policy reads nothing the server lacks."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.server.simulated_am import simulate_through_sessions
from hedge.sim.engine import simulate
from hedge.sim.sweep import WorkloadSource, workload_for

WORKLOAD = WorkloadSource(synthetic="jobs=4,tasks=16,reduces=4,straggler_ratio=0.25")


@pytest.mark.parametrize("policy", ["hadoop", "hedge-auto", "mantri", "spark", "static"])
def test_a_session_decides_as_the_policy_does_in_the_simulator(policy: str) -> None:
    workload = workload_for(WORKLOAD, 0)
    direct = simulate(workload, policy)
    served = simulate_through_sessions(workload, policy)
    assert direct.attempts.copy.sum() > 0
    for column in ("task", "node", "start", "end", "copy"):
        np.testing.assert_array_equal(getattr(served.attempts, column),
                                      getattr(direct.attempts, column), err_msg=column)
