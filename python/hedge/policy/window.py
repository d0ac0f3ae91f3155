"""Energy-aware speculation: window-based slot reservation (``window``) and
heterogeneity-aware copies at the end of the job (``hete-aware``).

``window`` works in windows of w seconds (default 0.2 x the job's fastest completed task;
w must stay below the mean task duration). At the start of each window:

1. detect stragglers (default the ``rate`` detector of :mod:`hedge.detect`, see
   :meth:`WindowPolicy._flag` for the wave's tail) and order them by criticalness
   ``(1 - PS) * elapsed / PS`` (LATE's remaining time), most critical first; a straggler
   whose remaining time does not exceed a copy's expected run time (the job's mean
   completed run time of its task type) gets no copy; at most one copy per task;
2. predict the slots V that free up within the window, ordered by time (speeds constant
   within a window): with ``slots="own"`` (default) the job's own containers whose attempt
   is expected to end by then (rate estimate) plus as many idle slots as the cluster has
   free (``ClusterFacts.free_slots``), since an AM can only re-use its own containers and
   the job scheduler hands out the rest: an AM can know how many slots are free, not where,
   so an idle slot stands for a node the scheduler picks (no history there, speed 1; its
   copy asks for no node). ``slots="cluster"`` (the simulator only: a session refuses it)
   reads every slot of the cluster with its node and expected free time
   (``ClusterFacts.slot_free_at``). Until 2026-11-27, ``"own"`` read the idle slots' nodes
   from that simulator-only view (synthetic workloads of ``bench_policies.py``, seed 0: mean
   job time 0.809 and 0.510 of none's, now 0.813 and 0.512). On YARN hedge's shim cannot
   send the free-slot count; ``hedge serve`` counts it from the ResourceManager the job's AM
   names, or the one ``[cluster] resourcemanager`` names (:mod:`hedge.server.utilisation`).
   Without an RM that answers (``live_am_gap``) window has only its own containers: simulated so, it gets no copy on
   those workloads (mean 1.0), and the MiniYARN test, whose RM serves no REST, saw none; on
   the process cluster of ``scripts/cluster.sh`` (a real RM) it copies the straggler and
   the copy wins (tests/integration/test_process_cluster.py);
3-4. give each straggler a slot of V by skyline choice with opportunistic rescheduling
   (:mod:`hedge.policy.allocation`, top k = 3), using the copy model of
   :mod:`hedge.analysis.copy_model` and the power model of :mod:`hedge.analysis.energy`;
   a copy never goes to its straggler's node;
5. launch each copy, with ``prefer_node`` = its slot's node, at the first scan where its
   slot is free (its container's attempt has ended, or the cluster slot is free), and hold
   back (``reserve_slots``) the reserved slots expected to free before the next scan
   (``hold_ahead`` s); every other slot goes to normal tasks through the job scheduler.
   Reservations not launched by the window's end are dropped and re-planned.

Scans: the policy decides only at window starts and while a reservation waits for its
slot. Before the job's first completion it sleeps until one (``wake_on_completion``); with
nothing reserved it asks for its next scan at the window's end. Between scans nothing is
missed: the node history below is read from the job's completed attempts with their true
end times (``JobFacts.finished``), not from what changed between two scans.

Cost (issue 21, session 29, E; 22,102 tasks of the fitted day, window, in-process split):
2,400 scans = 492 launch checks, 1,359 plans with no candidate and 549 plans that book
slots. Two interleaved runs per tree, 1548187 -> 3f96840 (one compiled pass for the task
ends and candidates, the rate detection not computed twice, equal idle slots beyond the
stragglers' count left out of the allocation): launch checks 0.09-0.11 -> 0.05-0.06 ms,
empty plans 0.30-0.38 -> 0.26-0.32 ms, booking plans 2.7-3.9 -> 3.5-3.6 ms (no gain
measurable). Outside decide the simulator took 1.1-1.6 s against none's 0.24 s in all
(its snapshot, cluster facts and actuation per scan), so 3x none needs fewer scans.
bench_sim (x none, two interleaved runs per tree, shared machine) before 1548187 -> after
3f96840: day 94,923 window 9.3-9.6x -> 8.6-9.7x, hete-aware 4.7-5.2x -> 5.2-6.5x; burst
94,923 window 5.4-7.8x -> 7.1-7.5x, hete-aware 3.9-4.0x -> 4.6-4.8x: within the noise.

A copy's expected run time is the copy model's t_Ci (from a non-straggling T_h) times the
job's observed straggling ``E[f]`` = mean / mean of non-straggling completed run times of
the type (:meth:`WindowPolicy._copy_risk`, ``risk_adjust=True``): a copy is a fresh
attempt and straggles as often as any task, so without it Δt and ΔE are optimistic and
copies that do not pay for their slot get placed.

At most one copy per task, except at the wave's tail (no original of the type waiting):
there a task with exactly two running attempts, both with a progress estimate, whose
earliest estimated end is still more than a fresh copy's expected run time away and whose
original is flagged, may get a second copy (``tail_recopy``), placed by the same skyline
rule against that earliest end; the task's attempt with the latest estimated end is then
killed (it cannot finish first by the estimate, and its slot is freed). A first copy chosen on early, noisy estimates straggles as
often as any attempt (and its preferred node may have been taken), and one copy per task
left such tasks stuck at the end of the job; a second copy is what hadoop's and LATE's
"at most one speculative attempt at a time" leaves out. On the tuning seeds (synthetic
1-6 of tests/bench/bench_window.py) it cut window's mean job time by 12-14 % and its
energy by 3-16 %; it was then reported on seeds never used for tuning.

The copy model needs, per node, the latest non-straggling task T_h of this job that ran
there: :mod:`hedge.policy.node_history` reads it from the job's completed attempts.

``hete-aware`` uses steps 1-3 (no rescheduling) but only for a task type once all its
normal tasks are launched (no original attempt of that type is WAITING), as Hadoop copies
only at the end of a job's wave.
"""

from __future__ import annotations

import math

import numpy as np

from hedge.analysis.copy_model import check_bandwidth
from hedge.analysis.energy import PowerModel
from hedge.detect import DETECTORS, detect
from hedge.detect.detectors import candidate_mask, known_mask
from hedge.detect.rules import ratio_rule
from hedge.errors import HedgeError
from hedge.estimate import check_estimator, estimate_ect
from hedge.model import MAP, REDUCE, Actions, AttemptState, Snapshot
from hedge.policy.allocation import AllocationProblem, allocate, concat_ranges
from hedge.policy.base import Policy, register
from hedge.policy.limits import HADOOP_DEFAULTS, snapshot_room
from hedge.policy.node_history import NodeHistory, attempt_local, member
from hedge.policy.ranges import ABOVE_0, AT_LEAST_1, SHARE, Range
from hedge.policy.window_kernels import task_end_candidates


def _tail_types(snap: Snapshot) -> list[int]:
    """The task types at their wave's tail: every original of the type is launched (no
    non-speculative attempt of it waits for a slot)."""
    a = snap.attempts
    waiting = (a.state == AttemptState.WAITING) & ~a.speculative
    return [t for t in (MAP, REDUCE) if not (waiting & (a.task_type == t)).any()]


@register
class WindowPolicy(Policy):
    """Window-based reservation with heterogeneity- and energy-aware copy placement.

    Parameters: ``window`` w as a fraction of the job's fastest completed task duration,
    in (0, 1); or ``window_seconds`` (absolute, checked against the mean task duration at
    run time); ``detector`` / ``detector_params`` (straggler detection, default LATE's
    ``rate`` with factor 1.75, :data:`DEFAULT_DETECTOR_PARAMS`); ``bandwidth`` bytes/s
    for remote input (the copy model's B); ``power``: a
    :class:`~hedge.analysis.energy.PowerModel` or dict of its fields; ``top_k`` candidates
    for opportunistic rescheduling; ``straggler_factor``: a completed task slower than this
    x the mean is not used as a slot's reference T_h; ``risk_adjust``: scale copy run
    times by the job's observed straggling (:meth:`_copy_risk`); ``tail_recopy``: at the
    wave's tail a copied task may get one second copy (default True for ``window``, False
    for ``hete-aware``).
    """

    name = "window"
    param_ranges = {
        "window": Range(0.0, 1.0, low_open=True,
                        meaning="a fraction of the job's fastest task duration: it must stay "
                        "below the mean task duration"),
        "window_seconds": Range(0.0, low_open=True,
                                meaning="seconds, below the mean task duration"),
        "top_k": AT_LEAST_1, "straggler_factor": ABOVE_0,
        "hold_ahead": Range(0.0, meaning="seconds"), "min_progress": SHARE,
    }
    reads_finished = True  # the node history (JobFacts.finished)
    live_am_gap = ("window and hete-aware plan copies on the cluster's free slots, whose "
                   "count the simulator knows; on YARN hedge's shim cannot send it (a "
                   "speculator's AppContext shows no headroom): hedge serve counts them from "
                   "the ResourceManager the job's AM names (or [cluster] resourcemanager), "
                   "in the job's map container; without one that answers they plan on the "
                   "job's "
                   "own containers only, and simulated that way the synthetic workloads of "
                   "bench_policies.py get no copy at all")
    reschedule = True
    recopy = True  # default of ``tail_recopy``

    def __init__(
        self,
        window: float = 0.2,
        window_seconds: float | None = None,
        detector: str = "rate",
        detector_params: dict | None = None,
        bandwidth: float = 1e8,
        power: PowerModel | dict | None = None,
        top_k: int = 3,
        straggler_factor: float = 1.2,
        hold_ahead: float = 1.0,
        min_progress: float = 0.2,
        slots: str = "own",
        estimator: str = "rate",
        risk_adjust: bool = True,
        tail_recopy: bool | None = None,
    ) -> None:
        self.window = float(window)
        self.window_seconds = None if window_seconds is None else float(window_seconds)
        if detector not in DETECTORS:
            raise HedgeError(f"policy '{self.name}': detector = {detector!r}, expected one of "
                             f"{', '.join(DETECTORS)}")
        self.detector = detector
        self.detector_params = dict(DEFAULT_DETECTOR_PARAMS.get(detector, {})
                                    if detector_params is None else detector_params)
        self.bandwidth = check_bandwidth(bandwidth)
        self.power = PowerModel.of(power)
        self.top_k = int(top_k)
        self.straggler_factor = float(straggler_factor)
        self.hold_ahead = float(hold_ahead)
        self.min_progress = float(min_progress)
        if slots not in ("own", "cluster"):
            raise HedgeError(f"policy '{self.name}': slots = {slots!r}, expected 'own' or "
                             "'cluster'")
        self.slots = slots
        if slots == "cluster":  # a property of this instance, not of the policy class
            self.live_am_supported = False
            self.live_am_reason = ("slots = 'cluster' plans on every slot's expected free "
                                   "time, which only the simulator knows; use slots = 'own'")
        self.estimator = check_estimator(estimator, f"policy '{self.name}': estimator")
        self.risk_adjust = bool(risk_adjust)
        self.tail_recopy = self.recopy if tail_recopy is None else bool(tail_recopy)
        self._window_end = -np.inf
        self._copied: set[int] = set()
        self._recopied: set[int] = set()  # tasks given their second (tail) copy
        self._pending = np.empty(0, dtype=_PENDING)

    # ---------------------------------------------------------------- the scan
    def decide(self, snapshot: Snapshot) -> Actions:
        job = snapshot.job
        done = np.concatenate([job.completed_map_runtimes, job.completed_reduce_runtimes])
        done = done[np.isfinite(done)]
        if len(done) == 0:
            # nothing to learn from yet: sleep until a task completes (as Hadoop does)
            return Actions(next_scan_in=math.inf, wake_on_completion=True)
        if snapshot.now >= self._window_end:
            typical = np.array([_mean_or(job.completed_map_runtimes, done.mean()),
                                _mean_or(job.completed_reduce_runtimes, done.mean())])
            w = self._window_length(done)
            self._window_end = snapshot.now + w
            self._pending = self._plan(snapshot, w, typical)
        actions = self._launch_ready(snapshot)
        if len(self._pending) == 0:
            # nothing reserved: the next decision is the next window's plan
            actions.next_scan_in = max(self._window_end - snapshot.now, 0.0)
        return actions

    def _window_length(self, done: np.ndarray) -> float:
        mean = float(done.mean())
        if self.window_seconds is None:
            return self.window * float(done.min())
        if self.window_seconds >= mean:
            raise HedgeError(
                f"policy '{self.name}': window_seconds = {self.window_seconds:g}, expected "
                f"0 < w < the mean task duration ({mean:.3g} s)"
            )
        return self.window_seconds

    def _launch_ready(self, snap: Snapshot) -> Actions:
        """Copies whose reserved slot is free now; hold the slots freeing before the next
        scan (``reserve_slots``); the other slots go to normal tasks."""
        pend = self._pending
        if len(pend) == 0:
            return Actions()
        a = snap.attempts
        run = a.running  # a property: one enum comparison per read
        running = a.attempt[run]
        # member: np.isin's exact answer without its ~0.1 ms set-up per call
        pend = pend[member(pend["task"], a.task[run])]
        free_at = snap.cluster.slot_free_at
        slot_free = np.ones(len(pend), dtype=bool)
        has_slot = pend["slot"] >= 0
        if len(free_at):
            slot_free[has_slot] = free_at[pend["slot"][has_slot]] <= snap.now
        trigger_gone = (pend["trigger"] < 0) | ~member(pend["trigger"], running)
        ready = slot_free & trigger_gone
        go, self._pending = pend[self._within_cap(snap, ready)], pend[~ready]
        launched = go["task"].tolist()
        second = [t for t in launched if t in self._copied]
        self._recopied.update(second)
        self._copied.update(launched)
        kills = self._slower_attempts(snap, np.asarray(second, dtype=np.int64))
        soon = self._pending["start"] <= snap.now + self.hold_ahead
        return Actions(speculate_task=go["task"], prefer_node=go["node"],
                       reserve_slots=int(soon.sum()), kill_attempt=kills)

    def _within_cap(self, snap: Snapshot, ready: np.ndarray) -> np.ndarray:
        """``ready`` cut to the copies Hadoop's speculation cap lets start now (most
        critical first); the rest are dropped (their slots go to normal tasks, a held
        slot waiting for room was wasted) and planned again at the next window.

        The AM refuses copies beyond the cap (:mod:`hedge.policy.limits`, rule 3: ten
        live copies per job of up to 1,000 tasks by default), and a refused copy that was
        counted as made left its task without a copy for the rest of the job: on the
        study's synthetic workload 45 % of window's requests were refused, and such
        uncopied stragglers set the makespan (static energy). The cap is Hadoop's default
        (:data:`hedge.policy.limits.HADOOP_DEFAULTS`): a snapshot does not carry the job's own settings."""
        if not ready.any():
            return ready
        space = snapshot_room(snap, HADOOP_DEFAULTS)
        rows = np.flatnonzero(ready)
        out = np.zeros_like(ready)
        out[rows[:max(space, 0)]] = True
        return out

    def _slower_attempts(self, snap: Snapshot, tasks: np.ndarray) -> np.ndarray:
        """For each task getting its second copy, its running attempt with the latest
        estimated end: by the estimate it cannot finish first, so it is killed to free
        its slot (the task keeps two attempts, as with one copy)."""
        if len(tasks) == 0:  # the usual launch: no second copy, no set test
            return np.empty(0, dtype=np.int64)
        a = snap.attempts
        rows = np.flatnonzero(a.running & np.isin(a.task, tasks))
        if len(rows) == 0:
            return np.empty(0, dtype=np.int64)
        end = estimate_ect(self.estimator, a, snap.now)[rows]
        end = np.where(np.isfinite(end), end, np.inf)
        order = np.lexsort((-end, a.task[rows]))  # per task, latest end first
        task = a.task[rows][order]
        head = np.ones(len(order), dtype=bool)
        head[1:] = task[1:] != task[:-1]
        count = np.bincount(task)[task]
        return a.attempt[rows][order][head & (count >= 2)].astype(np.int64)

    def _predict_slots(self, snap: Snapshot, w: float, ect: np.ndarray) -> np.ndarray:
        """The slots V freeing up within the window, ordered by time (step 2).

        ``slots="own"``: the job's own containers whose attempt is expected to end by
        now + w (an AM can only re-use its own containers), plus the cluster's idle slots.
        ``slots="cluster"``: every slot of the cluster freeing by now + w
        (``ClusterFacts.slot_free_at``)."""
        a, c, now = snap.attempts, snap.cluster, snap.now
        parts = []
        if self.slots == "cluster" and len(c.slot_free_at):
            idx = np.flatnonzero(c.slot_free_at <= now + w)
            parts.append(_slots(c.slot_node[idx], np.maximum(c.slot_free_at[idx], now), -1, idx))
        if self.slots == "own":
            # what an AM knows: how many of the cluster's slots are free (the shim's
            # free_slots), not where they are; the scheduler picks the node
            idle = max(int(c.free_slots), 0)
            parts.append(_slots(np.full(idle, -1), np.full(idle, float(now)), -1, -1))
            own = np.flatnonzero(a.running & (a.node >= 0) & (ect <= now + w))
            parts.append(_slots(a.node[own], np.maximum(ect[own], now), a.attempt[own], -1))
        v = np.concatenate(parts) if parts else np.empty(0, dtype=_PENDING)
        v = v[~member(v["node"], c.blacklist)]
        return v[np.argsort(v["start"], kind="stable")]

    # ---------------------------------------------------------------- the plan
    def _eligible_types(self, snap: Snapshot) -> list[int]:
        return [MAP, REDUCE]

    def _flag(self, snap: Snapshot, rate_ect: np.ndarray | None = None) -> np.ndarray:
        """Straggler mask over the attempts (step 1's detection); ``rate_ect``: the rate
        ECT of this snapshot when the caller has it (else computed here).

        The detector of :func:`hedge.detect.detect`. For ``rate`` (LATE: ETD_i = t - s_i +
        (1 - PS_i)/PR_i >= factor x mean ETD), once every task of a type is launched (the
        wave's tail) the mean also counts the job's completed run times of that type
        (``JobFacts``) when the attempt table has no SUCCEEDED rows: then only stragglers
        are still running, and a mean over them alone would hide them. Earlier the
        completed run times are not used (the first tasks to complete are the fast ones,
        so they would pull the mean down and flag normal tasks)."""
        if self.detector != "rate" or not set(self.detector_params) <= {"factor"}:
            # any other detector, or parameters detect() must check (it raises on bad ones)
            flagged = detect(self.detector, snap, **self.detector_params)
            if self.detector != "rate":
                return flagged
        a, job = snap.attempts, snap.job
        known, cand = known_mask(snap), candidate_mask(snap)
        if rate_ect is None:
            rate_ect = estimate_ect("rate", a, snap.now)
        etd = rate_ect - a.start
        if set(self.detector_params) <= {"factor"}:
            # detectors.rate on the masks and ETD the wave's tail rule below reads as well
            # (the same rule and operations, so the same flags, without computing them twice)
            flagged = ratio_rule(etd, known, cand, self.detector_params.get("factor", 1.2))
        factor = float(self.detector_params.get("factor", 1.2))
        for ttype in _tail_types(snap):
            of_type = a.task_type == ttype
            if (of_type & (a.state == AttemptState.SUCCEEDED)).any():
                continue
            values = np.concatenate([etd[known & of_type], job.completed_runtimes(ttype)])
            values = values[np.isfinite(values)]
            if len(values):
                flagged |= cand & of_type & (etd >= factor * values.mean())
        return flagged

    def _candidates(self, snap: Snapshot, far: np.ndarray) -> np.ndarray:
        """Mask of the running original attempts step 1 may copy if flagged: of an eligible
        type, the task's only live attempt and not copied (or, at the wave's tail, its one
        copy also late), and the task's end further away than a copy's expected run time
        (``far``, from :meth:`_task_end`)."""
        a = snap.attempts
        # the running originals far enough from their end first: at most plans there is none
        cand = far
        if not cand.any():
            return cand
        live = (a.state == AttemptState.RUNNING) | (a.state == AttemptState.WAITING)
        attempts_per_task = np.bincount(a.task[live], minlength=int(a.task.max(initial=0)) + 1)
        single = attempts_per_task[a.task] == 1
        copied = member(a.task, np.fromiter(self._copied, np.int64, len(self._copied)))
        types = _of_types(a.task_type, self._eligible_types(snap))
        first = single & ~copied
        if self.tail_recopy:
            # at the wave's tail a task whose one copy also runs late may get a second
            recopied = member(a.task, np.fromiter(self._recopied, np.int64,
                                                  len(self._recopied)))
            tail = _of_types(a.task_type, _tail_types(snap))
            first |= tail & copied & ~recopied & (attempts_per_task[a.task] == 2)
        return cand & first & types

    @staticmethod
    def _stragglers(snap: Snapshot, cand: np.ndarray, task_end: np.ndarray) -> np.ndarray:
        """Rows of the candidates ``cand`` (flagged ones), most critical first (step 1)."""
        rows = np.flatnonzero(cand)
        return rows[np.argsort(-(task_end[rows] - snap.now), kind="stable")]

    @staticmethod
    def _task_end(snap: Snapshot, ect: np.ndarray, typical: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Per attempt row: the earliest estimated end among its task's running attempts
        (the task ends when its first attempt does; NaN while one of them has no estimate
        yet: it may end any time), and whether it is a running original whose task ends
        more than ``typical[its type]`` from now (one compiled pass,
        :func:`hedge.policy.window_kernels.task_end_candidates`)."""
        a = snap.attempts
        return task_end_candidates(a.running, a.speculative, a.task, a.task_type, ect,
                                   typical, snap.now)

    def _plan(self, snap: Snapshot, w: float, typical: np.ndarray) -> np.ndarray:
        a, c = snap.attempts, snap.cluster
        ect = estimate_ect(self.estimator, a, snap.now)
        task_end, far = self._task_end(snap, ect, typical)
        cand = self._candidates(snap, far)
        if not cand.any():  # most plans: no detection needed (it has no side effect)
            return np.empty(0, dtype=_PENDING)
        # the rate ECT the detection reads too, when it is the plan's estimator
        flagged = self._flag(snap, ect if self.estimator == "rate" else None)
        rows = self._stragglers(snap, flagged & cand, task_end)
        if len(rows) == 0:
            return np.empty(0, dtype=_PENDING)
        v = self._predict_slots(snap, w, ect)
        # nodes known to this scan, then one more standing for "a node the scheduler picks"
        # (an idle slot's, unknown to an AM): no history, no peers, speed 1, none of the
        # job's attempts
        n_nodes = max(int(c.slot_node.max(initial=-1)) + 1, int(a.node.max(initial=-1)) + 1,
                      int(v["node"].max(initial=-1)) + 1, len(c.node_speed),
                      int(snap.job.finished.node.max(initial=-1)) + 1)
        anywhere = n_nodes
        if (v["node"] < 0).any():
            v = v.copy()
            v["node"][v["node"] < 0] = anywhere
            n_nodes += 1
        if len(c.slot_free_at):
            busy = np.bincount(c.slot_node[c.slot_free_at > snap.now], minlength=n_nodes)
        else:
            busy = np.bincount(a.node[a.running & (a.node >= 0)], minlength=n_nodes)
        local = attempt_local(snap)
        history = NodeHistory.of(snap.job, typical, self.straggler_factor, n_nodes)
        plan = []
        free = np.ones(len(v), dtype=bool)
        for ttype in np.unique(a.task_type[rows]):
            mine = rows[a.task_type[rows] == ttype]
            cols = np.flatnonzero(free)
            if len(cols) == 0:
                break
            ref = self._node_reference(snap, int(ttype), flagged, ect, typical, local,
                                       history)
            if self.risk_adjust:
                ref = (ref[0] * self._copy_risk(snap, int(ttype)), *ref[1:])
            # a slot the same as an earlier one (node and start) beyond the first len(mine)
            # of them can never be chosen (see _first_equal_slots): left out of the problem
            cols = cols[_first_equal_slots(v["node"][cols], v["start"][cols], len(mine))]
            problem = self._problem(snap, mine, v[cols], task_end, ref, busy)
            result = allocate(problem, reschedule=self.reschedule, top_k=self.top_k)
            ok = result.placed
            chosen = cols[result.slot[ok]]
            free[chosen] = False
            booked = v[chosen].copy()
            booked["task"] = a.task[mine[ok]]
            booked["node"][booked["node"] == anywhere] = -1  # prefer_node: anywhere
            plan.append(booked)
        return np.concatenate(plan) if plan else np.empty(0, dtype=_PENDING)

    def _copy_risk(self, snap: Snapshot, ttype: int) -> float:
        """Expected slowdown of a new attempt over a non-straggling one, ``E[f] >= 1``.

        The copy model's t_Ci comes from a non-straggling T_h, but a copy is a fresh
        attempt that straggles as often as any task. The job's completed run times of the
        type give the ratio: mean of all / mean of the non-straggling ones (run time at
        most ``straggler_factor`` x the mean), 1 with no completion."""
        done = snap.job.completed_runtimes(ttype)
        done = done[np.isfinite(done)]
        if len(done) == 0:
            return 1.0
        normal = done[done <= self.straggler_factor * done.mean()]
        return float(done.mean() / normal.mean()) if len(normal) and normal.mean() > 0 else 1.0

    def _node_reference(self, snap: Snapshot, ttype: int, flagged: np.ndarray,
                        ect: np.ndarray, typical: np.ndarray, local: np.ndarray,
                        history: NodeHistory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per node, the reference task T_h of the copy model: (t_Th, T_h local, D_Th / B).

        In order of preference: the latest non-straggling completed attempt of this job and
        type on the node (:class:`hedge.policy.node_history.NodeHistory`); else the mean expected duration
        (ECT - start) of the job's running, unflagged originals of the type on the node,
        once they report ``min_progress``; else the mean completed run time / node speed."""
        a, c = snap.attempts, snap.cluster
        n_nodes = history.runtime.shape[1]
        speed = np.ones(n_nodes)
        k = min(len(c.node_speed), n_nodes)  # known speeds; the others (and anywhere's) 1
        speed[:k] = np.where(c.node_speed[:k] > 0, c.node_speed[:k], 1.0)
        runtime = typical[ttype] / speed
        last_local = np.zeros(n_nodes, dtype=bool)
        saving = np.zeros(n_nodes)
        peers = (a.running & ~flagged & ~a.speculative & (a.task_type == ttype)
                 & (a.progress >= self.min_progress) & (a.node >= 0) & np.isfinite(ect))
        if peers.any():
            node = a.node[peers]
            count = np.bincount(node, minlength=n_nodes)[:n_nodes]
            etd = np.bincount(node, weights=(ect - a.start)[peers], minlength=n_nodes)[:n_nodes]
            n_local = np.bincount(node, weights=local[peers], minlength=n_nodes)[:n_nodes]
            nbytes = np.bincount(node, weights=np.nan_to_num(a.input_bytes[peers]),
                                 minlength=n_nodes)[:n_nodes]
            seen = count > 0
            runtime = np.where(seen, etd / np.maximum(count, 1), runtime)
            last_local = np.where(seen, n_local * 2 >= count, last_local)
            saving = np.where(seen, nbytes / np.maximum(count, 1) / self.bandwidth, saving)
        known = np.isfinite(history.runtime[ttype])
        runtime = np.where(known, history.runtime[ttype], runtime)
        last_local = np.where(known, history.local[ttype], last_local)
        saving = np.where(known, np.nan_to_num(history.input_bytes[ttype]) / self.bandwidth,
                          saving)
        return runtime, last_local, saving

    def _problem(self, snap: Snapshot, rows: np.ndarray, v: np.ndarray, ect: np.ndarray,
                 ref: tuple[np.ndarray, np.ndarray, np.ndarray], busy: np.ndarray
                 ) -> AllocationProblem:
        """Stragglers ``rows`` (attempt rows) against predicted slots ``v``; times from now."""
        a, now = snap.attempts, snap.now
        node = v["node"]
        runtime, last_local, saving = ref
        freed = v["start"] > now  # the slot's own task leaves before the copy starts
        p_slot = self.power.slot_power(np.maximum(busy[node] - freed, 0))
        p_strag = self.power.slot_power(np.maximum(busy[a.node[rows]] - 1, 0))
        local_ptr, local_slot = self._copy_locality(snap, rows, node)
        return AllocationProblem(
            criticalness=ect[rows] - now,
            end=ect[rows] - now,
            straggler_power=p_strag,
            remote_penalty=np.nan_to_num(a.input_bytes[rows]) / self.bandwidth,
            slot_start=v["start"] - now,
            slot_power=p_slot,
            base_runtime=runtime[node],
            last_local=last_local[node],
            local_saving=saving[node],
            local_ptr=local_ptr,
            local_slot=local_slot,
            straggler_node=a.node[rows],
            slot_node=node,
        )

    @staticmethod
    def _copy_locality(snap: Snapshot, rows: np.ndarray, slot_node: np.ndarray
                       ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """CSR of the candidate slots on nodes holding each straggler's input."""
        nodes = snap.job.input_nodes
        if nodes.ndim != 2 or nodes.shape[1] == 0:
            return None, None
        task = snap.attempts.task[rows]
        homes = nodes[np.clip(task, 0, len(nodes) - 1)]  # (|S|, replicas)
        order = np.argsort(slot_node, kind="stable")
        sorted_nodes = slot_node[order]
        lo = np.searchsorted(sorted_nodes, homes, side="left")
        hi = np.searchsorted(sorted_nodes, homes, side="right")
        counts = np.where(homes >= 0, hi - lo, 0)
        ptr = np.concatenate([[0], np.cumsum(counts.sum(axis=1))])
        return ptr, order[concat_ranges(lo.ravel(), counts.ravel())]


@register
class HeteAwarePolicy(WindowPolicy):
    """Copies only once every normal task of the type is launched (as Hadoop), placed by
    the skyline choice of :mod:`hedge.policy.allocation` (no rescheduling)."""

    name = "hete-aware"
    reschedule = False
    recopy = False  # one copy per task, as Hadoop

    def _eligible_types(self, snap: Snapshot) -> list[int]:
        return _tail_types(snap)


# The rate detector flags ETD >= factor x mean ETD: LATE uses 1.2, Mantri 1.5. Copies cost
# slots in a busy cluster, so the window policy copies only clear stragglers: 1.75 was the
# best of 1.2 / 1.5 / 1.75 / 2.0 on synthetic seeds 1-3 (tests/bench/bench_window.py
# --compare; reported on held-out seeds).
DEFAULT_DETECTOR_PARAMS: dict[str, dict] = {"rate": {"factor": 1.75}}

# a predicted slot, and (with ``task`` set) a reservation: the node, when it frees, the
# attempt whose end frees it (-1: none) and the cluster slot index (-1: not known)
_PENDING = np.dtype([("task", np.int64), ("node", np.int64), ("start", np.float64),
                     ("trigger", np.int64), ("slot", np.int64)])


def _slots(node: np.ndarray, start: np.ndarray, trigger: np.ndarray | int,
           slot: np.ndarray | int) -> np.ndarray:
    out = np.empty(len(node), dtype=_PENDING)
    out["task"], out["node"], out["start"] = -1, node, start
    out["trigger"], out["slot"] = trigger, slot
    return out


def _first_equal_slots(node: np.ndarray, start: np.ndarray, m: int) -> np.ndarray:
    """Mask of the predicted slots that are among the first ``m`` (in order) of the slots
    with their node and start.

    Every input :meth:`WindowPolicy._problem` gives the allocation for a slot is a function
    of its node and start (and the earliest start, kept here), so slots equal in both get
    equal scores; the allocation takes a row's first best free slot (``argmax``), so of
    equal slots it takes them in order, and with ``m`` stragglers at most the first ``m``.
    Left out, the others change no choice (at 1,000 nodes x 4 slots most predicted slots
    are idle ones, several per node, each starting now)."""
    n = len(node)
    if n <= m:
        return np.ones(n, dtype=bool)
    order = np.lexsort((start, node))  # stable: equal slots stay in their order
    key_node, key_start = node[order], start[order]
    first = np.ones(n, dtype=bool)
    first[1:] = (key_node[1:] != key_node[:-1]) | (key_start[1:] != key_start[:-1])
    group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    keep = np.empty(n, dtype=bool)
    keep[order] = np.arange(n) - group_start < m
    return keep


def _of_types(task_type: np.ndarray, types: list[int]) -> np.ndarray:
    """Per attempt: its task type is one of ``types`` (MAP / REDUCE)."""
    wanted = np.zeros(2, dtype=bool)
    wanted[types] = True
    return wanted[task_type]


def _mean_or(values: np.ndarray, default: float) -> float:
    values = values[np.isfinite(values)]
    return float(values.mean()) if len(values) else float(default)
