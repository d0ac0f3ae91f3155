"""Job indices in a min-heap, each at most once, for readers that want the first few.

The simulator numbers jobs by arrival, so the heap's order is arrival order. A job is added
when it may become wanted (it arrived, its reduces became runnable, it queued a copy) and
is dropped only when a reader finds it no longer is: cheaper than taking it out at every
change, and each reader reads a few jobs from the front, not every active one (issue 21).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np


class JobHeap:
    """A min-heap of job indices with lazy removal."""

    def __init__(self, n_jobs: int) -> None:
        self._heap: list[int] = []
        self._held = np.zeros(n_jobs, dtype=bool)  # in the heap

    def add(self, job: int) -> None:
        """``job`` may be wanted (a job already held stays once)."""
        if not self._held[job]:
            heapq.heappush(self._heap, job)
            self._held[job] = True

    def add_all(self, jobs: np.ndarray) -> None:
        """``add`` each of ``jobs`` (repeats allowed)."""
        for job in jobs[~self._held[jobs]].tolist():
            self.add(job)

    def first(self, wanted: Callable[[int], bool], stop: Callable[[int], bool]) -> list[int]:
        """The jobs ``wanted`` says are, ascending, from the front until ``stop`` is true of
        the next job in the heap; the jobs found not wanted on the way leave it."""
        heap, found = self._heap, []
        while heap and not stop(heap[0]):
            job = heapq.heappop(heap)
            if wanted(job):
                found.append(job)
            else:
                self._held[job] = False
        for job in found:
            heapq.heappush(heap, job)
        return found
