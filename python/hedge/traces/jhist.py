"""MapReduce v2 job-history files (``.jhist``, "Avro-Json").

Line 1 is ``Avro-Json``, line 2 the Avro schema, then one JSON event per line:
``{"type": T, "event": {"<record class>": {...}}}``. Used here:

- ``JOB_SUBMITTED``: ``jobid``, ``submitTime``
- ``MAP|REDUCE_ATTEMPT_STARTED``: ``attemptId``, ``taskid``, ``startTime``, ``trackerName``,
  and in Hadoop >= 2.4 ``avataar`` (``SPECULATIVE`` marks a speculative copy)
- ``MAP|REDUCE_ATTEMPT_FINISHED``: ``finishTime``, ``hostname``, ``counters``
  (``HDFS_BYTES_READ`` gives the input size)
- ``MAP|REDUCE_ATTEMPT_FAILED|KILLED``: ``finishTime``, ``hostname``

Times are ms since the epoch. A started attempt without an end event is censored.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hedge.errors import HedgeError, where
from hedge.traces.attempts import AttemptTrace, build_table, empty_check
from hedge.traces.csvio import open_text

_END_STATES = {"FINISHED": "SUCCEEDED", "FAILED": "FAILED", "KILLED": "KILLED"}


def _payload(event: dict) -> dict:
    body = event.get("event")
    if not isinstance(body, dict) or len(body) != 1:
        return {}
    inner = next(iter(body.values()))
    return inner if isinstance(inner, dict) else {}


def _bytes_read(counters: object) -> float:
    if not isinstance(counters, dict):
        return float("nan")
    for group in counters.get("groups") or []:
        for count in group.get("counts") or []:
            if count.get("name") == "HDFS_BYTES_READ":
                return float(count.get("value", "nan"))
    return float("nan")


def _number(info: dict, name: str, path: Path, lineno: int) -> float:
    value = info.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise HedgeError(f"{where(path, lineno, name)}: expected a time in ms, found {value!r}")
    return float(value) / 1000.0


def _events(path: Path):
    """(line number, event dict) for every event line; checks the two header lines."""
    with open_text(path) as f:
        first = f.readline()
        if not first:
            raise HedgeError(f"{path}: empty file, expected a .jhist job history")
        if first.strip() != "Avro-Json":
            raise HedgeError(f"{where(path, 1)}: expected 'Avro-Json', found {first.strip()[:40]!r}")
        f.readline()  # the Avro schema
        for lineno, line in enumerate(f, start=3):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as exc:
                raise HedgeError(f"{where(path, lineno)}: invalid JSON event ({exc.msg})") from exc
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                raise HedgeError(f"{where(path, lineno, 'type')}: expected an event with a type")
            yield lineno, event


def read(path: Path) -> AttemptTrace:
    """All attempts of one job-history file (times in s since the epoch)."""
    started: dict[str, dict] = {}
    ended: list[tuple[str, str, float, str, float, int]] = []
    submit: dict[str, float] = {}
    for lineno, event in _events(path):
        kind, info = event["type"], _payload(event)
        if kind == "JOB_SUBMITTED":
            submit[str(info.get("jobid"))] = _number(info, "submitTime", path, lineno)
            continue
        head, _, tail = kind.partition("_ATTEMPT_")
        if head not in ("MAP", "REDUCE") or not tail:
            continue
        attempt = str(info.get("attemptId", ""))
        if tail == "STARTED":
            started[attempt] = {
                "task": str(info.get("taskid", "")), "type": head,
                "start": _number(info, "startTime", path, lineno),
                "node": str(info.get("trackerName") or ""),
                "speculative": info.get("avataar") == "SPECULATIVE", "line": lineno}
        elif tail in _END_STATES:
            end = _number(info, "finishTime", path, lineno)
            ended.append((attempt, _END_STATES[tail], end, str(info.get("hostname") or ""),
                          _bytes_read(info.get("counters")), lineno))
        else:
            raise HedgeError(f"{where(path, lineno, 'type')}: unknown attempt event {kind!r}")
    cols: dict[str, list] = {k: [] for k in ("job", "task", "attempt", "node", "type", "start",
                                             "end", "state", "input_bytes")}
    known_spec: list[bool] = []
    done_tasks: set[str] = set()
    for attempt, state, end, host, size, lineno in ended:
        if attempt not in started:
            raise HedgeError(f"{where(path, lineno, 'attemptId')}: attempt {attempt} ends "
                             "without a STARTED event")
        s = started.pop(attempt)
        if end < s["start"]:
            raise HedgeError(f"{where(path, lineno, 'finishTime')}: attempt {attempt}: negative "
                             f"duration ({end - s['start']:.3f} s)")
        task = s["task"]
        job = "job_" + task.split("_", 1)[1].rsplit("_", 2)[0] if task.count("_") >= 4 else ""
        for name, value in (("job", job), ("task", task), ("attempt", attempt),
                            ("node", host or s["node"]), ("type", s["type"]),
                            ("start", s["start"]), ("end", end), ("state", state),
                            ("input_bytes", size)):
            cols[name].append(value)
        known_spec.append(s["speculative"])
        if state == "SUCCEEDED":
            done_tasks.add(task)
    censored_tasks = {s["task"] for s in started.values()} - done_tasks
    table = build_table(cols, np.array(known_spec, dtype=bool))
    return empty_check(AttemptTrace(table, str(path), submit, len(started), len(censored_tasks)))
