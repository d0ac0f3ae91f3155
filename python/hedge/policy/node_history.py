"""What the window policies (``window``, ``hete-aware``) know of each node: their copy model
needs, per node, the latest non-straggling task T_h of this job (of the same task type) that
ran there: its run time, input bytes and locality. It is read from the job's completed
tasks' winning attempts (``JobFacts.finished``: node, start and end, as the AM learns them
from each attempt's final status), so it does not depend on when the policy looks: the
latest is the one that ended last (ties: the lower task index), and a T_h is non-straggling
when its run time ``end - start`` is at most ``straggler_factor`` x the mean completed run
time of its type at the scan that reads it. A node with no such history uses the mean
expected duration of the job's unflagged running attempts there, else the mean completed
run time divided by the node's relative speed (``ClusterFacts.node_speed``, 1 when
unknown). Locality comes from ``JobFacts.input_nodes`` (unknown: no adjustment).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hedge.model import MAP, REDUCE, JobFacts, Snapshot


@dataclass
class NodeHistory:
    """Per task type (row) and node (column): run time, input bytes and locality of the
    latest non-straggling completed attempt of this job there (NaN / False: none)."""

    runtime: np.ndarray
    input_bytes: np.ndarray
    local: np.ndarray

    @classmethod
    def of(cls, job: JobFacts, typical: np.ndarray, factor: float,
           n_nodes: int) -> NodeHistory:
        """The history over nodes ``0 .. n_nodes - 1``; ``typical[type]``: the mean
        completed run time of the type."""
        out = cls(runtime=np.full((2, n_nodes), np.nan),
                  input_bytes=np.full((2, n_nodes), np.nan),
                  local=np.zeros((2, n_nodes), dtype=bool))
        f = job.finished
        if len(f) == 0:
            return out
        ttype = np.where(f.task < job.n_maps, MAP, REDUCE)
        runtime = f.end - f.start
        ok = (f.node >= 0) & (f.node < n_nodes) & (runtime <= factor * typical[ttype])
        rows = np.flatnonzero(ok)
        rows = rows[np.lexsort((f.task[rows], f.end[rows]))]  # the latest written last wins
        where = (ttype[rows], f.node[rows])
        out.runtime[where] = runtime[rows]
        out.input_bytes[where] = f.input_bytes[rows]
        out.local[where] = holds_input(job.input_nodes, f.task[rows], f.node[rows])
        return out


def attempt_local(snap: Snapshot) -> np.ndarray:
    """Per attempt: its node holds the task's input (False when unknown)."""
    a = snap.attempts
    return holds_input(snap.job.input_nodes, a.task, a.node)


def holds_input(input_nodes: np.ndarray, task: np.ndarray, node: np.ndarray) -> np.ndarray:
    """Per (task, node) pair: the node holds the task's input (``JobFacts.input_nodes``;
    False when unknown)."""
    if input_nodes.ndim != 2 or input_nodes.shape[1] == 0 or len(task) == 0:
        return np.zeros(len(task), dtype=bool)
    ok = (task >= 0) & (task < len(input_nodes)) & (node >= 0)
    rows = input_nodes[np.where(ok, task, 0)]
    return ok & (rows == node[:, None]).any(axis=1)


def member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """``np.isin(values, pool)`` for integers by a sorted search (``np.isin`` costs ~0.1 ms
    of set-up per call, and the window policies ask at every plan)."""
    if len(pool) == 0:
        return np.zeros(len(values), dtype=bool)
    pool = np.sort(pool)
    at = np.minimum(np.searchsorted(pool, values), len(pool) - 1)
    return pool[at] == values
