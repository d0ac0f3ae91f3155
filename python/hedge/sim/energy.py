"""Energy hook: joules consumed by each attempt.

Interface (kept small on purpose; the window-reservation work refines the power model here):

    attempt_energy(records, cluster) -> np.ndarray   # joules per attempt row
    total_energy(records, cluster) -> float

Current model: constant power per busy slot, ``energy_i = cluster.power * (end_i - start_i)``
(watts x seconds). Idle slots draw nothing in this model.
"""

from __future__ import annotations

import numpy as np

from hedge.sim.cluster import ClusterConfig
from hedge.sim.results import AttemptRecords


def attempt_energy(records: AttemptRecords, cluster: ClusterConfig) -> np.ndarray:
    """Joules used by each attempt: ``power`` watts for as long as it held its slot."""
    return cluster.power * records.duration


def total_energy(records: AttemptRecords, cluster: ClusterConfig) -> float:
    """Joules used by all attempts of a run."""
    return float(attempt_energy(records, cluster).sum())
