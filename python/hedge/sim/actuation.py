"""Carrying out a policy's answer: first cut to what the AM would allow, then applied.

``hedge.policy.limits`` cuts the ``Actions`` to the job's speculative caps and per-type
switches and never kills a task's last attempt (as on a cluster), and (``kills=restart``, the
default) holds a kill no copy of its task pairs with, since a stock AM restarts what it kills
(rule 5); then kills (a task left with no attempt at all is relaunched, as Hadoop reschedules
it), Chronos resumes (kill the task's attempts, restart from their furthest point), copies
(queued for the scheduler), reserved slots, nodes to avoid, and when to scan next.
"""

from __future__ import annotations

import numpy as np

from hedge.errors import HedgeError
from hedge.model import Actions, Snapshot
from hedge.policy.limits import SpeculationSettings, hold_lone_kills, limit
from hedge.sim.cluster import ClusterConfig
from hedge.sim.grid import grid_after
from hedge.sim.slots import Slots
from hedge.sim.tables import KILLED, Tables, unique


class Actuator:
    """Applies one job's ``Actions`` to the tables and slots."""

    def __init__(self, cfg: ClusterConfig, tables: Tables, slots: Slots, policy: str,
                 speculation: SpeculationSettings) -> None:
        self.cluster, self.tb, self.slots = cfg, tables, slots
        self.policy_name, self.speculation = policy, speculation

    def apply(self, t: float, j: int, actions: Actions, snapshot: Snapshot) -> None:
        tb = self.tb
        off, n = int(tb.j_off[j]), int(tb.j_nmaps[j] + tb.j_nred[j])
        for name in ("speculate_task", "resume_task"):
            idx = getattr(actions, name)
            if len(idx) and (idx.min() < 0 or idx.max() >= n):
                raise HedgeError(
                    f"policy '{self.policy_name}' returned {name} {idx.tolist()} for job "
                    f"{tb.j_ids[j]!r} with {n} tasks (expected indices 0..{n - 1})")
        tb.t_asked[off + actions.speculate_task] = True  # what the policy asked, uncut
        # only what the AM would let happen: caps, per-type switches, never a last attempt
        actions = limit(actions, snapshot, self.speculation, tb.t_done[off:off + n])
        if self.cluster.kills == "restart":  # a stock AM restarts what it kills (rule 5)
            actions = hold_lone_kills(actions, snapshot)
        if len(actions.kill_attempt):
            self._kill(t, j, actions.kill_attempt)
        if len(actions.resume_task):
            self._resume_all(t, off, actions)
        if len(actions.speculate_task):  # most answers copy nothing
            self._copy(off, actions)
        tb.j_reserved[j] = max(int(actions.reserve_slots), 0)
        if tb.j_reserved[j]:
            tb.j_reserving.add(j)
        else:
            tb.j_reserving.discard(j)
        if len(actions.avoid_nodes):
            tb.j_avoid[j] = actions.avoid_nodes
        else:
            tb.j_avoid.pop(j, None)
        wait = self.cluster.scan if actions.next_scan_in is None else actions.next_scan_in
        tb.j_next_scan[j] = grid_after(t, wait, self.cluster.tick)
        tb.j_wake[j] = actions.wake_on_completion

    def _resume_all(self, t: float, off: int, actions: Actions) -> None:
        """Chronos resumes, task by task."""
        for task, k in zip(actions.resume_task.tolist(), actions.resume_copies.tolist(),
                           strict=True):
            self._resume(t, off + task, int(k))

    def _copy(self, off: int, actions: Actions) -> None:
        """Queue the copies asked for (of tasks not done yet)."""
        tb = self.tb
        for task, k, prefer in zip(actions.speculate_task.tolist(),
                                   actions.speculate_copies.tolist(),
                                   actions.prefer_node.tolist(), strict=True):
            task += off
            if not tb.t_done[task] and k > 0:
                tb.t_detected[task] = True
                tb.request(task, int(k), copy=True, prefer=prefer)

    def _kill(self, t: float, j: int, attempt_ids: np.ndarray) -> None:
        tb, live = self.tb, self.slots.live
        mask = np.flatnonzero(np.isin(live.aid, attempt_ids) & (live.job == j))
        tasks = unique(live.task[mask])
        aid = live.aid[mask]
        tb.a_end[aid] = t
        tb.a_state[aid] = KILLED
        self.slots.release(mask)
        wanted = set(attempt_ids.tolist())
        cancelled = {c for c in tb.queue.of_job(j) if c in wanted}
        tb.queue.drop(j, cancelled)
        for c in cancelled:
            tb.cancel(c)
        tb.j_changed[j + 1] = True
        # a task left with no attempt at all is relaunched (as Hadoop reschedules it)
        queued = {int(tb.a_task[c]) for c in tb.queue.of_job(j)}
        running = set(live.task.tolist())
        for task in tasks.tolist():
            if not tb.t_done[task] and task not in running and task not in queued \
                    and task < tb.j_next[tb.t_job[task]]:
                tb.request(task, 1, copy=False)

    def _resume(self, t: float, task: int, k: int) -> None:
        """Chronos Speculative-Resume: kill the task's attempts, restart from their furthest point."""
        tb = self.tb
        if tb.t_done[task] or k <= 0:
            return
        live = self.slots.live
        mask = np.flatnonzero(live.task == task)
        done = live.w[mask] + live.r[mask] * np.maximum(
            t - np.maximum(live.tw[mask], live.ws[mask]), 0.0)
        reached = live.frac0[mask] + (1 - live.frac0[mask]) * done / live.W[mask]
        frac0 = float(reached.max()) if len(mask) else 0.0
        aid = live.aid[mask]
        tb.a_end[aid] = t
        tb.a_state[aid] = KILLED
        self.slots.release(mask)
        tb.t_detected[task] = True
        tb.request(task, k, copy=True, frac0=min(frac0, 1.0 - 1e-9))
