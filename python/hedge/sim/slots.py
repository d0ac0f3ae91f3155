"""The cluster's slots: the attempt running in each, node loads, and the rates of work.

Slot ``s`` is slot ``s % S`` of node ``s // S`` (S slots per node). ``Live`` holds, per
slot, the attempt running there and its progress bookkeeping; ``Slots`` adds the busy
counts and rates, and is the only place attempts start (``launch``) and stop (``release``).
An attempt's work is its task's duration x straggler factor (copies draw a fresh factor,
``hedge.sim.copies``), plus remote-input time ``input_bytes / bandwidth`` when placed away
from the input's node, plus ``shuffle`` seconds for reduces; its rate is
``speed[node] / (degradation[node] * stretch(busy slots on node))`` with
``stretch(b) = 1 + (c - 1) * (b - 1) / (S - 1)``.
"""

from __future__ import annotations

import numpy as np

from hedge.model import REDUCE
from hedge.sim import kernels
from hedge.sim.cluster import ClusterConfig
from hedge.sim.copies import CopyDraws
from hedge.sim.heartbeat import Latency
from hedge.sim.tables import RUNNING, Tables

IDLE_START = 1e18  # start/work-begin of an empty slot: far future, so it never ends


class Live:
    """The attempt running in each slot (struct of arrays indexed by slot; ``aid`` -1: empty).

    ``ws``: when work begins (start + JVM startup); ``W``: total work (``inf`` on an empty
    slot, so it never ends); ``w``: work done by time ``tw``, when the rate last changed;
    ``r``: the rate since ``tw`` (work done at t >= tw is ``w + r * (t - max(tw, ws))``, so
    results do not depend on which ticks the loop happens to visit); ``k``: index of
    the last heartbeat sent; ``p0`` / ``p1``: progress in reports ``k`` and ``k - 1``;
    ``r0`` / ``r1``: when the AM receives those two reports;
    ``kfp`` / ``fpp``: index and progress of the first report with progress > 0; ``frac0``:
    fraction of the task done before this attempt (Chronos resume).
    """

    def __init__(self, n_slots: int, idle_task: int) -> None:
        self.idle_task = idle_task
        self.aid = np.full(n_slots, -1, dtype=np.int64)
        self.task = np.full(n_slots, idle_task, dtype=np.int64)
        self.job = np.full(n_slots, -1, dtype=np.int64)
        self.start = np.full(n_slots, IDLE_START)
        self.ws = np.full(n_slots, IDLE_START)
        self.W = np.full(n_slots, np.inf)
        self.w = np.zeros(n_slots)
        self.tw = np.zeros(n_slots)
        self.r = np.ones(n_slots)
        self.k = np.zeros(n_slots, dtype=np.int64)
        self.p0 = np.zeros(n_slots)
        self.p1 = np.zeros(n_slots)
        self.r0 = np.zeros(n_slots)
        self.r1 = np.zeros(n_slots)
        self.nhb = np.full(n_slots, np.inf)  # when the next heartbeat is sent
        self.end = np.full(n_slots, np.inf)  # when the work ends if the rate stays r
        self.kfp = np.ones(n_slots, dtype=np.int64)
        self.fpp = np.full(n_slots, np.nan)
        self.frac0 = np.zeros(n_slots)

    def clear(self, slots: np.ndarray) -> None:
        self.aid[slots] = -1
        self.task[slots] = self.idle_task
        self.job[slots] = -1
        self.start[slots] = IDLE_START
        self.ws[slots] = IDLE_START
        self.W[slots] = np.inf
        self.w[slots] = 0.0
        self.k[slots] = 0
        self.nhb[slots] = np.inf
        self.end[slots] = np.inf


class Slots:
    """Every slot of the cluster, what runs in it and how fast.

    ``busy_n``: busy slots per node; ``degr``: each node's degradation now; ``bl_mask``: the
    nodes blacklisted now (no new container); ``rates_dirty``: a launch, release or
    degradation change since rates were last updated. ``track_running``: keep the tables'
    ``t_run`` (running attempts per task) current, which only scan gates read.
    """

    def __init__(self, cfg: ClusterConfig, speed: np.ndarray, tables: Tables,
                 draws: CopyDraws, latency: Latency, kfp: int, track_running: bool,
                 blacklisting: bool) -> None:
        self.cluster, self.tb, self.draws, self.latency = cfg, tables, draws, latency
        self.blacklisting = blacklisting  # a blacklist is set (bl_mask may change)
        self.kfp = kfp  # index of an attempt's first report with progress > 0
        self.track_running = track_running
        S = cfg.slots
        busy = np.arange(S + 1)
        self.stretch = 1 + (cfg.contention - 1) * np.maximum(busy - 1, 0) / max(S - 1, 1)
        self.degr = np.ones(cfg.nodes)
        self.bl_mask = np.zeros(cfg.nodes, dtype=bool)
        self.rates_dirty = False
        self.slot_busy = np.zeros(cfg.total_slots, dtype=bool)
        self.busy_n = np.zeros(cfg.nodes, dtype=np.int64)
        self.live = Live(cfg.total_slots, idle_task=len(tables.t_base))
        self.slot_node = np.arange(cfg.total_slots) // cfg.slots
        self.slot_speed = speed[self.slot_node]

    def free_slots(self) -> int:
        """Free slots new containers may use (not on blacklisted nodes)."""
        if not self.blacklisting:
            return int(self.cluster.total_slots - self.busy_n.sum())
        return int(np.maximum(self.cluster.slots - self.busy_n, 0)[~self.bl_mask].sum())

    def launch(self, t: float, aid: np.ndarray, tasks: np.ndarray, slots: np.ndarray) -> None:
        """Start attempts ``aid`` of ``tasks`` in these (free) slots at ``t``."""
        cfg, tb = self.cluster, self.tb
        node = slots // cfg.slots
        self.slot_busy[slots] = True
        self.rates_dirty = True
        self.busy_n += np.bincount(node, minlength=cfg.nodes)
        fresh = aid >= len(tb.t_base)
        factor = tb.t_factor[tasks].copy()
        if fresh.any():
            factor[fresh] = self.draws.factors(tasks[fresh])
        frac0 = tb.a_frac0[aid]
        work = (1 - frac0) * tb.t_base[tasks] * factor
        if tb.local_matters:
            inp = tb.t_input[tasks]
            work += np.where(np.isfinite(inp) & (node != tb.t_home[tasks]),
                             np.nan_to_num(inp) * (1 - frac0) / cfg.bandwidth, 0.0)
        if cfg.shuffle:
            work += np.where(tb.t_type[tasks] == REDUCE, cfg.shuffle, 0.0)
        work = np.maximum(work, 1e-9)
        tb.a_node[aid], tb.a_start[aid], tb.a_state[aid] = node, t, RUNNING
        np.add.at(tb.t_launched, tasks, 1)
        np.add.at(tb.t_att, tasks[~fresh], 1)  # originals were not counted while waiting
        if self.track_running:
            np.add.at(tb.t_run, tasks, 1)
        live = self.live
        live.aid[slots], live.task[slots], live.job[slots] = aid, tasks, tb.t_job[tasks]
        tb.j_changed[live.job[slots] + 1] = True
        live.start[slots], live.ws[slots] = t, t + cfg.startup
        live.W[slots], live.w[slots], live.tw[slots] = work, 0.0, t
        live.end[slots] = np.maximum(live.ws[slots], t) + work / live.r[slots]
        live.k[slots], live.p0[slots], live.p1[slots] = 0, 0.0, 0.0
        live.r0[slots] = t + self.latency(aid, np.zeros(len(aid), dtype=np.int64))
        live.r1[slots] = np.nan
        live.nhb[slots] = t + cfg.hw
        live.kfp[slots] = self.kfp
        live.fpp[slots] = np.nan
        live.frac0[slots] = frac0

    def release(self, slots: np.ndarray) -> None:
        """Empty these slots (their attempts ended or were killed)."""
        tb, live = self.tb, self.live
        self.slot_busy[slots] = False
        self.rates_dirty = True
        np.subtract.at(self.busy_n, self.slot_node[slots], 1)
        np.subtract.at(tb.t_att, live.task[slots], 1)
        tb.j_changed[live.job[slots] + 1] = True
        if self.track_running:
            np.subtract.at(tb.t_run, live.task[slots], 1)
        live.clear(slots)

    def update_rates(self, t: float, compiled: bool) -> None:
        """``r = speed / (degradation * stretch(busy slots))``; bank the work of changed slots.

        ``compiled``: one call of ``hedge.sim.kernels.update_rates``; else the numpy code it
        replaces (bit-identical)."""
        if not self.rates_dirty:
            return  # rates depend only on loads and degradation: unchanged
        self.rates_dirty = False
        live = self.live
        if compiled:
            kernels.update_rates(t, self.degr, self.stretch, self.busy_n, self.slot_speed,
                                 self.slot_node, live.tw, live.ws, live.w, live.r, live.W,
                                 live.end)
            return
        node_factor = self.degr * self.stretch[self.busy_n]
        rate = self.slot_speed / node_factor[self.slot_node]
        changed = np.flatnonzero(rate != live.r)
        if len(changed):
            begin = np.maximum(live.tw[changed], live.ws[changed])
            live.w[changed] += live.r[changed] * np.maximum(t - begin, 0.0)
            live.tw[changed] = t
            live.r[changed] = rate[changed]
            live.end[changed] = (np.maximum(begin, t)
                                 + (live.W[changed] - live.w[changed]) / rate[changed])
