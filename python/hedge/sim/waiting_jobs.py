"""The jobs whose original tasks may wait for a slot, in arrival order: FIFO's contenders.

Under FIFO only the first jobs with originals waiting can get a slot at a step (those before
them want every free slot), so the scheduler reads just those instead of every active job:
with all jobs arriving at once, tens of thousands are active, and a pass over all of them
at every step made the cost grow with the square of the jobs (issue 21: ``none`` took 2.1x
as long per task on 959,229 tasks as on 97,059).

A job's originals start waiting when it arrives and again when its maps are done and its
reduces become runnable; they stop when the scheduler has placed every one. So the jobs
are noted at those two events and kept in a min-heap of job indices (the simulator numbers
jobs by arrival); a job found with nothing left to place is dropped when read.
"""

from __future__ import annotations

import numpy as np

from hedge.sim.job_heap import JobHeap
from hedge.sim.tables import Tables


class WaitingJobs:
    """Active jobs that may have original tasks waiting, first arrived first."""

    def __init__(self, tables: Tables) -> None:
        self.tb = tables
        self._jobs = JobHeap(len(tables.j_off))

    def note(self, jobs: np.ndarray) -> None:
        """These jobs arrived, or finished a task (their reduces may have become runnable)."""
        tb = self.tb
        self._jobs.add_all(jobs[tb.j_next[jobs] < tb.j_end[jobs]])

    def first(self, need: int) -> list[int]:
        """The first unfinished jobs with originals waiting, ascending, until their waiting
        originals number ``need`` or more (or all of them)."""
        tb = self.tb
        waiting = 0  # the waiting originals of the jobs found so far

        def has_waiting(j: int) -> bool:
            nonlocal waiting
            left = int(tb.j_end[j] - tb.j_next[j])
            if left <= 0 or tb.j_left[j] == 0:
                return False
            waiting += left
            return True

        return self._jobs.first(has_waiting, stop=lambda _: waiting >= need)
