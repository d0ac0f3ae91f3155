"""ML-NA features and k-means labels: per node, per period of ``period_days`` days.

Time is cut into periods of ``period_days`` days of ``day_seconds`` (default 86400;
shorter for small traces). Periods are aligned to multiples of the period length on the
history's clock (the first one holds the earliest finish time), so the boundaries do not
move when a sliding history window moves.
An attempt belongs to the day its finish time falls in. For node m, period p and day
N = 1..P of that period, with the node's normalised durations of days 1..N::

    mean_N  = mean(z)            std_N = population std(z)
    count_N = n_m / mean over the period's nodes of n   (1 = a typical node's share)

where n is the cumulative count of normalised durations up to day N. The feature vector
is [mean_1, std_1, count_1, ..., mean_P, std_P, count_P] (3P values; 90 for 30 days).
A day on which the node ran no task is NaN in all three (XGBoost treats NaN as missing),
as is every day after the end of the trace.

Labels (``kmeans_labels``): k-means on one period's vectors for k in 2..10, keep the k
with the best Calinski-Harabasz score; if that k's weak cluster holds more than
``max_weak_share`` (25%) of the nodes, move to the best-scoring k larger than it, and
repeat. The weak cluster is the centre with the most days of positive mean, ties broken by
the smallest average std. Weak nodes are labelled 1. k-means needs complete vectors, so for
clustering missing days carry the node's last cumulative values forward (that is what a
cumulative feature means) and days before its first task are 0.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import calinski_harabasz_score
from threadpoolctl import threadpool_limits  # a scikit-learn dependency

from hedge.errors import HedgeError
from hedge.nodes.normalize import NormalizedDurations

log = logging.getLogger(__name__)

N_PER_DAY = 3  # mean, std, count


@dataclass
class PeriodFeatures:
    """Features of every (period, node); ``present`` marks nodes with tasks in a period."""

    nodes: np.ndarray        # names, sorted
    features: np.ndarray     # (n_periods, n_nodes, 3 * period_days), NaN = missing day
    filled: np.ndarray       # same, forward-filled for clustering (no NaN)
    present: np.ndarray      # (n_periods, n_nodes) bool
    period_start: np.ndarray  # (n_periods,) seconds
    period_days: int
    day_seconds: float

    @property
    def n_periods(self) -> int:
        return self.features.shape[0]


def period_features(data: NormalizedDurations, period_days: int = 30,
                    day_seconds: float = 86400.0) -> PeriodFeatures:
    """Cumulative daily features (see module docstring), vectorised with bincount."""
    if period_days < 1 or not day_seconds > 0:
        raise HedgeError(f"ML-NA period: period_days = {period_days}, day_seconds = "
                         f"{day_seconds}; expected period_days >= 1 and day_seconds > 0")
    if len(data.z) == 0:
        raise HedgeError("ML-NA: the history has no successful attempts in jobs with more "
                         "than one task, so there is nothing to learn from")
    period_seconds = period_days * day_seconds
    origin = np.floor(data.end.min() / period_seconds) * period_seconds
    day = ((data.end - origin) // day_seconds).astype(np.int64)
    n_periods = int(day.max() // period_days) + 1
    n_nodes, P = data.n_nodes, period_days
    cell = (day // P * n_nodes + data.node) * P + day % P  # (period, node, day) flattened
    size = n_periods * n_nodes * P
    shape = (n_periods, n_nodes, P)
    count = np.bincount(cell, minlength=size).reshape(shape).astype(float)
    total = np.bincount(cell, weights=data.z, minlength=size).reshape(shape)
    square = np.bincount(cell, weights=data.z * data.z, minlength=size).reshape(shape)
    cum_n, cum_z, cum_sq = (np.cumsum(a, axis=2) for a in (count, total, square))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = cum_z / cum_n
        std = np.sqrt(np.maximum(cum_sq / cum_n - mean * mean, 0.0))
        present_nodes = (cum_n[:, :, -1:] > 0)
        typical = cum_n.sum(axis=1, keepdims=True) / present_nodes.sum(axis=1, keepdims=True)
        share = cum_n / typical
    filled = np.stack([np.nan_to_num(mean), np.nan_to_num(std), np.nan_to_num(share)], axis=3)
    features = filled.copy()
    features[count == 0] = np.nan
    return PeriodFeatures(
        nodes=data.nodes,
        features=features.reshape(n_periods, n_nodes, N_PER_DAY * P),
        filled=filled.reshape(n_periods, n_nodes, N_PER_DAY * P),
        present=present_nodes[:, :, 0],
        period_start=origin + np.arange(n_periods) * P * day_seconds,
        period_days=P, day_seconds=float(day_seconds),
    )


def weak_cluster(centres: np.ndarray) -> int:
    """Index of the centre with the most days of positive mean (ties: smallest mean std)."""
    per_day = centres.reshape(len(centres), -1, N_PER_DAY)
    positive_days = (per_day[:, :, 0] > 0).sum(axis=1)
    avg_std = per_day[:, :, 1].mean(axis=1)
    return int(np.lexsort((avg_std, -positive_days))[0])


@dataclass
class Clustering:
    k: int
    labels: np.ndarray  # 1 = weak
    scores: dict[int, float]


def kmeans_labels(vectors: np.ndarray, k_min: int = 2, k_max: int = 10,
                  max_weak_share: float = 0.25, random_state: int = 0) -> Clustering:
    """Weak (1) / normal (0) labels for one period's node vectors (see module docstring)."""
    n = len(vectors)
    ks = [k for k in range(k_min, k_max + 1) if k < n]
    if not ks:
        log.info("ML-NA labels: %d nodes are too few to cluster; all labelled normal", n)
        return Clustering(k=1, labels=np.zeros(n, dtype=np.int64), scores={})
    fits: dict[int, np.ndarray] = {}
    scores: dict[int, float] = {}
    # One OpenMP thread: these problems are tiny (nodes x 3P), and spinning up a thread team
    # per fit is ~10x slower than the fit itself, worse on a busy machine.
    with threadpool_limits(limits=1, user_api="openmp"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # duplicate vectors: handled below
        for k in ks:
            labels = KMeans(n_clusters=k, n_init=4,
                            random_state=random_state).fit_predict(vectors)
            if len(np.unique(labels)) < 2:  # identical vectors: no structure to score
                continue
            fits[k] = labels
            scores[k] = float(calinski_harabasz_score(vectors, labels))
    if not fits:
        return Clustering(k=1, labels=np.zeros(n, dtype=np.int64), scores={})
    shares = {k: float(_weak_mask(vectors, labels).mean()) for k, labels in fits.items()}
    k = choose_k(scores, shares, max_weak_share)
    return Clustering(k=k, labels=_weak_mask(vectors, fits[k]).astype(np.int64), scores=scores)


def choose_k(scores: dict[int, float], weak_share: dict[int, float],
             max_weak_share: float = 0.25) -> int:
    """The Calinski-Harabasz argmax k; while its weak cluster holds more than
    ``max_weak_share`` of the nodes, the best-scoring k larger than the current one (the
    last one tried when no larger k remains)."""
    k = max(scores, key=scores.__getitem__)
    while weak_share[k] > max_weak_share:
        larger = [j for j in scores if j > k]
        if not larger:
            break
        k = max(larger, key=scores.__getitem__)
    return k


def _weak_mask(vectors: np.ndarray, labels: np.ndarray) -> np.ndarray:
    ids = np.unique(labels)
    centres = np.stack([vectors[labels == c].mean(axis=0) for c in ids])
    return labels == ids[weak_cluster(centres)]
