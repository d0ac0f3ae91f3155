"""Per-job sessions: one policy object per job, bounded sizes, every field checked.

A session turns decoded scans (:class:`hedge.server.wire.ScanRequest`) into the same
:class:`hedge.model.Snapshot` the simulator builds, hands it to its own policy object and
checks the answer before it goes back to the AM. Any problem raises HedgeError for that
scan only; other sessions never see it.
"""

from __future__ import annotations

import hmac
import inspect
import itertools
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from hedge.detect.validate import validate_snapshot
from hedge.errors import HedgeError
from hedge.model import (
    MAP,
    Actions,
    AttemptState,
    AttemptTable,
    ClusterFacts,
    JobFacts,
    Snapshot,
)
from hedge.policy import Policy, create
from hedge.server.wire import ScanRequest


@dataclass(frozen=True)
class Limits:
    """What one server accepts (bounds against runaway or hostile clients)."""

    max_sessions: int = 1000
    max_rows: int = 200_000
    max_nodes: int = 100_000
    max_copies: int = 16
    idle_timeout: float = 900.0

    @property
    def max_body_bytes(self) -> int:
        # rows + completed run times of up to 10x max_rows tasks + node names of 256 bytes
        from hedge.server.wire import ROW_BYTES
        return self.max_rows * ROW_BYTES + 40 * self.max_rows + 256 * self.max_nodes


def policy_family(name: str) -> str:
    """The configuration prefix family: ``chronos-restart`` -> ``chronos`` (hedge.chronos.*)."""
    return name.split("-", 1)[0]


def _coerce(text: str, default: object, key: str) -> object:
    try:
        if isinstance(default, bool):
            if text.strip().lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return text.strip().lower() in ("true", "1", "yes")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float) or default is None:
            return float(text)
    except ValueError:
        kind = "true/false" if isinstance(default, bool) else type(default).__name__
        raise HedgeError(f"policy parameter '{key}' = {text!r}: expected a {kind} value") from None
    return text


def policy_params(name: str, raw: Mapping[str, str], create_fn: Callable[..., Policy] = create,
                  ) -> dict[str, object]:
    """Keyword arguments for policy ``name`` from configuration entries.

    ``raw`` maps keys after the ``hedge.<family>.`` prefix (``progress.standard``) to text;
    dots and dashes become underscores (``progress_standard``) and values take the type of
    the parameter's default. Unknown keys raise HedgeError naming the accepted ones.
    """
    cls = type(create_fn(name))
    signature = inspect.signature(cls.__init__)
    accepted = {p.name: p.default for p in signature.parameters.values()
                if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD}
    params: dict[str, object] = {}
    family = policy_family(name)
    for key, text in raw.items():
        param = key.replace(".", "_").replace("-", "_")
        full = f"hedge.{family}.{key}"
        if param not in accepted:
            names = ", ".join(f"hedge.{family}.{p.replace('_', '.')}" for p in accepted) or "none"
            raise HedgeError(f"{full}: policy '{name}' has no parameter '{param}' "
                             f"(accepted: {names})")
        default = accepted[param]
        params[param] = _coerce(text, None if default is inspect.Parameter.empty else default,
                                full)
    return params


def parse_params(text: str) -> dict[str, str]:
    """``key=value`` lines (the shim's encoding of the job's hedge.<family>.* entries)."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise HedgeError(f"policy parameters line {number}: {line!r}, expected key=value")
        out[key.strip()] = value.strip()
    return out


def _distinct(keys: np.ndarray) -> bool:
    """True when no key repeats. Keys are dense and non-negative (checked before), so marking
    them in a boolean array of size max+1 is O(n) without the sort or hash of ``np.unique``
    (which cost half the server's time per scan at 10,000 rows)."""
    if len(keys) < 2:
        return True
    seen = np.zeros(int(keys.max()) + 1, dtype=bool)
    seen[keys] = True
    return int(np.count_nonzero(seen)) == len(keys)


@dataclass
class Session:
    """One job's conversation with the control plane."""

    session_id: int
    secret: bytes
    job_id: str
    policy_name: str
    policy: Policy
    limits: Limits
    cluster: Callable[[list[str], int, int], ClusterFacts]
    nodes: list[str] = field(default_factory=list)
    # the job's attempts as the shim last described them, indexed by attempt key (delta scans
    # update it in place); None until the first full snapshot
    table: dict[str, np.ndarray] | None = None
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    done_maps: np.ndarray = field(default_factory=lambda: np.empty(0))
    done_reduces: np.ndarray = field(default_factory=lambda: np.empty(0))
    last_seen: float = field(default_factory=time.monotonic)
    scans: int = 0
    copies: int = 0
    rejected: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, request: ScanRequest) -> Actions:
        """Validate one scan, ask the policy, check its answer."""
        with self.lock:
            self.last_seen = time.monotonic()
            self._merge(request)
            self._update_nodes(request)
            snapshot = self.snapshot(request)
            self._check_rows(snapshot)
            validate_snapshot(snapshot)
            actions = self.policy.decide(snapshot)
            self._check_actions(actions, snapshot)
            self.scans += 1
            self.copies += actions.copies_requested
            return actions

    def snapshot(self, request: ScanRequest) -> Snapshot:
        """The job as of this scan (after :meth:`_merge`): every live attempt, by key order."""
        job = JobFacts(
            job_id=self.job_id, start=request.job_start, n_maps=request.n_maps,
            n_reduces=request.n_reduces, deadline=request.deadline,
            completed_map_runtimes=self.done_maps, completed_reduce_runtimes=self.done_reduces,
        )
        rows = np.flatnonzero(self.live)
        attempts = AttemptTable(**{name: column[rows] for name, column in self.table.items()})
        cluster = self.cluster(self.nodes, request.total_slots, request.free_slots)
        return Snapshot(now=request.now, job=job, attempts=attempts, cluster=cluster)

    def _merge(self, request: ScanRequest) -> None:
        """Apply a full or delta scan to the key-indexed attempt table (vectorised scatter).

        Attempt keys are dense (the shim numbers a job's attempts 0, 1, 2...), so the table is
        a set of arrays indexed by key plus a ``live`` mask.
        """
        a = request.attempts
        keys = a.attempt
        limit = 10 * self.limits.max_rows
        if len(keys) and (keys.min() < 0 or keys.max() >= limit):
            raise HedgeError(f"job {self.job_id}: attempt keys must lie in [0, {limit})")
        if not _distinct(keys):
            raise HedgeError(f"job {self.job_id}: attempt ids are not unique")
        removed = request.removed
        if len(removed) and (removed.min() < 0 or removed.max() >= len(self.live)):
            raise HedgeError(f"job {self.job_id}: removed attempt key outside the table")
        if request.delta and self.table is None:
            raise HedgeError(f"job {self.job_id}: delta scan before any full snapshot "
                             "(the shim resends a full one)")
        if not request.delta or self.table is None:
            self.table = {name: getattr(a, name)[:0].copy() for name in AttemptTable.COLUMNS}
            self.live = np.zeros(0, dtype=bool)
            self.done_maps, self.done_reduces = np.empty(0), np.empty(0)
        size = int(keys.max()) + 1 if len(keys) else 0
        if size > len(self.live):
            grow = max(size, 2 * len(self.live))
            for name, column in self.table.items():
                bigger = np.zeros(grow, dtype=column.dtype)
                bigger[:len(column)] = column
                self.table[name] = bigger
            live = np.zeros(grow, dtype=bool)
            live[:len(self.live)] = self.live
            self.live = live
        for name in AttemptTable.COLUMNS:
            self.table[name][keys] = getattr(a, name)
        self.live[keys] = True
        self.live[removed] = False
        self.done_maps = np.concatenate([self.done_maps, request.completed_map_runtimes])
        self.done_reduces = np.concatenate([self.done_reduces,
                                            request.completed_reduce_runtimes])

    def _update_nodes(self, request: ScanRequest) -> None:
        # Idempotent: the client resends names from the last index it knows was received.
        if request.node_base > len(self.nodes):
            raise HedgeError(f"job {self.job_id}: node list starts at {request.node_base} but "
                             f"only {len(self.nodes)} names are known (resend from 0)")
        nodes = self.nodes[:request.node_base] + request.new_nodes
        if len(nodes) > self.limits.max_nodes:
            raise HedgeError(f"job {self.job_id}: {len(nodes)} nodes, the limit is "
                             f"{self.limits.max_nodes}")
        self.nodes = nodes

    def _check_rows(self, s: Snapshot) -> None:
        a, job = s.attempts, s.job
        if len(a) > self.limits.max_rows:
            raise HedgeError(f"job {self.job_id}: {len(a)} attempt rows, the limit is "
                             f"{self.limits.max_rows}")
        if not np.isfinite(s.now) or s.now < job.start:
            raise HedgeError(f"job {self.job_id}: scan time {s.now!r} is before the job start "
                             f"{job.start!r}")
        n_tasks = job.n_maps + job.n_reduces
        checks = (
            ("task", (a.task < 0) | (a.task >= n_tasks), f"expected a task index in [0, {n_tasks})"),
            ("task_type", a.task_type != np.where(a.task < job.n_maps, MAP, 1 - MAP),
             "does not match the task index (maps first, then reduces)"),
            ("state", a.state > max(AttemptState), "expected an AttemptState code 0..4"),
            ("node", (a.node < -1) | (a.node >= len(self.nodes)),
             f"expected -1 or a node index below {len(self.nodes)}"),
            ("start", (a.state == AttemptState.RUNNING) & np.isnan(a.start),
             "is missing on a RUNNING attempt"),
        )
        for name, bad, what in checks:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise HedgeError(f"job {self.job_id}: row {i}: field '{name}' = "
                                 f"{getattr(a, name)[i].item()!r} {what}")
        for name in ("completed_map_runtimes", "completed_reduce_runtimes"):
            runtimes = getattr(job, name)
            if (~np.isfinite(runtimes) | (runtimes < 0)).any():
                raise HedgeError(f"job {self.job_id}: {name} holds a negative or non-finite "
                                 "run time")

    def _check_actions(self, actions: Actions, s: Snapshot) -> None:
        n_tasks = s.job.n_maps + s.job.n_reduces
        t, c, p = actions.speculate_task, actions.speculate_copies, actions.prefer_node
        problems = (
            ((t < 0) | (t >= n_tasks)).any() and "a task index out of range",
            ((c < 1) | (c > self.limits.max_copies)).any()
            and f"copies outside 1..{self.limits.max_copies}",
            ((p < -1) | (p >= len(self.nodes))).any() and "an unknown preferred node",
            (~np.isin(actions.kill_attempt, s.attempts.attempt)).any()
            and "a kill of an unknown attempt",
            len(actions.resume_task) > 0 and "a resume (the live AM cannot resume attempts)",
        )
        for problem in problems:
            if problem:
                raise HedgeError(f"job {self.job_id}: policy '{self.policy_name}' answered "
                                 f"{problem}")


class SessionRegistry:
    """All live sessions of one server (thread-safe, bounded)."""

    def __init__(self, limits: Limits,
                 cluster: Callable[[list[str], int, int], ClusterFacts]) -> None:
        self.limits = limits
        self.cluster = cluster
        self._sessions: dict[int, Session] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def open(self, job_id: str, policy_name: str, params: Mapping[str, object]) -> Session:
        policy = create(policy_name, **params)
        if not getattr(policy, "live_am_supported", True):
            reason = getattr(policy, "live_am_reason", None) or (
                "it needs Speculative-Resume, and stock Hadoop discards a killed attempt's "
                "partial output; use it in the simulator, or chronos-restart/chronos-clone")
            raise HedgeError(f"policy '{policy_name}' cannot drive a live ApplicationMaster: "
                             f"{reason}")
        with self._lock:
            if len(self._sessions) >= self.limits.max_sessions:
                raise HedgeError(f"too many sessions ({self.limits.max_sessions}); job "
                                 f"{job_id} runs on Hadoop's own speculation")
            session = Session(next(self._ids), secrets.token_bytes(16), job_id, policy_name,
                              policy, self.limits, self.cluster)
            self._sessions[session.session_id] = session
            return session

    def authenticate(self, session_id: int, secret: bytes) -> Session | None:
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None or not hmac.compare_digest(session.secret, secret):
            return None
        return session

    def close(self, session_id: int) -> Session | None:
        with self._lock:
            return self._sessions.pop(session_id, None)

    def reap(self, now: float | None = None) -> list[Session]:
        """Drop sessions idle longer than the limit (AMs that died without closing)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = [s for s in self._sessions.values()
                    if now - s.last_seen > self.limits.idle_timeout]
            for s in idle:
                del self._sessions[s.session_id]
        return idle
