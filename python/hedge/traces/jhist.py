"""MapReduce v2 job-history files (``.jhist``), in both of Hadoop's encodings.

Line 1 names the encoding, line 2 is the Avro schema of an ``Event``, then the events:

- ``Avro-Json`` (Hadoop 2's default): one JSON event per line,
  ``{"type": T, "event": {"<record class>": {...}}}``; a nullable field's value is wrapped
  as ``{"string": ...}``;
- ``Avro-Binary`` (Hadoop 3's default, ``mapreduce.jobhistory.jhist.format``): the events
  in Avro's binary encoding, one after another (decoded by ``hedge.traces.avro``).

Used here:

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
import math
from collections.abc import Iterator
from pathlib import Path

from hedge.errors import HedgeError, where
from hedge.traces.attempts import AttemptEvents, AttemptTrace
from hedge.traces.avro import AvroError, Schema
from hedge.traces.csvio import open_binary

_END_STATES = {"FINISHED": "SUCCEEDED", "FAILED": "FAILED", "KILLED": "KILLED"}
ENCODINGS = ("Avro-Json", "Avro-Binary")
# The names that wrap a union's value in Avro's JSON encoding, besides records' full names.
_AVRO_TYPE_NAMES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def _plain(value: object) -> object:
    """A union's value without the JSON encoding's ``{"type": value}`` wrapper."""
    if isinstance(value, dict) and len(value) == 1:
        (name, inner), = value.items()
        if name in _AVRO_TYPE_NAMES or "." in name:
            return inner
    return value


def _bytes_read(counters: object, at: str) -> float:
    """The HDFS_BYTES_READ counter; NaN when the counters do not have it."""
    groups = counters.get("groups") if isinstance(counters, dict) else None
    for group in groups if isinstance(groups, list) else []:
        counts = group.get("counts") if isinstance(group, dict) else None
        for count in counts if isinstance(counts, list) else []:
            if isinstance(count, dict) and count.get("name") == "HDFS_BYTES_READ":
                value = _plain(count.get("value"))
                if isinstance(value, bool) or not isinstance(value, int | float) \
                        or not 0 <= value < math.inf:
                    raise HedgeError(f"{at}: field 'counters': HDFS_BYTES_READ = {value!r}, "
                                     "expected a byte count >= 0"[:300])
                return float(value)
    return float("nan")


def _number(info: dict, name: str, at: str) -> float:
    value = info.get(name)
    # json.loads takes NaN and Infinity literals; a time must be a finite number
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise HedgeError(f"{at}: field '{name}': expected a time in ms, found {value!r}")
    return float(value) / 1000.0


def events(path: Path) -> Iterator[tuple[str, str, dict]]:
    """(where, type, payload) of every event, where = ``file:line`` or ``file: byte N``;
    checks the two header lines."""
    with open_binary(path) as f:
        first = f.readline()
        if not first:
            raise HedgeError(f"{path}: empty file, expected a .jhist job history")
        encoding = first.strip().decode("utf-8", errors="replace")
        if encoding not in ENCODINGS:
            raise HedgeError(f"{where(path, 1)}: expected 'Avro-Json' or 'Avro-Binary', "
                             f"found {encoding[:40]!r}")
        schema_line = f.readline()
        if encoding == "Avro-Json":
            yield from _json_events(path, f)
        else:
            header = first + schema_line  # so that offsets are the file's
            yield from _binary_events(path, _schema(path, schema_line), header + f.read(),
                                      len(header))


def _schema(path: Path, line: bytes) -> Schema:
    try:
        return Schema(json.loads(line))
    except (ValueError, KeyError, TypeError) as exc:
        raise HedgeError(f"{where(path, 2)}: expected the Avro schema of a job-history "
                         f"event ({exc})") from exc


def _json_events(path: Path, lines) -> Iterator[tuple[str, str, dict]]:
    for lineno, raw in enumerate(lines, start=3):
        line = raw.decode("utf-8", errors="replace")
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HedgeError(f"{where(path, lineno)}: invalid JSON event ({exc.msg})") from exc
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise HedgeError(f"{where(path, lineno, 'type')}: expected an event with a type")
        payload = _plain(event.get("event"))
        payload = payload if isinstance(payload, dict) else {}
        yield where(path, lineno), event["type"], {k: _plain(v) for k, v in payload.items()}


def _binary_events(path: Path, schema: Schema, data: bytes,
                   pos: int) -> Iterator[tuple[str, str, dict]]:
    while pos < len(data):
        at = f"{path}: byte {pos}"
        try:
            event, pos = schema.read(data, pos)
        except AvroError as exc:
            raise HedgeError(f"{at}: the event does not decode against the file's schema "
                             f"({exc}); the file is truncated or not a job history") from exc
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise HedgeError(f"{at}: expected an event record with a type, found "
                             f"{str(event)[:80]!r}")
        payload = event.get("event")
        yield at, event["type"], payload if isinstance(payload, dict) else {}


def read(path: Path) -> AttemptTrace:
    """All attempts of one job-history file (times in s since the epoch)."""
    events_seen = AttemptEvents(str(path))
    for at, kind, info in events(path):
        if kind == "JOB_SUBMITTED":
            events_seen.submit[str(info.get("jobid"))] = _number(info, "submitTime", at)
            continue
        head, _, tail = kind.partition("_ATTEMPT_")
        if head not in ("MAP", "REDUCE") or not tail:
            continue
        attempt = str(info.get("attemptId", ""))
        if tail == "STARTED":
            events_seen.started(attempt, str(info.get("taskid", "")), head,
                                _number(info, "startTime", at),
                                str(info.get("trackerName") or ""),
                                info.get("avataar") == "SPECULATIVE")
        elif tail in _END_STATES:
            events_seen.ended(attempt, _END_STATES[tail], _number(info, "finishTime", at),
                              str(info.get("hostname") or ""),
                              _bytes_read(info.get("counters"), at), at)
        else:
            raise HedgeError(f"{at}: field 'type': unknown attempt event {kind!r}")
    return events_seen.trace()
