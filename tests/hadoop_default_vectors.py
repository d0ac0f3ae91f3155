"""Writes tests/data/hadoop_default_vectors.tsv: which tasks Hadoop's default rule copies
(hedge.policy.baseline.HadoopDefault), on hand-picked and random cases, which pytest
(tests/unit/test_shared_vectors.py) and JUnit (org.hedge.shim.HadoopDefaultFallbackTest, the
shim's fallback on Hadoop's LegacyTaskRuntimeEstimator formulas) both check. Regenerate after
changing the rule:

    .venv/bin/python -m tests.hadoop_default_vectors

Times are whole milliseconds (seconds / 1000 in Python); progress values are float32 (Hadoop's
type). Java truncates estimates to whole ms, so a random case is kept only when no comparison
of the rule is within 2 ms of a tie.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hedge.model import MAP, REDUCE, AttemptState, AttemptTable, ClusterFacts, JobFacts, Snapshot
from hedge.policy.baseline import HadoopDefault
from tests.vector_files import render, write

VECTORS = Path(__file__).resolve().parent / "data" / "hadoop_default_vectors.tsv"
HEADER = """\
# Hadoop's default rule, shared by pytest (tests/unit/test_shared_vectors.py) and JUnit
# (org.hedge.shim.HadoopDefaultFallbackTest); written by tests/hadoop_default_vectors.py from
# hedge.policy.baseline.HadoopDefault. One case per line, tab-separated; lists comma-separated:
# now_ms, slowtaskthreshold, minimum-allowed-tasks, speculative-cap-total-tasks,
# speculative-cap-running-tasks, n_maps, n_reduces, completed map and reduce run times (ms),
# then per attempt: task (maps 0..n_maps-1, then reduces), running 1 / waiting copy 0, start
# (ms), progress (float32), report received (ms); then the map and the reduce copied (-1: none).
# Attempts all have progress > 0: Hadoop's estimate for progress 0 is elapsed / 0.0001,
# hedge's none (not covered here).
"""
COLUMNS = ("now", "std_k", "minimum", "cap_total", "cap_running", "n_maps", "n_reduces",
           "map_done", "reduce_done", "task", "running", "start", "progress", "received",
           "map_copy", "reduce_copy")


@dataclass
class Case:
    now: int
    n_maps: int
    n_reduces: int
    map_done: list[int]
    reduce_done: list[int]
    task: list[int]
    running: list[bool]
    start: list[int]
    progress: list[float]
    received: list[int]
    std_k: float = 1.0
    minimum: int = 10
    cap_total: float = 0.01
    cap_running: float = 0.1
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.progress = [_f32(p) for p in self.progress]  # Hadoop's progress is a float

    def policy(self) -> HadoopDefault:
        return HadoopDefault(slow_task_std=self.std_k, minimum_allowed=self.minimum,
                             proportion_total=self.cap_total,
                             proportion_running=self.cap_running)

    def snapshot(self) -> Snapshot:
        n = len(self.task)
        task = np.asarray(self.task, np.int64)
        run = np.asarray(self.running, bool)
        ms = np.where(run, 1.0, np.nan) / 1000.0
        cols = dict(
            task=task, attempt=np.arange(n), task_type=np.where(task < self.n_maps, MAP, REDUCE),
            state=np.where(run, AttemptState.RUNNING, AttemptState.WAITING).astype(np.int8),
            node=np.where(run, np.arange(n), -1), start=np.asarray(self.start) * ms,
            first_progress_time=np.full(n, np.nan), first_progress=np.full(n, np.nan),
            progress=np.where(run, self.progress, 0.0), report_sent=np.asarray(self.received) * ms,
            report_received=np.asarray(self.received) * ms, bytes_processed=np.zeros(n),
            input_bytes=np.full(n, np.nan), speculative=np.zeros(n, bool))
        job = JobFacts("job", 0.0, self.n_maps, self.n_reduces,
                       completed_map_runtimes=np.asarray(self.map_done, float) / 1000.0,
                       completed_reduce_runtimes=np.asarray(self.reduce_done, float) / 1000.0)
        return Snapshot(now=self.now / 1000.0, job=job, attempts=AttemptTable(**cols),
                        cluster=ClusterFacts(total_slots=100, free_slots=10))

    def expected(self) -> tuple[int, int]:
        chosen = self.policy().decide(self.snapshot()).speculate_task.tolist()
        maps = [t for t in chosen if t < self.n_maps]
        reduces = [t for t in chosen if t >= self.n_maps]
        return (maps[0] if maps else -1), (reduces[0] if reduces else -1)

    def near_tie(self) -> bool:
        """A comparison within 2 ms of a tie, or a cap within 1e-6 of an integer: Java's
        whole-ms truncation could decide it the other way."""
        per_task = np.bincount(self.task, minlength=self.n_maps + self.n_reduces)
        for lo, hi, done in ((0, self.n_maps, self.map_done), (self.n_maps,
                             self.n_maps + self.n_reduces, self.reduce_done)):
            rows = [i for i, t in enumerate(self.task) if lo <= t < hi and self.running[i]]
            if not done:
                continue
            mean, std = float(np.mean(done)), float(np.std(done))
            gains = []
            for i in rows:
                if per_task[self.task[i]] != 1:
                    continue
                runtime = (self.received[i] - self.start[i]) / self.progress[i]
                end, again = self.start[i] + runtime, self.now + mean
                if min(abs(runtime - mean - self.std_k * std), abs(end - self.now),
                       abs(end - again)) <= 2:
                    return True
                gains.append(end - again)
            gains.sort()
            if len(gains) > 1 and gains[-1] - gains[-2] <= 2:
                return True
        return False


def _ints(values: list) -> str:
    return ",".join(str(int(v)) for v in values)


def line(case: Case) -> str:
    map_copy, reduce_copy = case.expected()
    fields = [case.now, repr(case.std_k), case.minimum, repr(case.cap_total),
              repr(case.cap_running), case.n_maps, case.n_reduces, _ints(case.map_done),
              _ints(case.reduce_done), _ints(case.task), _ints(case.running),
              _ints(case.start), ",".join(repr(p) for p in case.progress),
              _ints(case.received), map_copy, reduce_copy]
    return "\t".join(str(f) for f in fields)


def hand_cases() -> list[Case]:
    return [
        # the straggler past mean + std is copied (est. 40 s; the other 8.9 s)
        Case(9000, 6, 0, [10000] * 3, [], [3, 4], [True, True], [0, 0], [0.2, 0.9],
             [8000, 8000]),
        # threshold: mean 10 s, std 8 s, run time exactly 18 s is not past it; 18.016 s is
        Case(4500, 6, 0, [2000, 18000], [], [3], [True], [0], [0.25], [4500]),
        Case(4504, 6, 0, [2000, 18000], [], [3], [True], [0], [0.25], [4504]),
        # slowtaskthreshold 0.5: threshold 14 s
        Case(4500, 6, 0, [2000, 18000], [], [3], [True], [0], [0.25], [4500], std_k=0.5),
        # Hadoop judges a type from 5% of its tasks completed: 1 of 21 no, 1 of 20 yes
        Case(9000, 21, 0, [10000], [], [3], [True], [0], [0.125], [8000]),
        Case(9000, 20, 0, [10000], [], [3], [True], [0], [0.125], [8000]),
        # one map and one reduce per scan, largest gain first
        Case(9000, 6, 2, [10000, 10000], [10000], [3, 4, 7], [True] * 3, [0, 0, 0],
             [0.2, 0.1, 0.1], [8000] * 3),
        # a task with a copy running or waiting is no candidate; good and too-late estimates
        Case(20000, 6, 0, [10000, 10000], [], [3, 3, 4, 5, 1, 1],
             [True, True, True, True, True, False], [0, 5000, 0, 0, 0, 0],
             [0.2, 0.1, 0.5, 0.25, 0.1, 0.0], [8000, 8000, 8000, 2000, 8000, 0]),
        # equal gains: the first attempt listed
        Case(9000, 6, 0, [10000] * 3, [], [2, 4], [True, True], [0, 0], [0.2, 0.2],
             [8000, 8000]),
        # the cap per type is truncated: int(0.25 x 10 running) = 2 copies running: none;
        # minimum 3: one more
        Case(9000, 20, 0, [10000] * 2, [], [0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9],
             [True] * 12, [0, 4000, 0, 4000] + [0] * 8, [0.2, 0.1, 0.2, 0.1] + [0.1] * 8,
             [8000] * 12, minimum=0, cap_running=0.25),
        Case(9000, 20, 0, [10000] * 2, [], [0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9],
             [True] * 12, [0, 4000, 0, 4000] + [0] * 8, [0.2, 0.1, 0.2, 0.1] + [0.1] * 8,
             [8000] * 12, minimum=3, cap_running=0.25),
        # no completion of a type: nothing of it
        Case(9000, 6, 2, [10000], [], [3, 7], [True, True], [0, 0], [0.1, 0.1], [8000, 8000]),
    ]


def _f32(x: float) -> float:
    return float(np.float32(x))


def random_case(rng: np.random.Generator) -> Case:
    n_maps, n_reduces = int(rng.integers(1, 60)), int(rng.integers(0, 8))
    n = n_maps + n_reduces
    now = int(rng.integers(20_000, 400_000))
    done = [rng.integers(1000, 60_000, int(rng.integers(0, k + 1))).tolist()
            for k in (n_maps, n_reduces)]
    tasks = rng.choice(n, size=min(n, int(rng.integers(1, 25))), replace=False).tolist()
    task, running, start, progress, received = [], [], [], [], []
    for t in tasks:
        for _ in range(1 if rng.random() < 0.8 else 2):
            run = rng.random() < 0.9
            s = int(rng.integers(0, now - 1000))
            r = int(rng.integers(s + 1, now + 1))
            task.append(t)
            running.append(run)
            start.append(s if run else 0)
            progress.append(_f32(rng.uniform(0.01, 0.99)) if run else 0.0)
            received.append(r if run else 0)
    return Case(now, n_maps, n_reduces, done[0], done[1], task, running, start, progress,
                received, std_k=float(rng.choice([0.5, 1.0, 1.5, 2.0])),
                minimum=int(rng.choice([0, 1, 2, 10])),
                cap_total=float(rng.choice([0.01, 0.05, 0.1, 0.3])),
                cap_running=float(rng.choice([0.1, 0.25, 0.3, 0.5])))


def random_cases(n: int, seed: int = 17) -> list[Case]:
    rng = np.random.default_rng(seed)
    out: list[Case] = []
    while len(out) < n:
        case = random_case(rng)
        if not case.near_tie():
            out.append(case)
    return out


def text() -> str:
    return render(HEADER, COLUMNS, line, hand_cases() + random_cases(300))


if __name__ == "__main__":
    write(VECTORS, text())
