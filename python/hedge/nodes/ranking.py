"""Statistical node ranking by interval ordering of normalised durations.

Per node, an interval [lo, hi] of its normalised durations z (``hedge.nodes.normalize``):

- ``"band"`` (default): the empirical 2.5%-97.5% quantile band of the node's z values
  (numpy's linear interpolation), i.e. where 95% of its tasks' durations fall;
- ``"mean-ci"``: the 95% confidence interval of the node's mean z,
  mean +- t(0.975, n-1) * s / sqrt(n) (s: sample std);
- ``"loglogistic"``: the 2.5%-97.5% quantiles of a 3-parameter log-logistic (scipy
  ``fisk``: shape c, loc, scale) fitted by maximum likelihood to the node's z values; the
  distribution reported as the best fit for most nodes of the Google trace. Nodes with
  fewer than ``min_fit`` tasks, or whose fit fails, fall back to the band (counted).

Interval ranking: an edge m1 -> m2 when m1's interval lies entirely below m2's
(hi_m1 < lo_m2: m1's tasks are reliably faster). Nodes with no outgoing edge are level 0,
the weakest; remove them and repeat, giving levels 1, 2, ... (higher = faster). Node m has
an outgoing edge among the remaining nodes R exactly when max_{n in R} lo_n > hi_m, so each
round is one vectorised comparison. Nodes with fewer than ``min_tasks`` normalised
durations are not ranked (level -1) and never weak.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from hedge.errors import HedgeError
from hedge.nodes.normalize import NormalizedDurations

log = logging.getLogger(__name__)

METHODS = ("band", "mean-ci", "loglogistic")
WEAK_POLICIES = ("level0", "top-k-std", "auto")
UNRANKED = -1


@dataclass
class NodeRanking:
    """Per-node statistics and levels, one entry per node (sorted by name)."""

    nodes: np.ndarray   # names
    count: np.ndarray   # normalised durations per node
    mean: np.ndarray
    std: np.ndarray     # population std of the node's z values
    lo: np.ndarray      # interval (NaN when unranked)
    hi: np.ndarray
    level: np.ndarray   # 0 weakest, UNRANKED = -1
    method: str

    def rows(self) -> list[dict[str, object]]:
        """JSON-friendly rows, weakest level first, then by mean (slowest first)."""
        order = np.lexsort((-np.nan_to_num(self.mean), np.where(self.level < 0, 1 << 30,
                                                                  self.level)))
        return [{"node": str(self.nodes[i]), "level": int(self.level[i]),
                 "count": int(self.count[i]), "mean": _num(self.mean[i]),
                 "std": _num(self.std[i]), "lo": _num(self.lo[i]), "hi": _num(self.hi[i])}
                for i in order]

    def level_sizes(self) -> dict[int, int]:
        levels, counts = np.unique(self.level, return_counts=True)
        return {int(k): int(v) for k, v in zip(levels, counts, strict=True)}


def _num(x: float) -> float | None:
    return None if not np.isfinite(x) else round(float(x), 6)


def interval_levels(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Levels by repeated removal of nodes with no outgoing edge (see module docstring)."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    level = np.full(len(lo), UNRANKED, dtype=np.int64)
    remaining = np.ones(len(lo), dtype=bool)
    current = 0
    while remaining.any():
        sinks = remaining & (hi >= lo[remaining].max())
        level[sinks] = current
        remaining &= ~sinks
        current += 1
    return level


def _sorted_by_node(data: NormalizedDurations) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.lexsort((data.z, data.node))
    count = np.bincount(data.node, minlength=data.n_nodes)
    offset = np.concatenate(([0], np.cumsum(count)[:-1]))
    return data.z[order], count, offset


def node_quantiles(z_sorted: np.ndarray, count: np.ndarray, offset: np.ndarray,
                   q: float) -> np.ndarray:
    """Per-node quantile q (numpy 'linear' method) of node-contiguous sorted values."""
    if len(z_sorted) == 0:
        return np.full(len(count), np.nan)
    pos = (np.maximum(count, 1) - 1) * q
    below = np.floor(pos).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(count - 1, 0))
    frac = pos - below
    last = len(z_sorted) - 1
    a = z_sorted[np.minimum(offset + below, last)]
    b = z_sorted[np.minimum(offset + above, last)]
    out = a + (b - a) * frac
    out[count == 0] = np.nan
    return out


def rank_nodes(data: NormalizedDurations, method: str = "band", min_tasks: int = 3,
               min_fit: int = 8, coverage: float = 0.95) -> NodeRanking:
    """Intervals and levels for every node in ``data``."""
    if method not in METHODS:
        raise HedgeError(f"ranking method {method!r}: expected one of {', '.join(METHODS)}")
    if min_tasks < 2:
        raise HedgeError(f"min_tasks = {min_tasks}: expected at least 2")
    z_sorted, count, offset = _sorted_by_node(data)
    n = np.maximum(count, 1)
    mean = np.bincount(data.node, weights=data.z, minlength=data.n_nodes) / n
    sq = np.bincount(data.node, weights=data.z * data.z, minlength=data.n_nodes) / n
    std = np.sqrt(np.maximum(sq - mean * mean, 0.0))
    tail = (1.0 - coverage) / 2.0
    lo = node_quantiles(z_sorted, count, offset, tail)
    hi = node_quantiles(z_sorted, count, offset, 1.0 - tail)
    if method == "mean-ci":
        sample_std = std * np.sqrt(n / np.maximum(n - 1, 1))
        half = stats.t.ppf(1.0 - tail, np.maximum(count - 1, 1)) * sample_std / np.sqrt(n)
        lo, hi = mean - half, mean + half
    elif method == "loglogistic":
        lo, hi = _loglogistic_intervals(z_sorted, count, offset, lo, hi, min_fit, tail)
    ranked = count >= min_tasks
    level = np.full(data.n_nodes, UNRANKED, dtype=np.int64)
    level[ranked] = interval_levels(lo[ranked], hi[ranked])
    lo = np.where(ranked, lo, np.nan)
    hi = np.where(ranked, hi, np.nan)
    mean = np.where(count > 0, mean, np.nan)
    return NodeRanking(nodes=data.nodes, count=count, mean=mean, std=std, lo=lo, hi=hi,
                       level=level, method=method)


def _loglogistic_intervals(z_sorted: np.ndarray, count: np.ndarray, offset: np.ndarray,
                           lo: np.ndarray, hi: np.ndarray, min_fit: int,
                           tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Fitted log-logistic quantiles per node; the band where a fit is not possible.

    One maximum-likelihood fit per node (scipy has no batched fit), so this is the slow
    method: about 10-50 ms per node.
    """
    lo, hi = lo.copy(), hi.copy()
    fallback = 0
    for i in np.flatnonzero(count >= min_fit):
        values = z_sorted[offset[i]:offset[i] + count[i]]
        if values[-1] - values[0] <= 0:
            fallback += 1
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c, loc, scale = stats.fisk.fit(values)
            qlo, qhi = stats.fisk.ppf([tail, 1.0 - tail], c, loc=loc, scale=scale)
        except (ValueError, RuntimeError, FloatingPointError):
            fallback += 1
            continue
        if np.isfinite(qlo) and np.isfinite(qhi):
            lo[i], hi[i] = qlo, qhi
        else:
            fallback += 1
    fallback += int(((count > 0) & (count < min_fit)).sum())
    if fallback:
        log.info("log-logistic: %d nodes used the empirical band (too few tasks or no fit)",
                 fallback)
    return lo, hi


def select_weak(ranking: NodeRanking, policy: str = "level0", k: int = 5) -> np.ndarray:
    """Names of the weak nodes, chosen among the slower level-0 nodes.

    A level-0 node is a candidate only when some ranked node is reliably faster than it
    (that node's interval lies entirely below its own). Level 0 alone would also hold every
    node when nodes do not differ (no edges: all intervals overlap) and nodes whose interval
    is merely wide; the published rule would then blacklist a whole healthy cluster.

    ``level0``: every candidate. ``top-k-std``: the k candidates with the largest std of
    normalised durations (level 0 can be large when intervals are wide). ``auto``: all
    candidates when there are at most k, otherwise top-k-std.
    """
    if policy not in WEAK_POLICIES:
        raise HedgeError(f"weak policy {policy!r}: expected one of {', '.join(WEAK_POLICIES)}")
    if k < 0:
        raise HedgeError(f"weak policy k = {k}: expected k >= 0")
    level0 = slower_level0(ranking)
    if policy == "level0" or (policy == "auto" and len(level0) <= k):
        return ranking.nodes[level0]
    by_std = level0[np.argsort(-ranking.std[level0], kind="stable")]
    return ranking.nodes[by_std[:k]]


def slower_level0(ranking: NodeRanking) -> np.ndarray:
    """Indices of the level-0 nodes that some ranked node is reliably faster than."""
    ranked = ranking.level != UNRANKED
    if not ranked.any():
        return np.array([], dtype=np.int64)
    fastest_hi = ranking.hi[ranked].min()
    return np.flatnonzero((ranking.level == 0) & (ranking.lo > fastest_hi))
