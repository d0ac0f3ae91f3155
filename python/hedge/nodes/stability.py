"""How stable node ranks are over time: rank the two halves of a trace separately.

The normalised durations (computed once on the whole trace, so every job keeps its full
set of tasks) are split at the median finish time into two halves of equal size; each half
is ranked on its own. Over the nodes ranked in both halves we report the Spearman rank
correlation of the node means and of the levels, the share of nodes whose level is the
same, and the Jaccard overlap of the two level-0 (weakest) sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from hedge.nodes.normalize import NormalizedDurations
from hedge.nodes.ranking import NodeRanking, rank_nodes


@dataclass
class HalfStability:
    first: NodeRanking
    second: NodeRanking
    common: int                # nodes ranked in both halves
    spearman_mean: float       # NaN when fewer than 3 common nodes
    spearman_level: float
    same_level: float
    jaccard_level0: float

    def summary(self) -> dict[str, object]:
        def num(x: float) -> float | None:
            return None if not np.isfinite(x) else round(float(x), 4)

        return {"common_nodes": self.common,
                "level_sizes_first": self.first.level_sizes(),
                "level_sizes_second": self.second.level_sizes(),
                "spearman_mean": num(self.spearman_mean),
                "spearman_level": num(self.spearman_level),
                "same_level": num(self.same_level),
                "jaccard_level0": num(self.jaccard_level0)}


def _subset(data: NormalizedDurations, mask: np.ndarray) -> NormalizedDurations:
    return NormalizedDurations(node=data.node[mask], nodes=data.nodes, z=data.z[mask],
                               end=data.end[mask], dropped_single=0)


def half_stability(data: NormalizedDurations, method: str = "mean-ci",
                   min_tasks: int = 3) -> HalfStability:
    split = np.median(data.end)
    first = rank_nodes(_subset(data, data.end <= split), method=method, min_tasks=min_tasks)
    second = rank_nodes(_subset(data, data.end > split), method=method, min_tasks=min_tasks)
    both = (first.level >= 0) & (second.level >= 0)
    n = int(both.sum())
    rho_mean = rho_level = np.nan
    if n >= 3:
        rho_mean = _spearman(first.mean[both], second.mean[both])
        rho_level = _spearman(first.level[both], second.level[both])
    same = float((first.level[both] == second.level[both]).mean()) if n else np.nan
    weak1 = both & (first.level == 0)
    weak2 = both & (second.level == 0)
    union = (weak1 | weak2).sum()
    jaccard = float((weak1 & weak2).sum() / union) if union else np.nan
    return HalfStability(first=first, second=second, common=n, spearman_mean=rho_mean,
                         spearman_level=rho_level, same_level=same, jaccard_level0=jaccard)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)
