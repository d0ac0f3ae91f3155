"""What a copy of a task costs: its slowdown draw, and the truth a clairvoyant policy is told.

A task's original replays its own straggler factor; a copy (or relaunch) draws a fresh one:
from the task's pool when the workload carries a trace model's pools (per job and phase,
``hedge.traces.straggler_model``), else from every task's factor.

The first copy of each task takes a draw made ahead, once per task, the same under every
policy of a seed (common random numbers): two policies that copy the same task see the same
copy, so their difference is their choices, not their luck, and a clairvoyant policy
(``oracle``) is told exactly the slowdown any policy's first copy of the task gets. (Drawn in
the order copies happened to be made, a task the oracle was told would copy slowly could
copy fast under ``hadoop``, and ``hadoop`` beat the oracle by that luck alone.) A task's
later copies and relaunches draw afresh. One that knows only the distribution a copy is
drawn from (``oracle:copy=median``) is told the median of its task's pool instead, while the
copy still runs with its draw.
"""

from __future__ import annotations

import numpy as np

from hedge.model import Snapshot
from hedge.model.truth import Truth
from hedge.sim.cluster import ClusterConfig
from hedge.sim.tables import Tables
from hedge.traces.arrays import unique_inverse
from hedge.traces.workload import Workload


class CopyDraws:
    """Slowdowns of copies, from their own generator (seeded ``[seed, 1]``)."""

    def __init__(self, tables: Tables, wl: Workload, cfg: ClusterConfig, seed: int,
                 clairvoyant: bool, told: str = "draw") -> None:
        """``told``: what a clairvoyant policy learns of a copy's slowdown: its very draw
        (``draw``) or the median of the pool it is drawn from (``median``)."""
        n = len(tables.t_base)
        self._rng = np.random.default_rng([seed, 1])
        self._factor_pool = tables.t_factor if n else np.ones(1)
        # a trace model's pools (per job and phase), unless the cluster drew the factors
        pools = wl.copy_pools if cfg.straggler_ratio <= 0 else None
        self._pools = None if pools is None else (
            pools.values, pools.start[tables.perm], pools.size[tables.perm])
        self.first = self._draw(np.arange(n))  # each task's first copy (module docstring)
        self._copied = np.zeros(n, dtype=bool)  # tasks whose first copy has run
        self.told: np.ndarray | None = None  # what a clairvoyant policy is told (``told``)
        if clairvoyant:
            self.told = self.first if told == "draw" else self._pool_medians(n)

    def factors(self, tasks: np.ndarray) -> np.ndarray:
        """Slowdowns of copies of ``tasks``, in order: a task's first copy (or relaunch)
        takes the draw made ahead for it (``first``), any later one a fresh draw."""
        out = np.empty(len(tasks))
        new = np.flatnonzero(~self._copied[tasks])
        # a task copied twice at once (dolly's clones): its first occurrence is its first copy
        new = new[unique_inverse(tasks[new])[2]]
        out[new] = self.first[tasks[new]]
        self._copied[tasks[new]] = True
        later = np.ones(len(tasks), dtype=bool)
        later[new] = False
        if later.any():
            out[later] = self._draw(tasks[later])
        return out

    def _draw(self, tasks: np.ndarray) -> np.ndarray:
        """Fresh slowdowns for copies of ``tasks``: from the task's pool (a trace model's job
        and phase), else from every task's factor."""
        if self._pools is None:
            pool = self._factor_pool
            return pool[self._rng.integers(0, len(pool), len(tasks))]
        values, start, size = self._pools
        return values[start[tasks] + self._rng.integers(0, size[tasks])]

    def _pool_medians(self, n: int) -> np.ndarray:
        """Per task, the median slowdown of the pool its copy is drawn from."""
        if self._pools is None:
            return np.full(n, float(np.median(self._factor_pool)))
        values, start, size = self._pools
        pools, task_pool = np.unique(np.stack([start, size]), axis=1, return_inverse=True)
        medians = np.array([np.median(values[s:s + z]) for s, z in pools.T.tolist()])
        return medians[task_pool.ravel()]


def truth(tables: Tables, told: np.ndarray, startup: float, end: np.ndarray, t: float,
          j: int, snapshot: Snapshot) -> Truth:
    """The ground truth of job ``j``'s snapshot: ``end`` holds the true end of each running
    attempt listed first in it (as ``hedge.sim.am`` builds snapshots); a waiting one's is
    unknown (inf). A copy of a task would take its work times ``told`` (its slowdown, or
    the median of its pool: ``CopyDraws.told``) plus ``startup``."""
    off = int(tables.j_off[j])
    n = int(tables.j_nmaps[j] + tables.j_nred[j])
    remaining = np.full(len(snapshot.attempts), np.inf)
    remaining[:len(end)] = end - t
    work = tables.t_base[off:off + n] * told[off:off + n]
    return Truth(remaining=remaining, copy_time=work + startup)
