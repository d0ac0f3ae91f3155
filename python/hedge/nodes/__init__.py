"""hedge.nodes: node performance analysis and blacklisting.

- ``load_history(source)``: task history from a CSV, .jhist, Rumen JSON, Google 2011
  task_events file or a JobHistory Server URL (``hedge.nodes.sources``)
- ``hedge.nodes.normalize.normalize`` / ``rank_nodes`` / ``select_weak``: normalised
  durations and interval ranking
- ``hedge.nodes.mlna.MLNA``: weak-node prediction with XGBoost
- ``hedge.nodes.watch.Watcher`` + ``scripts/hedge-health-check.sh``: blacklist publishing
- ``NodeView``: levels and blacklist for the control plane (ClusterFacts.node_level/blacklist)
"""

from hedge.lazy import lazy_exports

# each name -> the module it comes from, imported when first read
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "rank_nodes": "hedge.nodes.ranking",
    "select_weak": "hedge.nodes.ranking",
    "load_history": "hedge.nodes.sources",
    "NodeView": "hedge.nodes.view",
})
