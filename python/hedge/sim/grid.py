"""The simulator's time grid: ``tick``-second steps, and the tolerance of comparisons on it.

Times the loop visits are multiples of the cluster's ``tick`` (the YARN NodeManager
heartbeat that hands out containers); a time within ``EPS`` of a grid point counts as on it.
"""

from __future__ import annotations

import math

EPS = 1e-9


def grid_after(t: float, wait: float, tick: float) -> float:
    """The grid time of a scan ``wait`` s after ``t``: the first tick at or after
    ``t + max(wait, tick)`` (inf when ``wait`` is not finite)."""
    if not math.isfinite(wait):
        return math.inf
    return math.ceil((t + max(wait, tick)) / tick - EPS) * tick
