"""What an ApplicationMaster can observe about one job at one speculation scan.

A speculation policy is a function ``decide(snapshot) -> actions``. The simulator builds
snapshots from simulated heartbeats; the live AM (through the Java shim and the control
plane) builds them from real ``TaskAttemptStatus`` events. Policies must only use what is
here: in particular an attempt's *true* progress is never visible, only what its last
received heartbeat said.

Times are seconds on one clock (the AM's). Arrays are numpy, one row per attempt
(struct of arrays), so policies vectorise over attempts instead of looping in Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from hedge.errors import HedgeError

MAP = 0
REDUCE = 1


class AttemptState(IntEnum):
    """Lifecycle of an attempt as the AM sees it."""

    WAITING = 0  # requested, no container yet (start, node unknown)
    RUNNING = 1
    SUCCEEDED = 2
    KILLED = 3
    FAILED = 4


_ATTEMPT_COLUMNS: dict[str, type] = {
    # task index within the job: maps are 0..n_maps-1, reduces n_maps..n_maps+n_reduces-1
    "task": np.int64,
    # attempt id, unique within the job
    "attempt": np.int64,
    # MAP or REDUCE
    "task_type": np.int8,
    # AttemptState
    "state": np.int8,
    # node index in ClusterFacts (-1: not placed yet)
    "node": np.int64,
    # launch time: container assigned and JVM launch begun (NaN while WAITING)
    "start": np.float64,
    # time the first report with progress > 0 was *sent* (NaN: none received yet).
    # The gap to `start` is the JVM start-up delay (Chronos eq. 32).
    "first_progress_time": np.float64,
    # progress carried by that first report
    "first_progress": np.float64,
    # progress in [0, 1] carried by the last *received* heartbeat (0 if none)
    "progress": np.float64,
    # when the last received heartbeat was sent by the task (NaN: none received)
    "report_sent": np.float64,
    # when the AM received it (>= report_sent; the difference is network latency)
    "report_received": np.float64,
    # input bytes the attempt had processed at its last received heartbeat
    "bytes_processed": np.float64,
    # the task's input size in bytes (NaN if unknown)
    "input_bytes": np.float64,
    # True for attempts launched as speculative copies
    "speculative": np.bool_,
}


def strictly_increasing(keys: np.ndarray) -> bool:
    """Whether attempt keys are in strictly increasing order (a live AM sends them so)."""
    return len(keys) < 2 or bool((keys[1:] > keys[:-1]).all())


@dataclass
class AttemptTable:
    """All attempts of one job the AM knows about, one row each (struct of arrays)."""

    task: np.ndarray
    attempt: np.ndarray
    task_type: np.ndarray
    state: np.ndarray
    node: np.ndarray
    start: np.ndarray
    first_progress_time: np.ndarray
    first_progress: np.ndarray
    progress: np.ndarray
    report_sent: np.ndarray
    report_received: np.ndarray
    bytes_processed: np.ndarray
    input_bytes: np.ndarray
    speculative: np.ndarray

    COLUMNS = tuple(_ATTEMPT_COLUMNS)

    def __post_init__(self) -> None:
        n = len(self.task)
        for name, dtype in _ATTEMPT_COLUMNS.items():
            column = np.asarray(getattr(self, name), dtype=dtype)
            if column.shape != (n,):
                raise HedgeError(
                    f"attempt column '{name}' has shape {column.shape}, expected ({n},)"
                )
            setattr(self, name, column)

    def __len__(self) -> int:
        return len(self.task)

    @classmethod
    def of_columns(cls, **columns: np.ndarray) -> AttemptTable:
        """A table of columns already in the model's dtypes and of one length, taken as they
        are: no conversion or shape check (the control plane builds one or two per scan, and
        the checks of ``__post_init__`` cost more than the rest of the construction)."""
        if columns.keys() != _ATTEMPT_COLUMNS.keys():
            raise TypeError(f"AttemptTable.of_columns: columns {sorted(columns)}, expected "
                            f"{sorted(_ATTEMPT_COLUMNS)}")
        table = cls.__new__(cls)
        table.__dict__.update(columns)
        return table

    @classmethod
    def empty(cls) -> AttemptTable:
        return cls(**{name: np.empty(0, dtype) for name, dtype in _ATTEMPT_COLUMNS.items()})

    def take(self, rows: np.ndarray) -> AttemptTable:
        """The rows selected by an index or boolean mask, as a new table."""
        return AttemptTable(**{name: getattr(self, name)[rows] for name in self.COLUMNS})

    @property
    def running(self) -> np.ndarray:
        """Mask of attempts in state RUNNING."""
        return self.state == AttemptState.RUNNING

    @property
    def reported(self) -> np.ndarray:
        """Mask of attempts with at least one received heartbeat."""
        return ~np.isnan(self.report_sent)

    def validate(self, now: float) -> None:
        """Reject data no real AM could have observed (the control plane's API boundary)."""
        bad = (self.progress < 0) | (self.progress > 1) | np.isnan(self.progress)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise HedgeError(
                f"attempt {self.attempt[i]}: field 'progress' = {self.progress[i]!r}, "
                "expected a fraction in [0, 1]"
            )
        checks = (
            ("report_sent", self.report_sent < self.start, "is before the attempt's start"),
            ("report_received", self.report_received < self.report_sent,
             "is before the report was sent"),
            ("report_received", self.report_received > now + 1e-9, "is after the scan time"),
            ("first_progress_time", self.first_progress_time > self.report_sent,
             "is after the last report"),
        )
        for name, mask, what in checks:
            if mask.any():
                i = int(np.flatnonzero(mask)[0])
                raise HedgeError(
                    f"attempt {self.attempt[i]}: field '{name}' = {getattr(self, name)[i]!r} "
                    f"{what} (timestamps must not go backwards)"
                )


@dataclass
class FinishedAttempts:
    """The job's completed tasks as the AM knows them from each task's winning attempt: its
    task index, attempt key (``AttemptTable.attempt``), node, start and end (seconds) and
    the task's input bytes (NaN: unknown), one row per task, in no set order. On YARN the AM
    learns each from the attempt's final status: the shim sends every ended attempt's task,
    node, start and end (wire version 3), also of one that started and ended between two
    scans."""

    task: np.ndarray
    attempt: np.ndarray
    node: np.ndarray
    start: np.ndarray
    end: np.ndarray
    input_bytes: np.ndarray

    def __len__(self) -> int:
        return len(self.task)

    @classmethod
    def empty(cls) -> FinishedAttempts:
        return cls(task=np.empty(0, dtype=np.int64), attempt=np.empty(0, dtype=np.int64),
                   node=np.empty(0, dtype=np.int64), start=np.empty(0), end=np.empty(0),
                   input_bytes=np.empty(0))


@dataclass
class JobFacts:
    """Facts about the job as a whole."""

    job_id: str
    # job start (AM start / submission), seconds
    start: float
    n_maps: int
    n_reduces: int
    # absolute deadline in seconds on the snapshot clock (None: no deadline / QoS)
    deadline: float | None = None
    # run times (s) of successfully completed attempts, per task type
    completed_map_runtimes: np.ndarray = field(default_factory=lambda: np.empty(0))
    completed_reduce_runtimes: np.ndarray = field(default_factory=lambda: np.empty(0))
    # nodes holding each task's input, shape (n_maps + n_reduces, replicas), -1 = padding;
    # empty (0 columns) when unknown. An attempt is data-local iff its node is in its row.
    # Used by the window policy's copy model (a remote copy pays input_bytes / bandwidth).
    input_nodes: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.int64))
    # the completed tasks' winning attempts (node, start, end): filled by the control plane,
    # and by the simulator for a policy that sets ``Policy.reads_finished`` (else empty)
    finished: FinishedAttempts = field(default_factory=FinishedAttempts.empty)

    def completed_runtimes(self, task_type: int) -> np.ndarray:
        return self.completed_map_runtimes if task_type == MAP else self.completed_reduce_runtimes


@dataclass
class ClusterFacts:
    """What the control plane knows about the cluster (one value per node where arrays).

    ``total_slots`` 0 means the slot counts are unknown: the MapReduce AM does not report
    them, so behind a live AM a policy must not read "no free slot" into 0 (the shim caps
    copies with Hadoop's mapreduce.job.speculative.* limits instead).
    """

    total_slots: int
    free_slots: int
    # the AM starts a new attempt in place of every attempt it kills while the task has not
    # succeeded (a stock MapReduce AM, TaskImpl): a kill with no copy of its task in the same
    # answer is held (hedge.policy.limits rule 5) and its attempt runs until its task ends.
    # True behind a live AM; the simulator's ``--cluster kills=free`` sets False
    kills_restart: bool = True
    # utilisation fractions in [0, 1] per node (adaptive threshold's resource term)
    cpu_util: np.ndarray = field(default_factory=lambda: np.empty(0))
    mem_util: np.ndarray = field(default_factory=lambda: np.empty(0))
    # node health level from the node analyzer (0 = weakest level); empty when unknown
    node_level: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # nodes currently blacklisted (no new containers)
    blacklist: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # relative speed estimate per node (1.0 = typical); empty when unknown
    node_speed: np.ndarray = field(default_factory=lambda: np.empty(0))
    # one row per slot (container) of the cluster: its node, and the estimated time it frees
    # up (<= now: free). Window reservation predicts the slots freeing up from these.
    slot_node: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    slot_free_at: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def slots_known(self) -> bool:
        return self.total_slots > 0


@dataclass
class Snapshot:
    """One job at one scan: the only input a policy gets."""

    now: float
    job: JobFacts
    attempts: AttemptTable
    cluster: ClusterFacts
    # True only from a builder that has checked every row with validate_snapshot at a scan
    # time no later than ``now`` (the control plane's session does, row by row as they
    # arrive): validate_snapshot then returns at once instead of checking them again
    validated: bool = False
    # True only from a builder whose reports of a job never go back across its scans and
    # never follow the attempt's end, by construction (the simulator: its reports come from
    # one clock that only moves on): ReportHistory.check, which guards against an AM that
    # breaks that, then returns at once. A builder sets it on every scan of a job or on
    # none (the history remembers only the scans it checks).
    consistent: bool = False
