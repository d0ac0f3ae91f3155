"""A synthetic task history with planted weak nodes, for tests and the ML-NA evaluation.

Each period every node is weak or not (the ground truth): a two-state Markov chain per node
with P(normal -> weak) = ``p_become_weak`` and P(weak -> normal) = ``p_recover``, starting
from ``initial_weak`` of the nodes. Jobs arrive uniformly over the days; every task of a job
runs on a uniformly random node and takes ``job_base * lognormal(0, noise)`` seconds,
times ``slowdown`` on a node that is weak in that period.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hedge.nodes.history import make_history


@dataclass
class SyntheticHistory:
    history: pa.Table
    nodes: np.ndarray  # names, index = node id
    weak: np.ndarray   # (n_periods, n_nodes) bool ground truth
    period_seconds: float


def weak_schedule(n_periods: int, n_nodes: int, rng: np.random.Generator,
                  initial_weak: float = 0.1, p_become_weak: float = 0.02,
                  p_recover: float = 0.1) -> np.ndarray:
    weak = np.empty((n_periods, n_nodes), dtype=bool)
    weak[0] = rng.random(n_nodes) < initial_weak
    for p in range(1, n_periods):
        u = rng.random(n_nodes)
        weak[p] = np.where(weak[p - 1], u >= p_recover, u < p_become_weak)
    return weak


def synthetic_history(n_nodes: int = 40, n_periods: int = 8, period_days: int = 5,
                      day_seconds: float = 3600.0, jobs_per_day: int = 6,
                      tasks_per_job: int = 30, slowdown: float = 2.0, noise: float = 0.25,
                      seed: int = 0, **schedule: float) -> SyntheticHistory:
    rng = np.random.default_rng(seed)
    weak = weak_schedule(n_periods, n_nodes, rng, **schedule)
    period_seconds = period_days * day_seconds
    n_jobs = n_periods * period_days * jobs_per_day
    arrival = np.sort(rng.uniform(0, n_periods * period_seconds * 0.98, n_jobs))
    job = np.repeat(np.arange(n_jobs), tasks_per_job)
    node = rng.integers(0, n_nodes, len(job))
    base = rng.uniform(20, 200, n_jobs)[job]
    start = arrival[job] + rng.uniform(0, 30, len(job))
    period = np.minimum((start // period_seconds).astype(np.int64), n_periods - 1)
    factor = np.where(weak[period, node], slowdown, 1.0)
    duration = base * rng.lognormal(0.0, noise, len(job)) * factor
    names = np.array([f"node{i:03d}" for i in range(n_nodes)])
    task = np.tile(np.arange(tasks_per_job), n_jobs)
    n = len(job)
    history = make_history({
        "job": [f"job_{j:05d}" for j in job],
        "task": [f"t{t}" for t in task],
        "attempt": [f"a{t}" for t in task],
        "node": names[node].tolist(),
        "start": start, "end": start + duration,
        "state": ["SUCCEEDED"] * n,
        "speculative": np.zeros(n, dtype=bool),
    }, source="synthetic")
    return SyntheticHistory(history=history, nodes=names, weak=weak,
                            period_seconds=period_seconds)
