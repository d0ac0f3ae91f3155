"""Attempt-level traces: one row per task attempt, whatever format it came from.

``read_attempts`` (Rumen JSON, ``.jhist``, Google ``task_events``) returns a pyarrow Table
with the columns of ``ATTEMPT_SCHEMA``:

- ``job``, ``task``, ``attempt``: the trace's identifiers (str)
- ``node``: host / machine the attempt ran on (str, "" unknown)
- ``type``: "MAP" or "REDUCE"
- ``start``, ``end``: seconds on the trace's own clock (epoch for Hadoop, trace time for Google)
- ``state``: "SUCCEEDED", "KILLED" or "FAILED"
- ``speculative``: True when the trace says so (``.jhist`` ``avataar``) or when inferred:
  the attempt overlaps an earlier attempt of its task or follows a successful one (see
  ``infer_speculative``; a retry after a failure or eviction is not a copy)
- ``input_bytes``: bytes read by the attempt (NaN unknown); an extra column

Attempts that started but have no end in the file are *censored*: they are not rows; their
number is in the schema metadata (``censored_attempts``, ``censored_tasks``) and in the
``AttemptTrace`` that readers return.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE
from hedge.traces.arrays import unique_inverse
from hedge.traces.workload import Workload

ATTEMPT_SCHEMA = pa.schema([
    ("job", pa.string()),
    ("task", pa.string()),
    ("attempt", pa.string()),
    ("node", pa.string()),
    ("type", pa.string()),
    ("start", pa.float64()),
    ("end", pa.float64()),
    ("state", pa.string()),
    ("speculative", pa.bool_()),
    ("input_bytes", pa.float64()),
])

STATES = ("SUCCEEDED", "KILLED", "FAILED")


@dataclass
class AttemptTrace:
    """What an attempt-level reader found: the attempts plus job-level facts.

    ``submit``: job id -> submit time (same clock as ``start``), where the trace has it.
    ``censored_tasks``: tasks with an attempt still running at the end of the file and no
    successful attempt. ``counts``: other things seen and not turned into attempts.
    """

    table: pa.Table
    source: str
    submit: dict[str, float] = field(default_factory=dict)
    censored_attempts: int = 0
    censored_tasks: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def with_metadata(self) -> pa.Table:
        meta = {"source": self.source, "censored_attempts": str(self.censored_attempts),
                "censored_tasks": str(self.censored_tasks)}
        meta.update({k: str(v) for k, v in self.counts.items()})
        return self.table.replace_schema_metadata(meta)


def infer_speculative(task_key: np.ndarray, start: np.ndarray, end: np.ndarray,
                      succeeded: np.ndarray) -> np.ndarray:
    """True for attempts that are copies rather than retries.

    An attempt is a copy when it starts before an earlier attempt of its task has ended
    (they overlap), or after an earlier attempt had already succeeded (old JobTrackers
    logged late copies that were killed on arrival). Otherwise every earlier attempt had
    failed or was killed before it started: a retry, not speculation.

    Attempts are ranked by start within their task; the running maximum of earlier end times
    (and "any earlier success") is carried forward one rank at a time: a loop over ranks,
    each step vectorised over all tasks (tasks rarely have more than a few attempts).
    """
    n = len(start)
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((start, task_key))
    key, s, e, ok = task_key[order], start[order], end[order], succeeded[order]
    new_group = np.r_[True, key[1:] != key[:-1]]
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(n), 0))
    rank = np.arange(n) - group_start
    prev_max_end = np.full(n, -np.inf)
    prev_success = np.zeros(n, dtype=bool)
    for r in range(1, int(rank.max()) + 1):
        idx = np.flatnonzero(rank == r)
        prev_max_end[idx] = np.maximum(prev_max_end[idx - 1], e[idx - 1])
        prev_success[idx] = prev_success[idx - 1] | ok[idx - 1]
    speculative = np.zeros(n, dtype=bool)
    speculative[order] = (s < prev_max_end) | prev_success
    return speculative


def build_table(columns: dict[str, object], known_speculative: np.ndarray | None = None,
                infer: bool = True) -> pa.Table:
    """Assemble the attempt table; ``speculative`` is what is known, OR-ed with
    ``infer_speculative`` unless ``infer`` is False (schedulers that never run two
    attempts of a task at once)."""
    n = len(columns["start"])
    if "input_bytes" not in columns:
        columns["input_bytes"] = np.full(n, np.nan)
    arrays = {name: _arrow(columns[name], ATTEMPT_SCHEMA.field(name).type)
              for name in ATTEMPT_SCHEMA.names if name != "speculative"}
    task_key = pc.binary_join_element_wise(arrays["job"], arrays["task"], "\x00")
    key = np.asarray(pc.dictionary_encode(task_key).indices)
    spec = np.zeros(n, dtype=bool)
    if infer:
        spec = infer_speculative(key, np.asarray(columns["start"], float),
                                 np.asarray(columns["end"], float),
                                 np.asarray(pc.equal(arrays["state"], "SUCCEEDED")))
    if known_speculative is not None:
        spec |= np.asarray(known_speculative, dtype=bool)
    arrays["speculative"] = pa.array(spec)
    return pa.table([arrays[name] for name in ATTEMPT_SCHEMA.names], schema=ATTEMPT_SCHEMA)


def _arrow(values: object, dtype: pa.DataType) -> pa.Array:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        return pc.cast(values, dtype)
    return pa.array(values, type=dtype)


def empty_check(trace: AttemptTrace) -> AttemptTrace:
    if trace.table.num_rows == 0 and trace.censored_attempts == 0:
        raise HedgeError(f"{trace.source}: no task attempts found")
    return trace


def to_workload(trace: AttemptTrace) -> Workload:
    """Turn attempts into a workload: one task per (job, task) that has a successful attempt.

    A task's duration is its (first) successful attempt's ``end - start`` (for Google 2011:
    FINISH minus the last SCHEDULE), its machine that attempt's node (-1 unknown). A job arrives at its
    submit time when the trace has one, else at its first attempt's start; arrivals are
    shifted so the first job arrives at 0, and jobs are ordered by arrival. Tasks without a
    successful attempt are not simulated: those still running at the end of the file are
    counted in ``censored``; ``counts['tasks_without_success']`` counts the tasks with ended
    attempts but none successful (failed or killed, or restarted and still running).
    """
    t = trace.table
    ok = t.filter(pc.equal(t["state"], "SUCCEEDED"))
    task_key = pc.binary_join_element_wise(ok["job"], ok["task"], "\x00")
    _, _, first = unique_inverse(np.asarray(pc.dictionary_encode(task_key).combine_chunks()
                                            .indices))
    ok = ok.take(pa.array(np.sort(first)))
    all_tasks = pc.count_distinct(pc.binary_join_element_wise(t["job"], t["task"], "\x00")).as_py()

    jobs = np.asarray(ok["job"].to_numpy(zero_copy_only=False), dtype=object)
    start = ok["start"].to_numpy()
    duration = ok["end"].to_numpy() - start
    job_ids, job_index, _ = unique_inverse(jobs)
    first_start = np.full(len(job_ids), np.inf)
    np.minimum.at(first_start, job_index, start)
    submit = np.array([trace.submit.get(j, np.nan) for j in job_ids], dtype=np.float64)
    arrival = np.where(np.isnan(submit), first_start, submit)
    arrival -= arrival.min() if len(arrival) else 0.0

    job_order = np.argsort(arrival, kind="stable")
    rank = np.empty_like(job_order)
    rank[job_order] = np.arange(len(job_order))
    task_order = np.lexsort((ok["task"].to_numpy(zero_copy_only=False), rank[job_index]))
    nodes = np.asarray(ok["node"].to_numpy(zero_copy_only=False), dtype=object)
    machine_names, machine, _ = unique_inverse(nodes)
    if len(machine_names) and machine_names[0] == "":  # node unknown -> machine -1
        machine_names, machine = machine_names[1:], machine - 1
    types = np.where(np.asarray(ok["type"].to_numpy(zero_copy_only=False)) == "REDUCE",
                     REDUCE, MAP)
    counts = dict(trace.counts)
    counts["tasks_without_success"] = int(all_tasks - len(ok))
    counts["censored_attempts"] = trace.censored_attempts
    return Workload(
        job_ids=[str(j) for j in job_ids[job_order]],
        arrival=arrival[job_order],
        job_offsets=np.r_[0, np.cumsum(np.bincount(rank[job_index], minlength=len(job_ids)))],
        task_type=types[task_order],
        duration=duration[task_order],
        input_bytes=ok["input_bytes"].to_numpy()[task_order],
        machine=machine[task_order],
        straggler_factor=np.ones(len(ok)),
        censored=trace.censored_tasks,
        source=trace.source,
        machine_names=[str(m) for m in machine_names],
        counts=counts,
    )


@dataclass
class AttemptEvents:
    """Start and end events of attempts, as job-history formats log them (``.jhist``,
    MRv1 JobTracker history), paired into an ``AttemptTrace``.

    A start without an end is a censored attempt. A KILLED or FAILED end without a start is an
    attempt that never ran: Hadoop 3.4.1's AM logged such an end, and no start, for a copy
    killed before it started (CI's MiniYARN job under LATE: attempt 1 of map 2); it held no
    slot, so it is left out and counted
    (``counts['attempts_never_started']``). A successful end without a start, or an end
    before its start, is an error naming ``where`` the end was read.
    """

    source: str
    submit: dict[str, float] = field(default_factory=dict)
    _starts: dict[str, dict] = field(default_factory=dict)
    _ends: list[tuple] = field(default_factory=list)

    def started(self, attempt: str, task: str, kind: str, start: float, node: str,
                speculative: bool = False) -> None:
        self._starts[attempt] = {"task": task, "type": kind, "start": start, "node": node,
                                 "speculative": speculative}

    def ended(self, attempt: str, state: str, end: float, node: str, input_bytes: float,
              where: str) -> None:
        self._ends.append((attempt, state, end, node, input_bytes, where))

    def trace(self) -> AttemptTrace:
        cols: dict[str, list] = {k: [] for k in ("job", "task", "attempt", "node", "type",
                                                 "start", "end", "state", "input_bytes")}
        known_spec: list[bool] = []
        done_tasks: set[str] = set()
        starts = dict(self._starts)
        never_started = 0
        for attempt, state, end, host, size, where in self._ends:
            if attempt not in starts and state != "SUCCEEDED":
                never_started += 1
                continue
            if attempt not in starts:
                raise HedgeError(f"{where}: field 'attemptId': attempt {attempt} succeeded "
                                 "without a STARTED event")
            s = starts.pop(attempt)
            if end < s["start"]:
                raise HedgeError(f"{where}: field 'finishTime': attempt {attempt}: negative "
                                 f"duration ({end - s['start']:.3f} s)")
            task = s["task"]
            job = "job_" + task.split("_", 1)[1].rsplit("_", 2)[0] if task.count("_") >= 4 \
                else ""
            for name, value in (("job", job), ("task", task), ("attempt", attempt),
                                ("node", host or s["node"]), ("type", s["type"]),
                                ("start", s["start"]), ("end", end), ("state", state),
                                ("input_bytes", size)):
                cols[name].append(value)
            known_spec.append(s["speculative"])
            if state == "SUCCEEDED":
                done_tasks.add(task)
        censored_tasks = {s["task"] for s in starts.values()} - done_tasks
        table = build_table(cols, np.array(known_spec, dtype=bool))
        counts = {"attempts_never_started": never_started} if never_started else {}
        return empty_check(AttemptTrace(table, self.source, self.submit, len(starts),
                                        len(censored_tasks), counts))
