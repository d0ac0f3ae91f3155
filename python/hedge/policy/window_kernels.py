"""Compiled parts of the window policies' plan (:mod:`hedge.policy.window`; numba, no
fastmath).

Every window start of ``window`` and ``hete-aware`` computes each task's earliest estimated
end and the running originals far enough from it to be worth a copy; most plans stop there
(no candidate). As numpy that was some 20 small calls (``np.minimum.at`` among them) per
plan; here it is one pass over the job's attempts. Results are bit-identical to the numpy
code kept in ``tests/unit/test_window_kernels.py``: the same comparisons and the same one
subtraction per attempt (a minimum of finite values is exact in any order).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def task_end_candidates(running: np.ndarray, speculative: np.ndarray, task: np.ndarray,
                        task_type: np.ndarray, ect: np.ndarray, typical: np.ndarray,
                        now: float) -> tuple[np.ndarray, np.ndarray]:
    """Per attempt row: its task's earliest estimated end among the task's running
    attempts (NaN while one of them has no finite estimate: it may end any time), and
    whether it is a running original whose task ends more than ``typical[its type]`` after
    ``now`` (``WindowPolicy._candidates``' first test)."""
    n = len(task)
    n_tasks = 1
    for i in range(n):
        n_tasks = max(n_tasks, task[i] + 1)
    best = np.full(n_tasks, np.inf)
    blind = np.zeros(n_tasks, dtype=np.bool_)
    for i in range(n):
        if running[i]:
            if math.isfinite(ect[i]):
                if ect[i] < best[task[i]]:
                    best[task[i]] = ect[i]
            else:
                blind[task[i]] = True
    end = np.empty(n)
    far = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        t = task[i]
        end[i] = best[t] if math.isfinite(best[t]) and not blind[t] else np.nan
        far[i] = running[i] and not speculative[i] and end[i] - now > typical[task_type[i]]
    return end, far
