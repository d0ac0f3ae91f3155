"""hedge.nodes: node performance analysis and blacklisting.

- ``load_history(source)``: task history from a CSV, .jhist, Rumen JSON, Google 2011
  task_events file or a JobHistory Server URL (``hedge.nodes.sources``)
- ``normalize`` / ``rank_nodes`` / ``select_weak``: normalised durations and interval ranking
- ``hedge.nodes.mlna.MLNA``: weak-node prediction with XGBoost
- ``hedge.nodes.watch.Watcher`` + ``scripts/hedge-health-check.sh``: blacklist publishing
- ``NodeView``: levels and blacklist for the control plane (ClusterFacts.node_level/blacklist)
"""

from hedge.nodes.normalize import normalize
from hedge.nodes.ranking import rank_nodes, select_weak
from hedge.nodes.sources import load_history
from hedge.nodes.view import NodeView

__all__ = ["NodeView", "load_history", "normalize", "rank_nodes", "select_weak"]
