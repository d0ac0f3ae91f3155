"""Compiled per-step kernels of the simulator (numba, no fastmath).

A step of the simulator touches a few thousand slots; done as numpy expressions it is a
few dozen small calls (~1 us each), so the call count, not the rows, sets its cost. These
kernels do the same work in one compiled call per step.

They must give *bit-identical* results to the numpy code they replace (that code decides
what the AM sees): every value is computed with the same floating-point operations in the
same order (``max(x, 0)`` and ``min(x, 1)`` as numpy's ``maximum``/``minimum`` do them,
including NaN and -0.0), and no fastmath, so LLVM neither contracts ``a + b * c`` into
an FMA nor reorders sums. Tests compare whole result tables with the numpy path
(``hedge.sim.heartbeat.heartbeats_numpy``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _progress_at(tau: float, w: float, r: float, b: float, W: float) -> float:
    """``min((w + r * max(tau - b, 0)) / W, 1)`` with numpy's NaN/-0.0 semantics."""
    x = tau - b
    if x < 0.0:
        x = 0.0
    p = (w + r * x) / W
    if p > 1.0:
        p = 1.0
    return p


@njit(cache=True)
def heartbeats(t: float, step: float, hw: float, eps: float, kfp: int, table: np.ndarray,
               nhb: np.ndarray, end: np.ndarray, start: np.ndarray, aid: np.ndarray,
               ws: np.ndarray, tw: np.ndarray, w: np.ndarray, r: np.ndarray, W: np.ndarray,
               k: np.ndarray, p0: np.ndarray, p1: np.ndarray, r0: np.ndarray, r1: np.ndarray,
               fpp: np.ndarray) -> None:
    """Record, in place, the reports sent in ``(t - step, t]`` by attempts still running.

    A slot reports when its next heartbeat is due (``nhb <= t + eps``) and its work has
    not ended (``end > t + eps``). Its newest report index is
    ``k' = floor((t - start) / hw + eps)``, sent at ``s = start + k' hw`` with progress
    ``min((w + r max(s - b, 0)) / W, 1)``, ``b = max(ws, tw)``, received at
    ``s + L(aid, k')`` with ``L`` the latency table at ``(aid 40503 + k 9973) mod size``.
    The report before it is the old newest one, or, when the step is longer than
    ``hw / 2`` and sent two or more reports, report ``k' - 1`` computed the same way.
    Crossing ``kfp`` (the first report with progress) records that report's progress.
    """
    mask = len(table) - 1
    limit = t + eps
    several = step > 0.5 * hw
    first_at = kfp * hw
    for s in range(len(nhb)):
        if not (nhb[s] <= limit) or not (end[s] > limit):
            continue
        st = start[s]
        k_old = k[s]
        k_new = np.int64(math.floor((t - st) / hw + eps))
        b = ws[s] if ws[s] >= tw[s] or math.isnan(ws[s]) else tw[s]  # np.maximum
        sent = st + k_new * hw
        p_new = _progress_at(sent, w[s], r[s], b, W[s])
        r_new = sent + table[(aid[s] * 40503 + k_new * 9973) & mask]
        p_prev, r_prev = p0[s], r0[s]
        if several and k_new - 1 > k_old:
            p_prev = _progress_at(sent - hw, w[s], r[s], b, W[s])
            r_prev = sent - hw + table[(aid[s] * 40503 + (k_new - 1) * 9973) & mask]
        if k_old < kfp and k_new >= kfp:
            fpp[s] = _progress_at(st + first_at, w[s], r[s], b, W[s])
        k[s] = k_new
        p0[s] = p_new
        p1[s] = p_prev
        r0[s] = r_new
        r1[s] = r_prev
        nhb[s] = sent + hw
