"""The trace-driven simulator: jobs, slots, attempts, heartbeats and policy scans.

Time advances on a grid of ``tick`` seconds (the YARN NodeManager heartbeat that hands out
containers), but only to grid points where something happens (an attempt ends, a job
arrives, a scan is due, a node's speed changes). Between two such points every running
attempt progresses at a constant rate, so the state of *all* running attempts moves in one
vectorised step (struct of arrays ``_Live``), and an attempt's end is computed exactly
inside the step. At each visited grid time ``t``, in order:

1. attempts whose work ended in ``(t_prev, t]`` complete; the first to end wins its task,
   the task's other attempts are killed at that instant; freed slots become free at ``t``;
2. jobs that arrived by ``t`` become active (maps runnable; reduces once all maps are done);
3. every job whose scan is due gets a ``Snapshot`` of what its AM has received and its
   policy's ``Actions`` are applied (kills, copies, Chronos resumes, reservations);
4. the job scheduler (FIFO or Fair) fills free slots: waiting copies first (in request
   order, on a node not running that task, honouring ``prefer_node``/``avoid_nodes``),
   then original tasks, leaving reserved slots for copies;
5. every running attempt's rate is recomputed from its node's speed, degradation and load.

A policy may define a vectorised ``needs_scan`` gate (``hedge.model.batch``): due jobs it
clears are not given a snapshot at that scan (results are bit-identical with ``gates=False``;
tests prove it per gated policy), and a compiled form of it over the raw slot arrays
(``needs_scan_slots``, ``SlotView``). ``blacklist`` nodes get no new container while listed.

The per-step work over all slots (heartbeats, completions, rate updates) runs in compiled
kernels (``hedge.sim.kernels``): a step costs one call each instead of dozens of small
numpy calls. ``Simulator.compiled = False`` runs the numpy code they replace (kept as the
reference; results are bit-identical, tests compare whole runs).

An attempt's work is its task's duration x straggler factor (copies draw a fresh factor),
plus remote-input time ``input_bytes / bandwidth`` when placed away from the input's node
(snapshots list that node per task in ``JobFacts.input_nodes`` when input sizes are known),
plus ``shuffle`` seconds for reduces; its rate is
``speed[node] / (degradation[node] * stretch(busy slots on node))`` with
``stretch(b) = 1 + (c - 1) * (b - 1) / (S - 1)``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

import numpy as np

from hedge.errors import HedgeError
from hedge.model import (
    MAP,
    REDUCE,
    Actions,
    AttemptState,
    AttemptTable,
    ClusterFacts,
    JobFacts,
    Snapshot,
)
from hedge.model.batch import SlotView
from hedge.model.truth import Truth
from hedge.policy import create
from hedge.policy.limits import SpeculationSettings, limit
from hedge.policy.params import split_settings
from hedge.sim import kernels
from hedge.sim.cluster import (
    Blacklist,
    ClusterConfig,
    draw_degradation,
    latency_sampler,
    node_speeds,
)
from hedge.sim.energy import total_energy
from hedge.sim.heartbeat import Latency, heartbeats_numpy, last_received
from hedge.sim.progress import RunProgress
from hedge.sim.results import KILLED, NORMAL, WON, AttemptRecords, SimResult
from hedge.traces.workload import Workload

EPS = 1e-9
# pool states of an attempt record
_NEW, _RUNNING, _DONE, _KILLED, _CANCELLED = 0, 1, 2, 3, 4

_IDLE_START = 1e18  # start/work-begin of an empty slot: far future, so it never ends


def _unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: np.unique's hash path is slow on small arrays)."""
    if len(values) < 2:
        return values.copy()
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _empty(actions: Actions) -> bool:
    """No action at all and the default rescan (a scan_idempotent job may then go quiet)."""
    return (not len(actions.speculate_task) and not len(actions.kill_attempt)
            and not len(actions.resume_task) and actions.reserve_slots <= 0
            and not len(actions.avoid_nodes) and actions.next_scan_in is None
            and not actions.wake_on_completion)


class _Live:
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
        self.start = np.full(n_slots, _IDLE_START)
        self.ws = np.full(n_slots, _IDLE_START)
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
        self.start[slots] = _IDLE_START
        self.ws[slots] = _IDLE_START
        self.W[slots] = np.inf
        self.w[slots] = 0.0
        self.k[slots] = 0
        self.nhb[slots] = np.inf
        self.end[slots] = np.inf


class Simulator:
    """Run one policy on one workload and cluster; ``run()`` returns a ``SimResult``.

    ``policy_params`` go to ``hedge.policy.create`` (one policy object per job).
    ``deadline_factor`` F sets each job's deadline to arrival + F x its no-straggler run
    time, taken as the critical path on an idle typical node: the longest map plus the
    longest reduce (plus ``shuffle``). ``deadline`` D instead gives every job the same
    relative deadline: arrival + D seconds (Chronos' model). ``blacklist``: nodes that get
    no new container (a ``hedge.sim.cluster.Blacklist`` or node indices, always).
    ``speculation``: the job's speculative caps and per-type switches (Hadoop's defaults when
    None); every answer is cut to them as on a cluster (``hedge.policy.limits``). Its
    properties may also come among ``policy_params`` under their Hadoop names.
    """

    # per-step work in compiled kernels (hedge.sim.kernels); False: the numpy reference
    # code (same results bit for bit; tests compare the two)
    compiled = True

    def __init__(
        self,
        workload: Workload,
        cluster: ClusterConfig | None = None,
        policy: str = "none",
        policy_params: dict | None = None,
        seed: int = 0,
        deadline_factor: float | None = None,
        progress: bool | str = False,
        gates: bool = True,
        deadline: float | None = None,
        blacklist: Blacklist | Iterable[int] | None = None,
        speculation: SpeculationSettings | None = None,
    ) -> None:
        self.workload = workload
        self.cluster = cluster or ClusterConfig()
        self.policy_name = policy
        self.speculation, own = split_settings(policy_params or {}, speculation)
        self.policy_params = own
        self.seed = int(seed)
        self.deadline_factor = deadline_factor
        self.progress = progress
        if deadline_factor is not None and not deadline_factor > 0:
            raise HedgeError(f"--deadline-factor={deadline_factor!r}, expected a number > 0")
        if deadline is not None and not deadline > 0:
            raise HedgeError(f"--deadline={deadline!r}, expected seconds > 0")
        if deadline is not None and deadline_factor is not None:
            raise HedgeError("give either --deadline or --deadline-factor, not both")
        self.deadline = deadline
        if blacklist is not None and not isinstance(blacklist, Blacklist):
            blacklist = Blacklist.always(blacklist)
        if blacklist is not None:
            blacklist.check(self.cluster.nodes)
        self.blacklist = blacklist if blacklist is not None and len(blacklist) else None
        probe = create(policy, **self.policy_params)
        # the hooks declared on hedge.policy.Policy: ``speculates = False`` (``none``): never
        # scanned; ``needs_scan``: a vectorised pre-check over all due jobs, and
        # ``needs_scan_slots`` its compiled form over the raw slot arrays (only alongside
        # needs_scan); ``scan_idempotent``: skip a quiet job's scans while nothing changed
        self._observing = bool(probe.speculates)
        self._gate = probe.needs_scan if gates else None
        self._slot_gate = probe.needs_scan_slots if self._gate is not None else None
        self._idempotent = bool(probe.scan_idempotent) and gates
        self._clairvoyant = bool(probe.clairvoyant)

    # ------------------------------------------------------------------ set-up
    def _setup(self) -> None:
        wl, cfg = self.workload, self.cluster
        rng = np.random.default_rng(self.seed)
        self._rng = rng
        job_order = np.argsort(wl.arrival, kind="stable")
        rank = np.empty(wl.n_jobs, dtype=np.int64)
        rank[job_order] = np.arange(wl.n_jobs)
        task_rank = rank[wl.task_job]
        perm = np.lexsort((np.arange(wl.n_tasks), wl.task_type, task_rank))
        self._job_order, self._perm = job_order, perm
        n, nj = wl.n_tasks, wl.n_jobs

        self.t_job = task_rank[perm]
        self.t_type = wl.task_type[perm]
        self.t_base = wl.duration[perm]
        self.t_input = wl.input_bytes[perm]
        if cfg.straggler_ratio > 0:
            low, high = cfg.slowdown_range()
            slow = rng.random(n) < cfg.straggler_ratio
            self.t_factor = np.where(slow, rng.uniform(low, high, n), 1.0)
        else:
            self.t_factor = wl.straggler_factor[perm].copy()
        machine = wl.machine[perm]
        self.t_home = np.where(machine >= 0, machine % cfg.nodes, rng.integers(0, cfg.nodes, n))
        # one extra trailing row: the sentinel task of empty slots (never done)
        self.t_done = np.zeros(n + 1, dtype=bool)
        self.t_finish = np.full(n, np.nan)
        self.t_runtime = np.full(n, np.nan)
        self.t_detected = np.zeros(n, dtype=bool)
        self.t_launched = np.zeros(n, dtype=np.int64)
        # live (running or queued) and running attempts per task, for scan gates
        self.t_att = np.zeros(n + 1, dtype=np.int64)
        self.t_run = np.zeros(n + 1, dtype=np.int64)
        self._local_matters = bool(np.isfinite(self.t_input).any())
        # JobFacts.input_nodes rows (one replica: the input's node), read-only views; empty
        # (unknown) when no task has an input size, since locality then costs nothing
        self._input_nodes = self.t_home[:, None].copy() if self._local_matters else None
        if self._input_nodes is not None:
            self._input_nodes.flags.writeable = False

        self.j_arrival = wl.arrival[job_order]
        self.j_ids = [wl.job_ids[i] for i in job_order]
        sizes = wl.tasks_per_job[job_order]
        self.j_off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        is_map = (self.t_type == MAP).astype(np.int64)
        self.j_nmaps = np.add.reduceat(is_map, self.j_off) if n else np.zeros(nj, np.int64)
        self.j_nmaps = np.where(sizes > 0, self.j_nmaps, 0)
        self.j_nred = sizes - self.j_nmaps
        self.j_next = self.j_off.copy()
        self.j_end = np.where(self.j_nmaps > 0, self.j_off + self.j_nmaps, self.j_off + sizes)
        self.j_maps_left = self.j_nmaps.copy()
        self.j_left = sizes.copy()
        self.j_last = np.full(nj, -np.inf)
        self.j_finish = np.full(nj, np.nan)
        self.j_next_scan = np.full(nj, np.inf)
        self._due_mask = np.zeros(nj + 1, dtype=bool)  # index job + 1 (0: empty slot)
        self.j_ntasks = np.stack([self.j_nmaps, self.j_nred], axis=1)
        self.j_wake = np.zeros(nj, dtype=bool)
        # scan_idempotent policies: the last scan's answer was empty / the job changed since
        self.j_quiet = np.zeros(nj, dtype=bool)
        self.j_changed = np.ones(nj + 1, dtype=bool)  # index job + 1 (0: empty slot)
        self._recv_checked = -np.inf  # reports received up to this time are accounted for
        self.j_reserved = np.zeros(nj, dtype=np.int64)
        self.j_avoid: dict[int, np.ndarray] = {}
        self.j_policy: dict[int, object] = {}
        self.j_deadline = self._deadlines(sizes)
        # completed tasks per job and type: count, sum and sum of squares of run times
        self.j_count = np.zeros((nj, 2))
        self.j_sum = np.zeros((nj, 2))
        self.j_sumsq = np.zeros((nj, 2))
        self.j_mean = np.full((nj, 2), np.nan)
        self.j_std = np.full((nj, 2), np.nan)
        # task types with one trailing row for the sentinel task of empty slots
        self.t_type_sentinel = np.append(self.t_type, np.int8(MAP))

        # attempt pool: originals at index == task, copies/relaunches appended
        cap = max(16, int(n * 1.25))
        self.a_task = np.full(cap, -1, dtype=np.int64)
        self.a_task[:n] = np.arange(n)
        self.a_node = np.full(cap, -1, dtype=np.int64)
        self.a_start = np.full(cap, np.nan)
        self.a_end = np.full(cap, np.nan)
        self.a_state = np.zeros(cap, dtype=np.int8)
        self.a_copy = np.zeros(cap, dtype=bool)
        self.a_prefer = np.full(cap, -1, dtype=np.int64)
        self.a_frac0 = np.zeros(cap)
        self._n_attempts = n
        self._queue: list[int] = []  # waiting copies / relaunches, in request order

        self.speed = node_speeds(cfg, rng)
        self._node_perm = rng.permutation(cfg.nodes)
        work = float((self.t_base * self.t_factor).sum())
        horizon = (float(self.j_arrival.max(initial=0.0)) + 3 * work / cfg.total_slots
                   + 2 * cfg.heterogeneity * float((self.t_base * self.t_factor).max(initial=0)))
        self.degradation = draw_degradation(cfg, horizon, rng)
        self._bounds = self.degradation.boundaries()
        self._bound_i = 0
        self._degr = np.ones(cfg.nodes)
        self._rates_dirty = False  # a launch, release or degradation change since the update
        # index of an attempt's first report with progress > 0 (after the JVM start-up)
        self._kfp = math.floor(cfg.startup / cfg.hw + EPS) + 1
        bl = self.blacklist
        self._bl_bounds = bl.boundaries() if bl is not None else np.empty(0)
        self._bl_i = 0
        self._bl_mask = np.zeros(cfg.nodes, dtype=bool)
        S = cfg.slots
        busy = np.arange(S + 1)
        self._stretch = 1 + (cfg.contention - 1) * np.maximum(busy - 1, 0) / max(S - 1, 1)
        self.slot_busy = np.zeros(cfg.total_slots, dtype=bool)
        self.busy_n = np.zeros(cfg.nodes, dtype=np.int64)
        self.live = _Live(cfg.total_slots, idle_task=n)
        self.slot_node = np.arange(cfg.total_slots) // cfg.slots
        self.slot_speed = self.speed[self.slot_node]
        self.latency = Latency(latency_sampler(cfg.latency), cfg.hw, self.seed)
        self._active = np.empty(0, dtype=np.int64)
        self._waiting = 0  # original tasks of active jobs waiting for a slot
        self._arrived = 0
        self._arrival_grid = np.ceil(self.j_arrival / cfg.tick - EPS) * cfg.tick + 0.0
        self._jobs_left = int((sizes > 0).sum())
        self.scans = 0
        self._copy_rng = np.random.default_rng([self.seed, 1])
        self._factor_pool = self.t_factor if n else np.ones(1)
        # a trace model's pools (per job and phase), unless the cluster drew the factors
        pools = wl.copy_pools if cfg.straggler_ratio <= 0 else None
        self._copy_pools = None if pools is None else (
            pools.values, pools.start[perm], pools.size[perm])
        # a clairvoyant policy is told each task's copy slowdown before the copy runs
        self._known_copy_factor = None
        if self._clairvoyant:
            self._known_copy_factor = self._copy_factors(np.arange(n))
        self._view: SlotView | None = None  # the gates' view of the slots (_gated)

    def _deadlines(self, sizes: np.ndarray) -> np.ndarray:
        nj = len(sizes)
        if self.deadline is not None:
            return self.j_arrival + self.deadline
        if self.deadline_factor is None or nj == 0:
            return np.full(nj, np.nan)
        job = self.t_job
        longest = np.zeros((nj, 2))
        np.maximum.at(longest, (job, self.t_type.astype(np.int64)), self.t_base)
        critical = longest[:, MAP] + longest[:, REDUCE] + np.where(
            self.j_nred > 0, self.cluster.shuffle, 0.0)
        return self.j_arrival + self.deadline_factor * critical

    # ------------------------------------------------------------------ main loop
    def run(self) -> SimResult:
        began = time.perf_counter()
        self._setup()
        cfg = self.cluster
        n_tasks = len(self.t_base)
        label = self.progress if isinstance(self.progress, str) else self.policy_name
        jobs = self._jobs_left
        bar = RunProgress(label, n_tasks, jobs, enabled=bool(self.progress))
        t = float(self._arrival_grid[0]) if len(self._arrival_grid) else 0.0
        t_prev = t
        if self.blacklist is not None:
            self._bl_mask = self.blacklist.mask_at(t, cfg.nodes)
        while True:
            self._advance(t_prev, t)
            self._arrivals(t)
            if self._bl_i < len(self._bl_bounds) and self._bl_bounds[self._bl_i] <= t + EPS:
                self._bl_i = int(np.searchsorted(self._bl_bounds, t + EPS, side="right"))
                self._bl_mask = self.blacklist.mask_at(t, cfg.nodes)
            if self._bound_i < len(self._bounds) and self._bounds[self._bound_i] <= t + EPS:
                self._bound_i = int(np.searchsorted(self._bounds, t + EPS, side="right"))
                self._degr = self.degradation.slowdown_at(t, cfg.nodes)
                self._rates_dirty = True
            if self._observing:
                self._scan(t)
            self._schedule(t)
            self._update_rates(t)
            if self.progress:
                bar.update(int(self.t_done.sum()), jobs - self._jobs_left, t)
            if self._jobs_left == 0:
                break
            t_prev, t = t, self._next_time(t)
        bar.close()
        return self._result(time.perf_counter() - began)

    def _next_time(self, t: float) -> float:
        tick = self.cluster.tick
        candidates = []
        live = self.live
        end = float(live.end.min())
        if math.isfinite(end):
            candidates.append(end)
        if self._arrived < len(self._arrival_grid):
            candidates.append(self._arrival_grid[self._arrived])
        if self._observing and len(self._active):
            candidates.append(self.j_next_scan[self._active].min())
        if self._bound_i < len(self._bounds):
            candidates.append(self._bounds[self._bound_i])
        if self._bl_i < len(self._bl_bounds):
            candidates.append(self._bl_bounds[self._bl_i])
        nxt = min(candidates) if candidates else math.inf
        if not math.isfinite(nxt):
            raise HedgeError(
                f"simulation stalled at t={t:.1f}s with {self._jobs_left} unfinished jobs "
                "(no attempt running and nothing scheduled)"
            )
        step = max(math.ceil(nxt / tick - EPS), round(t / tick) + 1)
        return step * tick

    # ------------------------------------------------------------------ step 1: progress
    def _advance(self, t_prev: float, t: float) -> None:
        live = self.live
        if t <= t_prev:
            return
        ended = np.flatnonzero(live.end <= t + EPS)
        if self._observing:
            self._heartbeats(t, t - t_prev, ended)
        if len(ended):
            self._complete(t, ended, live.end[ended])

    def _heartbeats(self, t: float, step: float, ended: np.ndarray) -> None:
        """Record the progress carried by the reports sent in (t - step, t] (rate constant)
        by attempts still running (not in ``ended``): one compiled call
        (``hedge.sim.kernels.heartbeats``), or its numpy reference
        (``hedge.sim.heartbeat.heartbeats_numpy``) when ``compiled`` is False."""
        live, hw = self.live, self.cluster.hw
        if not self.compiled:
            heartbeats_numpy(live, t, step, ended, hw, EPS, self._kfp, self.latency)
            return
        kernels.heartbeats(t, step, hw, EPS, self._kfp, self.latency.table, live.nhb,
                           live.end, live.start, live.aid, live.ws, live.tw, live.w, live.r,
                           live.W, live.k, live.p0, live.p1, live.r0, live.r1, live.fpp)

    def _complete(self, t: float, rows: np.ndarray, ends: np.ndarray) -> None:
        live = self.live
        if len(rows) > 1:
            # per task (ascending), the attempt that ended first (ties: lowest attempt id)
            task = live.task[rows]
            order = np.lexsort((live.aid[rows], ends, task))
            rows, ends, task = rows[order], ends[order], task[order]
            first = np.flatnonzero(np.concatenate(([True], task[1:] != task[:-1])))
            uniq, win_rows, win_end = task[first], rows[first], ends[first]
        else:
            uniq, win_rows, win_end = live.task[rows], rows, ends
        if self.compiled:
            self._complete_compiled(t, uniq, win_rows, win_end)
            return
        self.t_done[uniq] = True
        self.t_finish[uniq] = win_end
        self.t_runtime[uniq] = win_end - live.start[win_rows]
        # every other attempt of a finished task is killed when the winner ends
        gone = np.flatnonzero(self.t_done[live.task])
        aid = live.aid[gone]
        self.a_end[aid] = self.t_finish[live.task[gone]]
        self.a_state[aid] = _KILLED
        self.a_state[live.aid[win_rows]] = _DONE
        self._release(gone)  # the winners' slots among them: their jobs are marked changed

        jobs = self.t_job[uniq]
        if self._gate is not None:
            self._job_stats(jobs, self.t_type[uniq].astype(np.int64), self.t_runtime[uniq])
        np.subtract.at(self.j_left, jobs, 1)
        np.maximum.at(self.j_last, jobs, win_end)
        map_jobs = jobs[self.t_type[uniq] == MAP]
        np.subtract.at(self.j_maps_left, map_jobs, 1)
        phase = map_jobs[(self.j_maps_left[map_jobs] == 0) & (self.j_nred[map_jobs] > 0)]
        if len(phase):
            phase = _unique(phase)
            self.j_end[phase] = self.j_off[phase] + self.j_nmaps[phase] + self.j_nred[phase]
            self._waiting += int(self.j_nred[phase].sum())
        finished = jobs[self.j_left[jobs] == 0]
        if len(finished):
            finished = _unique(finished)
            self._waiting -= int((self.j_end[finished] - self.j_next[finished]).sum())
            self.j_finish[finished] = self.j_last[finished]
            self._active = self._active[self.j_left[self._active] > 0]
            self._jobs_left -= len(finished)
        woken = jobs[self.j_wake[jobs]]
        self.j_next_scan[woken] = np.minimum(self.j_next_scan[woken], t)

    def _complete_compiled(self, t: float, uniq: np.ndarray, win_rows: np.ndarray,
                           win_end: np.ndarray) -> None:
        """The rest of ``_complete`` in one compiled call (``hedge.sim.kernels.complete``;
        bit-identical to the numpy code that follows the choice of winners)."""
        live = self.live
        self._rates_dirty = True  # slots are released
        waiting, finished = kernels.complete(
            t, win_rows, uniq, win_end, self._gate is not None, live.idle_task, _IDLE_START,
            _DONE, _KILLED, self.t_done, self.t_finish, self.t_runtime, self.t_job,
            self.t_type, self.t_att, self.t_run, self.a_end, self.a_state, self.slot_busy,
            self.slot_node, self.busy_n, live.aid, live.task, live.job, live.start, live.ws,
            live.W, live.w, live.k, live.nhb, live.end, self.j_changed,
            self.j_count.reshape(-1), self.j_sum.reshape(-1), self.j_sumsq.reshape(-1),
            self.j_mean.reshape(-1), self.j_std.reshape(-1), self.j_left, self.j_last,
            self.j_maps_left, self.j_nred, self.j_off, self.j_nmaps, self.j_end,
            self.j_next, self.j_finish, self.j_wake, self.j_next_scan)
        self._waiting += waiting
        if finished:
            self._active = self._active[self.j_left[self._active] > 0]
            self._jobs_left -= finished

    def _job_stats(self, jobs: np.ndarray, types: np.ndarray, runtime: np.ndarray) -> None:
        """Running count, mean and std of completed run times per (job, type), for gates."""
        np.add.at(self.j_count, (jobs, types), 1.0)
        np.add.at(self.j_sum, (jobs, types), runtime)
        np.add.at(self.j_sumsq, (jobs, types), runtime * runtime)
        count = self.j_count[jobs, types]
        mean = self.j_sum[jobs, types] / count
        self.j_mean[jobs, types] = mean
        self.j_std[jobs, types] = np.sqrt(np.maximum(self.j_sumsq[jobs, types] / count
                                                     - mean * mean, 0.0))

    def _release(self, slots: np.ndarray) -> None:
        """Empty these slots (their attempts ended or were killed)."""
        self.slot_busy[slots] = False
        self._rates_dirty = True
        np.subtract.at(self.busy_n, self.slot_node[slots], 1)
        np.subtract.at(self.t_att, self.live.task[slots], 1)
        self.j_changed[self.live.job[slots] + 1] = True
        if self._gate is not None:
            np.subtract.at(self.t_run, self.live.task[slots], 1)
        self.live.clear(slots)

    # ------------------------------------------------------------------ step 2: arrivals
    def _arrivals(self, t: float) -> None:
        first = self._arrived
        last = int(np.searchsorted(self._arrival_grid, t + EPS, side="right"))
        if last == first:
            return
        self._arrived = last
        new = np.arange(first, last)
        empty = new[self.j_left[new] == 0]
        self.j_finish[empty] = self.j_arrival[empty]
        new = new[self.j_left[new] > 0]
        self._active = np.concatenate([self._active, new])
        self._waiting += int((self.j_end[new] - self.j_next[new]).sum())
        self.j_next_scan[new] = t

    # ------------------------------------------------------------------ step 3: scans
    def _scan(self, t: float) -> None:
        act = self._active
        if not len(act):
            return
        due = act[self.j_next_scan[act] <= t + EPS]
        if not len(due):
            return
        live = self.live
        if self._idempotent:
            due = self._changed_or_loud(t, due)
            if not len(due):
                return
        if self._gate is not None:
            due = self._gated(t, due)
            if not len(due):
                return
        # running attempts of the due jobs, grouped by job in the order of ``due``
        self._due_mask[due + 1] = True
        rows = np.flatnonzero(self._due_mask[live.job + 1])
        self._due_mask[due + 1] = False
        rows = rows[np.argsort(live.job[rows], kind="stable")]
        cut = np.append(np.searchsorted(live.job[rows], due), len(rows)).tolist()
        view = self._am_view(t, rows)
        cluster = self._cluster_facts(t)
        for i, j in enumerate(due.tolist()):
            if self.j_left[j] == 0:
                continue
            part = slice(cut[i], cut[i + 1])
            snapshot = self._snapshot(t, j, rows[part], {k: v[part] for k, v in view.items()},
                                      cluster)
            policy = self.j_policy.get(j)
            if policy is None:
                policy = self.j_policy[j] = create(self.policy_name, **self.policy_params)
            if self._clairvoyant:
                policy.see(self._truth(t, j, rows[part], snapshot))
            actions = policy.decide(snapshot)
            self.scans += 1
            self._apply(t, j, actions, snapshot)
            if self._idempotent:
                self.j_quiet[j] = _empty(actions)
                self.j_changed[j + 1] = False

    def _changed_or_loud(self, t: float, due: np.ndarray) -> np.ndarray:
        """The due jobs a ``scan_idempotent`` policy must see: its last answer was not
        empty, or the job changed since (a report received, an attempt started, ended,
        requested or killed, a task completed). The others rescan after ``scan`` s."""
        live = self.live
        # reports k and k - 1 received since the last check (k - 1 when a step sent two)
        since = self._recv_checked
        got = ((live.r0 > since) & (live.r0 <= t)) | ((live.r1 > since) & (live.r1 <= t))
        self.j_changed[live.job[got] + 1] = True
        self._recv_checked = t
        keep = self.j_changed[due + 1] | ~self.j_quiet[due]
        self.j_next_scan[due[~keep]] = self._grid_after(t, self.cluster.scan)
        return due[keep]

    def _gated(self, t: float, due: np.ndarray) -> np.ndarray:
        """The due jobs the policy's gate wants scanned; the others rescan after ``scan`` s.

        With ``compiled`` and a policy defining ``needs_scan_slots``, one compiled call over
        the slot arrays; otherwise ``needs_scan`` over the gathered ``ScanBatch``.
        """
        self._due_mask[due + 1] = True
        view = self._view
        if view is None:  # the arrays it holds are never reassigned during a run
            view = self._view = self._slot_view(t)
        view.now, view.free_slots = t, self._free_slots()
        if self._slot_gate is not None and self.compiled:
            want = self._slot_gate(view)[due + 1]
        else:
            batch = view.to_batch()
            marked = batch.job[np.asarray(self._gate(batch), dtype=bool)] + 1
            self._due_mask[due + 1] = False
            self._due_mask[marked] = True
            want = self._due_mask[due + 1]
            self._due_mask[marked] = False
        self._due_mask[due + 1] = False
        self.j_next_scan[due[~want]] = self._grid_after(t, self.cluster.scan)
        return due[want]  # due is sorted (jobs activate in order)

    def _grid_after(self, t: float, wait: float) -> float:
        """The grid time of a scan ``wait`` s after ``t``: the first tick at or after
        ``t + max(wait, tick)`` (inf when ``wait`` is not finite)."""
        if not math.isfinite(wait):
            return math.inf
        tick = self.cluster.tick
        return math.ceil((t + max(wait, tick)) / tick - EPS) * tick

    def _slot_view(self, t: float) -> SlotView:
        """The slot arrays as a gate sees them (``hedge.model.batch.SlotView``); ``due`` is
        ``_due_mask`` (index job + 1), so mark the due jobs first."""
        live = self.live
        return SlotView(
            now=t, hw=self.cluster.hw, due=self._due_mask, job=live.job, task=live.task,
            start=live.start, k=live.k, p0=live.p0, p1=live.p1, r0=live.r0, r1=live.r1,
            task_type=self.t_type_sentinel, task_attempts=self.t_att, task_running=self.t_run,
            n_tasks=self.j_ntasks, completed=self.j_count, completed_mean=self.j_mean,
            completed_std=self.j_std, free_slots=self._free_slots(), job_start=self.j_arrival)

    def _am_view(self, t: float, rows: np.ndarray) -> dict[str, np.ndarray]:
        """What the AM holds for the attempts in these slots: their last *received* report."""
        live, hw = self.live, self.cluster.hw
        start, kfp = live.start[rows], live.kfp[rows]
        index, progress, sent, recv = last_received(
            t, start, live.k[rows], live.p0[rows], live.p1[rows], live.r0[rows],
            live.r1[rows], hw)
        seen_fp = (kfp <= index) & (index >= 0)
        fpt = np.where(seen_fp, start + kfp * hw, np.nan)
        fpp = np.where(seen_fp, live.fpp[rows], np.nan)
        return {"progress": progress, "sent": sent, "recv": recv, "fpt": fpt, "fpp": fpp}

    def _cluster_facts(self, t: float) -> ClusterFacts:
        """Cluster view shared by all scans at ``t``.

        ``slot_free_at``: each busy slot's estimated end by Hadoop's legacy estimator on its
        attempt's latest report (``start + elapsed / progress``; unknown: inf), at least
        one tick ahead; empty slots: ``t``.
        """
        cfg, live = self.cluster, self.live
        util = self.busy_n / cfg.slots
        with np.errstate(divide="ignore", invalid="ignore"):
            free_at = np.maximum(live.start + live.k * cfg.hw / live.p0, t + cfg.tick)
        # as np.nan_to_num(nan=inf) before the maximum: inf -> largest float, NaN -> inf
        free_at[free_at == np.inf] = np.finfo(np.float64).max
        free_at[np.isnan(free_at)] = np.inf
        free_at[live.aid < 0] = t
        return ClusterFacts(
            total_slots=cfg.total_slots,
            free_slots=self._free_slots(),
            blacklist=np.flatnonzero(self._bl_mask),
            cpu_util=util,
            mem_util=util,
            slot_node=self.slot_node,
            slot_free_at=free_at,
        )

    def _snapshot(self, t: float, j: int, rows: np.ndarray, view: dict, cluster: ClusterFacts,
                  ) -> Snapshot:
        live = self.live
        off = int(self.j_off[j])
        wait = np.arange(self.j_next[j], self.j_end[j])
        wait = wait[~self.t_done[wait]]
        copies = [c for c in self._queue if self.t_job[self.a_task[c]] == j]
        wait_aid = np.concatenate([wait, np.asarray(copies, dtype=np.int64)]).astype(np.int64)
        wait_task = self.a_task[wait_aid]
        nw = len(wait_aid)
        aid = live.aid[rows]

        def rows_then(running: np.ndarray, waiting: object) -> np.ndarray:
            """Running rows, then the waiting attempts' value (no copy when none waits)."""
            if not nw:
                return running
            return np.concatenate([running, np.broadcast_to(waiting, nw)])

        task = rows_then(live.task[rows], wait_task)
        inp = self.t_input[task]
        progress = rows_then(view["progress"], 0.0)
        frac0 = rows_then(live.frac0[rows], 0.0)
        attempts = AttemptTable(
            task=task - off,
            attempt=rows_then(aid, wait_aid),
            task_type=self.t_type[task],
            state=rows_then(np.full(len(rows), AttemptState.RUNNING, np.int8),
                            np.int8(AttemptState.WAITING)),
            node=rows_then(self.slot_node[rows], -1),
            start=rows_then(live.start[rows], np.nan),
            first_progress_time=rows_then(view["fpt"], np.nan),
            first_progress=rows_then(view["fpp"], np.nan),
            progress=progress,
            report_sent=rows_then(view["sent"], np.nan),
            report_received=rows_then(view["recv"], np.nan),
            bytes_processed=progress * (1 - frac0) * inp,
            input_bytes=inp,
            speculative=rows_then(self.a_copy[aid], self.a_copy[wait_aid]),
        )
        nm = int(self.j_nmaps[j])
        maps = self.t_runtime[off:off + nm]
        reds = self.t_runtime[off + nm:off + nm + int(self.j_nred[j])]
        deadline = float(self.j_deadline[j])
        facts = JobFacts(
            job_id=self.j_ids[j],
            start=float(self.j_arrival[j]),
            n_maps=nm,
            n_reduces=int(self.j_nred[j]),
            deadline=None if math.isnan(deadline) else deadline,
            completed_map_runtimes=maps[~np.isnan(maps)],
            completed_reduce_runtimes=reds[~np.isnan(reds)],
        )
        if self._input_nodes is not None:
            facts.input_nodes = self._input_nodes[off:off + nm + int(self.j_nred[j])]
        return Snapshot(now=t, job=facts, attempts=attempts, cluster=cluster)

    def _truth(self, t: float, j: int, rows: np.ndarray, snapshot: Snapshot) -> Truth:
        """The ground truth of one job's snapshot (running rows first, as in ``_snapshot``)."""
        off, n = int(self.j_off[j]), int(self.j_nmaps[j] + self.j_nred[j])
        remaining = np.full(len(snapshot.attempts), np.inf)
        remaining[:len(rows)] = self.live.end[rows] - t
        work = self.t_base[off:off + n] * self._known_copy_factor[off:off + n]
        return Truth(remaining=remaining, copy_time=work + self.cluster.startup)

    # ------------------------------------------------------------------ applying actions
    def _apply(self, t: float, j: int, actions: Actions, snapshot: Snapshot) -> None:
        off, n = int(self.j_off[j]), int(self.j_nmaps[j] + self.j_nred[j])
        for name in ("speculate_task", "resume_task"):
            idx = getattr(actions, name)
            if len(idx) and (idx.min() < 0 or idx.max() >= n):
                raise HedgeError(
                    f"policy '{self.policy_name}' returned {name} {idx.tolist()} for job "
                    f"{self.j_ids[j]!r} with {n} tasks (expected indices 0..{n - 1})")
        # only what the AM would let happen: caps, per-type switches, never a last attempt
        actions = limit(actions, snapshot, self.speculation, self.t_done[off:off + n])
        if len(actions.kill_attempt):
            self._kill(t, j, actions.kill_attempt)
        for task, k in zip(actions.resume_task.tolist(), actions.resume_copies.tolist(),
                           strict=True):
            self._resume(t, off + task, int(k))
        for task, k, prefer in zip(actions.speculate_task.tolist(),
                                   actions.speculate_copies.tolist(),
                                   actions.prefer_node.tolist(), strict=True):
            task += off
            if not self.t_done[task] and k > 0:
                self.t_detected[task] = True
                self._request(task, int(k), copy=True, prefer=prefer)
        self.j_reserved[j] = max(int(actions.reserve_slots), 0)
        if len(actions.avoid_nodes):
            self.j_avoid[j] = actions.avoid_nodes
        else:
            self.j_avoid.pop(j, None)
        wait = self.cluster.scan if actions.next_scan_in is None else actions.next_scan_in
        self.j_next_scan[j] = self._grid_after(t, wait)
        self.j_wake[j] = actions.wake_on_completion

    def _request(self, task: int, k: int, copy: bool, prefer: int = -1, frac0: float = 0.0,
                 ) -> None:
        """Queue ``k`` new attempts of ``task`` (they wait for slots like any task)."""
        first = self._n_attempts
        self._grow(first + k)
        ids = np.arange(first, first + k)
        self.a_task[ids] = task
        self.a_copy[ids] = copy
        self.a_prefer[ids] = prefer
        self.a_frac0[ids] = frac0
        self._n_attempts += k
        self.t_att[task] += k
        self.j_changed[self.t_job[task] + 1] = True
        self._queue.extend(ids.tolist())

    def _grow(self, size: int) -> None:
        cap = len(self.a_task)
        if size <= cap:
            return
        new = max(size, 2 * cap)
        fills = {"a_task": -1, "a_node": -1, "a_start": np.nan, "a_end": np.nan,
                 "a_state": 0, "a_copy": False, "a_prefer": -1, "a_frac0": 0.0}
        for name, fill in fills.items():
            old = getattr(self, name)
            grown = np.full(new, fill, dtype=old.dtype)
            grown[:cap] = old
            setattr(self, name, grown)

    def _kill(self, t: float, j: int, attempt_ids: np.ndarray) -> None:
        live = self.live
        mask = np.flatnonzero(np.isin(live.aid, attempt_ids) & (live.job == j))
        tasks = _unique(live.task[mask])
        aid = live.aid[mask]
        self.a_end[aid] = t
        self.a_state[aid] = _KILLED
        self._release(mask)
        wanted = set(attempt_ids.tolist())
        cancelled = [c for c in self._queue if c in wanted and self.t_job[self.a_task[c]] == j]
        for c in cancelled:
            self._queue.remove(c)
            self.a_state[c] = _CANCELLED
            self.t_att[self.a_task[c]] -= 1
        self.j_changed[j + 1] = True
        # a task left with no attempt at all is relaunched (as Hadoop reschedules it)
        queued = {int(self.a_task[c]) for c in self._queue}
        running = set(self.live.task.tolist())
        for task in tasks.tolist():
            if not self.t_done[task] and task not in running and task not in queued \
                    and task < self.j_next[self.t_job[task]]:
                self._request(task, 1, copy=False)

    def _resume(self, t: float, task: int, k: int) -> None:
        """Chronos Speculative-Resume: kill the task's attempts, restart from their furthest point."""
        if self.t_done[task] or k <= 0:
            return
        live = self.live
        mask = np.flatnonzero(live.task == task)
        done = live.w[mask] + live.r[mask] * np.maximum(
            t - np.maximum(live.tw[mask], live.ws[mask]), 0.0)
        reached = live.frac0[mask] + (1 - live.frac0[mask]) * done / live.W[mask]
        frac0 = float(reached.max()) if len(mask) else 0.0
        aid = live.aid[mask]
        self.a_end[aid] = t
        self.a_state[aid] = _KILLED
        self._release(mask)
        self.t_detected[task] = True
        self._request(task, k, copy=True, frac0=min(frac0, 1.0 - 1e-9))

    # ------------------------------------------------------------------ step 4: scheduling
    def _free_slots(self) -> int:
        """Free slots new containers may use (not on blacklisted nodes)."""
        if self.blacklist is None:
            return int(self.cluster.total_slots - self.busy_n.sum())
        return int(np.maximum(self.cluster.slots - self.busy_n, 0)[~self._bl_mask].sum())

    def _schedule(self, t: float) -> None:
        if not self._queue and not self._waiting:
            return  # nothing waits for a slot
        cfg = self.cluster
        free = self._free_slots()
        if free and self._queue:
            free -= self._schedule_copies(t)
        act = self._active
        if not free or not self._waiting:
            return
        reserved = min(int(self.j_reserved[act].sum()), cfg.total_slots - 1)
        budget = free - reserved
        pend = self.j_end[act] - self.j_next[act]
        if budget <= 0 or not pend.any():
            return
        take = self._fifo(pend, budget) if cfg.scheduler == "fifo" else \
            self._fair(act, pend, budget)
        has = take > 0
        jobs, take = act[has], take[has]
        starts = self.j_next[jobs]
        self.j_next[jobs] += take
        self._waiting -= int(take.sum())
        cum = np.cumsum(take)
        tasks = np.repeat(starts - (cum - take), take) + np.arange(int(cum[-1]))
        done = self.t_done[tasks]
        self.a_state[tasks[done]] = _CANCELLED
        tasks = tasks[~done]
        if len(tasks):
            slots = self._place(tasks)
            self._launch(t, tasks, tasks, slots)

    @staticmethod
    def _fifo(pend: np.ndarray, budget: int) -> np.ndarray:
        """Jobs in arrival order take what they need until the budget runs out."""
        before = np.cumsum(pend) - pend
        return np.clip(budget - before, 0, pend)

    def _fair(self, act: np.ndarray, pend: np.ndarray, budget: int) -> np.ndarray:
        """Max-min fair: raise a common level of running tasks per job (water-filling)."""
        running = np.bincount(self.live.job + 1, minlength=len(self.j_off) + 1)[1:][act]

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

    def _free_slot_order(self, count: int) -> np.ndarray:
        """The first ``count`` free slots, least-loaded node first (ties: seeded node order).

        A slot's key is the load its node would have with it filled; keys are unique.
        """
        cfg = self.cluster
        free = ~self.slot_busy.reshape(cfg.nodes, cfg.slots)
        if self.blacklist is not None:
            free = free & ~self._bl_mask[:, None]
        rank = np.cumsum(free, axis=1) - 1
        load = (self.busy_n[:, None] + rank) * cfg.nodes + self._node_perm[:, None]
        slots = np.flatnonzero(free.ravel())
        keys = load.ravel()[slots]
        if count < len(slots):
            part = np.argpartition(keys, count - 1)[:count]
            slots, keys = slots[part], keys[part]
        return slots[np.argsort(keys)]

    def _place(self, tasks: np.ndarray) -> np.ndarray:
        """A free slot for each task: its input's node when free (if input sizes matter)."""
        cfg = self.cluster
        out = np.full(len(tasks), -1, dtype=np.int64)
        if self._local_matters:
            home = self.t_home[tasks]
            free = ~self.slot_busy.reshape(cfg.nodes, cfg.slots)
            if self.blacklist is not None:
                free = free & ~self._bl_mask[:, None]
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
            self.slot_busy[out[rows]] = True  # provisional: _launch marks them busy too
        rest = np.flatnonzero(out < 0)
        if len(rest):
            slots = self._free_slot_order(len(rest))
            out[rest] = slots
        return out

    def _schedule_copies(self, t: float) -> int:
        """Place waiting copies in request order; returns how many slots they took."""
        cfg = self.cluster
        placed_aid, placed_slot = [], []
        keep = []
        for aid in self._queue:
            task = int(self.a_task[aid])
            if self.t_done[task]:
                self.a_state[aid] = _CANCELLED
                self.t_att[task] -= 1
                self.j_changed[self.t_job[task] + 1] = True
                continue
            free_n = cfg.slots - self.busy_n
            allowed = (free_n > 0) & ~self._bl_mask
            if not allowed.any():
                keep.append(aid)
                continue
            if self.a_copy[aid]:
                allowed[self.slot_node[self.live.task == task]] = False
                allowed[[self.a_node[a] for a in placed_aid if self.a_task[a] == task]] = False
                avoid = self.j_avoid.get(int(self.t_job[task]))
                if avoid is not None:
                    allowed[avoid[(avoid >= 0) & (avoid < cfg.nodes)]] = False
            prefer = int(self.a_prefer[aid])
            if 0 <= prefer < cfg.nodes and allowed[prefer]:
                node = prefer
            elif allowed.any():
                cand = np.flatnonzero(allowed)
                key = self.busy_n[cand] * cfg.nodes + self._node_perm[cand]
                node = int(cand[np.argmin(key)])
            else:
                keep.append(aid)
                continue
            row = self.slot_busy[node * cfg.slots:(node + 1) * cfg.slots]
            slot = node * cfg.slots + int(np.argmin(row))
            self.slot_busy[slot] = True
            self.busy_n[node] += 1
            self.a_node[aid] = node
            placed_aid.append(aid)
            placed_slot.append(slot)
        self._queue = keep
        if not placed_aid:
            return 0
        aid = np.asarray(placed_aid, dtype=np.int64)
        slots = np.asarray(placed_slot, dtype=np.int64)
        # _launch re-marks the slots busy; undo the provisional marks first
        self.slot_busy[slots] = False
        np.subtract.at(self.busy_n, slots // cfg.slots, 1)
        self._launch(t, aid, self.a_task[aid], slots)
        return len(aid)

    def _copy_factors(self, tasks: np.ndarray) -> np.ndarray:
        """Slowdowns of copies of ``tasks``: drawn ahead for a clairvoyant policy, else a draw
        from the task's pool (a trace model's job and phase), else from every task's factor."""
        if self._known_copy_factor is not None:
            return self._known_copy_factor[tasks]
        if self._copy_pools is None:
            pool = self._factor_pool
            return pool[self._copy_rng.integers(0, len(pool), len(tasks))]
        values, start, size = self._copy_pools
        return values[start[tasks] + self._copy_rng.integers(0, size[tasks])]

    def _launch(self, t: float, aid: np.ndarray, tasks: np.ndarray, slots: np.ndarray) -> None:
        cfg = self.cluster
        node = slots // cfg.slots
        self.slot_busy[slots] = True
        self._rates_dirty = True
        self.busy_n += np.bincount(node, minlength=cfg.nodes)
        fresh = aid >= len(self.t_base)
        factor = self.t_factor[tasks].copy()
        if fresh.any():
            factor[fresh] = self._copy_factors(tasks[fresh])
        frac0 = self.a_frac0[aid]
        work = (1 - frac0) * self.t_base[tasks] * factor
        if self._local_matters:
            inp = self.t_input[tasks]
            work += np.where(np.isfinite(inp) & (node != self.t_home[tasks]),
                             np.nan_to_num(inp) * (1 - frac0) / cfg.bandwidth, 0.0)
        if cfg.shuffle:
            work += np.where(self.t_type[tasks] == REDUCE, cfg.shuffle, 0.0)
        work = np.maximum(work, 1e-9)
        self.a_node[aid], self.a_start[aid], self.a_state[aid] = node, t, _RUNNING
        np.add.at(self.t_launched, tasks, 1)
        np.add.at(self.t_att, tasks[~fresh], 1)  # originals were not counted while waiting
        if self._gate is not None:
            np.add.at(self.t_run, tasks, 1)
        live = self.live
        live.aid[slots], live.task[slots], live.job[slots] = aid, tasks, self.t_job[tasks]
        self.j_changed[live.job[slots] + 1] = True
        live.start[slots], live.ws[slots] = t, t + cfg.startup
        live.W[slots], live.w[slots], live.tw[slots] = work, 0.0, t
        live.end[slots] = np.maximum(live.ws[slots], t) + work / live.r[slots]
        live.k[slots], live.p0[slots], live.p1[slots] = 0, 0.0, 0.0
        live.r0[slots] = t + self.latency(aid, np.zeros(len(aid), dtype=np.int64))
        live.r1[slots] = np.nan
        live.nhb[slots] = t + cfg.hw
        live.kfp[slots] = self._kfp
        live.fpp[slots] = np.nan
        live.frac0[slots] = frac0

    # ------------------------------------------------------------------ step 5: rates
    def _update_rates(self, t: float) -> None:
        """``r = speed / (degradation * stretch(busy slots))``; bank the work of changed slots."""
        if not self._rates_dirty:
            return  # rates depend only on loads and degradation: unchanged
        self._rates_dirty = False
        live = self.live
        if self.compiled:
            kernels.update_rates(t, self._degr, self._stretch, self.busy_n, self.slot_speed,
                                 self.slot_node, live.tw, live.ws, live.w, live.r, live.W,
                                 live.end)
            return
        node_factor = self._degr * self._stretch[self.busy_n]
        rate = self.slot_speed / node_factor[self.slot_node]
        changed = np.flatnonzero(rate != live.r)
        if len(changed):
            begin = np.maximum(live.tw[changed], live.ws[changed])
            live.w[changed] += live.r[changed] * np.maximum(t - begin, 0.0)
            live.tw[changed] = t
            live.r[changed] = rate[changed]
            live.end[changed] = (np.maximum(begin, t)
                                 + (live.W[changed] - live.w[changed]) / rate[changed])

    # ------------------------------------------------------------------ result
    def _result(self, wall: float) -> SimResult:
        n = self._n_attempts
        state = self.a_state[:n]
        ran = np.flatnonzero((state == _DONE) | (state == _KILLED))
        task = self.a_task[ran]
        outcome = np.where(state[ran] == _KILLED, KILLED,
                           np.where(self.t_launched[task] > 1, WON, NORMAL)).astype(np.int8)
        straggler = self.t_factor > 1
        records = AttemptRecords(
            task=self._perm[task],
            job=self._job_order[self.t_job[task]],
            node=self.a_node[ran],
            start=self.a_start[ran],
            end=self.a_end[ran],
            outcome=outcome,
            copy=self.a_copy[ran],
            straggler=straggler[task],
        )
        inverse = np.empty_like(self._job_order)
        inverse[self._job_order] = np.arange(len(self._job_order))
        detected = np.zeros(len(self._perm), dtype=bool)
        detected[self._perm] = self.t_detected
        truth = np.zeros(len(self._perm), dtype=bool)
        truth[self._perm] = straggler
        return SimResult(
            policy=self.policy_name,
            seed=self.seed,
            cluster=self.cluster,
            job_ids=list(self.workload.job_ids),
            arrival=self.j_arrival[inverse],
            finish=self.j_finish[inverse],
            deadline=self.j_deadline[inverse],
            attempts=records,
            detected=detected,
            straggler=truth,
            straggler_truth=self.workload.straggler_truth or self.cluster.straggler_ratio > 0,
            degradation=self.degradation,
            node_speed=self.speed,
            energy=total_energy(records, self.cluster),
            wall_seconds=wall,
            scans=self.scans,
            blacklist=self.blacklist,
        )


def simulate(
    workload: Workload,
    policy: str = "none",
    cluster: ClusterConfig | None = None,
    seed: int = 0,
    deadline_factor: float | None = None,
    policy_params: dict | None = None,
    progress: bool = False,
    gates: bool = True,
    deadline: float | None = None,
    blacklist: Blacklist | Iterable[int] | None = None,
    speculation: SpeculationSettings | None = None,
) -> SimResult:
    """Run ``policy`` on ``workload``; see ``Simulator``."""
    return Simulator(workload, cluster, policy, policy_params, seed, deadline_factor,
                     progress, gates, deadline, blacklist, speculation).run()
