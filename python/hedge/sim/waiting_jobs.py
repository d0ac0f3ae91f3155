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

import heapq

import numpy as np

from hedge.sim.tables import Tables


class WaitingJobs:
    """Active jobs that may have original tasks waiting, first arrived first."""

    def __init__(self, tables: Tables) -> None:
        self.tb = tables
        self._heap: list[int] = []
        self._held = np.zeros(len(tables.j_off), dtype=bool)  # in the heap

    def note(self, jobs: np.ndarray) -> None:
        """These jobs arrived, or finished a task (their reduces may have become runnable)."""
        tb = self.tb
        for j in jobs[(tb.j_next[jobs] < tb.j_end[jobs]) & ~self._held[jobs]].tolist():
            if not self._held[j]:  # (a job may be listed twice)
                heapq.heappush(self._heap, j)
                self._held[j] = True

    def first(self, need: int) -> list[int]:
        """The first unfinished jobs with originals waiting, ascending, until their waiting
        originals number ``need`` or more (or all of them)."""
        tb, heap = self.tb, self._heap
        found: list[int] = []
        waiting = 0
        while heap and waiting < need:
            j = heapq.heappop(heap)
            left = int(tb.j_end[j] - tb.j_next[j])
            if left <= 0 or tb.j_left[j] == 0:
                self._held[j] = False
                continue
            found.append(j)
            waiting += left
        for j in found:
            heapq.heappush(heap, j)
        return found
