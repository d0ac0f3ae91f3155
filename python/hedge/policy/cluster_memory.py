"""What the jobs of one cluster running ``hedge-auto`` learn from each other.

A job of one to a few tasks says nothing about its own spread: it cannot tell from its peers
whether its one task is slow, or how long a copy of it would take. The trace straggler model
(docs/trace-model.md) answers the same question the same way: a group of fewer than five
tasks draws a copy's residual from every task of its phase. hedge-auto does what the AM side
can do to match: the jobs that can judge their tasks (enough peers of a type) pool the
residuals they see (``log(run time / the type's median)``) per task type, and every race
any job runs adds its evidence about ``lam`` (the transient share of slowness). A small job
then judges its tasks with the pooled residuals and the pooled evidence.

One :class:`ClusterMemory` serves every job of one simulation run, or of one ``hedge serve``
process (its sessions run on several threads, hence the lock). Residuals are kept as a
histogram per task type (``BIN_WIDTH`` wide bins in log run time), so a job replaces its
own contribution as it learns more, in time independent of how many jobs contributed.
"""

from __future__ import annotations

import threading

import numpy as np

BIN_WIDTH = 0.05  # log run time: 5% steps
LOG_RANGE = 6.0  # residuals beyond +-6 (400x the median) are counted at the edge
EDGES = np.arange(-LOG_RANGE, LOG_RANGE + BIN_WIDTH / 2, BIN_WIDTH)
CENTRES = (EDGES[:-1] + EDGES[1:]) / 2
MIN_POOLED = 30  # pooled residuals of a type before a small job may lean on them


class ClusterMemory:
    """Pooled residuals per task type (map 0, reduce 1) and pooled evidence about lam."""

    def __init__(self, n_lambdas: int) -> None:
        self._counts = np.zeros((2, len(CENTRES)))
        self.evidence = np.zeros(n_lambdas)  # summed log likelihood per lam value
        self.races = 0  # races whose evidence is in ``evidence``
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict) -> ClusterMemory:
        """A copy with its own lock (a lock cannot be copied): what a copy of a job's
        policy learns then stays its own (the simulator's gate audits copy policies)."""
        copied = ClusterMemory(len(self.evidence))
        with self._lock:
            copied._counts = self._counts.copy()
            copied.evidence = self.evidence.copy()
            copied.races = self.races
        memo[id(self)] = copied
        return copied

    @staticmethod
    def histogram(residuals: np.ndarray) -> np.ndarray:
        """``residuals`` as bin counts (what a job contributes and later replaces)."""
        clipped = np.clip(residuals, EDGES[0], EDGES[-1] - BIN_WIDTH / 2)
        return np.histogram(clipped, bins=EDGES)[0].astype(float)

    def replace(self, task_type: int, old: np.ndarray | None, new: np.ndarray) -> None:
        """A job's contribution for one task type changes from ``old`` to ``new`` counts."""
        with self._lock:
            self._counts[task_type] += new
            if old is not None:
                self._counts[task_type] -= old

    def residuals(self, task_type: int, n: int) -> np.ndarray | None:
        """``n`` evenly spaced quantiles (mid-points) of the pooled residuals of a type, or
        None while fewer than ``MIN_POOLED`` are pooled."""
        with self._lock:
            counts = self._counts[task_type].copy()
        total = counts.sum()
        if total < MIN_POOLED:
            return None
        cumulative = np.cumsum(counts)
        ranks = (np.arange(n) + 0.5) / n * total
        return CENTRES[np.minimum(np.searchsorted(cumulative, ranks), len(CENTRES) - 1)]

    def learn(self, log_likelihood: np.ndarray) -> None:
        """One race's evidence about lam (per lam value)."""
        with self._lock:
            self.evidence = self.evidence + log_likelihood
            self.races += 1
