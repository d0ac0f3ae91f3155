"""Alibaba cluster traces.

- v2017 ``batch_task.csv`` (8 columns, with or without a header line): task_create_time, task_end_time
  (s from trace start), job_id, task_id, number_of_instances, status (Terminated, Waiting,
  Running, Failed), CPUs requested per instance (100 = 1 core), normalised memory.
  A row is a task; its duration is ``end - create`` for Terminated rows. Waiting and
  Running rows had not ended when the trace was cut: censored. Failed rows are counted
  (``failed_tasks``). A job arrives at its first task's create time. No machine ids.
- v2018 ``machine_meta.csv`` / ``machine_usage.csv`` (no header): node tables, not task
  traces; ``read_machines`` returns them as a pyarrow Table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hedge.errors import HedgeError, where
from hedge.model import MAP
from hedge.traces.arrays import unique_inverse
from hedge.traces.csvio import head_bytes, line_of_row, open_text, read_table
from hedge.traces.workload import Workload

BATCH_TASK_COLUMNS = ["create", "end", "job_id", "task_id", "instances", "status", "cpus",
                      "memory"]
BATCH_TASK_TYPES = {"create": pa.int64(), "end": pa.int64(), "job_id": pa.int64(),
                    "task_id": pa.int64(), "instances": pa.int64(), "status": pa.string(),
                    "cpus": pa.float64(), "memory": pa.float64()}
STATUSES = ("Terminated", "Waiting", "Running", "Failed")

MACHINE_META_COLUMNS = ["machine_id", "time_stamp", "failure_domain_1", "failure_domain_2",
                        "cpu_num", "mem_size", "status"]
MACHINE_USAGE_COLUMNS = ["machine_id", "time_stamp", "cpu_util_percent", "mem_util_percent",
                         "mem_gps", "mkpi", "net_in", "net_out", "disk_io_percent"]


def read_batch_task(path: Path, *, negative: str = "error") -> Workload:
    """v2017 batch_task.csv -> Workload (maps only; machine unknown).

    ``negative``: what to do with a Terminated row whose end precedes its create time:
    "error" (default: HedgeError naming the line) or "drop" (skip it, counted in
    ``counts['negative_duration']``; the real v2017 table has one such row, -1 s).
    """
    if negative not in ("error", "drop"):
        raise HedgeError(f"option negative={negative!r}: expected 'error' or 'drop'")
    header = head_bytes(Path(path), 64).lstrip().lower().startswith(b"task_create_time")
    skip = 1 if header else 0  # the published table has no header; some copies add one
    t = read_table(path, BATCH_TASK_COLUMNS, BATCH_TASK_TYPES, header=header)
    status = t["status"]
    known = pc.is_in(status, pa.array(STATUSES))
    if not pc.all(known).as_py():
        row = int(np.flatnonzero(~np.asarray(known))[0])
        raise HedgeError(f"{where(path, line_of_row(path, row, skip=skip), 'status')}: unknown "
                         f"status {status[row].as_py()!r}, expected one of {', '.join(STATUSES)}")
    for name in ("create", "job_id"):
        nulls = np.flatnonzero(np.asarray(t[name].is_null()))
        if len(nulls):
            raise HedgeError(f"{where(path, line_of_row(path, int(nulls[0]), skip=skip), name)}: "
                             "expected a value, found an empty field")
    done = np.asarray(pc.equal(status, "Terminated"))
    create = t["create"].to_numpy().astype(np.float64)
    end = t["end"].fill_null(-1).to_numpy().astype(np.float64)
    duration = end - create
    bad = done & (duration < 0)
    counts = {"failed_tasks": int(np.asarray(pc.equal(status, "Failed")).sum()),
              "negative_duration": int(bad.sum())}
    if bad.any() and negative == "error":
        row = int(np.flatnonzero(bad)[0])
        raise HedgeError(
            f"{where(path, line_of_row(path, row, skip=skip), 'task_end_time')}: negative duration "
            f"({duration[row]:.0f} s: end {end[row]:.0f} < create {create[row]:.0f}); "
            "pass negative='drop' (CLI: --drop-negative) to skip and count such rows")
    censored = int(np.asarray(pc.is_in(status, pa.array(["Waiting", "Running"]))).sum())
    keep = np.flatnonzero(done & ~bad)
    job = t["job_id"].to_numpy()[keep]
    return _workload(job, create[keep], duration[keep], censored, str(path), counts)


def _workload(job: np.ndarray, start: np.ndarray, duration: np.ndarray, censored: int,
              source: str, counts: dict[str, int]) -> Workload:
    """Group tasks by job; jobs ordered by first start, arrivals shifted to begin at 0."""
    job_ids, inverse, _ = unique_inverse(job)
    arrival = np.full(len(job_ids), np.inf)
    np.minimum.at(arrival, inverse, start)
    order = np.argsort(arrival, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    tasks = np.lexsort((start, rank[inverse]))
    n = len(tasks)
    if len(arrival):
        arrival = arrival - arrival.min()
    return Workload(
        job_ids=[str(j) for j in job_ids[order]],
        arrival=arrival[order],
        job_offsets=np.r_[0, np.cumsum(np.bincount(rank[inverse], minlength=len(job_ids)))],
        task_type=np.full(n, MAP),
        duration=duration[tasks],
        input_bytes=np.full(n, np.nan),
        machine=np.full(n, -1),
        straggler_factor=np.ones(n),
        censored=censored,
        source=source,
        counts=counts,
    )


def read_machines(path: Path) -> pa.Table:
    """v2018 machine_meta or machine_usage (detected by the column count) as a Table."""
    with open_text(Path(path)) as f:
        first = f.readline().rstrip("\r\n").split(",")
    names = MACHINE_META_COLUMNS if len(first) == len(MACHINE_META_COLUMNS) \
        else MACHINE_USAGE_COLUMNS
    text = {"machine_id", "status"}
    types = {n: pa.string() if n in text else pa.float64() for n in names}
    return read_table(path, names, types)
