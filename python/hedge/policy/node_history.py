"""What the window policies (``window``, ``hete-aware``) know of each node: their copy model
needs, per node, the latest non-straggling task T_h of this job (of the same task type) that
ran there: its run time, input bytes and locality. The policy learns them
from what the AM sees: SUCCEEDED rows of the attempt table when present, otherwise an
attempt that disappears with its task (the task finished; its run time is taken as
``now - start``, at most one scan long). A T_h is non-straggling when its run time is below
``straggler_factor`` x the mean completed run time. A node with no such history uses the
mean expected duration of the job's unflagged running attempts there, else the mean
completed run time divided by the node's relative speed (``ClusterFacts.node_speed``, 1
when unknown). Locality comes from ``JobFacts.input_nodes`` (unknown: no adjustment).
"""

from __future__ import annotations

import numpy as np

from hedge.model import AttemptState, Snapshot


class NodeHistory:
    """Per task type and node: run time, input bytes and locality of the latest
    non-straggling completed attempt of this job seen there (NaN / False: none)."""

    def __init__(self) -> None:
        self.runtime = np.full((2, 0), np.nan)
        self.input_bytes = np.full((2, 0), np.nan)
        self.local = np.zeros((2, 0), dtype=bool)
        self._prev: dict[str, np.ndarray] | None = None

    def _grow(self, n_nodes: int) -> None:
        extra = n_nodes - self.runtime.shape[1]
        if extra > 0:
            self.runtime = np.hstack([self.runtime, np.full((2, extra), np.nan)])
            self.input_bytes = np.hstack([self.input_bytes, np.full((2, extra), np.nan)])
            self.local = np.hstack([self.local, np.zeros((2, extra), dtype=bool)])

    def update(self, snap: Snapshot, local: np.ndarray, typical: np.ndarray,
               factor: float) -> None:
        """Record completions visible in ``snap``; ``typical[type]``: mean run time."""
        a = snap.attempts
        placed = a.node >= 0
        done = (a.state == AttemptState.SUCCEEDED) & placed
        running = a.running & placed
        aid = a.attempt[running]
        prev = self._prev
        any_done = bool(done.any())
        if not any_done and prev is not None and np.array_equal(prev["aid"], aid):
            prev["progress"] = a.progress[running]
            return  # nothing finished since the last scan
        n_nodes = max(len(snap.cluster.node_speed), int(a.node.max(initial=-1)) + 1,
                      int(snap.cluster.slot_node.max(initial=-1)) + 1)
        self._grow(n_nodes)
        self._prev = {"aid": aid, "task": a.task[running], "node": a.node[running],
                      "type": a.task_type[running], "start": a.start[running],
                      "progress": a.progress[running], "bytes": a.input_bytes[running],
                      "local": local[running]}
        parts = []
        if any_done:
            parts.append((a.node[done], a.task_type[done], (a.report_sent - a.start)[done],
                          a.input_bytes[done], local[done], a.report_sent[done]))
        if prev is not None:
            w = _finished(prev, a)
            if len(w):
                parts.append((prev["node"][w], prev["type"][w], snap.now - prev["start"][w],
                              prev["bytes"][w], prev["local"][w], np.full(len(w), snap.now)))
        if parts:
            self._write(parts, typical, factor)

    def _write(self, parts: list[tuple[np.ndarray, ...]], typical: np.ndarray,
               factor: float) -> None:
        """Keep the non-straggling ones of these completions (node, type, run time, bytes,
        local, time seen), the latest seen last so it wins its node."""
        node, ttype, runtime, nbytes, local, t = (np.concatenate(c)
                                                  for c in zip(*parts, strict=True))
        ok = runtime <= factor * typical[ttype.astype(np.int64)]
        order = np.argsort(t[ok], kind="stable")
        node = node[ok][order]
        ttype = ttype[ok][order].astype(np.int64)
        self.runtime[ttype, node] = runtime[ok][order]
        self.input_bytes[ttype, node] = nbytes[ok][order]
        self.local[ttype, node] = local[ok][order]


def _finished(prev: dict[str, np.ndarray], a) -> np.ndarray:
    """Rows of ``prev`` (running attempts at the last scan) taken as finished tasks'
    winners: attempts gone together with their task (the task finished), the one with the
    most progress per task (the first such row on a tie), in row order."""
    gone = ~member(prev["aid"], a.attempt)
    if not gone.any():
        return np.empty(0, dtype=np.int64)
    # a task still in the table keeps its attempts there, so a gone task's attempts are
    # all gone: the winners among the gone rows are the winners among all rows
    gone &= ~member(prev["task"], a.task)
    rows = np.flatnonzero(gone)
    task = prev["task"][rows]
    order = np.lexsort((-prev["progress"][rows], task))
    first = np.ones(len(order), dtype=bool)
    first[1:] = task[order][1:] != task[order][:-1]
    return np.sort(rows[order[first]])


def member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """``np.isin(values, pool)`` for integers by a sorted search (``np.isin`` costs ~0.1 ms
    of set-up per call, and this runs at nearly every scan of a job)."""
    if len(pool) == 0:
        return np.zeros(len(values), dtype=bool)
    pool = np.sort(pool)
    at = np.minimum(np.searchsorted(pool, values), len(pool) - 1)
    return pool[at] == values


def attempt_local(snap: Snapshot) -> np.ndarray:
    """Per attempt: its node holds the task's input (False when unknown)."""
    nodes = snap.job.input_nodes
    a = snap.attempts
    if nodes.ndim != 2 or nodes.shape[1] == 0 or len(a) == 0:
        return np.zeros(len(a), dtype=bool)
    ok = (a.task >= 0) & (a.task < len(nodes)) & (a.node >= 0)
    rows = nodes[np.where(ok, a.task, 0)]
    return ok & (rows == a.node[:, None]).any(axis=1)
