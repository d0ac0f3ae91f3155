"""``Workload.slot_demand``: the slots a workload keeps busy while its jobs arrive, were every
task to run at once (what ``hedge simulate --trace`` sizes a machine-less trace's cluster by)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.model import MAP, REDUCE
from hedge.traces.workload import Workload


def test_a_stream_of_jobs_counts_the_busy_slots_inside_its_arrival_window():
    # one 10-task job of 10 s every 10 s for 100 s: ten slots busy throughout
    workload = Workload.from_jobs([f"j{i}" for i in range(11)], np.arange(11) * 10.0,
                                  [np.full(10, 10.0)] * 11)
    assert workload.slot_demand() == pytest.approx(10.0)
    # the last job's tasks run past the window: only their part inside it counts
    longer = Workload.from_jobs(["a", "b"], [0.0, 100.0], [np.full(4, 150.0), np.full(4, 5.0)])
    assert longer.slot_demand() == pytest.approx(4.0)


def test_reduces_start_when_their_job_s_longest_map_ends():
    # maps 0-10 s and 0-30 s, then a reduce of 20 s: 30-50 s; the next job comes at 100 s
    workload = Workload.from_jobs(
        ["a", "b"], [0.0, 100.0], [np.array([10.0, 30.0, 20.0]), np.array([1.0])],
        task_types=[np.array([MAP, MAP, REDUCE]), np.array([MAP])])
    assert workload.slot_demand() == pytest.approx(60 / 100)


def test_a_burst_runs_to_its_last_task_s_end():
    # every job arrives at once (or closer than a median job's length): one burst, whose
    # window ends with its last task
    burst = Workload.from_jobs(["a", "b"], [0.0, 1.0], [np.full(3, 20.0), np.full(2, 40.0)])
    assert burst.slot_demand() == pytest.approx((3 * 20 + 2 * 40) / 41)
    alone = Workload.from_jobs(["a"], [5.0], [np.array([10.0, 30.0])])
    assert alone.slot_demand() == pytest.approx(40 / 30)


def test_an_original_runs_its_straggler_factor_times_its_work():
    workload = Workload.from_jobs(["a"], [0.0], [np.array([10.0, 10.0])])
    workload.straggler_factor = np.array([1.0, 3.0])
    assert workload.slot_demand() == pytest.approx(40 / 30)


def test_no_task_no_demand():
    assert Workload.from_jobs([], [], []).slot_demand() == 0.0
    assert Workload.from_jobs(["a"], [0.0], [np.array([0.0])]).slot_demand() == 0.0
