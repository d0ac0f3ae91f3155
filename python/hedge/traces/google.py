"""Google cluster trace 2011 (clusterdata-2011-2) ``task_events`` part files.

gzip CSV, no header, 13 columns: time (µs; 0 = before the trace window), missing info,
job ID, task index, machine ID, event type, user, scheduling class, priority, CPU request,
memory request, disk request, different-machine restriction. Event types: SUBMIT=0,
SCHEDULE=1, EVICT=2, FAIL=3, FINISH=4, KILL=5, LOST=6, UPDATE_PENDING=7, UPDATE_RUNNING=8.

An *attempt* is a SCHEDULE followed (in file order, within the same job and task index) by
an ending event: FINISH -> SUCCEEDED, FAIL or LOST -> FAILED, EVICT or KILL -> KILLED. Its
node is the machine of the SCHEDULE, its duration ``end - start``; a task's duration is
therefore FINISH minus the last SCHEDULE. Censoring, counted and never dropped silently:

- a SCHEDULE with no ending event later in the file: still running (``censored_attempts``;
  the task is censored if it never finished),
- an ending event with no SCHEDULE before it in the file (``ends_without_schedule``),
- a SCHEDULE at time 0, i.e. before the trace window: its true start is unknown
  (``scheduled_before_trace``; the attempt is not used).

Everything is vectorised over the event arrays (sort by job/task, compare neighbours).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hedge.errors import HedgeError, where
from hedge.traces.arrays import unique
from hedge.traces.attempts import AttemptTrace, build_table, empty_check
from hedge.traces.csvio import line_of_row, read_table

COLUMNS = ["time", "missing_info", "job_id", "task_index", "machine_id", "event_type", "user",
           "scheduling_class", "priority", "cpu_request", "memory_request", "disk_request",
           "different_machine"]
TYPES = {"time": pa.int64(), "missing_info": pa.int64(), "job_id": pa.int64(),
         "task_index": pa.int64(), "machine_id": pa.int64(), "event_type": pa.int64(),
         "user": pa.string(), "scheduling_class": pa.int64(), "priority": pa.int64(),
         "cpu_request": pa.float64(), "memory_request": pa.float64(),
         "disk_request": pa.float64(), "different_machine": pa.int64()}
SUBMIT, SCHEDULE, FINISH = 0, 1, 4
_END_STATE = {2: "KILLED", 3: "FAILED", 4: "SUCCEEDED", 5: "KILLED", 6: "FAILED"}


def read_events(path: Path) -> pa.Table:
    """The columns hedge uses, validated: required fields present, event types 0..8."""
    table = read_table(path, COLUMNS, TYPES,
                       include=["time", "job_id", "task_index", "machine_id", "event_type"])
    for name in ("time", "job_id", "task_index", "event_type"):
        nulls = np.flatnonzero(np.asarray(table[name].is_null()))
        if len(nulls):
            raise HedgeError(f"{where(path, line_of_row(path, int(nulls[0])), name)}: "
                             "expected a value, found an empty field")
    event = table["event_type"].to_numpy()
    bad = np.flatnonzero((event < 0) | (event > 8))
    if len(bad):
        raise HedgeError(f"{where(path, line_of_row(path, int(bad[0])), 'event_type')}: unknown "
                         f"event type {int(event[bad[0]])}, expected 0..8 (SUBMIT..UPDATE_RUNNING)")
    for name, limit in (("job_id", 1 << 42), ("task_index", 1 << 20)):
        values = table[name].to_numpy()
        bad = np.flatnonzero((values < 0) | (values >= limit))
        if len(bad):  # task keys pack (job, index) into one int64, see _task_codes
            raise HedgeError(f"{where(path, line_of_row(path, int(bad[0])), name)}: "
                             f"expected 0 <= {name} < {limit:,}, found {int(values[bad[0]])}")
    negative = np.flatnonzero(table["time"].to_numpy() < 0)
    if len(negative):
        raise HedgeError(f"{where(path, line_of_row(path, int(negative[0])), 'time')}: negative "
                         "timestamp, expected microseconds >= 0")
    return table


def _id_strings(*parts: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(*[pc.cast(p, pa.string()) for p in parts], "_")


def read(path: Path) -> AttemptTrace:
    """Attempts of one task_events part file (times in s of trace time)."""
    return attempts_from_events(read_events(path), path)


def read_parts(paths: list[Path]) -> AttemptTrace:
    """Attempts of consecutive part files read as one stream (an attempt scheduled in one
    part and ended in the next is paired, not censored)."""
    if not paths:
        raise HedgeError("no Google task_events part files given")
    events = pa.concat_tables([read_events(p) for p in paths])
    trace = attempts_from_events(events, paths[0], line_numbers=False)
    trace.source = f"{paths[0].parent} ({', '.join(p.name for p in paths)})"
    return trace


def attempts_from_events(events: pa.Table, path: Path, line_numbers: bool = True
                         ) -> AttemptTrace:
    """Pair SCHEDULE and ending events (see the module docstring)."""
    time = events["time"].to_numpy()
    job = events["job_id"].to_numpy()
    index = events["task_index"].to_numpy()
    machine = events["machine_id"].fill_null(-1).to_numpy()
    kind = events["event_type"].to_numpy()

    submit_rows = np.flatnonzero(kind == SUBMIT)
    submit_jobs = unique(job[submit_rows])
    first_submit = np.full(len(submit_jobs), np.inf)
    np.minimum.at(first_submit, np.searchsorted(submit_jobs, job[submit_rows]),
                  time[submit_rows] / 1e6)

    rows = np.flatnonzero((kind >= SCHEDULE) & (kind <= 6))
    rows = rows[np.lexsort((rows, index[rows], job[rows]))]  # by task, file order within
    k, t, j, i = kind[rows], time[rows], job[rows], index[rows]
    same_prev = np.r_[False, (j[1:] == j[:-1]) & (i[1:] == i[:-1])]
    is_sched, is_end = k == SCHEDULE, k != SCHEDULE
    paired = is_end & same_prev & np.r_[False, is_sched[:-1]]  # end rows with a start before
    end_pos = np.flatnonzero(paired)
    start_pos = end_pos - 1
    known_start = t[start_pos] > 0
    before_trace = int((~known_start).sum())
    end_pos, start_pos = end_pos[known_start], start_pos[known_start]

    duration = t[end_pos] - t[start_pos]
    if (duration < 0).any():
        row = int(rows[end_pos[np.argmax(duration < 0)]])
        line = line_of_row(path, row) if line_numbers else None
        raise HedgeError(f"{where(path, line, 'time')}: negative duration: "
                         "the ending event is earlier than the task's SCHEDULE")

    started_pos = np.flatnonzero(is_sched)
    has_end = np.r_[paired[1:], False][started_pos]
    open_pos = started_pos[~has_end]
    finished = np.zeros(0, dtype=np.int64)
    if len(end_pos):
        finished = unique(_task_codes(j, i)[end_pos[k[end_pos] == FINISH]])
    open_tasks = unique(_task_codes(j, i)[open_pos])
    censored_tasks = int(len(open_tasks) - _count_in(open_tasks, finished))

    jobs = pa.array(j[end_pos])
    tasks = _id_strings(jobs, pa.array(i[end_pos]))
    rank = _rank_within(_task_codes(j, i)[end_pos])
    columns = {
        "job": pc.cast(jobs, pa.string()),
        "task": tasks,
        "attempt": _id_strings(tasks, pa.array(rank)),
        "node": _node_names(machine[rows[start_pos]]),
        "type": np.full(len(end_pos), "MAP", dtype=object),
        "start": t[start_pos] / 1e6,
        "end": t[end_pos] / 1e6,
        "state": np.vectorize(_END_STATE.get, otypes=[object])(k[end_pos])
        if len(end_pos) else np.zeros(0, dtype=object),
    }
    submit = {str(jid): float(s) for jid, s in zip(submit_jobs, first_submit, strict=True)
              if s > 0}
    counts = {"ends_without_schedule": int((is_end & ~paired).sum()),
              "scheduled_before_trace": before_trace}
    # Borg never runs two instances of a task index at once: a re-SCHEDULE is a restart
    # (after an eviction, a failure or a resubmission), not a speculative copy.
    table = build_table(columns, infer=False)
    return empty_check(AttemptTrace(table, str(path), submit, len(open_pos),
                                    censored_tasks, counts))


def _count_in(values: np.ndarray, sorted_set: np.ndarray) -> int:
    """How many of ``values`` are in ``sorted_set`` (both sorted and distinct)."""
    if len(sorted_set) == 0:
        return 0
    pos = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return int((sorted_set[pos] == values).sum())


def _node_names(machine: np.ndarray) -> pa.Array:
    """Machine ids as strings; "" where the trace has none (-1 after filling nulls)."""
    ids = pa.array(machine, mask=machine < 0)
    return pc.fill_null(pc.cast(ids, pa.string()), "")


def _task_codes(job: np.ndarray, index: np.ndarray) -> np.ndarray:
    """One int64 per (job, task index) pair (task indices are < 2**20 in the trace)."""
    return job.astype(np.int64) * (1 << 20) + index.astype(np.int64)


def _rank_within(codes: np.ndarray) -> np.ndarray:
    """0, 1, 2... for successive rows with the same code (rows are grouped by code)."""
    n = len(codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.r_[True, codes[1:] != codes[:-1]]
    first = np.maximum.accumulate(np.where(new, np.arange(n), 0))
    return np.arange(n) - first
