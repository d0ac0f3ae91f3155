"""Normalised task durations: how slow an attempt was compared with its own job.

For every successful attempt i of job j (duration d_i = end - start)::

    z_i = (d_i - mean_j) / std_j        std_j: population std (ddof = 0) over job j

Only SUCCEEDED attempts count: a killed or failed attempt's run time says when it was
stopped, not how long the work took. Defined edge cases:

- a job with a single successful attempt: z = NaN (nothing to compare with); such rows
  are dropped from every node statistic;
- a job whose successful attempts all took the same time (std = 0): z = 0 for all of them
  (each is exactly typical).

``by_type=True`` normalises within (job, MAP/REDUCE) instead of within the job, because a
job's reduces usually take much longer than its maps; the issue's default is per job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass
class NormalizedDurations:
    """One row per successful attempt with a defined z-score."""

    node: np.ndarray   # node index into ``nodes``
    nodes: np.ndarray  # node names (str), sorted
    z: np.ndarray      # normalised duration
    end: np.ndarray    # finish time (s), used to bin attempts into days / halves
    dropped_single: int  # successful attempts dropped because their job had one

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)


def group_zscore(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """z-score of ``values`` within each group id (population std; see module docstring)."""
    _, inverse, counts = np.unique(group, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=values)
    means = sums / counts
    centred = values - means[inverse]
    std = np.sqrt(np.bincount(inverse, weights=centred * centred) / counts)
    spread = std[inverse]
    z = np.divide(centred, spread, out=np.zeros_like(centred), where=spread > 0)
    z[counts[inverse] == 1] = np.nan
    return z


def normalize(history: pa.Table, by_type: bool = False) -> NormalizedDurations:
    """Normalised durations of the successful attempts of ``history``."""
    ok = history.filter(pc.equal(history.column("state"), "SUCCEEDED"))
    key = ok.column("job")
    if by_type:
        key = pc.binary_join_element_wise(key, ok.column("type"), "\x00")
    start = ok.column("start").to_numpy()
    end = ok.column("end").to_numpy()
    z = group_zscore(end - start, np.asarray(key.to_numpy(zero_copy_only=False)))
    keep = ~np.isnan(z)
    names = np.asarray(ok.column("node").to_numpy(zero_copy_only=False))
    nodes, node = np.unique(names[keep], return_inverse=True)
    return NormalizedDurations(node=node, nodes=nodes, z=z[keep], end=end[keep],
                               dropped_single=int((~keep).sum()))
