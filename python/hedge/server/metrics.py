"""Server metrics, emitted as one grep-able log line per interval.

    hedge.metrics sessions=12 scans=720 scans_per_s=12.0 p50_ms=0.41 p99_ms=2.30
        cpu_p50_ms=0.38 copies=3 kills=0 rejected=0 fallbacks=5 opened=1 refused=0
        copies_won=2 copies_lost=1 wasted_s=41.5

``p50_ms``/``p99_ms``: server-side decision latency (request fully read -> response
ready) over the interval; ``cpu_p50_ms``: CPU time of the deciding thread per scan (what the
latency would be without contention for the CPU); ``fallbacks``: scans clients reported deciding on their own
(control plane unreachable, late or refusing) since their previous answered scan;
``copies_won``/``copies_lost``/``wasted_s``: what the attempts that ended came to
(:mod:`hedge.server.outcomes`: container-seconds of killed and failed attempts, lower bounds).

The same events also feed the server's Prometheus series (:mod:`hedge.server.prometheus`),
which only ever count up and are served at ``/metrics`` when ``metrics_address`` is set.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from hedge.server.outcomes import Outcomes
from hedge.server.prometheus import ServerCollectors


@dataclass
class Metrics:
    """Counters for one interval (thread-safe); ``line()`` formats and resets them."""

    started: float = field(default_factory=time.monotonic)
    scans: int = 0
    copies: int = 0
    kills: int = 0
    rejected: int = 0
    fallbacks: int = 0
    opened: int = 0
    refused: int = 0
    ended: Outcomes = field(default_factory=Outcomes)
    _latencies: list[float] = field(default_factory=list)
    _cpu: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # the same events, counted since start for /metrics (never reset)
    exported: ServerCollectors = field(default_factory=ServerCollectors)

    def scan(self, seconds: float, copies: int = 0, kills: int = 0, fallbacks: int = 0,
             rejected: str = "", cpu_seconds: float | None = None, policy: str = "",
             ended: Outcomes | None = None) -> None:
        """One scan of a session of ``policy``; ``rejected``: the reason it was refused
        (:data:`hedge.server.prometheus.REJECT_REASONS`), empty when answered; ``ended``:
        what the attempts this scan reported ended came to."""
        ended = ended or Outcomes()
        with self._lock:
            self.scans += 1
            self.ended += ended
            self.copies += copies
            self.kills += kills
            self.fallbacks += fallbacks
            self.rejected += int(bool(rejected))
            if len(self._latencies) < 1_000_000:
                self._latencies.append(seconds)
                if cpu_seconds is not None:
                    self._cpu.append(cpu_seconds)
        series = self.exported.policy(policy)
        series.scans.inc()
        series.latency.observe(seconds)
        if cpu_seconds:
            series.cpu.inc(cpu_seconds)
        # most scans request nothing: skip the zero increments (each takes a lock)
        for counter, amount in ((series.copies, copies), (series.kills, kills),
                                (series.fallbacks, fallbacks),
                                (series.copies_won, ended.copies_won),
                                (series.copies_lost, ended.copies_lost),
                                (series.wasted, ended.wasted_s)):
            if amount:
                counter.inc(amount)
        if rejected:
            self.exported.rejected.labels(rejected).inc()

    def session(self, opened: bool, policy: str = "", reason: str = "refused") -> None:
        """A session opened (of ``policy``) or refused (for ``reason``, one of
        :data:`hedge.server.prometheus.REFUSE_REASONS`)."""
        with self._lock:
            if opened:
                self.opened += 1
            else:
                self.refused += 1
        if opened:
            self.exported.sessions_opened.labels(policy).inc()
        else:
            self.exported.sessions_refused.labels(reason).inc()

    def line(self, sessions: int, now: float | None = None) -> str:
        """The metrics line for the interval ending now; counters start over."""
        now = time.monotonic() if now is None else now
        with self._lock:
            elapsed = max(now - self.started, 1e-9)
            lat = np.asarray(self._latencies) * 1e3
            p50, p99 = (np.percentile(lat, [50, 99]) if len(lat) else (0.0, 0.0))
            cpu = float(np.median(self._cpu)) * 1e3 if self._cpu else 0.0
            text = (f"hedge.metrics sessions={sessions} scans={self.scans} "
                    f"scans_per_s={self.scans / elapsed:.1f} p50_ms={p50:.2f} p99_ms={p99:.2f} "
                    f"cpu_p50_ms={cpu:.2f} "
                    f"copies={self.copies} kills={self.kills} rejected={self.rejected} "
                    f"fallbacks={self.fallbacks} opened={self.opened} refused={self.refused} "
                    f"copies_won={self.ended.copies_won} copies_lost={self.ended.copies_lost} "
                    f"wasted_s={self.ended.wasted_s:.1f}")
            self.started = now
            self.scans = self.copies = self.kills = self.rejected = self.fallbacks = 0
            self.opened = self.refused = 0
            self.ended = Outcomes()
            self._latencies = []
            self._cpu = []
        return text
