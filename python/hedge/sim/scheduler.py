"""The job scheduler: which waiting attempts get free slots, and which slots.

At each visited time, waiting copies and relaunches are placed first, in request order, each
on a node not running that task (and not in its job's ``avoid_nodes``), on its
``prefer_node`` when allowed, else the least-loaded allowed node (ties: a seeded node
order). Then original tasks of active jobs take what is left, less the slots jobs reserved
for copies: by arrival (FIFO) or max-min fair across jobs (Fair), each placed on its input's
node when that node has a free slot and input sizes matter, else least-loaded node first.
Blacklisted nodes get no new container.

A copy of a task that has had no attempt yet (Dolly's clones at launch) waits until its
original gets a slot by the job order above, then is placed like any copy (in the same step
when slots remain): its job's container requests wait behind earlier jobs' as the
original's do, so a clone never jumps the queue (issue 16: on SWIM they did, and cut
``none``'s p95 job time by 64% with copies no faster than their originals).
"""

from __future__ import annotations

import numpy as np

from hedge.sim.cluster import ClusterConfig
from hedge.sim.slots import Slots
from hedge.sim.tables import CANCELLED, Tables


class Scheduler:
    """FIFO or Fair placement over the tables and slots (``cluster.scheduler``)."""

    def __init__(self, cfg: ClusterConfig, tables: Tables, slots: Slots,
                 node_perm: np.ndarray) -> None:
        self.cluster, self.tb, self.slots = cfg, tables, slots
        self.node_perm = node_perm  # the seeded tie-break order of nodes

    def schedule(self, t: float) -> None:
        """Fill free slots at ``t``: waiting copies first, then original tasks."""
        tb = self.tb
        if not tb.queue and not tb.waiting:
            return  # nothing waits for a slot
        free = self.slots.free_slots()
        held = False  # a clone waits for its original (module docstring)
        if free and tb.queue:
            placed, held = self._schedule_copies(t)
            free -= placed
        act = tb.active
        if not free or not tb.waiting:
            return
        self._schedule_originals(t, act, free)
        if held and self.slots.free_slots():
            self._schedule_copies(t)  # the clones of the originals just placed

    def _schedule_originals(self, t: float, act: np.ndarray, free: int) -> None:
        """Original tasks of the active jobs take the free slots, less the reserved ones."""
        tb, cfg = self.tb, self.cluster
        reserved = min(int(tb.j_reserved[act].sum()), cfg.total_slots - 1)
        budget = free - reserved
        pend = tb.j_end[act] - tb.j_next[act]
        if budget <= 0 or not pend.any():
            return
        take = self._fifo(pend, budget) if cfg.scheduler == "fifo" else \
            self._fair(act, pend, budget)
        has = take > 0
        jobs, take = act[has], take[has]
        starts = tb.j_next[jobs]
        tb.j_next[jobs] += take
        tb.waiting -= int(take.sum())
        cum = np.cumsum(take)
        tasks = np.repeat(starts - (cum - take), take) + np.arange(int(cum[-1]))
        done = tb.t_done[tasks]
        tb.a_state[tasks[done]] = CANCELLED
        tasks = tasks[~done]
        if len(tasks):
            slots = self._place(tasks)
            self.slots.launch(t, tasks, tasks, slots)

    @staticmethod
    def _fifo(pend: np.ndarray, budget: int) -> np.ndarray:
        """Jobs in arrival order take what they need until the budget runs out."""
        before = np.cumsum(pend) - pend
        return np.clip(budget - before, 0, pend)

    def _fair(self, act: np.ndarray, pend: np.ndarray, budget: int) -> np.ndarray:
        """Max-min fair: raise a common level of running tasks per job (water-filling)."""
        running = np.bincount(self.slots.live.job + 1,
                              minlength=len(self.tb.j_off) + 1)[1:][act]

        def used(level: int) -> int:
            return int(np.clip(level - running, 0, pend).sum())

        lo, hi = 0, int(running.max(initial=0)) + budget + 1
        while lo < hi:  # largest level whose demand fits the budget
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if used(mid) <= budget else (lo, mid - 1)
        take = np.clip(lo - running, 0, pend)
        spare = budget - int(take.sum())
        extra = (take < pend) & (running + take == lo)
        give = np.flatnonzero(extra)[:spare]
        take[give] += 1
        return take

    def _free_by_node(self) -> np.ndarray:
        """Free slots new containers may use, as a nodes x slots mask."""
        cfg, slots = self.cluster, self.slots
        free = ~slots.slot_busy.reshape(cfg.nodes, cfg.slots)
        if slots.blacklisting:
            free = free & ~slots.bl_mask[:, None]
        return free

    def _free_slot_order(self, count: int) -> np.ndarray:
        """The first ``count`` free slots, least-loaded node first (ties: seeded node order).

        A slot's key is the load its node would have with it filled; keys are unique.
        """
        cfg = self.cluster
        free = self._free_by_node()
        rank = np.cumsum(free, axis=1) - 1
        load = (self.slots.busy_n[:, None] + rank) * cfg.nodes + self.node_perm[:, None]
        slots = np.flatnonzero(free.ravel())
        keys = load.ravel()[slots]
        if count < len(slots):
            part = np.argpartition(keys, count - 1)[:count]
            slots, keys = slots[part], keys[part]
        return slots[np.argsort(keys)]

    def _place(self, tasks: np.ndarray) -> np.ndarray:
        """A free slot for each task: its input's node when free (if input sizes matter)."""
        cfg, tb = self.cluster, self.tb
        out = np.full(len(tasks), -1, dtype=np.int64)
        if tb.local_matters:
            home = tb.t_home[tasks]
            free = self._free_by_node()
            n_free = free.sum(axis=1)
            order = np.argsort(home, kind="stable")
            sorted_home = home[order]
            group_start = np.searchsorted(sorted_home, sorted_home, side="left")
            rank = np.arange(len(tasks)) - group_start
            local = rank < n_free[sorted_home]
            free_first = np.argsort(~free, axis=1, kind="stable")
            rows = order[local]
            out[rows] = sorted_home[local] * cfg.slots + free_first[sorted_home[local],
                                                                    rank[local]]
            self.slots.slot_busy[out[rows]] = True  # provisional: launch marks them busy too
        rest = np.flatnonzero(out < 0)
        if len(rest):
            out[rest] = self._free_slot_order(len(rest))
        return out

    def _schedule_copies(self, t: float) -> tuple[int, bool]:
        """Place waiting copies in request order; returns how many slots they took and
        whether a copy was held back because its task's original has not started."""
        cfg, tb, slots = self.cluster, self.tb, self.slots
        busy_n, slot_busy = slots.busy_n, slots.slot_busy
        placed_aid, placed_slot = [], []
        keep = []
        held = False
        for aid in tb.queue:
            task = int(tb.a_task[aid])
            if tb.t_done[task]:
                tb.cancel(aid)
                tb.j_changed[tb.t_job[task] + 1] = True
                continue
            if tb.a_copy[aid] and not tb.t_launched[task]:
                keep.append(aid)  # a clone of a waiting task: its original goes first
                held = True
                continue
            free_n = cfg.slots - busy_n
            allowed = (free_n > 0) & ~slots.bl_mask
            if not allowed.any():
                keep.append(aid)
                continue
            if tb.a_copy[aid]:
                allowed[slots.slot_node[slots.live.task == task]] = False
                allowed[[tb.a_node[a] for a in placed_aid if tb.a_task[a] == task]] = False
                avoid = tb.j_avoid.get(int(tb.t_job[task]))
                if avoid is not None:
                    allowed[avoid[(avoid >= 0) & (avoid < cfg.nodes)]] = False
            prefer = int(tb.a_prefer[aid])
            if 0 <= prefer < cfg.nodes and allowed[prefer]:
                node = prefer
            elif allowed.any():
                cand = np.flatnonzero(allowed)
                key = busy_n[cand] * cfg.nodes + self.node_perm[cand]
                node = int(cand[np.argmin(key)])
            else:
                keep.append(aid)
                continue
            row = slot_busy[node * cfg.slots:(node + 1) * cfg.slots]
            slot = node * cfg.slots + int(np.argmin(row))
            slot_busy[slot] = True
            busy_n[node] += 1
            tb.a_node[aid] = node
            placed_aid.append(aid)
            placed_slot.append(slot)
        tb.queue = keep
        if not placed_aid:
            return 0, held
        aid = np.asarray(placed_aid, dtype=np.int64)
        placed = np.asarray(placed_slot, dtype=np.int64)
        # launch re-marks the slots busy; undo the provisional marks first
        slot_busy[placed] = False
        np.subtract.at(busy_n, placed // cfg.slots, 1)
        slots.launch(t, aid, tb.a_task[aid], placed)
        return len(aid), held
