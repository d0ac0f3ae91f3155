"""The simulator's tables: tasks (``t_``), jobs (``j_``) and the attempt pool (``a_``).

Struct of numpy arrays, in the simulator's own order: jobs by arrival (stable), each job's
tasks contiguous, maps before reduces (``perm`` and ``job_order`` map rows back to the
workload's order). Some task columns have one trailing row for the sentinel task of empty
slots (never done); some job columns are indexed ``job + 1`` (0: an empty slot).

The attempt pool holds every attempt ever requested: originals at index == task, copies and
relaunches appended (``request``), each in one of the states below. Waiting copies and
relaunches queue in ``queue`` (``hedge.sim.copy_queue``) until the scheduler places them.
"""

from __future__ import annotations

import numpy as np

from hedge.model import MAP, REDUCE
from hedge.sim.cluster import ClusterConfig
from hedge.sim.copy_queue import CopyQueue
from hedge.traces.workload import Workload

# pool states of an attempt record
NEW, RUNNING, DONE, KILLED, CANCELLED = 0, 1, 2, 3, 4


def unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: np.unique's hash path is slow on small arrays)."""
    if len(values) < 2:
        return values.copy()
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


class Tables:
    """Tasks, jobs and attempts of one run, built from the workload.

    Draws from ``rng`` (in this order, before anything else draws from it): the cluster's
    straggler factors when it sets ``straggler_ratio``, and a home node for every task.
    Besides the columns it holds the job admission counts: ``active`` (arrived, unfinished
    jobs in arrival order), ``waiting`` (original tasks of active jobs waiting for a slot)
    and ``jobs_left`` (jobs with tasks not finished).
    """

    def __init__(self, wl: Workload, cfg: ClusterConfig, rng: np.random.Generator,
                 deadline: float | None, deadline_factor: float | None) -> None:
        job_order = np.argsort(wl.arrival, kind="stable")
        rank = np.empty(wl.n_jobs, dtype=np.int64)
        rank[job_order] = np.arange(wl.n_jobs)
        task_rank = rank[wl.task_job]
        perm = np.lexsort((np.arange(wl.n_tasks), wl.task_type, task_rank))
        self.job_order, self.perm = job_order, perm
        n, nj = wl.n_tasks, wl.n_jobs
        self._task_columns(wl, cfg, rng, perm, task_rank)
        self._job_columns(wl, job_order, n, nj)
        self.j_deadline = self._deadlines(cfg, deadline, deadline_factor)

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
        self.n_attempts = n
        self.queue = CopyQueue(self)  # waiting copies / relaunches, per job

        self.active = np.empty(0, dtype=np.int64)
        self.waiting = 0
        self.jobs_left = int((wl.tasks_per_job > 0).sum())

    def _task_columns(self, wl: Workload, cfg: ClusterConfig, rng: np.random.Generator,
                      perm: np.ndarray, task_rank: np.ndarray) -> None:
        n = wl.n_tasks
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
        self.t_winner = np.full(n, -1, dtype=np.int64)  # the attempt that completed it
        self.t_detected = np.zeros(n, dtype=bool)
        self.t_launched = np.zeros(n, dtype=np.int64)
        # live (running or queued) and running attempts per task, for scan gates
        self.t_att = np.zeros(n + 1, dtype=np.int64)
        self.t_run = np.zeros(n + 1, dtype=np.int64)
        # per task: its job's policy asked for a copy of it at some scan (before the caps)
        self.t_asked = np.zeros(n + 1, dtype=bool)
        self.local_matters = bool(np.isfinite(self.t_input).any())
        # JobFacts.input_nodes rows (one replica: the input's node), read-only views; empty
        # (unknown) when no task has an input size, since locality then costs nothing
        self.input_nodes = self.t_home[:, None].copy() if self.local_matters else None
        if self.input_nodes is not None:
            self.input_nodes.flags.writeable = False
        # task types with one trailing row for the sentinel task of empty slots
        self.t_type_sentinel = np.append(self.t_type, np.int8(MAP))

    def _job_columns(self, wl: Workload, job_order: np.ndarray, n: int, nj: int) -> None:
        self.j_arrival = wl.arrival[job_order]
        self.j_ids = [wl.job_ids[i] for i in job_order]
        sizes = wl.tasks_per_job[job_order]
        self.j_off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        is_map = (self.t_type == MAP).astype(np.int64)
        self.j_nmaps = np.add.reduceat(is_map, self.j_off) if n else np.zeros(nj, np.int64)
        self.j_nmaps = np.where(sizes > 0, self.j_nmaps, 0)
        self.j_nred = sizes - self.j_nmaps
        self.j_next = self.j_off.copy()  # the next original task to place
        self.j_end = np.where(self.j_nmaps > 0, self.j_off + self.j_nmaps, self.j_off + sizes)
        self.j_maps_left = self.j_nmaps.copy()
        self.j_left = sizes.copy()
        self.j_last = np.full(nj, -np.inf)
        self.j_finish = np.full(nj, np.nan)
        self.j_next_scan = np.full(nj, np.inf)
        self.j_ntasks = np.stack([self.j_nmaps, self.j_nred], axis=1)
        self.j_wake = np.zeros(nj, dtype=bool)
        # scan_idempotent policies: the last scan's answer was empty / the job changed since
        self.j_quiet = np.zeros(nj, dtype=bool)
        self.j_changed = np.ones(nj + 1, dtype=bool)  # index job + 1 (0: empty slot)
        self.j_reserved = np.zeros(nj, dtype=np.int64)
        self.j_reserving: set[int] = set()  # the jobs whose j_reserved is above 0
        self.j_avoid: dict[int, np.ndarray] = {}
        # completed tasks per job and type: count, sum and sum of squares of run times
        self.j_count = np.zeros((nj, 2))
        self.j_sum = np.zeros((nj, 2))
        self.j_sumsq = np.zeros((nj, 2))
        self.j_mean = np.full((nj, 2), np.nan)
        self.j_std = np.full((nj, 2), np.nan)

    def _deadlines(self, cfg: ClusterConfig, deadline: float | None,
                   deadline_factor: float | None) -> np.ndarray:
        nj = len(self.j_off)
        if deadline is not None:
            return self.j_arrival + deadline
        if deadline_factor is None or nj == 0:
            return np.full(nj, np.nan)
        longest = np.zeros((nj, 2))
        np.maximum.at(longest, (self.t_job, self.t_type.astype(np.int64)), self.t_base)
        critical = longest[:, MAP] + longest[:, REDUCE] + np.where(
            self.j_nred > 0, cfg.shuffle, 0.0)
        return self.j_arrival + deadline_factor * critical

    def job_stats(self, jobs: np.ndarray, types: np.ndarray, runtime: np.ndarray) -> None:
        """Running count, mean and std of completed run times per (job, type), for gates."""
        np.add.at(self.j_count, (jobs, types), 1.0)
        np.add.at(self.j_sum, (jobs, types), runtime)
        np.add.at(self.j_sumsq, (jobs, types), runtime * runtime)
        count = self.j_count[jobs, types]
        mean = self.j_sum[jobs, types] / count
        self.j_mean[jobs, types] = mean
        self.j_std[jobs, types] = np.sqrt(np.maximum(self.j_sumsq[jobs, types] / count
                                                     - mean * mean, 0.0))

    def request(self, task: int, k: int, copy: bool, prefer: int = -1, frac0: float = 0.0,
                ) -> None:
        """Queue ``k`` new attempts of ``task`` (they wait for slots like any task)."""
        first = self.n_attempts
        self._grow(first + k)
        ids = np.arange(first, first + k)
        self.a_task[ids] = task
        self.a_copy[ids] = copy
        self.a_prefer[ids] = prefer
        self.a_frac0[ids] = frac0
        self.n_attempts += k
        self.t_att[task] += k
        self.j_changed[self.t_job[task] + 1] = True
        self.queue.push(task, ids, copy)

    def retire(self, finished: np.ndarray) -> None:
        """These active jobs (ascending) finished: they leave ``active``. (Found by their
        place, not by reading every active job: with every job arriving at once, tens of
        thousands are active.)"""
        self.active = np.delete(self.active, np.searchsorted(self.active, finished))

    def cancel(self, aid: int) -> None:
        """A queued attempt will not run (its task is done, or it was killed while waiting);
        the caller takes it off ``queue``."""
        task = self.a_task[aid]
        self.a_state[aid] = CANCELLED
        self.t_att[task] -= 1

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
