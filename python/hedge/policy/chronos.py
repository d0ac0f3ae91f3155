"""Chronos (ICDCS'18) deadline-aware speculation: ``chronos-clone``, ``-restart``, ``-resume``.

Per job, once: attempt run times are modelled as Pareto(t_min, beta), fitted (MLE) to the
durations known at the time (completed tasks, and ``ect - start`` of running attempts from
the JVM-aware estimator, eq. 32), unless ``t_min``/``beta`` are given; then
:func:`hedge.analysis.chronos.optimal_r` picks r for the job's N tasks and its relative
deadline D = deadline - job start (``theta``, ``price``, ``r_min``), with tau_est and
tau_kill from :func:`hedge.analysis.chronos.default_taus` unless given. tau_est and tau_kill
are measured from each task's launch (the start of its first attempt), because in a
cluster a job's tasks do not all start at time 0 as in the model.

- ``chronos-clone``: r extra attempts as soon as a task is seen; at tau_kill the attempt
  with the best reported progress is kept (ties: earliest estimated completion), the others
  (running or still waiting for a slot) are killed.
- ``chronos-restart``: at tau_est, a task whose JVM-aware estimated completion is after the
  deadline gets r fresh attempts; tau_kill - tau_est after that, the attempt with the
  smallest estimated completion is kept.
- ``chronos-resume``: at tau_est such a straggler is killed and r + 1 attempts process the
  input it had not reached (``Actions.resume_task``); tau_kill - tau_est later the one with
  the smallest estimated completion is kept. Simulator only (``live_am_supported``).

Copies are asked within Hadoop's speculation cap (:mod:`hedge.policy.limits`, rule 3: by
default ten live copies per job of up to 1,000 tasks), which the AM applies copy by copy: a
copy it refuses is not made, and a plan that counted it as made left its task without a copy
for good (chronos-clone copied at most about ten tasks per job; issue 19). So the copies a
plan gives a task are owed until the cap has room, asked oldest plan first, and only as many
as the room allows (:meth:`_Chronos._copies_within_cap`); a task's owed copies lapse when it
has no live attempt left (finished) or its keep-one decision is made. That decision waits as
long as the cap held the task's first copies back (clone: tau_kill after launch plus that
wait; restart: tau_kill - tau_est after the first copies were asked), so late copies get the
time the model gives them. The cap is Hadoop's default
(:data:`hedge.policy.limits.HADOOP_DEFAULTS`): a snapshot does not
carry the job's own settings. Resumes are not capped (rule 3 limits copies only), so
chronos-resume never waits.

A decision that needs an estimate waits (scan by scan) until the JVM-aware estimate exists
(two progress reports), at most ``tau_kill - tau_est`` beyond its due time; after that an
attempt without an estimate counts as never finishing. Jobs without a deadline are left
alone. If no r reaches ``r_min``, the plan falls back to ``r_min = 0``; if the model cannot
help (D <= t_min, or too few durations to fit), r = 0.

Simulator speed (issue 21), results unchanged: a job of fewer tasks than ``min_samples`` is
never scanned again; the scan gate reads each job's own plan and per-task times
(``SlotView.policies``, compiled simulator only), so a planned job sleeps until its next
tau_est test or keep-one decision, or until one of its attempts starts, ends or is asked
for (:meth:`_Chronos._quiet_until`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from hedge.analysis import chronos
from hedge.analysis.fitting import fit_pareto
from hedge.errors import HedgeError
from hedge.estimate import jvm_ect
from hedge.model import Actions, AttemptState, Snapshot
from hedge.model.batch import SlotView
from hedge.policy.base import OwnStateGate, Policy, register
from hedge.policy.limits import HADOOP_DEFAULTS, snapshot_room
from hedge.policy.ranges import ABOVE_0, AT_LEAST_0, AT_LEAST_1, Range


class _Chronos(OwnStateGate, Policy):
    """Shared planning and per-task bookkeeping of the three Chronos strategies."""

    strategy: ClassVar[str] = ""
    param_ranges = {
        "theta": AT_LEAST_0, "price": AT_LEAST_0,
        "r_min": Range(0.0, 1.0, meaning="a minimum PoCD"),
        "t_min": ABOVE_0,
        "beta": Range(chronos.MIN_BETA, chronos.MAX_BETA, high_open=False,
                      meaning="a Pareto shape whose closed forms stay finite in float64"),
        "tau_est": AT_LEAST_0, "tau_kill": AT_LEAST_0,
        "max_extra": AT_LEAST_0, "min_samples": AT_LEAST_1,
    }

    def __init__(self, theta: float = 1e-4, price: float = 1.0, r_min: float = 0.0,
                 t_min: float | None = None, beta: float | None = None,
                 tau_est: float | None = None, tau_kill: float | None = None,
                 max_extra: int = 3, min_samples: int = 5) -> None:
        self.theta = theta
        self.price = price
        self.r_min = r_min
        self.t_min = t_min
        self.beta = beta
        self.tau_est = tau_est
        self.tau_kill = tau_kill
        self.max_extra = max_extra
        self.min_samples = min_samples
        # the plan: (r, tau_est, tau_kill, reason) once made, and the PoCD the model
        # expects of r (None: no model answer), so a run can say why it copied what it did
        self.plan: tuple[int, float, float, str] | None = None
        self.expected_pocd: float | None = None
        # copies the plan gave tasks, and those asked of the AM within the cap (the rest
        # lapsed: their task finished or was decided before the cap had room)
        self.copies_planned = 0
        self.copies_asked = 0
        self._launch = np.empty(0)  # first attempt's start per task (NaN: not seen)
        # when the plan gave the task its copies (clone: first seen; restart and resume:
        # judged late at tau_est; NaN: not yet)
        self._acted = np.empty(0)
        # when the task's first copies were asked within the cap (resume: resumed; NaN: not
        # yet); ``_asked - _acted`` is how long the cap held them back
        self._asked = np.empty(0)
        self._owed = np.empty(0, dtype=np.int64)  # copies given and not yet asked (cap full)
        self._done = np.empty(0, dtype=bool)  # no more decisions for this task
        # copies were owed and the cap had no room, in the job state with this stamp
        # (_stamp: the gate then knows the room is still none while the stamp is the same)
        self._full: tuple | None = None

    # ----------------------------------------------------------------- planning
    def _durations(self, s: Snapshot, ect: np.ndarray) -> np.ndarray:
        """Known run times: completed tasks, then JVM-aware estimates of running originals."""
        a = s.attempts
        own = (a.state == AttemptState.RUNNING) & ~a.speculative & np.isfinite(ect)
        known = np.concatenate([s.job.completed_map_runtimes, s.job.completed_reduce_runtimes,
                                (ect - a.start)[own]])
        return known[known > 0]

    @classmethod
    def run_notes(cls, policies: Sequence[Policy]) -> list[str]:
        """How many jobs' plans copy nothing (r = 0), with the first one's reason: a deadline
        no attempt can meet, or a model with no answer, copies nothing, and the table alone
        would not say why."""
        plans = [p.plan for p in policies if p.plan is not None]  # the run's: all of this class
        idle = [plan for plan in plans if plan[0] == 0]
        if not idle:
            return []
        return [f"{cls.name}: {len(idle)} of {len(plans)} jobs' plans gave r = 0 extra "
                f"attempts, so those jobs got no copy (the first: {idle[0][3]})"]

    def _make_plan(self, s: Snapshot, ect: np.ndarray) -> tuple[int, float, float, str] | None:
        deadline = s.job.deadline - s.job.start
        t_min, beta = self.t_min, self.beta
        if t_min is None or beta is None:
            known = self._durations(s, ect)
            if len(known) < self.min_samples or len(np.unique(known)) < 2:
                return None  # not enough evidence yet: plan at a later scan
            fit = fit_pareto(known, warn=False)
            t_min = fit.t_min if t_min is None else t_min
            beta = fit.beta if beta is None else beta
        n = s.job.n_maps + s.job.n_reduces
        if not deadline > t_min:
            return 0, math.inf, math.inf, (f"D = {deadline:.4g} s <= t_min = {t_min:.4g} s: no "
                                             "attempt can finish by the deadline")
        te, tk = chronos.default_taus(deadline, t_min, self.tau_est)
        tk = tk if self.tau_kill is None else self.tau_kill
        args = (self.strategy, n, deadline, t_min, beta, te, tk)
        weights = dict(theta=self.theta, price=self.price, r_max=self.max_extra)
        try:
            try:
                r, self.expected_pocd = chronos.optimal_r(*args, r_min=self.r_min, **weights)[:2]
            except HedgeError:
                r, self.expected_pocd = chronos.optimal_r(*args, r_min=0.0, **weights)[:2]
        except HedgeError as exc:
            return 0, te, tk, str(exc)
        return (r, te, tk, f"Pareto(t_min = {t_min:.4g}, beta = {beta:.3g}), D = {deadline:.4g}, "
                f"r = {r} expects PoCD {self.expected_pocd:.4f}")

    # ----------------------------------------------------------------- bookkeeping
    def _track(self, s: Snapshot) -> None:
        n = s.job.n_maps + s.job.n_reduces
        if len(self._launch) != n:
            self._launch = np.full(n, np.nan)
            self._acted = np.full(n, np.nan)
            self._asked = np.full(n, np.nan)
            self._owed = np.zeros(n, dtype=np.int64)
            self._done = np.zeros(n, dtype=bool)
        a = s.attempts
        started = np.full(n, np.inf)
        np.minimum.at(started, a.task, np.where(np.isnan(a.start), np.inf, a.start))
        first = np.isnan(self._launch) & np.isfinite(started)
        self._launch[first] = started[first]

    def decide(self, snapshot: Snapshot) -> Actions:
        s = snapshot
        if s.job.deadline is None or self._never_planned(s):
            return Actions(next_scan_in=math.inf)
        self._track(s)
        ect = jvm_ect(s.attempts, s.now)
        if self.plan is None:
            self.plan = self._make_plan(s, ect)
            if self.plan is None:
                return Actions()
        r, te, tk, _ = self.plan
        if r == 0:
            return Actions(next_scan_in=math.inf)
        return self._act(s, ect, r, te, tk)

    def _never_planned(self, s: Snapshot) -> bool:
        """No plan yet and none can ever be made: the fit needs ``min_samples`` durations
        and a job of fewer tasks never knows that many (one per task: its run time or its
        running original's estimate). Such a job is never scanned again (issue 21: these
        were most of chronos' scans); until a plan exists ``decide`` never acts."""
        return self.plan is None and (self.t_min is None or self.beta is None) and \
            s.job.n_maps + s.job.n_reduces < self.min_samples

    def _act(self, s: Snapshot, ect: np.ndarray, r: int, te: float, tk: float) -> Actions:
        raise AssertionError("subclasses implement _act")

    # ----------------------------------------------------------------- simulator gate
    # Each decision is due at a time the job's own state fixes (a task's tau_est test, a
    # keep-one decision), at the first scan after a task is launched or seen, or while
    # copies are owed; the gate reads that state (``SlotView.policies``), so a job sleeps
    # until the earliest such time or until it changes (issue 21; OwnStateGate).
    def _quiet_until(self, view: SlotView, j: int, slots: np.ndarray) -> float:
        """``view.now`` if ``decide`` on job ``j`` (this object's job) could act or change
        this object's state now; else the earliest time it could, were none of the job's
        attempts to start, end, be requested or killed and none of its tasks to complete
        (each of those wakes the job); inf: never.

        Now: a running attempt of a task not yet tracked (``_track``); no plan yet and
        enough tasks completed or running to fit one (the fit reads every report; with
        fewer than ``min_samples`` only a start or completion changes that); copies owed,
        unless the cap had no room for them in the same job state (``_full``: the room
        moves only with the job's attempts and tasks); clone: a live task not yet given
        copies; a keep-one decision due (``_prune``) on a live task; restart and resume: a
        task at its tau_est test (``_stragglers``). A task is live (has a running or
        waiting attempt) exactly when it has not completed and is available: a map, or a
        reduce once every map completed (a killed task's last attempt is always
        relaunched)."""
        now = view.now
        n, off, maps = len(self._launch), int(view.job_offset[j]), int(view.job_maps[j])
        if not n or np.isnan(self._launch[view.task[slots] - off]).any():
            return now
        if self.plan is None:  # the fit: a duration per completed task or running original
            fit = self.t_min is None or self.beta is None
            few = view.completed[j].sum() + len(slots) < self.min_samples
            return math.inf if fit and few else now
        r, te, tk, _ = self.plan
        if r == 0:
            return math.inf
        if self._owed.any() and self._full != _stamp(
                view.start[slots], int(view.task_attempts[off:off + n].sum()) - len(slots),
                int(view.completed[j].sum())):
            return now
        live = ~np.isfinite(view.task_runtime[off:off + n])
        if view.completed[j, 0] < maps:
            live[maps:] = False
        open_task = live & ~self._done
        if self.strategy == "clone" and (open_task & np.isnan(self._acted)).any():
            return now
        due = self._keep_one_at(te, tk)[open_task]
        if self.strategy != "clone":
            untested = ~self._done & np.isnan(self._acted)
            due = np.concatenate([due, self._launch[untested] + te])
        due = due[~np.isnan(due)]
        if (now >= due).any():
            return now
        return float(due.min(initial=math.inf))

    def _keep_one_at(self, te: float, tk: float) -> np.ndarray:
        """Per task: when its keep-one decision is due (NaN: not yet known)."""
        return self._asked + (tk - te)

    # ----------------------------------------------------------------- shared decisions
    def _live(self, s: Snapshot) -> tuple[np.ndarray, np.ndarray]:
        """Masks of RUNNING and of live (RUNNING or WAITING) attempt rows."""
        state = s.attempts.state
        running = state == AttemptState.RUNNING
        return running, running | (state == AttemptState.WAITING)

    def _stragglers(self, s: Snapshot, ect: np.ndarray, te: float, grace: float) -> np.ndarray:
        """Tasks at their tau_est test whose estimated completion is after the deadline.

        Due: launched at least tau_est ago and not yet settled. A due task with exactly one
        live attempt is tested once that attempt has an estimate (or, without one, after
        ``grace`` s, counting as never finishing); a due task with none (finished) or
        several live attempts needs nothing. Settled tasks are marked acted or done.
        """
        a = s.attempts
        running, live = self._live(s)
        n = len(self._launch)
        due = ~self._done & np.isnan(self._acted) & (s.now >= self._launch + te)
        alone = np.bincount(a.task[live], minlength=n) == 1
        task_ect = np.full(n, np.nan)
        rows = running & (due & alone)[a.task]
        task_ect[a.task[rows]] = ect[rows]
        known = np.isfinite(task_ect)
        overdue = s.now >= self._launch + te + grace
        test = due & alone & (known | overdue)
        with np.errstate(invalid="ignore"):
            late = test & (~known | (task_ect > s.job.deadline))
        self._done |= (due & ~alone) | (test & ~late)
        self._acted[late] = s.now
        return np.flatnonzero(late)

    def _prune(self, s: Snapshot, ect: np.ndarray, due_at: np.ndarray, grace: float,
               by_progress: bool) -> np.ndarray:
        """At ``due_at`` per task, keep one attempt and kill the task's other live attempts.

        The kept attempt is the running one with the best progress (``by_progress``) or the
        smallest estimated completion, ties broken by the other key, then by start. A task
        waits while one of its running attempts has no estimate, up to ``grace`` s.
        """
        a = s.attempts
        running, live = self._live(s)
        pending = ~self._done & (s.now >= due_at)
        rows = live & pending[a.task]
        if not rows.any():
            return np.empty(0, dtype=np.int64)
        key_ect = np.where(running & np.isfinite(ect), ect, np.inf)
        blind = np.zeros(len(self._launch), dtype=bool)
        np.logical_or.at(blind, a.task[rows & running], np.isnan(ect[rows & running]))
        ready = pending & (~blind | (s.now >= due_at + grace))
        rows = live & ready[a.task]
        idx = np.flatnonzero(rows)
        progress = np.where(running[idx], a.progress[idx], -1.0)
        start = np.where(np.isnan(a.start[idx]), np.inf, a.start[idx])
        primary, secondary = (-progress, key_ect[idx]) if by_progress else (key_ect[idx],
                                                                            -progress)
        order = idx[np.lexsort((start, secondary, primary, a.task[idx]))]
        first = np.ones(len(order), dtype=bool)
        first[1:] = a.task[order][1:] != a.task[order][:-1]
        self._done[ready] = True
        return a.attempt[order[~first]]

    def _copies_within_cap(self, s: Snapshot) -> tuple[np.ndarray, np.ndarray]:
        """The owed copies Hadoop's cap lets start now: (tasks, copies per task), the
        longest-waiting plans first (then by task), as many as
        :func:`hedge.policy.limits.snapshot_room` allows (a task may get part of its copies
        now and the rest later). Owed copies of a task that is
        decided or has no live attempt (finished) lapse."""
        _, live = self._live(s)
        open_task = np.bincount(s.attempts.task[live], minlength=len(self._owed)) > 0
        self._owed[self._done | ~open_task] = 0
        waiting = np.flatnonzero(self._owed > 0)
        space = snapshot_room(s, HADOOP_DEFAULTS) if len(waiting) else 0
        self._full = None
        if space <= 0:
            if len(waiting):
                a = s.attempts
                running = a.state == AttemptState.RUNNING
                self._full = _stamp(a.start[running], int(np.count_nonzero(
                    (a.state == AttemptState.WAITING) & a.speculative)),
                    len(s.job.completed_map_runtimes) + len(s.job.completed_reduce_runtimes))
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        order = waiting[np.lexsort((waiting, self._acted[waiting]))]
        owed = self._owed[order]
        before = np.cumsum(owed) - owed  # copies granted to the plans ahead of each
        granted = np.clip(space - before, 0, owed)
        task, copies = order[granted > 0], granted[granted > 0]
        self._owed[task] -= copies
        self.copies_asked += int(copies.sum())
        self._asked[task] = np.fmin(self._asked[task], s.now)  # fmin: NaN -> now
        return task, copies

    def _late_and_kept(self, s: Snapshot, ect: np.ndarray, te: float, tk: float,
                       ) -> tuple[np.ndarray, np.ndarray]:
        """restart/resume: the tasks late at their tau_est test, and the attempts to kill
        tau_kill - tau_est after a task's first copies were asked (the smallest estimated
        completion is kept)."""
        late = self._stragglers(s, ect, te, tk - te)
        return late, self._prune(s, ect, self._keep_one_at(te, tk), tk - te, by_progress=False)


def _stamp(running_starts: np.ndarray, queued_copies: int, completed: int) -> tuple:
    """A job's attempt state as the cap's room sees it, equal in a snapshot and in the
    simulator's slot view: running attempts, the sum of their starts (sorted, so the same
    in any order; an attempt started since a scan starts later than any it replaced),
    queued copies (the view counts queued requested attempts: chronos makes no other) and
    completed tasks. The same stamp means the same running attempts, queue and tasks."""
    return (len(running_starts), float(np.sort(running_starts).sum()), queued_copies,
            completed)


@register
class ChronosClone(_Chronos):
    """``chronos-clone``: r extra attempts per task at launch, keep the best at tau_kill."""

    name = "chronos-clone"
    strategy = "clone"

    def _act(self, s: Snapshot, ect: np.ndarray, r: int, te: float, tk: float) -> Actions:
        _, live = self._live(s)
        seen = np.bincount(s.attempts.task[live], minlength=len(self._launch)) > 0
        fresh = seen & np.isnan(self._acted) & ~self._done
        too_late = fresh & (s.now >= self._launch + tk)  # first seen after its tau_kill
        self._done |= too_late
        new = fresh & ~too_late
        self._acted[new] = s.now
        self._owed[new] = r
        self.copies_planned += r * int(np.count_nonzero(new))
        # decided before copies are asked, so a task decided now gets no more
        kills = self._prune(s, ect, self._keep_one_at(te, tk), tk - te, by_progress=True)
        task, copies = self._copies_within_cap(s)
        return Actions(speculate_task=task, speculate_copies=copies, kill_attempt=kills)

    def _keep_one_at(self, te: float, tk: float) -> np.ndarray:
        """tau_kill after launch, later by as long as the cap held the first copies back
        (NaN, never due, while none has started)."""
        return self._launch + tk + (self._asked - self._acted)


@register
class ChronosRestart(_Chronos):
    """``chronos-restart``: r fresh attempts for estimated deadline-missers at tau_est."""

    name = "chronos-restart"
    strategy = "restart"

    def _act(self, s: Snapshot, ect: np.ndarray, r: int, te: float, tk: float) -> Actions:
        late, kills = self._late_and_kept(s, ect, te, tk)
        self._owed[late] = r
        self.copies_planned += r * len(late)
        task, copies = self._copies_within_cap(s)  # after the decisions, as in clone
        return Actions(speculate_task=task, speculate_copies=copies, kill_attempt=kills)


@register
class ChronosResume(_Chronos):
    """``chronos-resume``: kill the straggler at tau_est, r + 1 attempts resume its input."""

    name = "chronos-resume"
    strategy = "resume"
    live_am_supported: ClassVar[bool] = False
    live_am_reason: ClassVar[str] = (
        "chronos-resume restarts a map from the byte offset its straggler reached, but stock "
        "Hadoop discards a killed attempt's partial map output, so the records before that "
        "offset would be lost; it runs in the simulator only (use chronos-restart on a "
        "cluster)")

    def _act(self, s: Snapshot, ect: np.ndarray, r: int, te: float, tk: float) -> Actions:
        late, kills = self._late_and_kept(s, ect, te, tk)
        self._asked[late] = s.now  # resumes are not capped: they start at once
        return Actions(resume_task=late, resume_copies=np.full(len(late), r + 1),
                       kill_attempt=kills)

