"""Energy of a simulated run, from the node power model of :mod:`hedge.analysis.energy`.

Interface (the simulator calls the first two):

    attempt_energy(records, cluster) -> np.ndarray      # joules per attempt row (dynamic)
    total_energy(records, cluster) -> float             # static + dynamic joules of the run
    energy_breakdown(records, cluster) -> dict          # dynamic joules by attempt category

Model: every node has ``cluster.slots`` cores (one slot per core) and draws
``P = P_static + min(n, c) * P_core + n * P_mem`` with n running attempts; ``P_core`` is
``cluster.power`` (watts per busy slot), ``P_static`` is ``cluster.static_power`` when the
cluster config has it, else :data:`STATIC_WATTS`. Network power is left out: attempt records
do not say whether an attempt read remote input. An attempt's energy is its share of its
node's dynamic power while it runs (``P_core * min(n, c) / n + P_mem``), so attempt energies
add up to the nodes' dynamic energy; the total adds every node's static power over the run's
span (first attempt start to last attempt end).

Breakdown categories (:data:`hedge.analysis.energy.ENERGY_CATEGORIES`): normal-success,
straggler-success, straggler-killed, copy-success, copy-killed; "straggler" is the ground
truth (the task's straggler factor > 1).
"""

from __future__ import annotations

import numpy as np

from hedge.analysis.energy import (
    PowerModel,
    ScheduleEnergy,
    attempt_category,
    schedule_energy,
)
from hedge.analysis.energy import (
    energy_breakdown as _by_category,
)
from hedge.sim.cluster import ClusterConfig
from hedge.sim.results import KILLED, AttemptRecords

# idle power of a node (W) when the cluster config does not say (commodity servers: ~100 W)
STATIC_WATTS = 100.0


def power_model(cluster: ClusterConfig) -> PowerModel:
    """The power model of the simulated cluster's nodes."""
    return PowerModel(static=float(getattr(cluster, "static_power", STATIC_WATTS)),
                      core=float(cluster.power), cores=int(cluster.slots))


def _schedule(records: AttemptRecords, cluster: ClusterConfig) -> ScheduleEnergy:
    return schedule_energy(records.node, records.start, records.end, power_model(cluster),
                           n_nodes=cluster.nodes)


def attempt_energy(records: AttemptRecords, cluster: ClusterConfig) -> np.ndarray:
    """Dynamic joules used by each attempt (its share of its node's dynamic power)."""
    return _schedule(records, cluster).attempt


def total_energy(records: AttemptRecords, cluster: ClusterConfig) -> float:
    """Joules used by the cluster over the run: static power of every node plus dynamic."""
    return _schedule(records, cluster).total


def energy_breakdown(records: AttemptRecords, cluster: ClusterConfig) -> dict[str, float]:
    """Dynamic joules per category, plus ``static`` and ``total``."""
    e = _schedule(records, cluster)
    cat = attempt_category(records.copy, records.outcome != KILLED, records.straggler)
    out = _by_category(e.attempt, cat)
    out.update(static=e.static, total=e.total)
    return out
