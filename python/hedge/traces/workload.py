"""A workload: jobs with their tasks, as every trace reader and generator produces it.

Flat arrays (struct of arrays) with one row per task, grouped by job: the tasks of job j
are rows ``job_offsets[j]:job_offsets[j+1]``. The simulator consumes this directly; no
per-task Python objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hedge.errors import HedgeError
from hedge.model import MAP


@dataclass
class CopyPools:
    """Where a simulator draws a copy's slowdown from (``hedge.traces.straggler_model``):
    task i's pool is ``values[start[i]:start[i] + size[i]]``."""

    values: np.ndarray
    start: np.ndarray
    size: np.ndarray


@dataclass
class Workload:
    """Jobs (arrival order) and their tasks.

    Per job: ``job_ids`` (trace's id, as str), ``arrival`` (s from trace start),
    ``job_offsets`` (len n_jobs + 1).
    Per task: ``task_type`` (MAP/REDUCE), ``duration`` (observed or generated run time in
    seconds on a typical node: the task's *work*), ``input_bytes`` (NaN unknown),
    ``machine`` (trace machine index, -1 unknown), ``straggler_factor`` (how much the
    original attempt is slowed: > 1 slowed, 1 normal; a trace model may also give < 1).
    ``straggler_truth``: whether ``straggler_factor > 1`` is ground truth for detection
    metrics (generated workloads); a trace has none (``hedge.traces.formats.load``).
    ``copy_pools``: where a copy's slowdown is drawn from (None: from all tasks' factors).
    ``censored``: tasks the reader saw start but not end (counted, not simulated).
    ``source``: where the workload came from, for reports.
    ``counts``: optional reader tallies of what it saw but did not turn into tasks (e.g.
    ``tasks_without_success``, ``censored_attempts``), reported by ``hedge traces stats``.
    ``notes``: what the reader assumed that a result resting on this workload must say
    (e.g. SWIM's tasks are synthesised from job totals).
    ``machine_names``: the trace's machines (index = ``machine`` value); ``slots_per_machine``:
    containers (slots) per machine when the trace records them, else None. ``hedge simulate
    --trace`` sizes its cluster from these two.
    """

    job_ids: list[str]
    arrival: np.ndarray
    job_offsets: np.ndarray
    task_type: np.ndarray
    duration: np.ndarray
    input_bytes: np.ndarray
    machine: np.ndarray
    straggler_factor: np.ndarray
    censored: int = 0
    source: str = ""
    machine_names: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    slots_per_machine: int | None = None
    straggler_truth: bool = True
    copy_pools: CopyPools | None = None

    def require_tasks(self, what: str) -> Workload:
        """``self``, or HedgeError naming the source and what the reader saw instead, when
        no task completed (a history of a failed or killed job, say): ``what`` is the
        result that needs tasks, e.g. "to replay"."""
        if self.n_tasks:
            return self
        seen = {"censored (started, never ended)": self.censored, **self.counts}
        detail = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in seen.items() if v)
        raise HedgeError(f"{self.source}: no task completed, so nothing {what}"
                         f"{f' (the reader saw: {detail})' if detail else ''}; a history of a "
                         "job that failed or was killed holds no completed task")

    def __post_init__(self) -> None:
        self.arrival = np.asarray(self.arrival, dtype=np.float64)
        self.job_offsets = np.asarray(self.job_offsets, dtype=np.int64)
        self.task_type = np.asarray(self.task_type, dtype=np.int8)
        self.duration = np.asarray(self.duration, dtype=np.float64)
        self.input_bytes = np.asarray(self.input_bytes, dtype=np.float64)
        self.machine = np.asarray(self.machine, dtype=np.int64)
        self.straggler_factor = np.asarray(self.straggler_factor, dtype=np.float64)
        n_jobs, n_tasks = len(self.job_ids), len(self.duration)
        if len(self.arrival) != n_jobs or len(self.job_offsets) != n_jobs + 1:
            raise HedgeError(f"workload {self.source!r}: job arrays disagree on the job count")
        if self.job_offsets[0] != 0 or self.job_offsets[-1] != n_tasks:
            raise HedgeError(f"workload {self.source!r}: job_offsets do not cover all tasks")
        for name in ("task_type", "input_bytes", "machine", "straggler_factor"):
            if len(getattr(self, name)) != n_tasks:
                raise HedgeError(f"workload {self.source!r}: '{name}' has the wrong length")
        if (self.duration < 0).any():
            raise HedgeError(f"workload {self.source!r}: negative task duration")

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def n_tasks(self) -> int:
        return len(self.duration)

    @property
    def tasks_per_job(self) -> np.ndarray:
        return np.diff(self.job_offsets)

    @property
    def task_job(self) -> np.ndarray:
        """Job index of every task."""
        return np.repeat(np.arange(self.n_jobs), self.tasks_per_job)

    def job_tasks(self, j: int) -> slice:
        return slice(int(self.job_offsets[j]), int(self.job_offsets[j + 1]))

    def slot_demand(self) -> float:
        """The slots the workload keeps busy on average while its jobs arrive, were every
        task to run at once: its offered load, which a cluster must exceed or its queue
        grows (``hedge simulate --trace`` sizes a cluster for a trace without machines by
        it, and says when a cluster is smaller).

        Each task's original runs from its job's arrival (a reduce from the end of its
        job's longest map) for its duration times its straggler factor (a trace task: as
        long as the trace says it ran); the busy seconds inside the arrival window, over the
        window.
        Arrivals spread over less than the median job's length are one burst, not a
        stream: the window then runs to the last task's end (0 with no task)."""
        if not self.n_tasks:
            return 0.0
        job = self.task_job
        is_map = self.task_type == MAP
        runs = self.duration * self.straggler_factor
        longest_map = np.zeros(self.n_jobs)
        np.maximum.at(longest_map, job[is_map], runs[is_map])
        start = self.arrival[job] + np.where(is_map, 0.0, longest_map[job])
        end = start + runs
        job_length = np.zeros(self.n_jobs)
        np.maximum.at(job_length, job, end - self.arrival[job])
        first, last = float(self.arrival.min()), float(self.arrival.max())
        if last - first < np.median(job_length):
            last = float(end.max())
        if last <= first:
            return 0.0
        busy = np.clip(end, first, last) - np.clip(start, first, last)
        return float(busy.sum() / (last - first))

    @classmethod
    def from_jobs(
        cls,
        job_ids: list[str],
        arrival: list[float] | np.ndarray,
        durations: list[np.ndarray],
        task_types: list[np.ndarray] | None = None,
        source: str = "",
    ) -> Workload:
        """Build from one duration array per job (maps only unless task_types given)."""
        sizes = np.array([len(d) for d in durations], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        duration = np.concatenate(durations) if durations else np.empty(0)
        n = len(duration)
        types = np.concatenate(task_types) if task_types else np.full(n, MAP, np.int8)
        return cls(
            job_ids=list(job_ids),
            arrival=np.asarray(arrival, dtype=np.float64),
            job_offsets=offsets,
            task_type=types,
            duration=duration,
            input_bytes=np.full(n, np.nan),
            machine=np.full(n, -1),
            straggler_factor=np.ones(n),
            source=source,
        )
