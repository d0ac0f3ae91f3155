"""A cheap view of many jobs at one scan, for optional vectorised scan gates.

A policy may define ``needs_scan(batch) -> np.ndarray`` (one bool per row): a job none of
whose rows is True must be one on which ``decide`` would return no action (no copy, kill,
resume or reservation) at this scan, so the simulator skips building its snapshot and
calling ``decide``; the job is then rescanned after the default period.
Gates must be conservative (when in doubt, return True) and are only for policies whose
``decide`` keeps no per-scan state. The simulator checks (tests) that a run with gates
gives bit-identical results to one without.

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
