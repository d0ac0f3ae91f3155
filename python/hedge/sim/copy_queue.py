"""Copies and relaunches waiting for a slot: the scheduler's queue, kept per job.

An attempt asked for after its job's originals (a copy, or the relaunch of a killed task)
waits here from its request until the scheduler places it, its job's AM kills it while it
waits, or its task ends (then the scheduler cancels it at its next placement). Attempt ids
grow in request order, so the queue in request order is its ids ascending, and each job's
part of it is a list of that job's ids, ascending.

Kept per job because its readers want a few jobs' parts: the scheduler its contenders', an
AM its due jobs'. A single list of every queued id, converted and counted at every step,
made dolly's clones on an all-at-once arrival (hundreds of thousands of them queued behind
their originals) cost a pass over the whole queue per step (issue 21).
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import chain
from typing import Protocol

import numpy as np

from hedge.sim.job_heap import JobHeap


class Columns(Protocol):
    """What the queue reads of ``hedge.sim.tables.Tables`` (the attempt columns grow, so it
    reads them through the tables)."""

    j_off: np.ndarray  # one row per job
    t_job: np.ndarray  # a task's job
    a_task: np.ndarray  # an attempt's task
    a_copy: np.ndarray  # an attempt is a copy (else an original or a relaunch)


class CopyQueue:
    """Queued attempt ids per job, in request order, with their counts."""

    def __init__(self, tables: Columns) -> None:
        self.tb = tables
        n_jobs, n_tasks = len(tables.j_off), len(tables.t_job)
        self._ids: dict[int, list[int]] = {}  # job -> its queued attempt ids, ascending
        self.per_job = np.zeros(n_jobs, dtype=np.int64)  # queued attempts per job
        self.copies_per_job = np.zeros(n_jobs, dtype=np.int64)  # of them, copies
        self._per_task = np.zeros(n_tasks, dtype=np.int64)  # queued attempts per task
        self._ended: list[np.ndarray] = []  # tasks that ended with attempts queued
        # jobs that had attempts queued since they were last read (the scheduler wants
        # the first of them; a job whose part is empty is dropped when read)
        self._jobs = JobHeap(n_jobs)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def push(self, task: int, ids: np.ndarray, copy: bool) -> None:
        """New attempts ``ids`` of ``task`` (the newest ids) join the queue."""
        job = int(self.tb.t_job[task])
        self._jobs.add(job)
        self._ids.setdefault(job, []).extend(ids.tolist())
        self.per_job[job] += len(ids)
        self.copies_per_job[job] += len(ids) if copy else 0
        self._per_task[task] += len(ids)
        self.size += len(ids)

    def of_job(self, job: int) -> list[int]:
        """Job ``job``'s queued attempt ids, in request order (empty when none)."""
        return self._ids.get(job, [])

    def jobs(self) -> np.ndarray:
        """The jobs with attempts queued, ascending."""
        return np.flatnonzero(self.per_job)

    def jobs_before(self, job: int) -> list[int]:
        """The jobs before ``job`` with attempts queued, ascending."""
        return self._jobs.first(lambda j: j in self._ids, stop=lambda j: j >= job)

    def in_order(self, jobs: np.ndarray) -> np.ndarray:
        """The queued attempt ids of ``jobs``, in request order."""
        parts = [self._ids[j] for j in jobs.tolist() if j in self._ids]
        ids = np.fromiter(chain.from_iterable(parts), dtype=np.int64)
        ids.sort()
        return ids

    def drop(self, job: int, ids: Collection[int]) -> None:
        """Take these queued attempts of ``job`` off the queue (placed, killed, or their task
        ended)."""
        if not ids:
            return
        kept = [a for a in self._ids[job] if a not in ids]
        if kept:
            self._ids[job] = kept
        else:
            del self._ids[job]
        gone = np.fromiter(ids, dtype=np.int64, count=len(ids))
        self.per_job[job] -= len(gone)
        self.copies_per_job[job] -= int(self.tb.a_copy[gone].sum())
        np.subtract.at(self._per_task, self.tb.a_task[gone], 1)
        self.size -= len(gone)

    def note_ended(self, tasks: np.ndarray) -> None:
        """These tasks ended: their queued attempts are dropped by ``drop_ended``."""
        hit = tasks[self._per_task[tasks] > 0]
        if len(hit):
            self._ended.append(hit)

    def drop_ended(self) -> list[int]:
        """Takes off the queue the attempts of the tasks ended since the last call (noted
        by ``note_ended``), and returns their ids."""
        if not self._ended:
            return []
        tasks = np.unique(np.concatenate(self._ended))
        self._ended = []
        tasks = tasks[self._per_task[tasks] > 0]  # (a kill may have dropped some already)
        ended = set(tasks.tolist())
        a_task, gone = self.tb.a_task, []
        for job in np.unique(self.tb.t_job[tasks]).tolist():
            ids = {a for a in self._ids[job] if int(a_task[a]) in ended}
            self.drop(job, ids)
            gone.extend(ids)
        return gone
