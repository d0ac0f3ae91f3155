"""Hadoop Rumen JSON traces: concatenated job objects (possibly gzip, possibly after a
leading ``/* licence */`` comment).

Each job has ``mapTasks`` / ``reduceTasks``, each task ``attempts`` with ``attemptID``,
``hostName`` (``/rack/host``), ``startTime`` / ``finishTime`` (ms since the epoch) and
``result`` (SUCCESS, KILLED, FAILED), and byte counters (see ``_input_bytes``). An attempt with no result and no finish time (a
crashed or still-running attempt) is censored. ``otherTasks`` (setup/cleanup) are skipped.
Rumen traces are small (one object per job), so they are parsed with the json module.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from hedge.errors import HedgeError, where
from hedge.traces.attempts import AttemptTrace, build_table, empty_check
from hedge.traces.csvio import open_text

_COMMENT = re.compile(r"\A\s*/\*.*?\*/", re.S)
_RESULTS = {"SUCCESS": "SUCCEEDED", "SUCCEEDED": "SUCCEEDED", "KILLED": "KILLED",
            "FAILED": "FAILED"}


def _objects(path: Path) -> list[dict]:
    """Every top-level JSON object; a leading /* */ comment is blanked (lines kept)."""
    with open_text(path) as f:
        text = f.read()
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    decoder, pos, out = json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise HedgeError(f"{where(path, exc.lineno)}: invalid JSON ({exc.msg}), "
                             "expected concatenated Rumen job objects") from exc
        if not isinstance(obj, dict) or "jobID" not in obj:
            raise HedgeError(f"{where(path, text.count(chr(10), 0, pos) + 1, 'jobID')}: "
                             "expected a Rumen job object with a jobID")
        out.append(obj)


def _host(name: object, path: Path, attempt: str) -> str:
    """``/rack/host`` -> ``host``; Rumen escapes dots in anonymised names (``a\\.b``)."""
    return (_text(name, path, attempt, "hostName") or "").replace("\\", "").rstrip("/") \
        .rsplit("/", 1)[-1]


def _text(value: object, path: Path, attempt: str, name: str) -> str | None:
    # a hand-edited or foreign trace may hold a number or a list where Rumen writes a string
    if value is not None and not isinstance(value, str):
        raise HedgeError(f"{where(path, None, name)}: attempt {attempt}: expected a string, "
                         f"found {value!r}"[:300])
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _objects_in(parent: dict, name: str, path: Path, owner: str) -> list[dict]:
    """The list of JSON objects ``parent[name]`` (absent or null: none)."""
    value = parent.get(name) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise HedgeError(f"{where(path, None, name)}: {owner}: expected a list of objects, "
                         f"found {value!r}"[:300])
    return value


def _input_bytes(attempt: dict, task_size: object, kind: str) -> float:
    """Bytes the attempt read: maps ``hdfsBytesRead`` else ``mapInputBytes``, reduces
    ``reduceShuffleBytes``; else the task's ``inputBytes``; NaN when none is >= 0."""
    names = ("hdfsBytesRead", "mapInputBytes") if kind == "MAP" else ("reduceShuffleBytes",)
    for value in [*(attempt.get(n) for n in names), task_size]:
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return float("nan")


def _time(value: object, path: Path, attempt: str, name: str) -> float:
    # JSON readers take NaN and Infinity literals; a time must be a finite number
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise HedgeError(f"{where(path, None, name)}: attempt {attempt}: expected a time in "
                         f"ms, found {value!r}")
    return float(value) / 1000.0


def read(path: Path) -> AttemptTrace:
    """All attempts of a Rumen trace (times in s since the epoch)."""
    jobs = _objects(path)
    if not jobs:
        raise HedgeError(f"{path}: empty file, expected Rumen job objects")
    cols: dict[str, list] = {k: [] for k in
                             ("job", "task", "attempt", "node", "type", "start", "end",
                              "state", "input_bytes")}
    submit: dict[str, float] = {}
    censored_attempts, censored_tasks, counts = 0, 0, {"other_tasks": 0}
    for job in jobs:
        job_id = str(job["jobID"])
        if _is_number(job.get("submitTime")) and 0 < job["submitTime"] < math.inf:
            submit[job_id] = job["submitTime"] / 1000.0
        counts["other_tasks"] += len(_objects_in(job, "otherTasks", path, job_id))
        for kind, name in (("MAP", "mapTasks"), ("REDUCE", "reduceTasks")):
            for task in _objects_in(job, name, path, job_id):
                task_id = str(task.get("taskID", ""))
                done, running = False, 0
                for a in _objects_in(task, "attempts", path, task_id):
                    attempt = str(a.get("attemptID", ""))
                    result = _text(a.get("result"), path, attempt, "result")
                    finish = a.get("finishTime")
                    if result is None and (finish is None or _is_number(finish) and finish <= 0):
                        running += 1
                        continue
                    if result not in _RESULTS:
                        raise HedgeError(f"{where(path, None, 'result')}: attempt {attempt}: "
                                         f"expected SUCCESS, KILLED or FAILED, found {result!r}")
                    start = _time(a.get("startTime"), path, attempt, "startTime")
                    end = _time(finish, path, attempt, "finishTime")
                    if end < start:
                        raise HedgeError(f"{where(path, None, 'finishTime')}: attempt {attempt}:"
                                         f" negative duration ({end - start:.3f} s)")
                    state = _RESULTS[result]
                    done |= state == "SUCCEEDED"
                    for name, value in (("job", job_id), ("task", task_id), ("attempt", attempt),
                                        ("node", _host(a.get("hostName"), path, attempt)), ("type", kind),
                                        ("start", start), ("end", end), ("state", state),
                                        ("input_bytes", _input_bytes(a, task.get("inputBytes"),
                                                                     kind))):
                        cols[name].append(value)
                censored_attempts += running
                censored_tasks += int(running > 0 and not done)
    table = build_table(cols)
    return empty_check(AttemptTrace(table, str(path), submit, censored_attempts,
                                    censored_tasks, counts))
