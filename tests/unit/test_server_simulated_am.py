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


@pytest.mark.parametrize("policy", ["hadoop", "hedge-auto", "mantri", "spark", "static",
                                    "window", "hete-aware"])
def test_a_session_decides_as_the_policy_does_in_the_simulator(policy: str) -> None:
    workload = workload_for(WORKLOAD, 0)
    direct = simulate(workload, policy)
    served = simulate_through_sessions(workload, policy)
    assert direct.attempts.copy.sum() > 0
    for column in ("task", "node", "start", "end", "copy"):
        np.testing.assert_array_equal(getattr(served.attempts, column),
                                      getattr(direct.attempts, column), err_msg=column)


@pytest.mark.parametrize("policy", ["window", "hete-aware"])
def test_a_session_knows_the_jobs_finished_tasks_as_the_simulator_does(
        policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """At every scan, the finished tasks a session holds (``JobFacts.finished``, the window
    policies' node history) are the simulator's: each winner's task, attempt, node, start,
    end (whole ms on the wire) and input bytes, also of the attempts that started and ended
    between two scans (wire version 3 carries their task and node)."""
    from hedge.server.simulated_am import SessionPolicy

    decide, checked = SessionPolicy.decide, []

    def compare(self: SessionPolicy, snapshot):  # noqa: ANN001, ANN202
        actions = decide(self, snapshot)
        mine, sim = self.session.ended.facts(), snapshot.job.finished
        here, there = np.argsort(mine.task), np.argsort(sim.task)
        for column in ("task", "attempt", "node", "input_bytes"):
            np.testing.assert_array_equal(getattr(mine, column)[here],
                                          getattr(sim, column)[there], err_msg=column)
        for column in ("start", "end"):
            np.testing.assert_allclose(getattr(mine, column)[here],
                                       getattr(sim, column)[there], atol=5e-4, rtol=0)
        checked.append(len(sim))
        return actions

    monkeypatch.setattr(SessionPolicy, "decide", compare)
    simulate_through_sessions(workload_for(WORKLOAD, 0), policy)
    assert max(checked) >= 16 and len(checked) > 20
