"""The trace-driven simulator: jobs, slots, attempts, heartbeats and policy scans.

Where things live (``hedge.sim``):

- ``engine``: this module, the clock loop that ties the rest (``Simulator``, ``simulate``):
  set-up, the order of the steps below, completions and arrivals, the next time to visit,
  the result;
- ``tables``: the task, job and attempt tables (struct of arrays) and the queue of waiting
  copies; ``slots``: the attempt running in each slot (``Live``), node loads, rates,
  ``launch``/``release``; ``copies``: a copy's slowdown draw and the oracle's ground truth;
- ``scheduler``: FIFO/Fair placement of waiting copies and tasks on free slots;
- ``am``: each job's AM: what it has received, its ``Snapshot``, scan gates, the policy;
- ``actuation``: a policy's ``Actions`` cut by ``hedge.policy.limits``, then carried out;
- ``heartbeat``: reports and their latencies, computed arithmetically; ``kernels``: the
  compiled (numba) per-step work; ``grid``: the tick grid; ``cluster``: the cluster model
  (speeds, degradation, blacklist); ``results``/``metrics``: what a run returns and its
  figures.

Time advances on a grid of ``tick`` seconds (the YARN NodeManager heartbeat that hands out
containers), but only to grid points where something happens (an attempt ends, a job
arrives, a scan is due, a node's speed changes). Between two such points every running
attempt progresses at a constant rate, so the state of *all* running attempts moves in one
vectorised step (struct of arrays ``Live``), and an attempt's end is computed exactly
inside the step. At each visited grid time ``t``, in order:

1. attempts whose work ended in ``(t_prev, t]`` complete; the first to end wins its task,
   the task's other attempts are killed at that instant; freed slots become free at ``t``;
2. jobs that arrived by ``t`` become active (maps runnable; reduces once all maps are done);
3. every job whose scan is due gets a ``Snapshot`` of what its AM has received and its
   policy's ``Actions`` are applied (kills, copies, Chronos resumes, reservations);
4. the job scheduler (FIFO or Fair) shares the free slots among the jobs, leaving reserved
   slots for copies; each job's share goes to its waiting originals, then to its copies
   (in request order, on a node not running that task, honouring
   ``prefer_node``/``avoid_nodes``), as a MapReduce AM's container requests are served;
5. every running attempt's rate is recomputed from its node's speed, degradation and load.

A policy may define a vectorised ``needs_scan`` gate (``hedge.model.batch``): due jobs it
clears are not given a snapshot at that scan (results are bit-identical with ``gates=False``;
tests prove it per gated policy), and a compiled form of it over the raw slot arrays
(``needs_scan_slots``, ``SlotView``); a job a gate skipped sleeps until its gate could
want it or it changes (``AppMasters.settle``, after step 5), so the loop does not visit
instants where no job could be scanned. ``blacklist`` nodes get no new container while listed.

The per-step work over all slots (heartbeats, completions, rate updates) runs in compiled
kernels (``hedge.sim.kernels``): a step costs one call each instead of dozens of small
numpy calls. ``Simulator.compiled = False`` runs the numpy code they replace (kept as the
reference; results are bit-identical, tests compare whole runs).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable

import numpy as np

from hedge.errors import HedgeError
from hedge.model import MAP
from hedge.policy import Policy, create
from hedge.policy.limits import SpeculationSettings
from hedge.policy.params import split_settings
from hedge.sim import kernels
from hedge.sim.actuation import Actuator
from hedge.sim.am import AppMasters
from hedge.sim.cluster import (
    Blacklist,
    ClusterConfig,
    draw_degradation,
    latency_sampler,
    node_speeds,
)
from hedge.sim.copies import CopyDraws
from hedge.sim.energy import total_energy
from hedge.sim.grid import EPS
from hedge.sim.heartbeat import Latency, heartbeats_numpy
from hedge.sim.progress import RunProgress
from hedge.sim.results import KILLED, NORMAL, WON, AttemptRecords, SimResult
from hedge.sim.scheduler import Scheduler
from hedge.sim.slots import IDLE_START, Slots
from hedge.sim.tables import DONE, Tables, unique
from hedge.sim.tables import KILLED as A_KILLED
from hedge.traces.workload import Workload

_NO_JOBS = np.empty(0, dtype=np.int64)  # shared by every run, so read-only
_NO_JOBS.setflags(write=False)

__all__ = ["EPS", "Simulator", "simulate"]


class Simulator:
    """Run one policy on one workload and cluster; ``run()`` returns a ``SimResult``.

    ``policy_params`` go to ``hedge.policy.create`` (one policy object per job).
    ``deadline_factor`` F sets each job's deadline to arrival + F x its no-straggler run
    time, taken as the critical path on an idle typical node: the longest map plus the
    longest reduce (plus ``shuffle``). ``deadline`` D instead gives every job the same
    relative deadline: arrival + D seconds (Chronos' model). ``blacklist``: nodes that get
    no new container (a ``hedge.sim.cluster.Blacklist`` or node indices, always).
    ``make_policy``: the policy object of a job from its id, in place of ``create``
    (``hedge.server.simulated_am`` sends the snapshots through the control plane this way).
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
        *,
        make_policy: Callable[[str], Policy] | None = None,
    ) -> None:
        self.workload = workload
        self.make_policy = make_policy
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
        self._wake = getattr(probe, "needs_scan_from", None) if self._gate is not None \
            else None
        self._idempotent = bool(probe.scan_idempotent) and gates
        self._copies_only = bool(probe.copies_only) and gates
        self._clairvoyant = bool(probe.clairvoyant)
        self._told = probe.copy_told

    # ------------------------------------------------------------------ set-up
    def _setup(self) -> None:
        """Build the tables and the parts that act on them (draws from one seeded generator
        in a fixed order: the tables', node speeds, node order, degradation)."""
        wl, cfg = self.workload, self.cluster
        rng = np.random.default_rng(self.seed)
        tb = self.tables = Tables(wl, cfg, rng, self.deadline, self.deadline_factor)
        self.speed = node_speeds(cfg, rng)
        node_perm = rng.permutation(cfg.nodes)
        work = float((tb.t_base * tb.t_factor).sum())
        horizon = (float(tb.j_arrival.max(initial=0.0)) + 3 * work / cfg.total_slots
                   + 2 * cfg.heterogeneity * float((tb.t_base * tb.t_factor).max(initial=0)))
        self.degradation = draw_degradation(cfg, horizon, rng)
        self._bounds = self.degradation.boundaries()
        self._bound_i = 0
        # index of an attempt's first report with progress > 0 (after the JVM start-up)
        self._kfp = math.floor(cfg.startup / cfg.hw + EPS) + 1
        bl = self.blacklist
        self._bl_bounds = bl.boundaries() if bl is not None else np.empty(0)
        self._bl_i = 0
        self.latency = Latency(latency_sampler(cfg.latency), cfg.hw, self.seed)
        self._arrived = 0
        # the jobs whose scan instant or sleep may have moved since the last scan (their
        # tasks completed, or they arrived: nothing else acts between two steps), and the
        # earliest scan instant of the active jobs at the end of the last step: before it
        # only those jobs can be due (``AppMasters.scan``)
        self._touched: list[np.ndarray] = []
        self._scan_floor = -math.inf
        self._arrival_grid = np.ceil(tb.j_arrival / cfg.tick - EPS) * cfg.tick + 0.0
        compiled = self.compiled
        draws = CopyDraws(tb, wl, cfg, self.seed, self._clairvoyant, self._told)
        self.slots = Slots(cfg, self.speed, tb, draws, self.latency, self._kfp,
                           track_running=self._gate is not None or self._copies_only,
                           blacklisting=bl is not None)
        self.scheduler = Scheduler(cfg, tb, self.slots, node_perm)
        actuator = Actuator(cfg, tb, self.slots, self.policy_name, self.speculation)
        self.am = AppMasters(cfg, tb, self.slots, actuator, draws, self.policy_name,
                             self.policy_params, self._gate, self._slot_gate,
                             self._idempotent, self._clairvoyant, compiled,
                             self._copies_only, self._wake, self.make_policy)
        # gated jobs sleep: reports are then recorded only where something reads them or
        # a rate is about to change (AppMasters.refresh), not for every slot at every step
        self._lazy = self.am.sleeps
        if self._lazy:
            self.am.refresh = self._refresh

    @property
    def scans(self) -> int:
        """Policy scans so far (``decide`` calls)."""
        return self.am.scans

    # ------------------------------------------------------------------ main loop
    def run(self) -> SimResult:
        began = time.perf_counter()
        self._setup()
        cfg, tb, slots = self.cluster, self.tables, self.slots
        compiled = self.compiled
        label = self.progress if isinstance(self.progress, str) else self.policy_name
        jobs = tb.jobs_left
        bar = RunProgress(label, len(tb.t_base), jobs, enabled=bool(self.progress))
        t = float(self._arrival_grid[0]) if len(self._arrival_grid) else 0.0
        t_prev = t
        if self.blacklist is not None:
            slots.bl_mask = self.blacklist.mask_at(t, cfg.nodes)
        while True:
            self._advance(t_prev, t)
            self._arrivals(t)
            if self._bl_i < len(self._bl_bounds) and self._bl_bounds[self._bl_i] <= t + EPS:
                self._bl_i = int(np.searchsorted(self._bl_bounds, t + EPS, side="right"))
                slots.bl_mask = self.blacklist.mask_at(t, cfg.nodes)
            if self._bound_i < len(self._bounds) and self._bounds[self._bound_i] <= t + EPS:
                self._bound_i = int(np.searchsorted(self._bounds, t + EPS, side="right"))
                slots.degr = self.degradation.slowdown_at(t, cfg.nodes)
                slots.rates_dirty = True
            if self._observing:
                self.am.scan(t, self._touched_jobs(), t + EPS < self._scan_floor)
            self.scheduler.schedule(t)
            if self._lazy and slots.rates_dirty:
                self._rates_after_reports(t)
            slots.update_rates(t, compiled)
            if self._observing:
                self.am.settle(t)
            if self.progress:
                bar.update(int(tb.t_done.sum()), jobs - tb.jobs_left, t)
            if tb.jobs_left == 0:
                break
            t_prev, t = t, self._next_time(t)
        bar.close()
        return self._result(time.perf_counter() - began)

    def _touched_jobs(self) -> np.ndarray:
        """The active jobs touched since the last scan (``_touched``), ascending; forgets them."""
        if not self._touched:  # (most steps of a trace day: a scan instant, no completion)
            return _NO_JOBS
        jobs = unique(np.concatenate(self._touched))
        self._touched = []
        return jobs[self.tables.j_left[jobs] > 0]

    def _next_time(self, t: float) -> float:
        tick = self.cluster.tick
        tb = self.tables
        candidates = []
        end = float(self.slots.live.end.min())
        if math.isfinite(end):
            candidates.append(end)
        if self._arrived < len(self._arrival_grid):
            candidates.append(self._arrival_grid[self._arrived])
        self._scan_floor = math.inf
        if self._observing and len(tb.active):
            self._scan_floor = kernels.earliest(tb.j_next_scan, tb.active)
            candidates.append(self._scan_floor)
        if self._bound_i < len(self._bounds):
            candidates.append(self._bounds[self._bound_i])
        if self._bl_i < len(self._bl_bounds):
            candidates.append(self._bl_bounds[self._bl_i])
        nxt = min(candidates) if candidates else math.inf
        if not math.isfinite(nxt):
            raise HedgeError(
                f"simulation stalled at t={t:.1f}s with {tb.jobs_left} unfinished jobs "
                "(no attempt running and nothing scheduled)"
            )
        step = max(math.ceil(nxt / tick - EPS), round(t / tick) + 1)
        return step * tick

    # ------------------------------------------------------------------ step 1: progress
    def _advance(self, t_prev: float, t: float) -> None:
        live = self.slots.live
        if t <= t_prev:
            return
        ended = np.flatnonzero(live.end <= t + EPS)
        if self._observing and not self._lazy:
            self._heartbeats(t, t - t_prev, ended)
        if len(ended):
            self._complete(t, ended, live.end[ended])

    def _heartbeats(self, t: float, step: float, ended: np.ndarray) -> None:
        """Record the progress carried by the reports sent in (t - step, t] (rate constant)
        by attempts still running (not in ``ended``): one compiled call
        (``hedge.sim.kernels.heartbeats``), or its numpy reference
        (``hedge.sim.heartbeat.heartbeats_numpy``) when ``compiled`` is False."""
        live, hw = self.slots.live, self.cluster.hw
        if not self.compiled:
            heartbeats_numpy(live, t, step, ended, hw, EPS, self._kfp, self.latency)
            return
        kernels.heartbeats(t, step, hw, EPS, self._kfp, self.latency.table, live.nhb,
                           live.end, live.start, live.aid, live.ws, live.tw, live.w, live.r,
                           live.W, live.k, live.p0, live.p1, live.r0, live.r1, live.fpp)

    def _refresh(self, t: float, want: np.ndarray) -> None:
        """Record the reports sent by ``t`` of the slots of jobs marked in ``want`` (index
        job + 1) (``hedge.sim.kernels.heartbeats_of``: bit-identical to recording every
        slot at every step, as long as every reader asks first and every rate change
        records first, ``_rates_after_reports``)."""
        live, hw, table = self.slots.live, self.cluster.hw, self.latency.table
        kernels.heartbeats_of(t, hw, EPS, self._kfp, table, want, live.job, live.nhb,
                              live.end, live.start, live.aid, live.ws, live.tw, live.w, live.r,
                              live.W, live.k, live.p0, live.p1, live.r0, live.r1, live.fpp)

    def _rates_after_reports(self, t: float) -> None:
        """``Slots.update_rates`` with the reports sent by ``t`` of each slot whose rate it
        changes recorded first, on the old rate, and those slots' jobs marked in the AMs'
        ``rated`` (``hedge.sim.kernels.heartbeats_and_rates``: one pass over the slots for
        the three)."""
        slots = self.slots
        live = slots.live
        kernels.heartbeats_and_rates(
            t, self.cluster.hw, EPS, self._kfp, self.latency.table, slots.degr, slots.stretch,
            slots.busy_n, slots.slot_speed, slots.slot_node, self.am.rated, live.job,
            live.nhb, live.end, live.start, live.aid, live.ws, live.tw, live.w, live.r,
            live.W, live.k, live.p0, live.p1, live.r0, live.r1, live.fpp)
        slots.rates_dirty = False

    def _complete(self, t: float, rows: np.ndarray, ends: np.ndarray) -> None:
        """The attempts in these slots ended (at ``ends``): their tasks and jobs progress."""
        tb, live = self.tables, self.slots.live
        if len(rows) > 1:
            # per task (ascending), the attempt that ended first (ties: lowest attempt id)
            task = live.task[rows]
            order = np.lexsort((live.aid[rows], ends, task))
            rows, ends, task = rows[order], ends[order], task[order]
            first = np.flatnonzero(np.concatenate(([True], task[1:] != task[:-1])))
            uniq, win_rows, win_end = task[first], rows[first], ends[first]
        else:
            uniq, win_rows, win_end = live.task[rows], rows, ends
        tb.t_winner[uniq] = live.aid[win_rows]
        tb.queue.note_ended(uniq)
        if self._observing:
            self._touched.append(tb.t_job[uniq])
        if self.compiled:
            self._complete_compiled(t, uniq, win_rows, win_end)
            return
        tb.t_done[uniq] = True
        tb.t_finish[uniq] = win_end
        tb.t_runtime[uniq] = win_end - live.start[win_rows]
        # every other attempt of a finished task is killed when the winner ends
        gone = np.flatnonzero(tb.t_done[live.task])
        aid = live.aid[gone]
        tb.a_end[aid] = tb.t_finish[live.task[gone]]
        tb.a_state[aid] = A_KILLED
        tb.a_state[live.aid[win_rows]] = DONE
        self.slots.release(gone)  # the winners' slots among them: their jobs are marked changed

        jobs = tb.t_job[uniq]
        if self._gate is not None:
            tb.job_stats(jobs, tb.t_type[uniq].astype(np.int64), tb.t_runtime[uniq])
        np.subtract.at(tb.j_left, jobs, 1)
        np.maximum.at(tb.j_last, jobs, win_end)
        map_jobs = jobs[tb.t_type[uniq] == MAP]
        np.subtract.at(tb.j_maps_left, map_jobs, 1)
        phase = map_jobs[(tb.j_maps_left[map_jobs] == 0) & (tb.j_nred[map_jobs] > 0)]
        if len(phase):
            phase = unique(phase)
            tb.j_end[phase] = tb.j_off[phase] + tb.j_nmaps[phase] + tb.j_nred[phase]
            tb.waiting += int(tb.j_nred[phase].sum())
            self.scheduler.waiting_jobs.note(phase)
        finished = jobs[tb.j_left[jobs] == 0]
        if len(finished):
            finished = unique(finished)
            tb.waiting -= int((tb.j_end[finished] - tb.j_next[finished]).sum())
            tb.j_finish[finished] = tb.j_last[finished]
            tb.retire(finished)
            tb.jobs_left -= len(finished)
        woken = jobs[tb.j_wake[jobs]]
        tb.j_next_scan[woken] = np.minimum(tb.j_next_scan[woken], t)

    def _complete_compiled(self, t: float, uniq: np.ndarray, win_rows: np.ndarray,
                           win_end: np.ndarray) -> None:
        """The rest of ``_complete`` in one compiled call (``hedge.sim.kernels.complete``;
        bit-identical to the numpy code that follows the choice of winners)."""
        tb, slots = self.tables, self.slots
        live = slots.live
        slots.rates_dirty = True  # slots are released
        waiting, finished, phased = kernels.complete(
            t, win_rows, uniq, win_end, self._gate is not None, live.idle_task, IDLE_START,
            DONE, A_KILLED, tb.t_done, tb.t_finish, tb.t_runtime, tb.t_job,
            tb.t_type, tb.t_att, tb.t_run, tb.a_end, tb.a_state, slots.slot_busy,
            slots.slot_node, slots.busy_n, live.aid, live.task, live.job, live.start, live.ws,
            live.W, live.w, live.k, live.nhb, live.end, tb.j_changed,
            tb.j_count.reshape(-1), tb.j_sum.reshape(-1), tb.j_sumsq.reshape(-1),
            tb.j_mean.reshape(-1), tb.j_std.reshape(-1), tb.j_left, tb.j_last,
            tb.j_maps_left, tb.j_nred, tb.j_off, tb.j_nmaps, tb.j_end,
            tb.j_next, tb.j_finish, tb.j_wake, tb.j_next_scan)
        tb.waiting += waiting
        if phased:  # jobs whose reduces became runnable
            self.scheduler.waiting_jobs.note(tb.t_job[uniq])
        if finished:
            jobs = unique(tb.t_job[uniq])
            tb.retire(jobs[tb.j_left[jobs] == 0])
            tb.jobs_left -= finished

    # ------------------------------------------------------------------ step 2: arrivals
    def _arrivals(self, t: float) -> None:
        tb = self.tables
        first = self._arrived
        last = int(np.searchsorted(self._arrival_grid, t + EPS, side="right"))
        if last == first:
            return
        self._arrived = last
        new = np.arange(first, last)
        empty = new[tb.j_left[new] == 0]
        tb.j_finish[empty] = tb.j_arrival[empty]
        new = new[tb.j_left[new] > 0]
        tb.active = np.concatenate([tb.active, new])
        tb.waiting += int((tb.j_end[new] - tb.j_next[new]).sum())
        self.scheduler.waiting_jobs.note(new)
        tb.j_next_scan[new] = t
        if self._observing:
            self._touched.append(new)

    # ------------------------------------------------------------------ result
    def _result(self, wall: float) -> SimResult:
        tb = self.tables
        n = tb.n_attempts
        state = tb.a_state[:n]
        ran = np.flatnonzero((state == DONE) | (state == A_KILLED))
        task = tb.a_task[ran]
        outcome = np.where(state[ran] == A_KILLED, KILLED,
                           np.where(tb.t_launched[task] > 1, WON, NORMAL)).astype(np.int8)
        straggler = tb.t_factor > 1
        perm, job_order = tb.perm, tb.job_order
        records = AttemptRecords(
            task=perm[task],
            job=job_order[tb.t_job[task]],
            node=tb.a_node[ran],
            start=tb.a_start[ran],
            end=tb.a_end[ran],
            outcome=outcome,
            copy=tb.a_copy[ran],
            straggler=straggler[task],
        )
        inverse = np.empty_like(job_order)
        inverse[job_order] = np.arange(len(job_order))
        detected = np.zeros(len(perm), dtype=bool)
        detected[perm] = tb.t_detected
        truth = np.zeros(len(perm), dtype=bool)
        truth[perm] = straggler
        return SimResult(
            policy=self.policy_name,
            seed=self.seed,
            cluster=self.cluster,
            job_ids=list(self.workload.job_ids),
            arrival=tb.j_arrival[inverse],
            finish=tb.j_finish[inverse],
            deadline=tb.j_deadline[inverse],
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
            policy_notes=self._policy_notes(),
        )

    def _policy_notes(self) -> list[str]:
        """``Policy.run_notes`` of this run's policy over its jobs' policy objects (none
        where a job's decisions come from elsewhere, e.g. hedge serve's session in
        ``hedge.server.simulated_am``)."""
        policies = [p for p in self.am.policies.values() if isinstance(p, Policy)]
        return type(policies[0]).run_notes(policies) if policies else []


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
