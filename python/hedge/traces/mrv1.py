"""MRv1 (Hadoop 0.20 / 1.x) JobTracker job-history files.

One record per line (a value may span lines, e.g. an error's stack trace), each a record
type followed by ``KEY="value"`` pairs and a closing `` .``; ``.``, ``"``, ``=`` and ``\\``
inside values are escaped with a backslash:

    Meta VERSION="1" .
    Job JOBID="job_200904211745_0002" ... SUBMIT_TIME="1240335962848" .
    MapAttempt TASK_TYPE="MAP" TASKID="task_..." TASK_ATTEMPT_ID="attempt_..."
        START_TIME="1240336753855" TRACKER_NAME="tracker_host:localhost/127.0.0.1:52187" .
    MapAttempt TASK_TYPE="MAP" ... TASK_STATUS="SUCCESS" FINISH_TIME="..."
        HOSTNAME="/rack/host" COUNTERS="{(group)(Group)[(HDFS_BYTES_READ)(...)(1234)]...}" .

Used here: ``Job`` ``SUBMIT_TIME``; ``MapAttempt``/``ReduceAttempt`` of ``TASK_TYPE`` MAP or
REDUCE (setup and cleanup attempts are not tasks of the job): ``START_TIME`` and
``TRACKER_NAME`` on the start record, ``TASK_STATUS`` (SUCCESS, FAILED, KILLED),
``FINISH_TIME``, ``HOSTNAME`` and ``HDFS_BYTES_READ`` on the end record. Times are ms since
the epoch. MRv1 does not mark speculative attempts; they are inferred (two attempts of a task
running at once). Lines between records that are not records (``!!FILE=...!!`` separators
and ``_conf.xml`` contents of concatenated history folders) are skipped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

from hedge.errors import HedgeError, where
from hedge.traces.attempts import AttemptEvents, AttemptTrace
from hedge.traces.csvio import open_text

RECORD_TYPES = ("Meta", "Job", "Task", "MapAttempt", "ReduceAttempt")
_PAIR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"', re.DOTALL)
_RECORD = re.compile(r'(\w+)((?: \w+="(?:[^"\\]|\\.)*")*) \.', re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_BYTES_READ = re.compile(r"\[\(HDFS_BYTES_READ\)\([^)]*\)\((\d+)\)\]")
_END_STATES = {"SUCCESS": "SUCCEEDED", "FAILED": "FAILED", "KILLED": "KILLED"}


def looks_like(head: str) -> bool:
    """Whether the first bytes of a file are an MRv1 history (for format detection)."""
    return re.search(r'^(Meta VERSION="\d+" \.|Job JOBID=")', head, re.MULTILINE) is not None


def records(path: Path) -> Iterator[tuple[int, str, dict[str, str]]]:
    """(line number, record type, unescaped fields) of every record in the file."""
    with open_text(path) as f:
        buffer, first = "", 0
        for lineno, line in enumerate(f, start=1):
            if not buffer:
                if line.split(" ", 1)[0] not in RECORD_TYPES:
                    continue  # a separator or conf.xml line between records
                first = lineno
            buffer += line
            stripped = buffer.rstrip("\r\n")
            if not stripped.endswith(" ."):
                continue
            match = _RECORD.fullmatch(stripped)
            if match is None:
                if stripped.count('"') % 2:  # inside a value that goes on
                    continue
                raise HedgeError(f"{where(path, first)}: expected a record 'Type KEY=\"value\" "
                                 f"... .', found {stripped[:60]!r}")
            fields = {key: _ESCAPE.sub(r"\1", value)
                      for key, value in _PAIR.findall(match.group(2))}
            yield first, match.group(1), fields
            buffer = ""
        if buffer:
            raise HedgeError(f"{where(path, first)}: the file ends inside a record")


def _ms(fields: dict[str, str], name: str, path: Path, lineno: int) -> float:
    text = fields.get(name, "")
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise HedgeError(f"{where(path, lineno, name)}: expected a time in ms, found {text!r}")
    return value / 1000.0


def _host(fields: dict[str, str]) -> str:
    """HOSTNAME '/rack/host' or TRACKER_NAME 'tracker_host:...' -> host."""
    hostname = fields.get("HOSTNAME", "")
    if hostname:
        return hostname.rsplit("/", 1)[-1]
    tracker = fields.get("TRACKER_NAME", "").removeprefix("tracker_")
    return tracker.split(":", 1)[0]


def _bytes_read(fields: dict[str, str]) -> float:
    found = _BYTES_READ.search(fields.get("COUNTERS", ""))
    return float(found.group(1)) if found else math.nan


def read(path: Path) -> AttemptTrace:
    """All map and reduce attempts of an MRv1 history file (times in s since the epoch)."""
    events = AttemptEvents(str(path))
    for lineno, kind, fields in records(path):
        if kind == "Job" and "SUBMIT_TIME" in fields:
            events.submit[fields.get("JOBID", "")] = _ms(fields, "SUBMIT_TIME", path, lineno)
        if kind not in ("MapAttempt", "ReduceAttempt"):
            continue
        task_type = fields.get("TASK_TYPE", "")
        if task_type not in ("MAP", "REDUCE"):
            continue  # SETUP and CLEANUP attempts
        attempt = fields.get("TASK_ATTEMPT_ID", "")
        if "START_TIME" in fields:
            events.started(attempt, fields.get("TASKID", ""), task_type,
                           _ms(fields, "START_TIME", path, lineno), _host(fields))
        elif "TASK_STATUS" in fields:
            status = fields["TASK_STATUS"]
            if status not in _END_STATES:
                raise HedgeError(f"{where(path, lineno, 'TASK_STATUS')}: expected SUCCESS, "
                                 f"FAILED or KILLED, found {status!r}")
            events.ended(attempt, _END_STATES[status], _ms(fields, "FINISH_TIME", path, lineno),
                         _host(fields), _bytes_read(fields), where(path, lineno))
    return events.trace()
