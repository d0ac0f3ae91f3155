"""NEPAB blacklisting: turn weak-node candidates into a stable, capped published set.

Rules applied by ``Blacklister.update`` at time ``now``:

- cap: never more than ``floor(max_fraction * n_nodes)`` nodes are listed (n_nodes: the
  nodes seen in the history), so a bad analysis cannot take the cluster down;
- dwell: a node stays listed for at least ``min_dwell`` seconds after it was added, and,
  once released, is not listed again for ``min_dwell`` seconds (no flapping);
- priority when the cap bites: nodes held by dwell, then nodes already listed that are
  still candidates, then new candidates; higher score first within each group.

``publish`` writes the set atomically (temporary file in the same directory, fsync, then
rename) as one host name per line after a ``#`` header, the format
``scripts/hedge-health-check.sh`` reads; ``write_status`` writes the JSON status that
``hedge.nodes.view.NodeView`` serves to the control plane.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hedge.errors import HedgeError
from hedge.outputs import write_atomic

STATUS_FORMAT = "hedge-nodes-status"
STATUS_VERSION = 1


@dataclass
class Blacklister:
    """Stateful cap + dwell filter over successive weak-node candidate sets."""

    max_fraction: float = 0.1
    min_dwell: float = 3600.0
    listed: dict[str, float] = field(default_factory=dict)    # node -> time added
    released: dict[str, float] = field(default_factory=dict)  # node -> time released

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_fraction <= 1.0:
            raise HedgeError(f"blacklist cap max_fraction = {self.max_fraction}, expected a "
                             "fraction in [0, 1]")
        if self.min_dwell < 0:
            raise HedgeError(f"blacklist min_dwell = {self.min_dwell}, expected >= 0 seconds")

    def update(self, candidates: Iterable[str], scores: Mapping[str, float], n_nodes: int,
               now: float) -> list[str]:
        """The new blacklist (sorted) given this round's candidates."""
        cap = math.floor(self.max_fraction * n_nodes + 1e-9)
        wanted = set(candidates)
        held = {n for n, t in self.listed.items() if now - t < self.min_dwell}
        still = (set(self.listed) & wanted) - held
        cooling = {n for n, t in self.released.items() if now - t < self.min_dwell}
        new = wanted - set(self.listed) - cooling

        def by_score(nodes: set[str]) -> list[str]:
            return sorted(nodes, key=lambda n: (-scores.get(n, 0.0), n))

        chosen = (by_score(held) + by_score(still) + by_score(new))[:cap]
        for node in set(self.listed) - set(chosen):
            self.released[node] = now
            del self.listed[node]
        for node in chosen:
            self.listed.setdefault(node, now)
            self.released.pop(node, None)
        return sorted(chosen)


def publish(path: str | Path, nodes: Iterable[str], now: float | None = None) -> None:
    """Atomically replace ``path`` with the blacklist (one host per line)."""
    nodes = sorted(nodes)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None
                                                            else now))
    text = f"# hedge node blacklist, {stamp}, {len(nodes)} node(s)\n"
    text += "".join(f"{n}\n" for n in nodes)
    write_atomic(Path(path), text)


def read_blacklist(path: str | Path) -> list[str]:
    """Host names in a blacklist (or node list) file; comments and blank lines skipped."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise HedgeError(f"{path}: cannot read host list ({exc.strerror or exc})") from exc
    return [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]


def write_status(path: str | Path, status: dict[str, object]) -> None:
    """Atomically write the JSON status (format name and version added here)."""
    doc = {"format": STATUS_FORMAT, "version": STATUS_VERSION, **status}
    write_atomic(Path(path), json.dumps(doc, indent=1, sort_keys=True) + "\n")
