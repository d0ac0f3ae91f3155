"""The simulator's time grid: ``tick``-second steps, and the tolerance of comparisons on it.

Times the loop visits are multiples of the cluster's ``tick`` (the YARN NodeManager
heartbeat that hands out containers); a time within ``EPS`` of a grid point counts as on it.
"""

from __future__ import annotations

import math

import numpy as np

EPS = 1e-9


def grid_after(t: float, wait: float, tick: float) -> float:
    """The grid time of a scan ``wait`` s after ``t``: the first tick at or after
    ``t + max(wait, tick)`` (inf when ``wait`` is not finite)."""
    if not math.isfinite(wait):
        return math.inf
    return math.ceil((t + max(wait, tick)) / tick - EPS) * tick


def scan_ticks(scan: float, tick: float) -> int:
    """Ticks between two scans of a job that a gate skipped (``grid_after``'s step from a
    grid time), or 0 when ``max(scan, tick)`` is not a whole number of ticks (then a
    skipped job's scan instants are not a fixed lattice and it may not sleep past them)."""
    every = max(scan, tick) / tick
    ticks = round(every)
    return ticks if ticks >= 1 and abs(every - ticks) <= EPS else 0


def lattice_from(anchor: np.ndarray, when: np.ndarray, ticks: int, tick: float) -> np.ndarray:
    """Per job: the first of its scan instants ``anchor + i ticks tick`` (``i >= 1``, the
    instants ``grid_after`` would visit from ``anchor`` on) at or after ``when``; inf where
    ``when`` is inf."""
    first = np.rint(anchor / tick)
    if ticks == 1:  # every tick after the anchor (the usual scan = tick)
        return np.maximum(np.ceil(when / tick - EPS), first + 1.0) * tick
    with np.errstate(invalid="ignore"):
        steps = np.ceil((when / tick - EPS - first) / ticks)
    steps = np.where(np.isfinite(steps), np.maximum(steps, 1.0), np.inf)
    return (first + steps * ticks) * tick


def on_lattice(anchor: np.ndarray, t: float, ticks: int, tick: float) -> np.ndarray:
    """Per job: is ``t`` one of its scan instants from ``anchor`` on?"""
    return (np.rint(t / tick) - np.rint(anchor / tick)) % ticks == 0
