"""Which reader a trace file needs, decided from its first bytes; ``load`` and
``read_attempts`` dispatch on it.

Formats (``detect`` names): ``jhist`` (first line ``Avro-Json`` or ``Avro-Binary``),
``mrv1_history`` (Hadoop 0.20/1.x JobTracker history: ``Meta VERSION="1" .``), ``rumen``
(JSON objects, optionally after a ``/* */`` comment), ``google_task_events`` (13 comma-separated fields),
``google_job_events`` (8 fields, job level: not a task trace), ``alibaba2017_batch_task``
(header ``task_create_time, ...``), ``alibaba2018_machine_meta`` / ``_usage`` (node tables:
not task traces), ``swim`` (tab-separated ``jobN`` rows), ``tr`` (hawk/eagle: space-separated
``arrival n_tasks mean d_1..d_n``), ``spark_eventlog`` (first line a JSON
``{"Event": "SparkListener..."}``; a file compressed with one of Spark's codecs is refused
naming it). A directory is read as a Spark rolling event log (``events_N_<app>`` files) or
as consecutive Google 2011 ``task_events`` part files (one stream: attempts crossing a part
boundary are paired).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hedge.errors import HedgeError
from hedge.traces import alibaba, google, jhist, mrv1, rumen, spark, swim, tr
from hedge.traces.attempts import AttemptTrace, to_workload
from hedge.traces.csvio import head_bytes
from hedge.traces.format_names import FORMAT_NAMES
from hedge.traces.workload import Workload

ATTEMPT_FORMATS = {"rumen": rumen.read, "jhist": jhist.read, "mrv1_history": mrv1.read,
                   "google_task_events": google.read, "spark_eventlog": spark.read}
# formats whose workload carries notes of their own (default: attempts.to_workload)
WORKLOAD_OF = {"spark_eventlog": spark.workload}
NODE_TABLES = ("alibaba2018_machine_meta", "alibaba2018_machine_usage")
FORMATS = FORMAT_NAMES  # ATTEMPT_FORMATS names ATTEMPT_FORMAT_NAMES (test_light_names.py)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def google_parts(path: Path) -> list[Path]:
    """The ``part-*`` files of a directory (Google 2011 tables come as numbered parts)."""
    parts = sorted(p for p in path.glob("part-*") if p.is_file())
    if not parts:
        raise HedgeError(f"{path}: a directory without part-* files; expected a trace file or "
                         "a Google 2011 task_events directory")
    return parts


def detect(path: str | Path) -> str:
    """The format name of a trace file, or of the first part file of a directory (see the
    module docstring)."""
    path = Path(path)
    if spark.is_rolling_dir(path):
        return "spark_eventlog"
    if path.is_dir():
        return detect(google_parts(path)[0])
    if not path.is_file():
        raise HedgeError(f"{path}: no such file")
    raw = head_bytes(path)
    spark.refuse_codec(path, raw)
    head = raw.decode("utf-8", errors="replace")
    stripped = head.lstrip()
    if not stripped:
        raise HedgeError(f"{path}: empty file, expected a trace")
    if stripped.startswith(jhist.ENCODINGS):
        return "jhist"
    if mrv1.looks_like(stripped):
        return "mrv1_history"
    if spark.looks_like(stripped):
        return "spark_eventlog"
    if stripped.startswith("{") or stripped.startswith("/*"):
        return "rumen"
    line = stripped.splitlines()[0]
    if line.lower().startswith("task_create_time"):
        return "alibaba2017_batch_task"
    if "\t" in line and line.split("\t")[0].startswith("job"):
        return "swim"
    fields = line.split(",")
    if fields[0].startswith("m_") and len(fields) in (7, 9):
        return NODE_TABLES[0] if len(fields) == 7 else NODE_TABLES[1]
    if len(fields) == 13 and _is_number(fields[0]):
        return "google_task_events"
    if len(fields) == 8 and _is_number(fields[0]) and not _is_number(fields[5] or "x"):
        return "alibaba2017_batch_task"
    if len(fields) == 8 and _is_number(fields[0]):
        return "google_job_events"
    words = line.split()
    if len(words) >= 3 and all(_is_number(w) for w in words[:3]):
        return "tr"
    raise HedgeError(
        f"{path}:1: unrecognised trace format (first line {line[:60]!r}); expected one of: "
        f"{', '.join(FORMATS)}")


def read_attempts(path: str | Path, *, format: str | None = None) -> pa.Table:
    """Attempt-level table (``hedge.traces.attempts.ATTEMPT_SCHEMA``) of a Rumen, .jhist,
    MRv1 history, Google 2011 task_events file or Spark event log; censoring counts are in
    the schema metadata."""
    return read_attempt_trace(path, format=format).with_metadata()


def read_attempt_trace(path: str | Path, *, format: str | None = None) -> AttemptTrace:
    path = Path(path)
    kind = format or detect(path)
    if kind not in ATTEMPT_FORMATS:
        raise HedgeError(f"{path}: format {kind!r} has no task attempts; attempt-level "
                         f"formats are {', '.join(ATTEMPT_FORMATS)}")
    if path.is_dir() and kind != "spark_eventlog":
        if kind != "google_task_events":
            raise HedgeError(f"{path}: directories are read as Google 2011 task_events parts, "
                             f"but the first part looks like {kind}")
        return google.read_parts(google_parts(path))
    return ATTEMPT_FORMATS[kind](path)


def load(path: str | Path, **options: object) -> Workload:
    """Any supported task trace -> Workload.

    Options: ``format`` (skip detection), ``negative`` ("error"/"drop": only Alibaba 2017
    rows can be dropped; in the other formats a negative duration is always an error), SWIM
    synthesis parameters (see ``hedge.traces.swim.read``).
    """
    workload = _load(Path(path), options)
    workload.straggler_truth = False  # a trace never says which of its tasks straggled
    return workload


def _load(path: Path, options: dict) -> Workload:
    kind = str(options.pop("format", None) or detect(path))
    negative = options.pop("negative", "error")
    if kind in NODE_TABLES:
        raise HedgeError(f"{path}: this is an Alibaba 2018 node table ({kind}): it describes "
                         "machines (capacity or utilisation over time), not tasks, so no hedge "
                         "command replays or ranks it; give the trace's batch_task table "
                         "instead")
    if kind == "google_job_events":
        raise HedgeError(f"{path}: Google 2011 job_events has no tasks; load the matching "
                         "task_events part file instead")
    if kind in ATTEMPT_FORMATS or path.is_dir():
        _no_options(path, kind, options)
        return WORKLOAD_OF.get(kind, to_workload)(read_attempt_trace(path, format=kind))
    if kind == "alibaba2017_batch_task":
        return alibaba.read_batch_task(path, negative=str(negative), **options)
    if kind == "swim":
        return swim.read(path, **options)
    if kind == "tr":
        _no_options(path, kind, options)
        return tr.read(path)
    raise HedgeError(f"format {kind!r}: unknown, expected one of {', '.join(FORMATS)}")


def _no_options(path: Path, kind: str, options: dict) -> None:
    if options:
        raise HedgeError(f"{path}: format {kind} takes no options, got {', '.join(options)}")
