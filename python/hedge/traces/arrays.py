"""Sort-based set helpers. numpy 2.4's ``np.unique`` hashes integer arrays and is ~50x
slower than sorting on the 10^5-10^6 ids of a trace part, so the readers use these."""

from __future__ import annotations

import numpy as np


def unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values."""
    s = np.sort(values)
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted distinct values, index of each value in them, first position of each)."""
    order = np.argsort(values, kind="stable")
    s = values[order]
    new = np.r_[True, s[1:] != s[:-1]] if len(s) else np.zeros(0, dtype=bool)
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return s[new], inverse, order[new]
