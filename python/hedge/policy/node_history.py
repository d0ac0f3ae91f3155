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
        done = (a.state == AttemptState.SUCCEEDED) & (a.node >= 0)
        running = a.running & (a.node >= 0)
        if (not done.any() and self._prev is not None
                and np.array_equal(self._prev["aid"], a.attempt[running])):
            self._prev["progress"] = a.progress[running]
            return  # nothing finished since the last scan
        n_nodes = max(len(snap.cluster.node_speed), int(a.node.max(initial=-1)) + 1,
                      int(snap.cluster.slot_node.max(initial=-1)) + 1)
        self._grow(n_nodes)
        rows = {"node": a.node[done], "type": a.task_type[done],
                "runtime": (a.report_sent - a.start)[done],
                "bytes": a.input_bytes[done], "local": local[done],
                "t": a.report_sent[done]}
        cur = {"aid": a.attempt[running], "task": a.task[running], "node": a.node[running],
               "type": a.task_type[running], "start": a.start[running],
               "progress": a.progress[running], "bytes": a.input_bytes[running],
               "local": local[running]}
        if self._prev is not None:
            p = self._prev
            # attempts gone together with their task: the task finished; the one with the
            # most progress is taken as the winner, finishing at about now
            gone = ~np.isin(p["aid"], a.attempt) & ~np.isin(p["task"], a.task)
            order = np.lexsort((-p["progress"], p["task"]))
            first = np.ones(len(order), dtype=bool)
            first[1:] = p["task"][order][1:] != p["task"][order][:-1]
            winner = np.zeros(len(order), dtype=bool)
            winner[order[first]] = True
            w = gone & winner
            for key, value in (("node", p["node"][w]), ("type", p["type"][w]),
                               ("runtime", snap.now - p["start"][w]),
                               ("bytes", p["bytes"][w]), ("local", p["local"][w]),
                               ("t", np.full(int(w.sum()), snap.now))):
                rows[key] = np.concatenate([rows[key], value])
        self._prev = cur
        ok = rows["runtime"] <= factor * typical[rows["type"].astype(np.int64)]
        order = np.argsort(rows["t"][ok], kind="stable")  # latest written last wins
        node = rows["node"][ok][order]
        ttype = rows["type"][ok][order].astype(np.int64)
        self.runtime[ttype, node] = rows["runtime"][ok][order]
        self.input_bytes[ttype, node] = rows["bytes"][ok][order]
        self.local[ttype, node] = rows["local"][ok][order]


def attempt_local(snap: Snapshot) -> np.ndarray:
    """Per attempt: its node holds the task's input (False when unknown)."""
    nodes = snap.job.input_nodes
    a = snap.attempts
    if nodes.ndim != 2 or nodes.shape[1] == 0 or len(a) == 0:
        return np.zeros(len(a), dtype=bool)
    ok = (a.task >= 0) & (a.task < len(nodes)) & (a.node >= 0)
    rows = nodes[np.where(ok, a.task, 0)]
    return ok & (rows == a.node[:, None]).any(axis=1)
