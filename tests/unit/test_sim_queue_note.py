"""Runs whose job times are mostly the cluster's queue say so: ``first_slot_wait_s`` in each
row, and one note under the table (``hedge.sim.metrics.queue_note``)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.cli import main
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import simulate
from hedge.sim.metrics import queue_note, summarize
from hedge.traces.workload import Workload

EXACT = dict(latency="const:0", hw=1.0, startup=0.0)


def _row(nodes: int, policy: str = "none") -> dict:
    # two jobs at once: a (one task, 10 s) then b (one task, 1 s)
    workload = Workload.from_jobs(["a", "b"], [0.0, 0.0], [np.array([10.0]), np.array([1.0])])
    row = summarize(simulate(workload, "none", ClusterConfig(nodes=nodes, slots=1, **EXACT)))
    return {**row, "policy": policy, "seed": 0}


def test_a_job_behind_another_waits_for_its_first_slot():
    row = _row(nodes=1)  # one slot: b waits for a's 10 s, a waits for nothing
    assert row["first_slot_wait_s"] == pytest.approx(10.0 / 2, abs=0.5)
    share = row["first_slot_wait_s"] / row["mean_job_time"]
    assert share >= 0.2
    assert queue_note([row, _row(nodes=2, policy="hadoop")]) == (
        f"jobs waited 20% or more of their mean job time for a first slot in 1 of 2 runs "
        f"(none seed 0: {share:.0%}, {row['first_slot_wait_s']:,.0f} s): these job times are "
        "mostly the cluster's queue, and a policy is judged by how its copies lengthen it "
        "(--cluster scheduler=fair or more nodes to compare without it)")


def test_no_queue_no_note():
    row = _row(nodes=2)
    assert row["first_slot_wait_s"] == pytest.approx(0.0, abs=0.5)
    assert queue_note([row]) is None
    assert queue_note([{"policy": "none", "mean_job_time": None,
                        "first_slot_wait_s": None}]) is None


def test_many_queued_runs_are_named_up_to_four():
    rows = [_row(nodes=1, policy=f"p{i}") for i in range(6)]
    note = queue_note(rows)
    assert note is not None and "in 6 of 6 runs (p0 seed 0: " in note
    assert "p3 seed 0" in note and "p4 seed 0" not in note and "; 2 more)" in note


def test_hedge_simulate_says_when_its_jobs_queue(capsys):
    assert main(["simulate", "--synthetic", "jobs=4,tasks=8", "--cluster", "nodes=1,slots=1",
                 "--policy", "none,hadoop", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("for a first slot in 2 of 2 runs (none seed 0: ") == 1
    assert main(["simulate", "--synthetic", "jobs=4,tasks=8", "--cluster", "nodes=64,slots=1",
                 "--policy", "none", "--quiet"]) == 0
    assert "for a first slot" not in capsys.readouterr().out
