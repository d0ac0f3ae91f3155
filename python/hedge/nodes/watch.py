"""``hedge nodes watch``: recompute node weakness every interval and publish the blacklist.

Each round: load the history (file or History Server, the last ``lookback`` seconds),
compute candidates (interval ranking, or an ML-NA model's prediction for the period that
contains now, from the complete period before it), pass them through the ``Blacklister``
(cap, dwell) and publish the blacklist file and the JSON status.

A round whose fetch or analysis fails, or whose history is empty, publishes nothing: the
last good blacklist stays in place (the health checker keeps using it) and the status file
records the error and the time of the last good round. A failed fetch therefore never
shrinks or empties the published set.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from hedge.errors import HedgeError
from hedge.nodes.blacklist import Blacklister, publish, write_status
from hedge.nodes.mlna import MLNA
from hedge.nodes.normalize import normalize
from hedge.nodes.ranking import rank_nodes, select_weak
from hedge.nodes.sources import is_url, load_histories

log = logging.getLogger(__name__)


@dataclass
class RoundResult:
    ok: bool
    blacklist: list[str]
    message: str


@dataclass
class Watcher:
    """One publisher of the blacklist; ``step`` runs one round, ``run`` loops."""

    source: str | list[str]  # file, directory or History Server URL (or several)
    out: Path
    status: Path
    blacklister: Blacklister = field(default_factory=Blacklister)
    model: MLNA | None = None      # None: interval ranking
    method: str = "mean-ci"
    weak_policy: str = "auto"
    k: int = 5
    threshold: float = 0.5         # ML-NA probability above which a node is a candidate
    lookback: float = 30 * 86400.0  # History Server window (s before now)
    by_type: bool = False
    # the cluster's host names; when given, names outside it are never published and the
    # cap counts these nodes (history names can be stale hosts or differ in form)
    known_nodes: frozenset[str] | None = None
    last_good: dict[str, Any] | None = None

    def step(self, now: float | None = None) -> RoundResult:
        now = time.time() if now is None else now
        try:
            levels, scores, candidates = self._analyse(now)
        except (HedgeError, OSError, requests.RequestException) as exc:
            kept = list(self.last_good["blacklist"]) if self.last_good else []
            when = (f" from {self.last_good['time']}" if self.last_good
                    else " (none published yet)")
            message = (f"round failed ({exc}); keeping the last good blacklist of "
                       f"{len(kept)} node(s){when}")
            log.warning("hedge nodes watch: %s", message)
            write_status(self.status, {**(self.last_good or {"blacklist": [], "levels": {}}),
                                       "last_error": str(exc), "last_error_time": now})
            return RoundResult(ok=False, blacklist=list(kept), message=message)
        n_nodes = len(levels)
        if self.known_nodes is not None:
            unknown = sorted(set(candidates) - self.known_nodes)
            if unknown:
                log.warning("hedge nodes watch: %d weak node name(s) are not cluster nodes "
                            "and are not published: %s", len(unknown), ", ".join(unknown[:5]))
            candidates = [n for n in candidates if n in self.known_nodes]
            n_nodes = len(self.known_nodes)
        listed = self.blacklister.update(candidates, scores, n_nodes=n_nodes, now=now)
        publish(self.out, listed, now=now)
        self.last_good = {"time": now, "source": self.source, "blacklist": listed,
                          "levels": levels, "candidates": sorted(candidates),
                          "method": "ml-na" if self.model else self.method}
        write_status(self.status, {**self.last_good, "last_error": None})
        message = (f"published {len(listed)} of {len(levels)} node(s) "
                   f"({len(candidates)} candidate(s))")
        log.info("hedge nodes watch: %s", message)
        return RoundResult(ok=True, blacklist=listed, message=message)

    def _analyse(self, now: float) -> tuple[dict[str, int], dict[str, float], list[str]]:
        sources = [self.source] if isinstance(self.source, str) else list(self.source)
        remote = any(is_url(s) for s in sources)
        history = load_histories(sources, since=now - self.lookback if remote else None,
                                 until=now if remote else None)
        if history.num_rows == 0:
            raise HedgeError(f"{' '.join(sources)}: the history is empty")
        ranking = rank_nodes(normalize(history, by_type=self.by_type), method=self.method)
        levels = {str(n): int(v) for n, v in zip(ranking.nodes, ranking.level, strict=True)}
        if self.model is not None:
            prediction = self.model.predict_current(history, now)
            scores = {str(n): float(p) for n, p in zip(prediction.nodes, prediction.proba,
                                                        strict=True)}
            candidates = [str(n) for n in prediction.weak(self.threshold)]
        else:
            scores = {str(n): float(s) for n, s in zip(ranking.nodes, ranking.std, strict=True)}
            candidates = [str(n) for n in select_weak(ranking, self.weak_policy, self.k)]
        return levels, scores, candidates

    def run(self, interval: float, iterations: int | None = None) -> None:
        done = 0
        while iterations is None or done < iterations:
            started = time.monotonic()
            self.step()
            done += 1
            if iterations is not None and done >= iterations:
                break
            time.sleep(max(0.0, interval - (time.monotonic() - started)))
