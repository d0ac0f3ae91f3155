"""The scheduler's queue of copies and relaunches, kept per job (``hedge.sim.copy_queue``)."""

from types import SimpleNamespace

import numpy as np

from hedge.sim.cluster import ClusterConfig
from hedge.sim.copy_queue import CopyQueue
from hedge.sim.engine import Simulator
from hedge.traces.synthetic import default_workload

# tasks 0-2 belong to job 0, tasks 3-4 to job 1, task 5 to job 2
T_JOB = np.array([0, 0, 0, 1, 1, 2])


def _queue() -> tuple[CopyQueue, SimpleNamespace]:
    tables = SimpleNamespace(j_off=np.array([0, 3, 5]), t_job=T_JOB,
                             a_task=np.full(32, -1), a_copy=np.zeros(32, dtype=bool))
    queue = CopyQueue(tables)
    next_id = 6  # attempt ids 0-5 are the originals

    def request(task: int, k: int, copy: bool) -> None:
        nonlocal next_id
        ids = np.arange(next_id, next_id + k)
        tables.a_task[ids], tables.a_copy[ids] = task, copy
        queue.push(task, ids, copy)
        next_id += k

    request(3, 2, True)   # ids 6, 7: job 1
    request(0, 1, True)   # id 8: job 0
    request(4, 1, False)  # id 9: job 1, a relaunch
    request(1, 2, True)   # ids 10, 11: job 0
    return queue, tables


def test_jobs_parts_merge_back_in_request_order():
    queue, _ = _queue()
    assert len(queue) == 6
    assert queue.of_job(0) == [8, 10, 11] and queue.of_job(1) == [6, 7, 9]
    assert queue.of_job(2) == []
    assert queue.in_order(np.array([0, 1, 2])).tolist() == [6, 7, 8, 9, 10, 11]
    assert queue.in_order(np.array([1])).tolist() == [6, 7, 9]
    assert queue.jobs().tolist() == [0, 1]
    assert queue.per_job.tolist() == [3, 3, 0]
    assert queue.copies_per_job.tolist() == [3, 2, 0]  # job 1's relaunch is no copy


def test_a_dropped_attempt_leaves_its_jobs_part_and_counts():
    queue, _ = _queue()
    queue.drop(1, {7, 9})
    assert queue.of_job(1) == [6]
    assert queue.per_job.tolist() == [3, 1, 0] and queue.copies_per_job.tolist() == [3, 1, 0]
    queue.drop(1, {6})
    assert queue.jobs().tolist() == [0] and len(queue) == 3


def test_the_attempts_of_ended_tasks_are_dropped_once():
    queue, _ = _queue()
    queue.note_ended(np.array([1, 2, 3]))  # task 2 has nothing queued
    queue.drop(1, {6})  # a kill took one of task 3's two first
    assert sorted(queue.drop_ended()) == [7, 10, 11]
    assert queue.of_job(0) == [8] and queue.of_job(1) == [9]
    assert queue.drop_ended() == []
    assert queue.per_job.tolist() == [1, 1, 0] and len(queue) == 2


def test_the_jobs_before_one_are_those_with_attempts_queued_now():
    queue, tables = _queue()
    assert queue.jobs_before(1) == [0] and queue.jobs_before(9) == [0, 1]
    queue.drop(0, {8, 10, 11})
    assert queue.jobs_before(9) == [1]
    tables.a_task[12] = 0
    queue.push(0, np.array([12]), copy=True)  # job 0 queues again
    assert queue.jobs_before(9) == [0, 1] and queue.jobs_before(0) == []


def test_fifo_contends_the_jobs_with_copies_queued_before_the_last_first_waiting_job(
        monkeypatch):
    """FIFO's contenders: the first jobs with originals waiting until they want every free
    slot, and of the jobs with copies queued those before the last of them (a job after
    gets nothing); every such job while the first do not want every free slot."""
    monkeypatch.setattr("hedge.sim.scheduler.FULL_PASS_JOBS", 0)
    sim = Simulator(default_workload(0, n_jobs=6), ClusterConfig(nodes=4, slots=2), "none")
    sim._setup()
    tb, scheduler = sim.tables, sim.scheduler
    tb.active = np.arange(6)
    tb.j_next[1] = tb.j_end[1]  # job 1 placed every original
    scheduler.waiting_jobs.note(tb.active)
    tb.request(int(tb.j_off[1]), 1, copy=True)
    tb.request(int(tb.j_off[4]), 1, copy=True)
    first_wants = int(tb.j_end[0] - tb.j_next[0])
    assert scheduler._contenders(first_wants + 1).tolist() == [0, 1, 2]
    assert scheduler._contenders(first_wants).tolist() == [0]
    assert scheduler._contenders(10**6).tolist() == [0, 1, 2, 3, 4, 5]
