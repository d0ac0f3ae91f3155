"""numpy's sum of a float64 array, bit for bit, as a numba kernel.

A compiled kernel that must give the same bits as the numpy code it replaces (issue 21:
``hedge.policy.auto_kernels``, ``hedge.detect.fresh_kernels``,
``hedge.estimate.runtime_kernels``) has to add in numpy's order, which for a contiguous
reduction is a pairwise sum, not a running one; it is written once, here.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _leaf_sum(x: np.ndarray, lo: int, n: int) -> float:  # pragma: no cover - compiled
    """numpy's ``pairwise_sum`` of ``x[lo:lo + n]``, n <= 128: sequential below 8 values,
    else eight running sums combined as a tree, then the rest in order."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += x[i]
        return res
    r0, r1, r2, r3 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3]
    r4, r5, r6, r7 = x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        j = lo + i
        r0 += x[j]
        r1 += x[j + 1]
        r2 += x[j + 2]
        r3 += x[j + 3]
        r4 += x[j + 4]
        r5 += x[j + 5]
        r6 += x[j + 6]
        r7 += x[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(x: np.ndarray) -> float:  # pragma: no cover - compiled
    """``np.sum(x)`` of a contiguous 1-D float64 array, bit for bit: the reduction's
    initial 0 plus numpy's pairwise sum of every value. Above 128 values numpy sums the
    two halves (the first a multiple of 8 long) alike and adds them; that recursion runs
    here on an explicit stack (a recursive function does not survive numba's cache)."""
    n = len(x)
    if n <= 128:
        return 0.0 + _leaf_sum(x, 0, n)
    lo = np.empty(64, np.int64)  # segments to sum (depth <= log2(n / 128) + 1)
    size = np.empty(64, np.int64)
    stage = np.empty(64, np.int64)  # 0: split next, 1: left done, 2: both done
    sums = np.empty(64)
    lo[0], size[0], stage[0] = 0, n, 0
    top, done = 1, 0
    while top:
        k = top - 1
        m = size[k]
        if m <= 128:
            sums[done] = _leaf_sum(x, lo[k], m)
            done += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if stage[k] < 2:  # push the left half, then the right one
            stage[k] += 1
            first = stage[k] == 1
            lo[top] = lo[k] if first else lo[k] + half
            size[top] = half if first else m - half
            stage[top] = 0
            top += 1
        else:  # left + right, as numpy's recursion returns them
            done -= 1
            sums[done - 1] = sums[done - 1] + sums[done]
            top -= 1
    return 0.0 + sums[0]
