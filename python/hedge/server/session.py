"""Per-job sessions: one policy object per job, bounded sizes, every field checked.

A session turns decoded scans (:class:`hedge.server.wire.ScanRequest`) into the same
:class:`hedge.model.Snapshot` the simulator builds, hands it to its own policy object and
checks the answer before it goes back to the AM. Any problem raises HedgeError for that
scan only; other sessions never see it.
"""

from __future__ import annotations

import hmac
import itertools
import math
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

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
from hedge.model.validate import validate_snapshot
from hedge.policy import Policy, create
from hedge.policy.limits import SpeculationSettings, limit

# policy_family and policy_params live in hedge.policy.params; importable from here for the
# server's other modules
from hedge.policy.params import policy_family, policy_params, split_settings  # noqa: F401
from hedge.server.outcomes import Outcomes, outcomes_of
from hedge.server.placement import CopyPlacement
from hedge.server.table import EndedLog, GrowingArray, LiveAttempts
from hedge.server.utilisation import parse_resourcemanager
from hedge.server.wire import ScanRequest

_NO_CLUSTER = ClusterFacts(total_slots=0, free_slots=0)
# enum attribute lookups cost microseconds each; the checks run on every scan
_MAX_STATE = int(max(AttemptState))
_RUNNING = int(AttemptState.RUNNING)
_SUCCEEDED = int(AttemptState.SUCCEEDED)


class PolicyAnswerError(HedgeError):
    """The policy answered something the AM cannot do (counted apart from bad scans)."""


class SessionLimitError(HedgeError):
    """max_sessions reached (counted apart from jobs refused for their own settings)."""


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
        # rows + completed run times of up to 10x max_rows tasks + ended attempts of up to
        # 10x max_rows keys (a full snapshot names every one) + node names of 256 bytes
        from hedge.server.wire import ENDED_BYTES, ROW_BYTES
        return (self.max_rows * (ROW_BYTES + 40 + 10 * ENDED_BYTES)
                + 256 * self.max_nodes)


def parse_params(text: str) -> dict[str, str]:
    """``key=value`` lines (the shim's encoding of the job's hedge.<family>.* entries, then
    its speculation settings under their Hadoop names: hedge.policy.limits.PROPERTIES)."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise HedgeError(f"policy parameters line {number}: {line!r}, expected key=value")
        out[key.strip()] = value.strip()
    return out


# The job's map container, which the shim sends with the policy parameters where the job's
# configuration sets it: the slot hedge serve counts a cluster's free capacity in when the AM
# knows no slots (hedge.server.utilisation); the server's [cluster] container_mb and
# container_vcores stand in for a missing one.
CONTAINER_PROPERTIES = ("mapreduce.map.memory.mb", "mapreduce.map.cpu.vcores")


def split_container(raw: Mapping[str, str], default: tuple[int, int],
                    ) -> tuple[tuple[int, int], dict[str, str]]:
    """(the job's map container (MB, vcores), the other entries of ``raw``)."""
    size = list(default)
    for i, key in enumerate(CONTAINER_PROPERTIES):
        if key in raw:
            text = str(raw[key]).strip()
            if not (text.isdigit() and int(text) > 0):
                raise HedgeError(f"{key} = {text!r}: expected a whole number > 0 (the job's "
                                 "map container)")
            size[i] = int(text)
    return (size[0], size[1]), {k: v for k, v in raw.items() if k not in CONTAINER_PROPERTIES}


# The ResourceManager web address the job's AM configuration names, which the shim sends
# with the policy parameters: the RM hedge serve counts the job's free slots and node
# utilisation from when [cluster] resourcemanager names none (hedge.server.utilisation).
RESOURCEMANAGER_PARAM = "resourcemanager"


def split_resourcemanager(raw: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """(the RM web address the job's AM named, "" for none; the other entries of ``raw``)."""
    address = str(raw.get(RESOURCEMANAGER_PARAM, "")).strip()
    if address:
        address = parse_resourcemanager(
            address, f"{RESOURCEMANAGER_PARAM} (the RM web address the job's AM names)")
    return address, {k: v for k, v in raw.items() if k != RESOURCEMANAGER_PARAM}


def _distinct(keys: np.ndarray) -> bool:
    """True when no key repeats. Keys are dense and non-negative (checked before), so marking
    them in a boolean array of size max+1 is O(n) without the sort or hash of ``np.unique``
    (which cost half the server's time per scan at 10,000 rows)."""
    if len(keys) < 2:
        return True
    seen = np.zeros(int(keys.max()) + 1, dtype=bool)
    seen[keys] = True
    return int(np.count_nonzero(seen)) == len(keys)


def _rows_pass(a: AttemptTable, request: ScanRequest, n_nodes: int, max_rows: int) -> bool:
    """True when neither :meth:`Session._check_rows` nor :func:`validate_snapshot` rejects
    anything in these rows and this scan's new run times: the same conditions, as one
    combined mask (the per-check ``.any()`` calls, messages' objects and ``np.errstate`` of
    the full checks cost more than the rest of a small scan). NaN compares false here as
    there (numpy's comparisons do not warn on NaN, so no errstate is needed)."""
    now, n_maps = request.now, request.n_maps
    if len(a) > max_rows or not (math.isfinite(now) and now >= request.job_start):
        return False
    for runtimes in (request.completed_map_runtimes, request.completed_reduce_runtimes):
        if len(runtimes) and not (runtimes.min() >= 0 and math.isfinite(runtimes.max())):
            return False
    if len(a) == 0:
        return True
    late, p = now + 1e-9, a.progress
    bad = a.task < 0
    bad |= a.task >= n_maps + request.n_reduces
    bad |= a.task_type != np.where(a.task < n_maps, MAP, 1 - MAP)
    bad |= a.state > _MAX_STATE
    bad |= a.node < -1
    bad |= a.node >= n_nodes
    bad |= (a.state == _RUNNING) & np.isnan(a.start)
    bad |= ~((p >= 0) & (p <= 1))
    bad |= a.report_sent < a.start
    bad |= a.report_received < a.report_sent
    bad |= a.report_received > late
    bad |= a.first_progress_time > a.report_sent
    bad |= a.report_sent > late
    bad |= a.first_progress_time < a.start
    bad |= a.first_progress > p + 1e-12
    bad |= (a.state == _SUCCEEDED) & (p < 1)
    return not np.count_nonzero(bad)


@dataclass(frozen=True)
class _Checked:
    """What the table's rows were last validated against: a delta scan re-checks only its own
    rows while none of it changes (row checks depend on the task counts, the node list, the job
    start and, for "report after the scan time", on the scan time never going back)."""

    n_maps: int
    n_reduces: int
    job_start: float
    n_nodes: int
    now: float

    def covers(self, request: ScanRequest, n_nodes: int) -> bool:
        return (request.n_maps == self.n_maps and request.n_reduces == self.n_reduces
                and request.job_start == self.job_start and n_nodes >= self.n_nodes
                and request.now >= self.now)


@dataclass
class Session:
    """One job's conversation with the control plane."""

    session_id: int
    secret: bytes
    job_id: str
    policy_name: str
    policy: Policy
    limits: Limits
    # (nodes, total slots, free slots, the job's container (MB, vcores) or None)
    cluster: Callable[[list[str], int, int, tuple[int, int] | None], ClusterFacts]
    # the job's mapreduce.{map,reduce}.speculative and speculative caps, as the shim sent them
    # (Hadoop's defaults for a shim that sends none): answers are cut to them before they go
    speculation: SpeculationSettings = field(default_factory=SpeculationSettings)
    container: tuple[int, int] | None = None  # the job's map container (MB, vcores)
    nodes: list[str] = field(default_factory=list)
    # the job's live attempts as the shim last described them, updated in place by delta
    # scans; None until the first full snapshot and after any failed scan (the shim then
    # resends a full one)
    table: LiveAttempts | None = None
    done_maps: GrowingArray = field(default_factory=GrowingArray)
    done_reduces: GrowingArray = field(default_factory=GrowingArray)
    # every ended attempt's key, once; the winners are JobFacts.finished
    ended: EndedLog = field(default_factory=EndedLog)
    checked: _Checked | None = None
    last_seen: float = field(default_factory=time.monotonic)
    scans: int = 0
    copies: int = 0
    rejected: int = 0
    # what the attempts that ended came to (copies won and lost, wasted container time)
    outcomes: Outcomes = field(default_factory=Outcomes)
    # where the AM put the copies: on their original's node or elsewhere (MAPREDUCE-7169)
    placement: CopyPlacement = field(default_factory=CopyPlacement)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, request: ScanRequest) -> Actions:
        """Validate one scan, ask the policy, check its answer.

        Any failure leaves no partial state behind: the table is dropped, so the next scan
        must be a full snapshot (the shim sends one after every scan not answered OK).
        """
        with self.lock:
            self.last_seen = time.monotonic()
            try:
                return self._decide(request)
            except Exception:
                self.table, self.checked = None, None
                raise

    def _decide(self, request: ScanRequest) -> Actions:
        self._check_keys(request)
        self._update_nodes(request)
        self._check_ended(request)
        # Rows already in the table passed these checks at an earlier scan; a delta scan
        # checks its own rows before they enter the table (O(changed), not O(live)).
        whole = not request.delta or self.checked is None or not self.checked.covers(
            request, len(self.nodes))
        if not whole:
            self._validate(request.attempts, request)
        self._merge(request)
        if len(self.table) > self.limits.max_rows:
            raise HedgeError(f"job {self.job_id}: {len(self.table)} attempt rows, the limit "
                             f"is {self.limits.max_rows}")
        snapshot = self.snapshot(request)
        if whole:
            self._validate(snapshot.attempts, request)
        # every row now passed validate_snapshot at this scan or an earlier one, and its
        # checks that depend on the scan time only loosen as time goes on (_Checked)
        snapshot.validated = True
        # counted from a scan whose rows all passed (its ended attempts were checked first)
        self.placement.observe(request.attempts, snapshot.attempts, request.removed,
                               request.removed_task, request.removed_node,
                               request.removed_speculative)
        self.checked = _Checked(request.n_maps, request.n_reduces, request.job_start,
                                len(self.nodes), request.now)
        actions = self.policy.decide(snapshot)
        self._check_actions(actions, snapshot)
        # what the AM would let happen (hedge.policy.limits); the shim checks once more with
        # what only it knows: copies not started yet, tasks finished since this snapshot
        actions = limit(actions, snapshot, self.speculation)
        self.scans += 1
        self.copies += actions.copies_requested
        return actions

    def snapshot(self, request: ScanRequest) -> Snapshot:
        """The job as of this scan (after :meth:`_merge`): every live attempt, by key order.

        The arrays are read-only views of the session's table, valid until the next scan.
        """
        job = JobFacts(
            job_id=self.job_id, start=request.job_start, n_maps=request.n_maps,
            n_reduces=request.n_reduces, deadline=request.deadline,
            completed_map_runtimes=self.done_maps.view(),
            completed_reduce_runtimes=self.done_reduces.view(),
            finished=self.ended.facts(),
        )
        cluster = self.cluster(self.nodes, request.total_slots, request.free_slots,
                               self.container)
        return Snapshot(now=request.now, job=job, attempts=self.table.table(), cluster=cluster)

    def _check_keys(self, request: ScanRequest) -> None:
        """Keys in range and distinct, removals inside the table, a delta only after a full."""
        keys = request.attempts.attempt
        limit = 10 * self.limits.max_rows
        if len(keys) and (keys.min() < 0 or keys.max() >= limit):
            raise HedgeError(f"job {self.job_id}: attempt keys must lie in [0, {limit})")
        if not _distinct(keys):
            raise HedgeError(f"job {self.job_id}: attempt ids are not unique")
        if request.delta and self.table is None:
            raise HedgeError(f"job {self.job_id}: delta scan before any full snapshot "
                             "(the shim resends a full one)")
        removed = request.removed
        # an attempt may start and end between two scans: its key was never in a row
        if len(removed) and (removed.min() < 0 or removed.max() >= limit):
            raise HedgeError(f"job {self.job_id}: ended attempt keys must lie in [0, {limit})")
        if not _distinct(removed):
            raise HedgeError(f"job {self.job_id}: an ended attempt is named twice in one scan")

    def _check_ended(self, request: ScanRequest) -> None:
        """The ended attempts' tasks and nodes in range, a success not ending before it
        started (after :meth:`_update_nodes`: a node may be named in this frame)."""
        if len(request.removed) == 0:
            return
        n_tasks, task, node = (request.n_maps + request.n_reduces, request.removed_task,
                               request.removed_node)
        for what, values, low, high in (("task", task, 0, n_tasks - 1),
                                        ("node", node, -1, len(self.nodes) - 1)):
            bad = (values < low) | (values > high)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise HedgeError(f"job {self.job_id}: ended attempt {request.removed[i]}: "
                                 f"{what} {int(values[i])}, expected {low}..{high}")
        back = ((request.removed_state == _SUCCEEDED)
                & (request.removed_end < request.removed_start))
        if back.any():
            i = int(np.flatnonzero(back)[0])
            raise HedgeError(f"job {self.job_id}: ended attempt {request.removed[i]}: end "
                             f"{float(request.removed_end[i])!r} is before its start "
                             f"{float(request.removed_start[i])!r} (timestamps must not go "
                             "backwards)")

    def _merge(self, request: ScanRequest) -> None:
        """Apply a full or delta scan to the job's table (:class:`LiveAttempts`).

        Rows first, then the ended keys (a key both updated and ended is ended).
        """
        if not request.delta:
            self.table = self.table or LiveAttempts()
            self.table.replace(request.attempts)
            self.done_maps.clear()
            self.done_reduces.clear()
        else:
            self.table.upsert(request.attempts)
        if len(request.removed):
            self._record_ended(request)
            self.table.remove(request.removed[request.removed < self.table.key_space])
        self.done_maps.extend(request.completed_map_runtimes)
        self.done_reduces.extend(request.completed_reduce_runtimes)

    def _record_ended(self, request: ScanRequest) -> None:
        """Count the ended attempts not reported before (:class:`EndedLog`), and keep the
        successes whose start and end the shim knew as the job's finished tasks."""
        won = ((request.removed_state == _SUCCEEDED) & np.isfinite(request.removed_start)
               & np.isfinite(request.removed_end))
        new = self.ended.add(
            request.removed, won, task=request.removed_task, node=request.removed_node,
            start=request.removed_start, end=request.removed_end,
            input_bytes=request.removed_input_bytes)
        self.outcomes += outcomes_of(request.removed_state[new],
                                     request.removed_speculative[new],
                                     request.removed_start[new], request.removed_end[new])

    def _validate(self, a: AttemptTable, request: ScanRequest) -> None:
        """Field checks of the rows ``a`` and of this scan's new completed run times.

        The usual scan passes :func:`_rows_pass` (every check at once, in few numpy calls);
        only one that fails it goes through the checks one by one, for the message.
        """
        if _rows_pass(a, request, len(self.nodes), self.limits.max_rows):
            return
        job = JobFacts(job_id=self.job_id, start=request.job_start, n_maps=request.n_maps,
                       n_reduces=request.n_reduces, deadline=request.deadline,
                       completed_map_runtimes=request.completed_map_runtimes,
                       completed_reduce_runtimes=request.completed_reduce_runtimes)
        rows = Snapshot(now=request.now, job=job, attempts=a, cluster=_NO_CLUSTER)
        self._check_rows(rows)
        validate_snapshot(rows)

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
            ("state", a.state > _MAX_STATE, "expected an AttemptState code 0..4"),
            ("node", (a.node < -1) | (a.node >= len(self.nodes)),
             f"expected -1 or a node index below {len(self.nodes)}"),
            ("start", (a.state == _RUNNING) & np.isnan(a.start),
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
        if not (len(t) or len(c) or len(p) or len(actions.kill_attempt)
                or len(actions.resume_task)):
            return  # most answers ask for nothing: nothing to check
        problems = (
            ((t < 0) | (t >= n_tasks)).any() and "a task index out of range",
            ((c < 1) | (c > self.limits.max_copies)).any()
            and f"copies outside 1..{self.limits.max_copies}",
            ((p < -1) | (p >= len(self.nodes))).any() and "an unknown preferred node",
            not self.table.has(actions.kill_attempt) and "a kill of an unknown attempt",
            len(actions.resume_task) > 0 and "a resume (the live AM cannot resume attempts)",
        )
        for problem in problems:
            if problem:
                raise PolicyAnswerError(f"job {self.job_id}: policy '{self.policy_name}' answered "
                                 f"{problem}")


class SessionRegistry:
    """All live sessions of one server (thread-safe, bounded)."""

    def __init__(self, limits: Limits,
                 cluster: Callable[[list[str], int, int], ClusterFacts]) -> None:
        self.limits = limits
        self.cluster = cluster
        self._sessions: dict[int, Session] = {}
        self.shared: dict[str, object] = {}  # what the jobs' policies learn from each other
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def open(self, job_id: str, policy_name: str, params: Mapping[str, object],
             container: tuple[int, int] | None = None,
             cluster: Callable[[list[str], int, int, tuple[int, int] | None], ClusterFacts]
             | None = None) -> Session:
        """A session for one job; ``params`` as :func:`policy_params` resolves them (the
        job's speculation settings among them, under their Hadoop names); ``container``
        the job's map container (MB, vcores), None: the cluster view's default; ``cluster``
        the job's own cluster view (its ResourceManager's), None: the registry's."""
        speculation, own = split_settings(params)
        policy = create(policy_name, **own)
        policy.join(self.shared)
        if not policy.live_am_supported:
            reason = policy.live_am_reason or (
                "it needs Speculative-Resume, and stock Hadoop discards a killed attempt's "
                "partial output; use it in the simulator, or chronos-restart/chronos-clone")
            raise HedgeError(f"policy '{policy_name}' cannot drive a live ApplicationMaster: "
                             f"{reason}")
        with self._lock:
            if len(self._sessions) >= self.limits.max_sessions:
                raise SessionLimitError(f"too many sessions ({self.limits.max_sessions}); job "
                                 f"{job_id} runs on Hadoop's own speculation")
            session = Session(next(self._ids), secrets.token_bytes(16), job_id, policy_name,
                              policy, self.limits, cluster or self.cluster,
                              speculation=speculation,
                              container=container)
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
