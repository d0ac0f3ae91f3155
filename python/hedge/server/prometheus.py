"""The figures of one ``hedge serve`` as Prometheus metrics, in a registry of its own.

Each server owns a :class:`~prometheus_client.CollectorRegistry` (never the process-wide
default one), so two servers in one process, or the tests, never see each other's counts.
Labels are bounded: ``policy`` is a registered policy name (a session only opens with one),
``reason`` one of the fixed sets below; job ids and hosts never become labels.

Copies won and lost and the wasted container time come from the ended attempts the shim
reports with their final state (wire version 3; :mod:`hedge.server.outcomes` says how exact
each is). They are lower bounds: ends after the AM's last scan are not counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# A server-side decision takes a fraction of a millisecond to a few ms (README: p50 about
# 1.3 ms for a 1,001-task job); the shim waits 200 ms by default (hedge.controlplane.deadline.ms)
# before it falls back, so the buckets resolve 0.1 ms..1 s. Seconds, as Prometheus expects.
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1,
                   0.25, 0.5, 1.0)

# why a scan got a rejection (the AM decides that scan by Hadoop's rule)
REJECT_REASONS = (
    "frame",          # oversized frame or bad magic: the connection is dropped too
    "malformed",      # the frame does not decode (wrong sizes, bad UTF-8, wire version)
    "invalid",        # the scan fails validation (limits, field checks, key order)
    "policy_answer",  # the policy answered something the AM cannot do
    "policy_error",   # the policy (or the server) raised: a bug
)
# why an AM's open() was refused (the job then runs on Hadoop's own speculation)
REFUSE_REASONS = (
    "limit",     # max_sessions reached
    "refused",   # the job's policy or parameters: unknown, not allowed, not for a live AM
    "internal",  # an unexpected error
)

# connection failure kinds that are a wrong credential (the others: load, TLS, timeouts, I/O)
AUTH_FAILURE_KINDS = ("wrong_token", "session")


@dataclass
class _PolicyChildren:
    """The labelled series of one policy (``labels()`` costs microseconds per call; a scan
    updates several series)."""

    scans: Counter
    latency: Histogram
    cpu: Counter
    copies: Counter
    kills: Counter
    fallbacks: Counter
    copies_won: Counter
    copies_lost: Counter
    wasted: Counter


class ServerCollectors:
    """Every Prometheus series of one server, registered in :attr:`registry`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()

        def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
            return Counter(name, doc, labels, registry=self.registry)

        self.sessions_open = Gauge("hedge_sessions_open", "Job sessions open now.",
                                   registry=self.registry)
        self.sessions_opened = counter("hedge_sessions_opened_total",
                                       "Job sessions opened.", ("policy",))
        self.sessions_refused = counter(
            "hedge_sessions_refused_total", "AM open() calls refused; the job runs on "
            "Hadoop's own speculation.", ("reason",))
        self.sessions_reaped = counter(
            "hedge_sessions_reaped_total", "Sessions dropped after idle_timeout without a "
            "scan (an AM that died without closing).")
        self.scans = counter("hedge_scans_total", "Scans received (answered or rejected).",
                             ("policy",))
        self.latency = Histogram(
            "hedge_decision_latency_seconds", "Server-side time per scan, request read to "
            "response ready.", ("policy",), buckets=LATENCY_BUCKETS, registry=self.registry)
        self.cpu = counter("hedge_decision_cpu_seconds_total",
                           "CPU time of the deciding threads.", ("policy",))
        self.rejected = counter(
            "hedge_scans_rejected_total", "Scans answered with a rejection; the AM falls "
            "back to Hadoop's rule for each.", ("reason",))
        self.copies = counter("hedge_copies_requested_total",
                              "Speculative copies requested from AMs.", ("policy",))
        self.copies_won = counter(
            "hedge_copies_won_total", "Speculative copies that succeeded (the task's result "
            "is the copy's).", ("policy",))
        self.copies_lost = counter(
            "hedge_copies_lost_total", "Speculative copies killed or failed.", ("policy",))
        self.wasted = counter(
            "hedge_wasted_attempt_seconds_total", "Container-seconds of attempts (copies and "
            "originals) that were killed or failed: work thrown away.", ("policy",))
        self.kills = counter("hedge_kills_requested_total", "Attempt kills requested.",
                             ("policy",))
        self.fallbacks = counter(
            "hedge_client_fallbacks_total", "Scans AMs decided by Hadoop's rule (server "
            "unreachable, late or rejecting), reported at their next answered scan.",
            ("policy",))
        self.connection_failures = counter(
            "hedge_connection_failures_total", "Connections refused or failed before or "
            "while authenticating, per listener (py4j, data) and kind (hedge.server."
            "connections: refused, timeout, closed, wrong_token, session, tls_mismatch, ...).",
            ("channel", "kind"))
        self.auth_failures = counter(
            "hedge_auth_failures_total", "Connections that presented a wrong credential: the "
            "shared token (py4j) or a session's secret (data).", ("channel",))
        for reason in REJECT_REASONS:
            self.rejected.labels(reason)  # every reason shows, at 0, from the first scrape
        for reason in REFUSE_REASONS:
            self.sessions_refused.labels(reason)
        self._children: dict[str, _PolicyChildren] = {}

    def track_sessions(self, count: Callable[[], int]) -> None:
        """``hedge_sessions_open`` reads ``count()`` at each scrape."""
        self.sessions_open.set_function(count)

    def connection_failed(self, channel: str, kind: str) -> None:
        """One failed connection (called with every line hedge.server.connections logs)."""
        self.connection_failures.labels(channel, kind).inc()
        if kind in AUTH_FAILURE_KINDS:
            self.auth_failures.labels(channel).inc()

    def policy(self, name: str) -> _PolicyChildren:
        children = self._children.get(name)
        if children is None:  # a race here builds the same children twice: harmless
            children = _PolicyChildren(*(series.labels(name) for series in (
                self.scans, self.latency, self.cpu, self.copies, self.kills, self.fallbacks,
                self.copies_won, self.copies_lost, self.wasted)))
            self._children[name] = children
        return children
