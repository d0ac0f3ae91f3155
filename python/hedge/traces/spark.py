"""Apache Spark event logs (``spark.eventLog.dir``): one SparkListener event per line, JSON.

A log is one file (possibly gzip), or a rolling log's directory ``eventlog_v2_<app>``
whose ``events_<N>_<app>`` files are read in index order as one stream. Logs compressed
with Spark's own codecs (lz4, lzf, snappy, zstd) are refused with the codec's name.

How the log maps onto hedge's model:

- job = one *stage attempt* (``<app id>/stage_<stage>.<attempt>``), not a Spark job. The
  tasks of a stage run the same code on different partitions, so they are the tasks whose
  run times a straggler is measured against; Spark's own speculation compares exactly
  these (the tasks of one TaskSet). A Spark job chains stages that do different work: one
  "job" of them would make a long stage's every task a straggler of a short one.
  The job arrives at the stage's ``Submission Time`` (else its first task's launch); the
  DAG between stages is not modelled (said in the workload's notes).
- task = a task ``Index`` within the stage attempt; attempt = one ``Task ID`` (named
  ``<index>.<attempt> (TID <id>)`` as Spark's own logs do), on node ``Host``.
- type: ``ShuffleMapTask`` is a MAP (it writes shuffle output, as a map does),
  ``ResultTask`` a REDUCE. A stage holds one type, so it only labels the job (and gets
  ``--cluster shuffle=`` in the simulator).
- state from ``Task End Reason``: ``Success`` SUCCEEDED, ``TaskKilled`` (or ``Killed``)
  KILLED, any other reason FAILED; a ``Resubmitted`` end repeats an attempt that had
  succeeded and whose output was lost later: counted, not a second row.
- speculative: the ``Speculative`` flag, which Spark always logs. It is not inferred from
  overlaps: a Spark retry after lost shuffle output follows a success without being a copy.
- input bytes: ``Input Metrics`` ``Bytes Read`` plus ``Shuffle Read Metrics`` remote and
  local bytes read (NaN when the task has no metrics).

Events used: ``SparkListenerApplicationStart`` (``App ID``, ``App Attempt ID``),
``SparkListenerStageSubmitted`` / ``StageCompleted`` (``Stage Info``), ``SparkListenerTaskStart``
and ``SparkListenerTaskEnd``. ``TaskEnd`` holds the whole attempt (launch and finish time,
host), so starts and ends are not paired as ``AttemptEvents`` pairs them for .jhist (whose
job id is parsed from the task id, which Spark's ids are not): a ``TaskStart`` only tells
which attempts never ended (censored). ``ExecutorAdded`` is not needed: every task names
its host. Times are ms since the epoch; optional fields default as Spark's own
JsonProtocol does (``Stage Attempt ID`` 0, ``Speculative`` and ``Killed`` false).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hedge.errors import HedgeError, where
from hedge.traces.attempts import AttemptTrace, build_table, to_workload
from hedge.traces.csvio import open_binary
from hedge.traces.tr import MAX_DURATION_S
from hedge.traces.workload import Workload

_EVENT = re.compile(r'\{\s*"Event"\s*:\s*"(?:[\w$]+\.)*SparkListener\w*"')
_TYPES = {"ShuffleMapTask": "MAP", "ResultTask": "REDUCE"}
# Spark's codec short names, as the file suffix; magic bytes of the streams Spark writes
_CODECS = ("lz4", "lzf", "snappy", "zstd")
_MAGIC = {b"LZ4Block": "lz4", b"\x82SNAPPY\x00": "snappy", b"\x28\xb5\x2f\xfd": "zstd"}
_ROLLED = re.compile(r"events_(\d+)_")
# An epoch time past the year 5000 is a unit or parsing mistake: taking it would put a stage
# millennia after the others (the simulator would then run an empty clock).
MAX_TIME_MS = 1e14
MODEL_NOTE = ("Spark: each stage attempt is a job (ShuffleMapTasks as maps, ResultTasks as "
              "reduces), arriving at its submission time; the dependencies between stages "
              "are not modelled")


def looks_like(head: str) -> bool:
    """Whether a file's first line is a SparkListener event (for format detection)."""
    return _EVENT.match(head.lstrip()) is not None


def compression_codec(path: Path, head: bytes) -> str | None:
    """The Spark codec a file is compressed with (its magic bytes, or a codec suffix on a
    file that is not JSON), or None."""
    for magic, codec in _MAGIC.items():
        if head.startswith(magic):
            return codec
    suffix = path.name.removesuffix(".inprogress").rsplit(".", 1)[-1]
    if suffix in _CODECS and not head.lstrip().startswith(b"{"):
        return suffix
    return None


def refuse_codec(path: Path, head: bytes) -> None:
    """HedgeError naming the codec when ``head`` (a file's first bytes) is compressed with
    one of Spark's codecs: hedge reads plain and gzip files only."""
    codec = compression_codec(path, head)
    if codec is not None:
        raise HedgeError(f"{path}: compressed with {codec} (as Spark writes event logs with "
                         f"spark.eventLog.compression.codec={codec}), which hedge cannot read; "
                         "give the log uncompressed or gzip-compressed "
                         "(spark.eventLog.compress=false)")


def is_rolling_dir(path: Path) -> bool:
    """A rolling event log's directory (``spark.eventLog.rolling.enabled``)."""
    return path.is_dir() and (path.name.startswith("eventlog_v2_") or any(
        _ROLLED.match(p.name) for p in path.iterdir() if p.is_file()))


def log_files(path: Path) -> list[Path]:
    """The file, or a rolling log's ``events_N`` files from the last compacted one on (as
    Spark's history server reads them)."""
    if not path.is_dir():
        return [path]
    rolled = sorted((int(m.group(1)), p) for p in path.iterdir()
                    if p.is_file() and (m := _ROLLED.match(p.name)))
    if not rolled:
        raise HedgeError(f"{path}: a Spark rolling event log directory without "
                         "events_<N>_<app> files")
    files = [p for _, p in rolled]
    compacted = [k for k, p in enumerate(files) if p.name.endswith(".compact")]
    return files[compacted[-1]:] if compacted else files


def events(path: Path) -> Iterator[tuple[str, dict]]:
    """(``file:line``, event) of every line of the log, checked to be a JSON event."""
    for file in log_files(path):
        try:
            with open_binary(file) as f:
                refuse_codec(file, f.peek(16)[:16])
                for lineno, raw in enumerate(f, start=1):
                    if raw.strip():
                        yield where(file, lineno), _event(raw, file, lineno)
        except (OSError, EOFError) as exc:
            raise HedgeError(f"{file}: cannot read ({exc})") from exc


def _event(raw: bytes, file: Path, lineno: int) -> dict:
    try:
        event = json.loads(raw.rstrip(b"\r\n"))  # a cut line: "unterminated", not "\n"
    except (ValueError, RecursionError) as exc:  # also bytes that are not UTF-8
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        if isinstance(exc, json.JSONDecodeError):  # msg may end in "starting at"
            detail = f"{exc.msg}{'' if exc.msg.endswith(' at') else ' at'} column {exc.colno}"
        raise HedgeError(f"{where(file, lineno)}: invalid JSON ({detail}), expected one "
                         "SparkListener event per line") from exc
    if not isinstance(event, dict) or not isinstance(event.get("Event"), str):
        raise HedgeError(f"{where(file, lineno, 'Event')}: expected a JSON object naming its "
                         f"SparkListener event, found {raw[:60].decode(errors='replace').strip()!r}")
    return event


def _get(obj: dict, name: str, at: str, expected: str) -> object:
    if name not in obj or obj[name] is None:
        raise HedgeError(f"{at}: field '{name}': missing, expected {expected}")
    return obj[name]


def _object(obj: dict, name: str, at: str) -> dict:
    value = _get(obj, name, at, "an object")
    if not isinstance(value, dict):
        raise HedgeError(f"{at}: field '{name}': expected an object, found {value!r:.60}")
    return value


def _int(obj: dict, name: str, at: str, default: int | None = None) -> int:
    if default is not None and obj.get(name) is None:
        return default
    value = _get(obj, name, at, "an integer >= 0")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise HedgeError(f"{at}: field '{name}': expected an integer >= 0, found {value!r:.60}")
    return value


def _number(value: object, limit: float) -> float | None:
    """``value`` as a float in [0, limit], else None (json takes NaN and Infinity literals,
    and integers too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if 0 <= number <= limit else None


def _seconds(obj: dict, name: str, at: str) -> float:
    """A time in ms since the epoch, as seconds."""
    value = _get(obj, name, at, "a time in ms")
    number = _number(value, MAX_TIME_MS)
    if number is None:
        raise HedgeError(f"{at}: field '{name}': expected a time in ms since the epoch, 0 to "
                         f"{MAX_TIME_MS:.0e}, found {value!r:.60}")
    return number / 1000.0


def _flag(obj: dict, name: str, at: str) -> bool:
    value = obj.get(name, False)
    if not isinstance(value, bool):
        raise HedgeError(f"{at}: field '{name}': expected true or false, found {value!r:.60}")
    return value


def _bytes(group: object, names: tuple[str, ...], at: str) -> float | None:
    """The sum of the byte counts ``names`` present in a metrics group, None if none is."""
    if not isinstance(group, dict) or not any(n in group for n in names):
        return None
    total = 0.0
    for name in names:
        if name in group:
            value = _number(group[name], math.inf)
            if value is None:
                raise HedgeError(f"{at}: field '{name}': expected a byte count >= 0, found "
                                 f"{group[name]!r:.60}")
            total += value
    return total


def _input_bytes(event: dict, at: str) -> float:
    metrics = event.get("Task Metrics")
    if metrics is None:
        return math.nan
    if not isinstance(metrics, dict):
        raise HedgeError(f"{at}: field 'Task Metrics': expected an object, found "
                         f"{metrics!r:.60}")
    parts = [_bytes(metrics.get("Input Metrics"), ("Bytes Read",), at),
             _bytes(metrics.get("Shuffle Read Metrics"),
                    ("Remote Bytes Read", "Local Bytes Read"), at)]
    known = [p for p in parts if p is not None]
    return float(sum(known)) if known else math.nan


@dataclass
class _Log:
    """What the events of one log said, gathered in order."""

    source: str
    app: str
    rows: dict[str, list] = field(default_factory=lambda: {
        k: [] for k in ("stage", "task", "attempt", "node", "type", "start", "end", "state",
                        "input_bytes", "speculative")})
    submit: dict[tuple[int, int], float] = field(default_factory=dict)
    running: dict[int, tuple[tuple[int, int], int]] = field(default_factory=dict)
    ended: dict[int, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    task_events: int = 0

    def application(self, event: dict, at: str) -> None:
        app = event.get("App ID")
        if isinstance(app, str) and app:
            attempt = event.get("App Attempt ID")
            self.app = f"{app}_{attempt}" if attempt not in (None, "") else app

    def stage(self, event: dict, at: str) -> None:
        info = _object(event, "Stage Info", at)
        key = (_int(info, "Stage ID", at), _int(info, "Stage Attempt ID", at, default=0))
        if info.get("Submission Time") is not None:
            self.submit[key] = _seconds(info, "Submission Time", at)

    def task_start(self, event: dict, at: str) -> None:
        self.task_events += 1
        info = _object(event, "Task Info", at)
        tid = _int(info, "Task ID", at)
        if tid not in self.ended:
            self.running[tid] = (self._stage_key(event, at), _int(info, "Index", at))

    def task_end(self, event: dict, at: str) -> None:
        self.task_events += 1
        info = _object(event, "Task Info", at)
        tid = _int(info, "Task ID", at)
        reason = _object(event, "Task End Reason", at).get("Reason")
        if reason == "Resubmitted":  # a finished attempt's output was lost: not a new run
            self.counts["resubmitted_ends"] = self.counts.get("resubmitted_ends", 0) + 1
            return
        if tid in self.ended:
            raise HedgeError(f"{at}: field 'Task ID': task {tid} already ended at "
                             f"{self.ended[tid]}")
        task_type = _get(event, "Task Type", at, "ShuffleMapTask or ResultTask")
        if not isinstance(task_type, str) or task_type not in _TYPES:
            raise HedgeError(f"{at}: field 'Task Type': expected ShuffleMapTask or ResultTask, "
                             f"found {task_type!r:.60}")
        start, end = _seconds(info, "Launch Time", at), _seconds(info, "Finish Time", at)
        if not 0 <= end - start <= MAX_DURATION_S:
            raise HedgeError(f"{at}: field 'Finish Time': task {tid} ran {end - start:.3f} s "
                             f"from its Launch Time, expected 0 to {MAX_DURATION_S:.0e} s")
        host = _get(info, "Host", at, "a host name")
        if not isinstance(host, str):
            raise HedgeError(f"{at}: field 'Host': expected a host name, found {host!r:.60}")
        if not isinstance(reason, str):
            raise HedgeError(f"{at}: field 'Reason': expected a task end reason such as "
                             f"'Success', found {reason!r:.60}")
        killed = reason == "TaskKilled" or _flag(info, "Killed", at)
        state = "KILLED" if killed else "SUCCEEDED" if reason == "Success" else "FAILED"
        index, attempt = _int(info, "Index", at), _int(info, "Attempt", at, default=0)
        for name, value in (("stage", self._stage_key(event, at)), ("task", str(index)),
                            ("attempt", f"{index}.{attempt} (TID {tid})"), ("node", host),
                            ("type", _TYPES[task_type]), ("start", start), ("end", end),
                            ("state", state), ("input_bytes", _input_bytes(event, at)),
                            ("speculative", _flag(info, "Speculative", at))):
            self.rows[name].append(value)
        self.ended[tid] = at
        self.running.pop(tid, None)

    @staticmethod
    def _stage_key(event: dict, at: str) -> tuple[int, int]:
        return _int(event, "Stage ID", at), _int(event, "Stage Attempt ID", at, default=0)

    def job(self, key: tuple[int, int]) -> str:
        return f"{self.app}/stage_{key[0]}.{key[1]}"

    def trace(self) -> AttemptTrace:
        if not self.task_events:
            raise HedgeError(f"{self.source}: a Spark event log (application {self.app}) "
                             "without SparkListenerTaskStart or TaskEnd events: the "
                             "application ran no task, so there is nothing to read")
        rows = dict(self.rows)
        stages, speculative = rows.pop("stage"), rows.pop("speculative")
        rows["job"] = [self.job(key) for key in stages]
        done = {(key, task) for key, task, state in zip(stages, rows["task"], rows["state"],
                                                         strict=True) if state == "SUCCEEDED"}
        censored = {(key, str(index)) for key, index in self.running.values()} - done
        table = build_table(rows, np.array(speculative, dtype=bool), infer=False)
        return AttemptTrace(table, self.source, {self.job(k): t for k, t in self.submit.items()},
                            len(self.running), len(censored), dict(self.counts))


def read(path: Path) -> AttemptTrace:
    """Every task attempt of a Spark event log (file or rolling directory; times in s since
    the epoch)."""
    log = _Log(str(path), app=path.name.removeprefix("eventlog_v2_"))
    handlers = {"SparkListenerApplicationStart": log.application,
                "SparkListenerStageSubmitted": log.stage,
                "SparkListenerStageCompleted": log.stage,
                "SparkListenerTaskStart": log.task_start,
                "SparkListenerTaskEnd": log.task_end}
    seen = 0
    for at, event in events(path):
        seen += 1
        handler = handlers.get(event["Event"])
        if handler is not None:
            handler(event, at)
    if not seen:
        raise HedgeError(f"{path}: empty file, expected a Spark event log")
    files = log_files(path)
    if files[0].name.endswith(".compact"):
        log.counts["compacted_files"] = 1
    return log.trace()


def workload(trace: AttemptTrace) -> Workload:
    """``attempts.to_workload`` plus the notes a result on a Spark log must carry."""
    result = to_workload(trace)
    result.notes.append(MODEL_NOTE)
    if trace.censored_attempts:
        result.notes.append(
            f"Spark: {trace.censored_attempts:,} task attempt(s) started without a "
            "SparkListenerTaskEnd (still running when the log ended, or the event was dropped); "
            f"{trace.censored_tasks:,} task(s) with no finished attempt are left out")
    if trace.counts.get("resubmitted_ends"):
        result.notes.append(
            f"Spark: {trace.counts['resubmitted_ends']:,} TaskEnd event(s) with reason "
            "Resubmitted (a finished task's output was lost) repeat an attempt already read "
            "and are skipped")
    if trace.counts.get("compacted_files"):
        result.notes.append(
            "Spark: the rolling log was compacted, and compaction drops the task events of "
            "finished jobs: those tasks are missing")
    return result
