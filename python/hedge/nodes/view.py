"""What the control plane asks about nodes: current levels and the blacklist.

``NodeView`` reads the JSON status ``hedge nodes watch`` publishes (re-reading it when the
file changes) or wraps an in-memory ranking. Policies get the values through ClusterFacts:
``node_level`` (0 = weakest, -1 = unknown/unranked) and ``blacklist`` (node indices), both
aligned with the caller's own node order (``cluster_fields(node_names)``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hedge.errors import HedgeError
from hedge.nodes.blacklist import STATUS_FORMAT, STATUS_VERSION
from hedge.nodes.ranking import UNRANKED, NodeRanking


@dataclass
class NodeView:
    """Node levels and blacklist, by host name."""

    level_by_node: dict[str, int] = field(default_factory=dict)
    blacklisted: list[str] = field(default_factory=list)
    path: Path | None = None
    _mtime: float = -1.0

    @classmethod
    def from_status(cls, path: str | Path) -> NodeView:
        view = cls(path=Path(path))
        view.refresh()
        return view

    @classmethod
    def from_ranking(cls, ranking: NodeRanking, blacklist: Sequence[str] = ()) -> NodeView:
        levels = {str(n): int(v) for n, v in zip(ranking.nodes, ranking.level, strict=True)}
        return cls(level_by_node=levels, blacklisted=sorted(blacklist))

    def refresh(self) -> None:
        """Re-read the status file if it changed since the last read."""
        if self.path is None:
            return
        try:
            mtime = self.path.stat().st_mtime
            if mtime == self._mtime:
                return
            doc = json.loads(self.path.read_text())
        except OSError as exc:
            raise HedgeError(f"{self.path}: cannot read node status ({exc.strerror})") from exc
        except ValueError as exc:
            raise HedgeError(f"{self.path}: node status is not JSON ({exc})") from exc
        if not isinstance(doc, dict) or doc.get("format") != STATUS_FORMAT \
                or doc.get("version") != STATUS_VERSION:
            raise HedgeError(f"{self.path}: fields 'format'/'version' are not "
                             f"{STATUS_FORMAT!r}/{STATUS_VERSION}")
        levels, listed = doc.get("levels", {}), doc.get("blacklist", [])
        if not isinstance(levels, dict) or not isinstance(listed, list):
            raise HedgeError(f"{self.path}: field 'levels' must be an object and "
                             "'blacklist' a list")
        self.level_by_node = {str(k): int(v) for k, v in levels.items()}
        self.blacklisted = sorted(str(n) for n in listed)
        self._mtime = mtime

    def levels(self, nodes: Sequence[str] | None = None) -> dict[str, int] | np.ndarray:
        """All levels by name, or an array aligned with ``nodes`` (-1 where unknown)."""
        self.refresh()
        if nodes is None:
            return dict(self.level_by_node)
        return np.array([self.level_by_node.get(n, UNRANKED) for n in nodes], dtype=np.int64)

    def blacklist(self, nodes: Sequence[str] | None = None) -> list[str] | np.ndarray:
        """Blacklisted names, or their indices in ``nodes`` (names not in it are skipped)."""
        self.refresh()
        if nodes is None:
            return list(self.blacklisted)
        listed = set(self.blacklisted)
        return np.array([i for i, n in enumerate(nodes) if n in listed], dtype=np.int64)

    def cluster_fields(self, nodes: Sequence[str]) -> dict[str, np.ndarray]:
        """``node_level`` and ``blacklist`` keyword arguments for ClusterFacts."""
        return {"node_level": self.levels(nodes), "blacklist": self.blacklist(nodes)}
