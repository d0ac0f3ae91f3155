"""The ApplicationMasters: what each job's AM has received, the snapshots built from it,
and the scans that ask its policy.

A job's scan is due at ``j_next_scan``. A due job may be skipped (its scan moved ``scan`` s
on) by a ``scan_idempotent`` policy when its last answer was empty and nothing changed, or
by the policy's vectorised ``needs_scan`` gate (``hedge.model.batch``; its compiled form
``needs_scan_slots`` runs over the raw slot arrays, ``SlotView``).

A job a gate skipped *sleeps* (``AppMasters.settle``, at the end of each step): instead of
being checked at every later scan instant, it is next due at the first of them at or after
the earliest time its gate could want it (the policy's ``needs_scan_from``; inf for the
cap gate, whose answer only the job's own changes move), and earlier if the job changes
(an attempt started, ended, was requested or killed, a task completed, a slot's rate
changed): then at its next scan instant. The instants it sleeps through are ones where its
gate would have skipped it, so results stay bit-identical (tests audit every such instant).

Every other due job gets a ``Snapshot`` of what its AM holds: each running attempt's last
*received* report (``hedge.sim.heartbeat.last_received``), then its waiting attempts; the
policy's answer is carried out by ``hedge.sim.actuation``.
"""

from __future__ import annotations

import math

import numpy as np

from hedge.model import (
    Actions,
    AttemptState,
    AttemptTable,
    ClusterFacts,
    FinishedAttempts,
    JobFacts,
    Snapshot,
)
from hedge.model.batch import SlotView
from hedge.policy import create, policy_class
from hedge.sim import kernels
from hedge.sim.actuation import Actuator
from hedge.sim.cluster import ClusterConfig
from hedge.sim.copies import CopyDraws, truth
from hedge.sim.grid import EPS, grid_after, lattice_from, on_lattice, scan_ticks
from hedge.sim.heartbeat import last_received
from hedge.sim.slots import Slots
from hedge.sim.tables import Tables

# ``kernels.running_columns``' outputs (every AttemptTable column but state), in order
_RUNNING_COLUMNS = ("task", "attempt", "task_type", "node", "start", "first_progress_time",
                    "first_progress", "progress", "report_sent", "report_received",
                    "bytes_processed", "input_bytes", "speculative")


def _empty(actions: Actions) -> bool:
    """No action at all and the default rescan (a scan_idempotent job may then go quiet)."""
    return (not len(actions.speculate_task) and not len(actions.kill_attempt)
            and not len(actions.resume_task) and actions.reserve_slots <= 0
            and not len(actions.avoid_nodes) and actions.next_scan_in is None
            and not actions.wake_on_completion)


class AppMasters:
    """One policy object per job (made at its first scan) and the AMs' view of the slots.

    ``gate``/``slot_gate``: the policy's ``needs_scan``/``needs_scan_slots`` (None: scan
    every due job); ``idempotent``: skip a quiet job's scans while nothing changed;
    ``clairvoyant``: tell the policy the truth (``hedge.sim.copies.truth``) before it decides.
    ``wake``: the policy's ``needs_scan_from`` (None: a job its gate skips sleeps only until
    its next scan instant, or until it changes when the cap gate skipped it).
    """

    def __init__(self, cfg: ClusterConfig, tables: Tables, slots: Slots, actuator: Actuator,
                 draws: CopyDraws, policy: str, params: dict, gate, slot_gate,
                 idempotent: bool, clairvoyant: bool, compiled: bool,
                 copies_only: bool = False, wake=None, make_policy=None) -> None:
        self.cluster, self.tb, self.slots, self.actuator = cfg, tables, slots, actuator
        self.draws = draws
        self.policy_name, self.policy_params = policy, params
        self.gate, self.slot_gate = gate, slot_gate
        self.idempotent, self.clairvoyant, self.compiled = idempotent, clairvoyant, compiled
        self.copies_only = copies_only and actuator.speculation.enforce_caps
        self.policies: dict[int, object] = {}
        # a job's policy object from its id (Simulator's make_policy, else by name)
        self.make_policy = make_policy or (lambda job_id: create(policy, **params))
        self.reads_finished = policy_class(policy).reads_finished  # JobFacts.finished
        self.shared: dict[str, object] = {}  # what the jobs' policies learn from each other
        self.scans = 0
        self._due_mask = np.zeros(len(tables.j_off) + 1, dtype=bool)  # index job + 1
        self._recv_checked = -np.inf  # reports received up to this time are accounted for
        self._view: SlotView | None = None  # the gates' view of the slots (_gated)
        self._room_scratch: np.ndarray | None = None  # kernels.room_gate's, left zeroed
        # SlotView.copy_room (index job + 1), for a gate that reads it (None: not read)
        self._copy_room = (np.ones(len(tables.j_off) + 1, dtype=bool)
                           if policy_class(policy).gate_reads_copy_room and slot_gate is not None
                           and actuator.speculation.enforce_caps else None)
        # with no wake rule, jobs not started yet sleep until their first attempt starts
        self._unstarted_sleep = policy_class(policy).gate_needs_an_attempt and wake is None
        # sleeping jobs (gates only, compiled, not idempotent, scans on a lattice of ticks)
        self._ticks = scan_ticks(cfg.scan, cfg.tick)
        self.sleeps = bool(self._ticks) and compiled and not idempotent and (
            gate is not None or self.copies_only)
        self.wake = wake if self.sleeps else None
        n_jobs = len(tables.j_off)
        self._anchor = np.full(n_jobs, np.nan)  # sleeping: the scan instant it skipped
        self._by_cap = np.zeros(n_jobs, dtype=bool)  # sleeping since the cap gate skipped it
        # the engine's: record the reports sent by t of the slots of the jobs marked in a
        # mask (index job + 1; ``_all``: every slot); None: reports are always current
        self.refresh = None
        self._all = np.ones(n_jobs + 1, dtype=bool)
        self._fresh = np.zeros(n_jobs, dtype=bool)  # skipped in this step
        # the engine's: jobs (index job + 1) a slot of which changed rate in this step
        self.rated = np.zeros(n_jobs + 1, dtype=bool)
        self._any_fresh = False
        self._all_recorded = -np.inf  # every slot's reports were recorded at this time

    def scan(self, t: float, touched: np.ndarray, only_touched: bool) -> None:
        """Scan every active job whose scan is due at ``t``.

        ``touched``: the active jobs whose tasks completed or that arrived since the last
        scan, ascending: the only jobs that can have changed while asleep (the engine
        marks nothing else changed between two steps, and ``settle`` cleared the rest).
        ``only_touched``: no other job's scan instant is due yet (the engine's earliest
        at the end of the last step is after ``t``). Both spare a pass over every active
        job, which with every job arriving at once are tens of thousands."""
        tb = self.tb
        if not len(tb.active):
            return
        due = self._due(t, touched, only_touched)
        if self.sleeps:
            self._anchor[due] = np.nan
        if not len(due):
            return
        live = self.slots.live
        self._record(t, due)  # what the gates read: the due jobs' reports
        if self.idempotent:
            due = self._changed_or_loud(t, due)
            if not len(due):
                return
        # each gate is a per-job condition, so their order does not matter: the cheaper first
        if self.copies_only:
            due = self._with_room(t, due)
            if not len(due):
                return
        if self.gate is not None:
            due = self._gated(t, due)
            if not len(due):
                return
        if self.refresh is not None:  # ClusterFacts reads every slot's latest report
            self.refresh(t, self._all)
            self._all_recorded = t
        # running attempts of the due jobs, grouped by job in the order of ``due``
        self._due_mask[due + 1] = True
        rows = np.flatnonzero(self._due_mask[live.job + 1])
        self._due_mask[due + 1] = False
        rows = rows[np.argsort(live.job[rows], kind="stable")]
        cut = np.append(np.searchsorted(live.job[rows], due), len(rows)).tolist()
        columns = self._running_columns_at(t, rows)
        cluster = self._cluster_facts(t)
        for i, j in enumerate(due.tolist()):
            if tb.j_left[j] == 0:
                continue
            part = slice(cut[i], cut[i + 1])
            snapshot = self._job_snapshot(t, j, columns, part, cluster)
            policy = self.policies.get(j)
            if policy is None:
                policy = self.policies[j] = self.make_policy(tb.j_ids[j])
                policy.join(self.shared)
            if self.clairvoyant:
                policy.see(truth(tb, self.draws.told, self.cluster.startup,
                                 live.end[rows[part]], t, j, snapshot))
            actions = policy.decide(snapshot)
            self.scans += 1
            self.actuator.apply(t, j, actions, snapshot)
            if self.idempotent:
                tb.j_quiet[j] = _empty(actions)
                tb.j_changed[j + 1] = False

    def _changed_or_loud(self, t: float, due: np.ndarray) -> np.ndarray:
        """The due jobs a ``scan_idempotent`` policy must see: its last answer was not
        empty, or the job changed since (a report received, an attempt started, ended,
        requested or killed, a task completed). The others rescan after ``scan`` s."""
        tb, live = self.tb, self.slots.live
        # reports k and k - 1 received since the last check (k - 1 when a step sent two)
        since = self._recv_checked
        got = ((live.r0 > since) & (live.r0 <= t)) | ((live.r1 > since) & (live.r1 <= t))
        tb.j_changed[live.job[got] + 1] = True
        self._recv_checked = t
        keep = tb.j_changed[due + 1] | ~tb.j_quiet[due]
        tb.j_next_scan[due[~keep]] = grid_after(t, self.cluster.scan, self.cluster.tick)
        return due[keep]

    def _gated(self, t: float, due: np.ndarray) -> np.ndarray:
        """The due jobs the policy's gate wants scanned; the others rescan after ``scan`` s.

        With ``compiled`` and a policy defining ``needs_scan_slots``, one compiled call over
        the slot arrays; otherwise ``needs_scan`` over the gathered ``ScanBatch``.
        """
        self._due_mask[due + 1] = True
        view = self._current_view(t)
        if self.slot_gate is not None and self.compiled:
            self._mark_room(due)
            want = self.slot_gate(view)[due + 1]
        else:
            batch = view.to_batch()
            marked = batch.job[np.asarray(self.gate(batch), dtype=bool)] + 1
            self._due_mask[due + 1] = False
            self._due_mask[marked] = True
            want = self._due_mask[due + 1]
            self._due_mask[marked] = False
        self._due_mask[due + 1] = False
        self._skip(t, due[~want], by_cap=False)
        return due[want]  # due is sorted (jobs activate in order)

    def _with_room(self, t: float, due: np.ndarray) -> np.ndarray:
        """The due jobs of a ``copies_only`` policy whose copies Hadoop's cap could let
        through, or that have a copy waiting for a slot; the others rescan after ``scan`` s.

        Room as ``hedge.policy.limits.limit`` counts it: ``allowed(tasks, tasks with a
        running attempt) - live speculative attempts`` (no waiting copy here, so the
        running ones).
        """
        keep = self._has_room(due)
        self._skip(t, due[~keep], by_cap=True)
        return due[keep]

    def _has_room(self, due: np.ndarray) -> np.ndarray:
        """``_with_room``'s test per job of ``due``."""
        tb, live = self.tb, self.slots.live
        settings = self.actuator.speculation
        if self._room_scratch is None:
            self._room_scratch = np.zeros(2 * len(tb.j_off))
        # distinct running tasks: the sum of 1 / (running attempts of the task) over slots
        keep = kernels.room_gate(
            due, live.job, live.task, live.aid, tb.t_run, tb.a_copy,
            (tb.j_nmaps[due] + tb.j_nred[due]).astype(np.float64),
            settings.minimum_allowed_tasks, settings.cap_total_tasks,
            settings.cap_running_tasks, self._room_scratch)
        return keep | (tb.queue.copies_per_job[due] > 0)

    def _skip(self, t: float, jobs: np.ndarray, by_cap: bool) -> None:
        """A gate skipped these due jobs: their next scan instant, and they sleep (``settle``
        decides until when, from their state at the end of this step)."""
        tb = self.tb
        tb.j_next_scan[jobs] = grid_after(t, self.cluster.scan, self.cluster.tick)
        if not by_cap and self.wake is None:
            # with no wake rule, ``settle`` would wake a started job at its next scan
            # instant, the one just set, so it need not sleep (adaptive, score, rate and
            # static skip most jobs at nearly every step, and settling them cost); a job
            # not started yet sleeps until it starts, where the gate allows that
            jobs = jobs[self._unstarted(jobs)] if self._unstarted_sleep else jobs[:0]
        if not self.sleeps or not len(jobs):
            return
        self._anchor[jobs] = t
        self._by_cap[jobs] = by_cap
        self.tb.j_changed[jobs + 1] = False  # changes from here on wake them
        self._fresh[jobs] = True
        self._any_fresh = True

    def _unstarted(self, jobs: np.ndarray) -> np.ndarray:
        """Per job: none of its originals placed yet, so it has had no attempt at all."""
        return self.tb.j_next[jobs] == self.tb.j_off[jobs]

    def _due(self, t: float, touched: np.ndarray, only_touched: bool) -> np.ndarray:
        """The active jobs to scan at ``t`` (``scan``'s arguments): those whose scan instant
        has come, and the sleepers a change woke."""
        tb = self.tb
        among = touched if only_touched else tb.active
        due = among[tb.j_next_scan[among] <= t + EPS]
        return self._woken(t, touched, due) if self.sleeps else due

    def _woken(self, t: float, touched: np.ndarray, due: np.ndarray) -> np.ndarray:
        """``due`` and the sleeping jobs that changed in this step before the scan (a task
        completed: among ``touched``) and have a scan instant at ``t``: their gate may
        answer otherwise now."""
        tb = self.tb
        asleep = touched[tb.j_changed[touched + 1]]
        if not len(asleep):
            return due
        asleep = asleep[~np.isnan(self._anchor[asleep]) & (tb.j_next_scan[asleep] > t + EPS)]
        if not len(asleep):
            return due
        asleep = asleep[on_lattice(self._anchor[asleep], t, self._ticks, self.cluster.tick)]
        return np.union1d(due, asleep) if len(asleep) else due

    def settle(self, t: float) -> None:
        """At the end of step ``t`` (slots placed, rates updated): until when each job that
        a gate skipped in this step, or a sleeping job that changed since, may sleep.

        Its next scan instant is the first at or after the earliest time its gate could
        want it scanned were nothing about it to change (``wake``, evaluated from the next
        tick); a job the cap gate skipped sleeps until it changes, then wakes at its next
        scan instant, or at once when the cap now leaves room. A slot whose rate changed
        (``rated``) or started an attempt moves its job: only ``wake`` reads rates."""
        if not self.sleeps:
            return
        tb, cfg = self.tb, self.cluster
        # a job a slot of which changed rate, or started an attempt (tw == t), moved:
        # the engine marked the first in ``rated``, a start marked the job changed
        asleep, jobs, changed, fresh, cap = kernels.settling(
            tb.active, self._anchor, self.rated, tb.j_changed, self._fresh, self._any_fresh,
            self._by_cap)
        if asleep:
            self._any_fresh = False
        if not len(jobs):
            return
        again = np.flatnonzero(cap & changed)
        if len(again):
            room = self._has_room(jobs[again])
            cap[again[room]] = False
            self._by_cap[jobs[again[room]]] = False
        soon = t + cfg.tick
        when = np.full(len(jobs), np.inf)
        ask = jobs[~cap]
        if len(ask) and self.wake is not None:
            # a job skipped in this step was due, so its reports were recorded at t
            # (later in the step an attempt only starts, ends or changes rate)
            self._record(t, ask[~fresh[~cap]])
            when[~cap] = self._wake_times(soon, ask)
        elif len(ask) and self._unstarted_sleep:  # until the first attempt starts
            when[~cap] = np.where(self._unstarted(ask), np.inf, soon)
        elif len(ask):
            when[~cap] = soon
        tb.j_next_scan[jobs] = lattice_from(self._anchor[jobs], when, self._ticks, cfg.tick)

    def _record(self, t: float, jobs: np.ndarray) -> None:
        """Record the reports sent by ``t`` of these jobs' slots (the engine's ``refresh``),
        unless every slot's were recorded at ``t`` already (recording twice at one instant
        changes nothing)."""
        if self.refresh is None or self._all_recorded == t or not len(jobs):
            return
        self._due_mask[jobs + 1] = True
        self.refresh(t, self._due_mask)
        self._due_mask[jobs + 1] = False

    def _wake_times(self, now: float, jobs: np.ndarray) -> np.ndarray:
        """The policy's ``needs_scan_from`` for these jobs, evaluated at ``now``."""
        view = self._current_view(now)
        self._due_mask[jobs + 1] = True
        self._mark_room(jobs)
        try:
            return np.maximum(self.wake(view)[jobs + 1], now)
        finally:
            self._due_mask[jobs + 1] = False

    def _mark_room(self, jobs: np.ndarray) -> None:
        """``SlotView.copy_room`` of these jobs, where the gate reads it (a job's room moves
        only when one of its attempts starts or ends: the cap counts its running tasks and
        copies, and a copy waits only after its own scan asked for it)."""
        if self._copy_room is not None:
            self._copy_room[jobs + 1] = self._has_room(jobs)

    def _current_view(self, t: float) -> SlotView:
        """The gates' ``SlotView`` at ``t``: made once (the slot and task arrays it holds
        are never reassigned during a run), then its clock, occupancy and the attempts'
        copy flags (an array the tables grow by reallocating) brought up to date."""
        view = self._view
        if view is None:
            view = self._view = self._slot_view(t)
        view.now = t
        view.free_slots, view.cluster_util = self._occupancy()
        view.attempt_copy = self.tb.a_copy
        return view

    def _occupancy(self) -> tuple[int, float]:
        """The slots' ``free_slots()`` and the busy fraction of all slots, from one sum of
        the busy counts when no node is blacklisted (``Slots.free_slots`` then sums them)."""
        slots = self.slots
        busy = slots.busy_n.sum()
        free = (int(self.cluster.total_slots - busy) if not slots.blacklisting
                else slots.free_slots())
        return free, float(busy) / self.cluster.total_slots

    def _slot_view(self, t: float) -> SlotView:
        """The slot arrays as a gate sees them (``hedge.model.batch.SlotView``); ``due`` is
        ``_due_mask`` (index job + 1), so mark the due jobs first."""
        tb, live = self.tb, self.slots.live
        return SlotView(
            now=t, hw=self.cluster.hw, due=self._due_mask, job=live.job, task=live.task,
            start=live.start, k=live.k, p0=live.p0, p1=live.p1, r0=live.r0, r1=live.r1,
            task_type=tb.t_type_sentinel, task_attempts=tb.t_att, task_running=tb.t_run,
            n_tasks=tb.j_ntasks, completed=tb.j_count, completed_mean=tb.j_mean,
            completed_std=tb.j_std, free_slots=self.slots.free_slots(), job_start=tb.j_arrival,
            job_deadline=tb.j_deadline, end=live.end if self.clairvoyant else None,
            copy_time=(tb.t_base * self.draws.told + self.cluster.startup
                       if self.clairvoyant else None),
            task_runtime=tb.t_runtime, job_offset=tb.j_off, job_maps=tb.j_nmaps,
            task_asked=tb.t_asked, aid=live.aid,  # attempt_copy: _current_view's
            copy_room=self._copy_room,
            w=live.w, r=live.r, W=live.W, ws=live.ws, tw=live.tw,
            latency_max=float(self.slots.latency.table.max()), policies=self.policies)

    def _reports(self, t: float, rows: np.ndarray) -> dict[str, np.ndarray]:
        """What the AM holds for the attempts in these slots: their last *received* report."""
        live, hw = self.slots.live, self.cluster.hw
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
        cfg, slots = self.cluster, self.slots
        live = slots.live
        util = slots.busy_n / cfg.slots
        if self.compiled:
            free_at = kernels.slot_free_at(t, cfg.tick, cfg.hw, live.start, live.k, live.p0,
                                           live.aid)
        else:
            free_at = self._slot_free_at_numpy(t)
        return ClusterFacts(
            total_slots=cfg.total_slots,
            free_slots=slots.free_slots(),
            kills_restart=cfg.kills == "restart",
            blacklist=np.flatnonzero(slots.bl_mask),
            cpu_util=util,
            mem_util=util,
            slot_node=slots.slot_node,
            slot_free_at=free_at,
        )

    def _slot_free_at_numpy(self, t: float) -> np.ndarray:
        """``_cluster_facts``' ``slot_free_at`` as numpy expressions (the reference of
        ``kernels.slot_free_at``)."""
        cfg, live = self.cluster, self.slots.live
        with np.errstate(divide="ignore", invalid="ignore"):
            free_at = np.maximum(live.start + live.k * cfg.hw / live.p0, t + cfg.tick)
        # as np.nan_to_num(nan=inf) before the maximum: inf -> largest float, NaN -> inf
        free_at[free_at == np.inf] = np.finfo(np.float64).max
        free_at[np.isnan(free_at)] = np.inf
        free_at[live.aid < 0] = t
        return free_at

    def _finished(self, off: int, n: int) -> FinishedAttempts:
        """The completed tasks of the job whose tasks are ``off .. off + n - 1``, in task
        order: each one's winning attempt (node, start, end) and input bytes."""
        tb = self.tb
        task = off + np.flatnonzero(tb.t_done[off:off + n])
        aid = tb.t_winner[task]
        return FinishedAttempts(task=task - off, attempt=aid, node=tb.a_node[aid],
                                start=tb.a_start[aid], end=tb.t_finish[task],
                                input_bytes=tb.t_input[task])

    def _running_columns_at(self, t: float, rows: np.ndarray) -> dict[str, np.ndarray]:
        """``_running_columns`` of these slots' ``_reports`` at ``t``; with ``compiled``, in
        one pass (``kernels.running_columns``)."""
        if not self.compiled:
            return self._running_columns(rows, self._reports(t, rows))
        tb, live = self.tb, self.slots.live
        cols = kernels.running_columns(
            t, self.cluster.hw, rows, live.start, live.k, live.p0, live.p1, live.r0, live.r1,
            live.kfp, live.fpp, live.frac0, live.task, live.aid, live.job, tb.j_off,
            tb.t_type, tb.t_input, self.slots.slot_node, tb.a_copy)
        columns = dict(zip(_RUNNING_COLUMNS, cols, strict=True))
        columns["state"] = np.full(len(rows), AttemptState.RUNNING, np.int8)
        return columns

    def _running_columns(self, rows: np.ndarray, view: dict[str, np.ndarray],
                         ) -> dict[str, np.ndarray]:
        """The ``AttemptTable`` columns of the running attempts in these slots (``view``:
        their ``_reports``), in the model's dtypes, built for every due job at once
        (``_job_snapshot`` slices one job's)."""
        tb, live = self.tb, self.slots.live
        task, aid = live.task[rows], live.aid[rows]
        inp = np.asarray(tb.t_input[task], dtype=np.float64)
        progress = view["progress"]
        return {
            "task": task - tb.j_off[live.job[rows]],
            "attempt": aid,
            "task_type": np.asarray(tb.t_type[task], dtype=np.int8),
            "state": np.full(len(rows), AttemptState.RUNNING, np.int8),
            "node": np.asarray(self.slots.slot_node[rows], dtype=np.int64),
            "start": live.start[rows],
            "first_progress_time": view["fpt"],
            "first_progress": view["fpp"],
            "progress": progress,
            "report_sent": view["sent"],
            "report_received": view["recv"],
            "bytes_processed": progress * (1 - live.frac0[rows]) * inp,
            "input_bytes": inp,
            "speculative": tb.a_copy[aid],
        }

    def _waiting_columns(self, j: int, off: int) -> dict[str, np.ndarray] | None:
        """Job ``j``'s waiting original tasks then queued copies as ``AttemptTable`` columns
        (None when nothing waits)."""
        tb = self.tb
        first, end = tb.j_next[j], tb.j_end[j]
        copies = tb.queue.of_job(j)
        if first >= end and not copies:  # every original launched, no copy queued
            return None
        wait = np.arange(first, end)
        wait = wait[~tb.t_done[wait]]
        if copies:
            wait = np.concatenate([wait, np.asarray(copies, dtype=np.int64)])
        nw = len(wait)
        if not nw:
            return None
        task = tb.a_task[wait]
        inp = np.asarray(tb.t_input[task], dtype=np.float64)
        nan = np.full(nw, np.nan)
        zero = np.zeros(nw)
        return {
            "task": task - off,
            "attempt": wait,
            "task_type": np.asarray(tb.t_type[task], dtype=np.int8),
            "state": np.full(nw, AttemptState.WAITING, np.int8),
            "node": np.full(nw, -1, np.int64),
            "start": nan,
            "first_progress_time": nan,
            "first_progress": nan,
            "progress": zero,
            "report_sent": nan,
            "report_received": nan,
            # as for a running row: progress * (1 - frac0) * input, progress and frac0 0
            "bytes_processed": zero * (1 - zero) * inp,
            "input_bytes": inp,
            "speculative": tb.a_copy[wait],
        }

    def _snapshot(self, t: float, j: int, rows: np.ndarray, view: dict, cluster: ClusterFacts,
                  ) -> Snapshot:
        """Job ``j``'s snapshot on its own: its running attempts (these slots' rows, ``view``
        their ``_reports``), then its waiting original tasks and queued copies."""
        return self._job_snapshot(t, j, self._running_columns(rows, view), slice(None),
                                  cluster)

    def _job_snapshot(self, t: float, j: int, columns: dict[str, np.ndarray], part: slice,
                      cluster: ClusterFacts) -> Snapshot:
        """Job ``j``'s snapshot: its running attempts (rows ``part`` of ``columns``), then
        its waiting original tasks and queued copies."""
        tb = self.tb
        off = int(tb.j_off[j])
        waiting = self._waiting_columns(j, off)
        if waiting is None:
            table = {name: column[part] for name, column in columns.items()}
        else:
            table = {name: np.concatenate([column[part], waiting[name]])
                     for name, column in columns.items()}
        # the columns are in the model's dtypes and of one length: no conversion to check
        attempts = AttemptTable.of_columns(**table)
        nm = int(tb.j_nmaps[j])
        maps = tb.t_runtime[off:off + nm]
        reds = tb.t_runtime[off + nm:off + nm + int(tb.j_nred[j])]
        deadline = float(tb.j_deadline[j])
        facts = JobFacts(
            job_id=tb.j_ids[j],
            start=float(tb.j_arrival[j]),
            n_maps=nm,
            n_reduces=int(tb.j_nred[j]),
            deadline=None if math.isnan(deadline) else deadline,
            completed_map_runtimes=maps[~np.isnan(maps)],
            completed_reduce_runtimes=reds[~np.isnan(reds)],
        )
        if tb.input_nodes is not None:
            facts.input_nodes = tb.input_nodes[off:off + nm + int(tb.j_nred[j])]
        if self.reads_finished:
            facts.finished = self._finished(off, nm + int(tb.j_nred[j]))
        # valid rows whose reports only move on: the simulator's clock and its report
        # arrays guarantee both (tests/unit/test_sim_snapshot_checks.py checks every scan)
        return Snapshot(now=t, job=facts, attempts=attempts, cluster=cluster,
                        validated=True, consistent=True)
