"""A run whose job times are mostly the cluster's queue says so: ``first_slot_wait_s`` in
its row, and a note under the table (``hedge.sim.metrics.queue_note``)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.cli import main
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import simulate
from hedge.sim.metrics import queue_note, summarize
from hedge.traces.workload import Workload

EXACT = dict(latency="const:0", hw=1.0, startup=0.0)


def _row(arrival: list[float], nodes: int) -> dict:
    workload = Workload.from_jobs(["a", "b"], arrival, [np.array([10.0]), np.array([1.0])])
    row = summarize(simulate(workload, "none", ClusterConfig(nodes=nodes, slots=1, **EXACT)))
    return {**row, "seed": 0}


def test_a_job_behind_another_waits_for_its_first_slot():
    # one slot: b arrives with a and waits for a's 10 s
    row = _row([0.0, 0.0], nodes=1)
    first_b = row["first_slot_wait_s"] * 2  # a waits 0
    assert first_b == pytest.approx(10.0, abs=1.0)
    assert row["first_slot_wait_s"] >= 0.2 * row["mean_job_time"]
    note = queue_note(row)
    assert note is not None and note.startswith(
        f"none, seed 0: jobs waited {row['first_slot_wait_s'] / row['mean_job_time']:.0%} of "
        "their mean job time for a first slot")


def test_no_queue_no_note():
    row = _row([0.0, 0.0], nodes=2)
    assert row["first_slot_wait_s"] == pytest.approx(0.0, abs=1.0)
    assert row["first_slot_wait_s"] < 0.2 * row["mean_job_time"]
    assert queue_note(row) is None
    assert queue_note({"policy": "none", "mean_job_time": None, "first_slot_wait_s": None}) \
        is None


def test_hedge_simulate_says_when_its_jobs_queue(capsys):
    assert main(["simulate", "--synthetic", "jobs=4,tasks=8", "--cluster", "nodes=1,slots=1",
                 "--policy", "none", "--quiet"]) == 0
    assert "note: none, seed 0: jobs waited " in capsys.readouterr().out
    assert main(["simulate", "--synthetic", "jobs=4,tasks=8", "--cluster", "nodes=64,slots=1",
                 "--policy", "none", "--quiet"]) == 0
    assert "jobs waited" not in capsys.readouterr().out
