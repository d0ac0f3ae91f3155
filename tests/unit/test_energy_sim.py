"""The simulator's energy hook (hedge.sim.energy) on the node power model."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.sim.cluster import ClusterConfig
from hedge.sim.energy import attempt_energy, energy_breakdown, power_model, total_energy
from hedge.sim.results import KILLED, NORMAL, WON, AttemptRecords


def records() -> AttemptRecords:
    # node 0 (2 cores): A [0,10] normal, B [5,15] straggler killed by its copy D, C [5,10]
    # a copy that lost; node 1: D [3,12] the copy that won
    return AttemptRecords(
        task=np.array([0, 1, 2, 1]), job=np.zeros(4, dtype=np.int64),
        node=np.array([0, 0, 0, 1]), start=np.array([0.0, 5, 5, 3]),
        end=np.array([10.0, 15, 10, 12]),
        outcome=np.array([NORMAL, KILLED, KILLED, WON]),
        copy=np.array([False, False, True, True]),
        straggler=np.array([False, True, True, True]),
    )


def test_hand_computed_energy_of_a_schedule():
    cfg = ClusterConfig(nodes=2, slots=2, power=15.0)
    mem = power_model(cfg).task_mem_power  # 0.1 W per running attempt
    # node 0 as in the model test (A 125, B 125, C 50 J of CPU), D alone on node 1
    expected = np.array([125, 125, 50, 15 * 9]) + mem * np.array([10, 10, 5, 9])
    np.testing.assert_allclose(attempt_energy(records(), cfg), expected)
    static = 2 * 100.0 * 15  # two nodes over the run's span [0, 15]
    assert total_energy(records(), cfg) == pytest.approx(static + expected.sum())
    out = energy_breakdown(records(), cfg)
    assert out["normal-success"] == pytest.approx(expected[0])
    assert out["straggler-killed"] == pytest.approx(expected[1])
    assert out["copy-killed"] == pytest.approx(expected[2])
    assert out["copy-success"] == pytest.approx(expected[3])
    assert out["straggler-success"] == 0
    assert out["static"] == pytest.approx(static)
    assert out["total"] == pytest.approx(total_energy(records(), cfg))


@pytest.mark.slow  # imports every policy module (scipy) and runs the simulator
def test_simulated_run_energy_adds_up():
    from hedge.sim.engine import simulate
    from hedge.traces.synthetic import generate

    cfg = ClusterConfig(nodes=4, slots=2, heterogeneity=2.0, straggler_ratio=0.2)
    r = simulate(generate("jobs=2,tasks=10,mean=5", seed=0), "window", cfg, seed=0)
    out = energy_breakdown(r.attempts, cfg)
    dynamic = sum(out[k] for k in ("normal-success", "straggler-success", "straggler-killed",
                                   "copy-success", "copy-killed"))
    assert r.energy == pytest.approx(out["total"])
    assert out["total"] == pytest.approx(out["static"] + dynamic)
    span = r.attempts.end.max() - r.attempts.start.min()
    assert out["static"] == pytest.approx(cfg.nodes * 100.0 * span)
