"""The job scheduler: which waiting attempts get free slots, and which slots.

A job's copies and relaunches are container requests of its own, made after its original
tasks asked for theirs (a MapReduce AM requests every map at once; a copy or a killed
attempt's replacement asks later, at the same priority), and the AM hands a container to
its pending map requests in the order they were made, data-local ones first
(``RMContainerAllocator.assignMapsWithLocality``): so copies wait behind the job's waiting
originals and get slots in the job's share, as those do. At each visited time the active
jobs' demands (waiting originals plus queued copies) share the free slots, less the slots
jobs reserved for copies: by arrival (FIFO) or max-min fair across jobs (Fair). Each job's
share goes to its originals first, each placed on its input's node when that node has a
free slot and input sizes matter, else least-loaded node first; then to its copies, in
request order, each on a node not running that task (and not in its job's ``avoid_nodes``),
on its ``prefer_node`` when allowed, else the least-loaded allowed node (ties: a seeded node
order); with ``copies=stock`` as a stock MapReduce AM places them: on its input's node when
that has a free slot and input sizes matter, else the least-loaded node, its original's
included (``ClusterConfig.copies``). A job's reserved slots take its copies only. Slots a
share could not use (a copy with no allowed node) go round again to whatever still waits,
in the same order.
Blacklisted nodes get no new container.

Until issue 16's session 31 every queued copy went first, before any job's originals; on a
busy cluster copies then took the slots of originals that had waited longer, and even the
clairvoyant ``oracle`` made jobs slower than ``none`` (SLS Rumen, 16 slots: mean job time
1.135x none's; YH1 on 1,000 nodes: 1.8x).

A copy of a task that has had no attempt yet (Dolly's clones at launch) waits until its
original gets a slot, then is placed like any copy (in the same step when slots remain): its
job's container requests wait behind earlier jobs' as the original's do, so a clone never
jumps the queue (issue 16: on SWIM they did, and cut ``none``'s p95 job time by 64% with
copies no faster than their originals).
"""

from __future__ import annotations

import numpy as np

from hedge.sim.cluster import ClusterConfig
from hedge.sim.slots import Slots
from hedge.sim.tables import CANCELLED, Tables, unique
from hedge.sim.waiting_jobs import WaitingJobs

# FIFO reads every active job while there are at most this many: then one pass over them
# costs less than finding its contenders (the same shares either way)
FULL_PASS_JOBS = 512


class Scheduler:
    """FIFO or Fair placement over the tables and slots (``cluster.scheduler``)."""

    def __init__(self, cfg: ClusterConfig, tables: Tables, slots: Slots,
                 node_perm: np.ndarray) -> None:
        self.cluster, self.tb, self.slots = cfg, tables, slots
        self.node_perm = node_perm  # the seeded tie-break order of nodes
        self.waiting_jobs = WaitingJobs(tables)  # the engine notes arrivals and completions
        # copies each job may still place at this step (index: job; zero between steps)
        self._allowance = np.zeros(len(tables.j_off), dtype=np.int64)

    def schedule(self, t: float) -> None:
        """Fill free slots at ``t``: each job's share to its originals, then its copies; what
        the shares leave (copies with no allowed node) to originals, then to any copy."""
        tb, allowance = self.tb, self._allowance
        free = self.slots.free_slots()
        if not free or not (tb.queue or tb.waiting):
            return
        self._cancel_ended()
        act = self._contenders(free)
        copies = tb.queue.per_job[act]
        take = self._shares(act, tb.j_end[act] - tb.j_next[act] + copies, free)
        allowance[act] = np.maximum(take - self._schedule_originals(t, act, take), 0) \
            + np.minimum(tb.j_reserved[act], copies)
        if tb.queue:
            self._schedule_copies(t, act[allowance[act] > 0], allowance)
        allowance[act] = 0
        free = self.slots.free_slots()
        if not free or not (tb.queue or tb.waiting):
            return
        act = self._contenders(free)
        self._schedule_originals(t, act, self._shares(act, tb.j_end[act] - tb.j_next[act],
                                                      free))
        if tb.queue and self.slots.free_slots():
            queued = tb.queue.jobs()
            allowance[queued] = self.cluster.total_slots
            self._schedule_copies(t, queued, allowance)
            allowance[queued] = 0

    def _cancel_ended(self) -> None:
        """Queued copies and relaunches of tasks that ended will not run."""
        tb = self.tb
        for aid in tb.queue.drop_ended():
            tb.cancel(aid)
            tb.j_changed[tb.t_job[tb.a_task[aid]] + 1] = True

    def _contenders(self, free: int) -> np.ndarray:
        """The active jobs whose share of ``free`` slots could be more than none, ascending:
        every one under Fair. Under FIFO: the first jobs with originals waiting, until
        those want ``free`` slots or more; every job with slots reserved (a reservation
        counts against every share); and the jobs with a copy waiting, those before the
        last of the first when the first want every free slot (a job after them gets
        nothing), else all of them."""
        tb = self.tb
        if self.cluster.scheduler != "fifo" or len(tb.active) <= FULL_PASS_JOBS:
            return tb.active
        first = self.waiting_jobs.first(free)
        if first and int((tb.j_end[first] - tb.j_next[first]).sum()) >= free:
            queued = np.asarray(tb.queue.jobs_before(first[-1]), dtype=np.int64)
        else:
            queued = tb.queue.jobs()
        jobs = unique(np.concatenate([np.asarray(first + list(tb.j_reserving),
                                                 dtype=np.int64), queued]))
        return jobs[tb.j_left[jobs] > 0]

    def _shares(self, act: np.ndarray, demand: np.ndarray, free: int) -> np.ndarray:
        """Slots per active job for ``demand``: ``free`` less the slots reserved for copies,
        by arrival (FIFO) or max-min fair."""
        budget = free - min(int(self.tb.j_reserved[act].sum()), self.cluster.total_slots - 1)
        if budget <= 0 or not demand.any():
            return np.zeros(len(act), dtype=np.int64)
        if self.cluster.scheduler == "fifo":
            return self._fifo(demand, budget)
        return self._fair(act, demand, budget)

    def _schedule_originals(self, t: float, act: np.ndarray, take: np.ndarray) -> np.ndarray:
        """The active jobs' next original tasks, up to ``take`` of each, get free slots;
        returns how many each job launched (or found done and skipped)."""
        tb = self.tb
        take = np.minimum(take, tb.j_end[act] - tb.j_next[act])
        has = take > 0
        if not has.any():
            return take
        jobs, n = act[has], take[has]
        starts = tb.j_next[jobs]
        tb.j_next[jobs] += n
        tb.waiting -= int(n.sum())
        cum = np.cumsum(n)
        tasks = np.repeat(starts - (cum - n), n) + np.arange(int(cum[-1]))
        done = tb.t_done[tasks]
        tb.a_state[tasks[done]] = CANCELLED
        tasks = tasks[~done]
        if len(tasks):
            slots = self._place(tasks)
            self.slots.launch(t, tasks, tasks, slots)
        return take

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

    def _schedule_copies(self, t: float, jobs: np.ndarray, allowance: np.ndarray) -> int:
        """Place waiting copies of ``jobs`` in request order, at most ``allowance`` per job
        (index: job; used up as they are placed); returns how many slots they took."""
        cfg, tb, slots = self.cluster, self.tb, self.slots
        busy_n, slot_busy = slots.busy_n, slots.slot_busy
        placed_aid, placed_slot = [], []
        apart = cfg.copies == "apart"  # else a stock AM's placement (ClusterConfig.copies)
        queue = tb.queue.in_order(jobs)
        # a clone of a task still waiting stays queued (that does not change while copies
        # are placed): only the others are walked, for a queue of many clones (dolly on an
        # all-at-once arrival) made each step cost a Python pass over all of them
        tasks = tb.a_task[queue]
        ready = ~(tb.a_copy[queue] & (tb.t_launched[tasks] == 0))
        for at in np.flatnonzero(ready).tolist():
            aid = int(queue[at])
            task = int(tasks[at])
            job = int(tb.t_job[task])
            if allowance[job] <= 0:
                continue  # its job's share used up by the copies before it
            free_n = cfg.slots - busy_n
            allowed = (free_n > 0) & ~slots.bl_mask
            if not allowed.any():
                break  # no node has a free slot: nor will one in this pass
            if tb.a_copy[aid] and apart:
                allowed[slots.slot_node[slots.live.task == task]] = False
                allowed[[tb.a_node[a] for a in placed_aid if tb.a_task[a] == task]] = False
                avoid = tb.j_avoid.get(int(tb.t_job[task]))
                if avoid is not None:
                    allowed[avoid[(avoid >= 0) & (avoid < cfg.nodes)]] = False
            # a stock AM asks for a copy's container as for its original's: its input's node
            prefer = int(tb.a_prefer[aid]) if apart else (
                int(tb.t_home[task]) if tb.local_matters else -1)
            if 0 <= prefer < cfg.nodes and allowed[prefer]:
                node = prefer
            elif allowed.any():
                cand = np.flatnonzero(allowed)
                key = busy_n[cand] * cfg.nodes + self.node_perm[cand]
                node = int(cand[np.argmin(key)])
            else:
                continue
            row = slot_busy[node * cfg.slots:(node + 1) * cfg.slots]
            slot = node * cfg.slots + int(np.argmin(row))
            slot_busy[slot] = True
            busy_n[node] += 1
            tb.a_node[aid] = node
            allowance[job] -= 1
            placed_aid.append(aid)
            placed_slot.append(slot)
        if not placed_aid:
            return 0
        aid = np.asarray(placed_aid, dtype=np.int64)
        placed_jobs = tb.t_job[tb.a_task[aid]]
        for job in unique(placed_jobs).tolist():
            tb.queue.drop(job, set(aid[placed_jobs == job].tolist()))
        placed = np.asarray(placed_slot, dtype=np.int64)
        # launch re-marks the slots busy; undo the provisional marks first
        slot_busy[placed] = False
        np.subtract.at(busy_n, placed // cfg.slots, 1)
        slots.launch(t, aid, tb.a_task[aid], placed)
        return len(aid)
