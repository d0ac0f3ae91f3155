"""A cheap view of many jobs at one scan, for optional vectorised scan gates.

A policy may define ``needs_scan(batch) -> np.ndarray`` (one bool per row): a job none of
whose rows is True must be one on which ``decide`` would return no action (no copy, kill,
resume or reservation) at this scan, so the simulator skips building its snapshot and
calling ``decide``; the job is then rescanned after the default period.
Gates must be conservative (when in doubt, return True) and are only for policies whose
``decide`` keeps no per-scan state, or whose skipped scans would leave that state as it is
(a compiled-path gate may read it: ``SlotView.policies``). The simulator checks (tests) that
a run with gates gives bit-identical results to one without.

Rows are running attempts: every running attempt of each job due for a scan (a job's
rows are all present, so per-job statistics over rows are exact; a row with ``job`` -1
is an empty slot, whose other columns are meaningless), with what the AM has received
(same meaning as the ``AttemptTable`` columns; ``progress`` 0 and NaN
``report_received`` before the first report arrives). Per-job arrays cover every job of the workload (index = ``job``), one
column per task type (MAP, REDUCE); mean and std are NaN before a completion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hedge.errors import HedgeError


@dataclass
class ScanBatch:
    now: float
    # per running attempt
    job: np.ndarray  # job index (row in the per-job arrays); -1: empty slot
    task_type: np.ndarray
    start: np.ndarray
    progress: np.ndarray
    report_sent: np.ndarray
    report_received: np.ndarray
    # live (running or waiting) attempts of this attempt's task
    task_attempts: np.ndarray
    # per job x task type: tasks, completed tasks, mean and population std of their run times
    n_tasks: np.ndarray
    completed: np.ndarray
    completed_mean: np.ndarray
    completed_std: np.ndarray
    # free slots in the cluster at this scan (None: unknown)
    free_slots: int | None = None
    # per job: its start (arrival) on the scan clock (None: unknown; gates that need it
    # must then say "scan")
    job_start: np.ndarray | None = None
    # per running attempt: running attempts of its task (None: unknown; gates that need it
    # must then say "scan"). Sum 1 / task_running over rows = distinct running tasks.
    task_running: np.ndarray | None = None
    # per running attempt: its task's row in the simulator's per-task arrays, unique across
    # jobs (None: unknown)
    task: np.ndarray | None = None
    # per job: its absolute deadline on the scan clock, NaN without one (None: unknown)
    job_deadline: np.ndarray | None = None
    # the cluster's mean per-node utilisation, as ``ClusterFacts.cpu_util``'s mean (None:
    # unknown)
    cluster_util: float | None = None
    # clairvoyant runs only (``Policy.clairvoyant``; None otherwise): per running attempt, the
    # seconds until it would end if nothing changed, and what a copy of its task launched
    # now would take (``hedge.model.truth.Truth``'s ``remaining`` and ``copy_time``)
    remaining: np.ndarray | None = None
    copy_time: np.ndarray | None = None


@dataclass
class SlotView:
    """The simulator's raw slot state at one scan, for compiled gates.

    A policy may define ``needs_scan_slots(view) -> np.ndarray``: one bool per job + 1
    (index ``job + 1``; index 0 is the empty slot), True for every due job on which
    ``needs_scan`` over ``view.to_batch()`` has a True row (it may say True more often:
    the same conservativeness rule), or False for fewer where it reads what a batch does
    not hold (the jobs' own policies, ``task_asked``), as long as ``decide`` would do
    nothing there (or, from ``copy_room``, nothing the cap lets through). It gets the slot
    arrays unindexed, so a compiled kernel can walk them once instead of the simulator
    gathering a ``ScanBatch``.

    Per slot: ``job`` (-1: empty), ``task`` (row of the per-task arrays), ``start``, ``k``
    (index of the last report sent), ``p0``/``p1`` (progress in reports ``k`` and
    ``k - 1``), ``r0``/``r1`` (when the AM receives them; the AM holds report ``k`` once
    ``r0 <= now``, else ``k - 1``). Per task: ``task_type``, ``task_attempts``,
    ``task_running``. Per job x type: as in ``ScanBatch``. ``due``: bool per job + 1.
    ``job_start``, ``job_deadline``, ``cluster_util``: as in ``ScanBatch``; ``end`` (per
    slot) and ``copy_time`` (per task): the truth behind ``ScanBatch.remaining`` and
    ``copy_time``, clairvoyant runs only.

    A policy may also define ``needs_scan_from(view) -> np.ndarray``: one float per job + 1,
    for every due job the earliest time at or after ``now`` at which ``needs_scan_slots``
    could want it (inf: never), were none of the job's attempts to start, end or change
    rate and none of its tasks to complete (the simulator wakes the job on any of those).
    It must never be later than the truth; earlier only costs a check.
    """

    now: float
    hw: float
    due: np.ndarray
    job: np.ndarray
    task: np.ndarray
    start: np.ndarray
    k: np.ndarray
    p0: np.ndarray
    p1: np.ndarray
    r0: np.ndarray
    r1: np.ndarray
    task_type: np.ndarray
    task_attempts: np.ndarray
    task_running: np.ndarray
    n_tasks: np.ndarray
    completed: np.ndarray
    completed_mean: np.ndarray
    completed_std: np.ndarray
    free_slots: int | None = None
    job_start: np.ndarray | None = None
    job_deadline: np.ndarray | None = None
    cluster_util: float | None = None
    end: np.ndarray | None = None  # per slot: its attempt's true end (clairvoyant runs)
    copy_time: np.ndarray | None = None  # per task: a copy's true run time (clairvoyant)
    # per task: its completed run time (NaN until it completes); per job: its first task's
    # row in the per-task arrays and its number of maps (None: unknown)
    task_runtime: np.ndarray | None = None
    job_offset: np.ndarray | None = None
    job_maps: np.ndarray | None = None
    # per slot, the simulator's trajectory of its attempt (``hedge.sim.slots.Live``): work
    # done ``w`` by ``tw``, rate ``r`` since, total work ``W``, work begins at ``ws``; and
    # the largest report latency (< hw). Only for ``needs_scan_from``, which may use them
    # to tell when a report could first move the gate, never what ``decide`` decides.
    w: np.ndarray | None = None
    r: np.ndarray | None = None
    W: np.ndarray | None = None
    ws: np.ndarray | None = None
    tw: np.ndarray | None = None
    latency_max: float | None = None
    # per task: its job's policy asked for a copy of it at an earlier scan, whatever the caps
    # then let through (None: unknown). For gates of policies whose ``decide`` never asks to
    # copy a task twice (the detector policies, the oracle): such a task is no candidate.
    task_asked: np.ndarray | None = None
    # per slot: its attempt's id (-1: empty); per attempt id: is it a copy? (None: unknown)
    aid: np.ndarray | None = None
    attempt_copy: np.ndarray | None = None
    # per job + 1: Hadoop's cap (``hedge.policy.limits``, the job's settings) leaves the job
    # room for a copy, or a copy of it waits for a slot; filled for the due jobs only, for a
    # policy with ``gate_reads_copy_room`` (None: unknown, or caps not enforced: room)
    copy_room: np.ndarray | None = None
    # per job index: the job's own policy object once its first scan made it (the simulator's
    # dict, kept current; None: unknown). Lets a policy that keeps per-job state (chronos:
    # its plan and per-task times) gate on it; such a gate must then want every job whose
    # policy is not made yet, and never change the state it reads.
    policies: dict | None = None

    def rows(self) -> np.ndarray:
        """The busy slots of due jobs, ascending."""
        return np.flatnonzero(self.due[self.job + 1])

    def to_batch(self) -> ScanBatch:
        """The ``ScanBatch`` of the due jobs' running attempts (the simulator's reference
        gate input): the AM holds report ``k`` when ``r0 <= now``, else report ``k - 1``."""
        rows = self.rows()
        r0 = self.r0[rows]
        ok = r0 <= self.now
        start, task = self.start[rows], self.task[rows]
        return ScanBatch(
            now=self.now,
            job=self.job[rows],
            task_type=self.task_type[task],
            start=start,
            progress=np.where(ok, self.p0[rows], self.p1[rows]),
            report_sent=start + (self.k[rows] - ~ok) * self.hw,
            report_received=np.where(ok, r0, self.r1[rows]),
            task_attempts=self.task_attempts[task],
            task_running=self.task_running[task],
            n_tasks=self.n_tasks,
            completed=self.completed,
            completed_mean=self.completed_mean,
            completed_std=self.completed_std,
            free_slots=self.free_slots,
            job_start=self.job_start,
            task=task,
            job_deadline=self.job_deadline,
            cluster_util=self.cluster_util,
            remaining=None if self.end is None else self.end[rows] - self.now,
            copy_time=None if self.copy_time is None else self.copy_time[task],
        )


def gate_scratch(kept: tuple[np.ndarray, ...] | None,
                 *specs: tuple[int, type, float]) -> tuple[np.ndarray, ...]:
    """A compiled gate's scratch arrays, kept between its calls: ``kept`` while its arrays
    have the sizes ``specs`` ask for (size, dtype, fill value), else new ones so filled. The
    gate leaves them as it found them."""
    if kept is not None and all(len(a) == spec[0] for a, spec in zip(kept, specs, strict=True)):
        return kept
    return tuple(np.full(n, fill, dtype) for n, dtype, fill in specs)


def own_state_wake(view: SlotView, method: str = "_quiet_until") -> np.ndarray:
    """For gates that read each job's own policy (``SlotView.policies``): per due job (index
    ``job + 1``) its policy's ``_quiet_until(view, j, slots)`` (the earliest time its
    ``decide`` could act or change its state, were the job not to change; ``view.now``: at
    once; ``slots``: the job's busy slots), or ``view.now`` while its policy is not made
    yet; inf for jobs not due. ``method`` names another method of the same signature (a
    gate that may skip more than a wake may sleep: ``HedgeAuto._gate_until``)."""
    when = np.full(len(view.due), np.inf)
    policies = view.policies if view.policies is not None else {}
    rows = view.rows()
    rows = rows[np.argsort(view.job[rows], kind="stable")]  # one pass, not one per job
    jobs = np.flatnonzero(view.due[1:])
    cut = np.searchsorted(view.job[rows], np.append(jobs, len(view.due))).tolist()
    for i, j in enumerate(jobs.tolist()):
        policy = policies.get(j)
        when[j + 1] = view.now if policy is None else getattr(policy, method)(
            view, j, rows[cut[i]:cut[i + 1]])
    return when


def own_state_batch_error(name: str) -> HedgeError:
    """The batch form of such a gate: a ``ScanBatch`` carries neither the jobs' own policies
    nor a row for a job without a running attempt."""
    return HedgeError(f"policy '{name}': its scan gate reads each job's own state "
                      "(SlotView.policies), which only the compiled simulator passes; run "
                      "with Simulator.compiled = True or gates=False")
