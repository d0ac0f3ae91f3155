"""hedge.sim: the trace-driven cluster simulator.

- ``simulate(workload, policy, cluster, seed, deadline_factor)`` -> ``SimResult``
  (``hedge.sim.engine``; the model is described there and in ``hedge.sim.cluster``)
- ``summarize(result)`` -> the table row (``hedge.sim.metrics``)
- ``hedge simulate`` (``hedge.sim.cli``), sweeps in parallel processes (``hedge.sim.sweep``)
"""

from hedge.sim.cluster import ClusterConfig, parse_cluster
from hedge.sim.engine import Simulator, simulate
from hedge.sim.metrics import summarize
from hedge.sim.results import AttemptRecords, SimResult

__all__ = ["AttemptRecords", "ClusterConfig", "SimResult", "Simulator", "parse_cluster",
           "simulate", "summarize"]
