"""hedge.sim: the trace-driven cluster simulator.

- ``simulate(workload, policy, cluster, seed, deadline_factor)`` -> ``SimResult``
  (``hedge.sim.engine``; the model is described there and in ``hedge.sim.cluster``)
- ``summarize(result)`` -> the table row (``hedge.sim.metrics``)
- ``hedge simulate`` (``hedge.sim.cli``), sweeps in parallel processes (``hedge.sim.sweep``)
"""

from hedge.lazy import lazy_exports

# each name -> the module it comes from, imported when first read
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "ClusterConfig": "hedge.sim.cluster",
    "parse_cluster": "hedge.sim.cluster",
    "Simulator": "hedge.sim.engine",
    "simulate": "hedge.sim.engine",
    "summarize": "hedge.sim.metrics",
    "AttemptRecords": "hedge.sim.results",
    "SimResult": "hedge.sim.results",
})
