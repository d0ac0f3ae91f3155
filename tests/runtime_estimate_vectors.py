"""Writes tests/data/runtime_estimate_vectors.tsv: the JVM-aware estimate of
hedge.estimate.runtime.jvm_arrays (Chronos eq. 32) on hand-picked and random report histories,
which pytest (tests/unit/test_shared_vectors.py) and JUnit
(org.hedge.shim.HedgeRuntimeEstimatorTest) both check. Regenerate after changing the rule:

    .venv/bin/python -m tests.runtime_estimate_vectors

A live AM knows one time per report, when it arrived (ms): it is both the send and the receive
time here. Progress values are float32 (Hadoop's type). Java rounds to whole ms: the two agree
within TOLERANCE_MS.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hedge.estimate.runtime import jvm_arrays
from tests.vector_files import render, write

VECTORS = Path(__file__).resolve().parent / "data" / "runtime_estimate_vectors.tsv"
TOLERANCE_MS = 1.0
HEADER = f"""\
# JVM-aware runtime estimate shared by pytest (tests/unit/test_shared_vectors.py) and JUnit
# (org.hedge.shim.HedgeRuntimeEstimatorTest); written by tests/runtime_estimate_vectors.py from
# hedge.estimate.runtime.jvm_arrays. One attempt per line, tab-separated; lists comma-separated:
# launch (ms), the report arrival times (ms) and progress values (float32), the scan time (ms),
# and the estimated run time, ECT - launch (ms, nan: no estimate yet); agree within
# {TOLERANCE_MS:g} ms.
"""
COLUMNS = ("start", "report_ms", "progress", "now", "runtime_ms")


@dataclass
class Case:
    start: int
    report_ms: list[int]
    progress: list[float]
    now: int

    def __post_init__(self) -> None:
        self.progress = [float(np.float32(p)) for p in self.progress]  # Hadoop's float

    def runtime_ms(self) -> float:
        """jvm_arrays' ECT - launch, in ms (seconds on the Python side)."""
        p = np.asarray(self.progress)
        t = np.asarray(self.report_ms, float) / 1000.0
        if not len(p):
            return float("nan")
        moved = np.flatnonzero(p > 0)
        t_fp = t[moved[0]] if len(moved) else np.nan
        p_fp = p[moved[0]] if len(moved) else np.nan
        ect = jvm_arrays(np.array([p[-1]]), np.array([t[-1]]), np.array([t[-1]]),
                         np.array([t_fp]), np.array([p_fp]))[0]
        return float(ect * 1000.0 - self.start)


def line(case: Case) -> str:
    fields = [case.start, ",".join(str(t) for t in case.report_ms),
              ",".join(repr(p) for p in case.progress), case.now, repr(case.runtime_ms())]
    return "\t".join(str(f) for f in fields)


def hand_cases() -> list[Case]:
    return [
        Case(0, [5000, 15000], [0.1, 0.5], 15000),  # JVM up after 5 s: 27.5 s
        Case(0, [5000, 15000], [0.1, 0.5], 20000),  # 5 s later, no report: still 27.5 s
        Case(1000, [], [], 9000),  # no report: none
        Case(1000, [3000, 6000], [0.0, 0.0], 9000),  # no progress yet: none
        Case(1000, [3000], [0.2], 9000),  # one progress report: no rate yet
        Case(1000, [3000, 6000, 9000], [0.0, 0.3, 0.3], 9000),  # no gain since the first
        Case(1000, [3000, 6000, 9000], [0.0, 0.3, 0.6], 12000),  # first progress at 6 s
        Case(1000, [3000, 6000, 9000], [0.1, 0.5, 1.0], 12000),  # done: its last report
        Case(0, [1000, 2000], [0.001, 0.002], 2000),  # slow: 1000 s
        Case(5, [7, 8], [0.25, 0.75], 8),  # fast, whole ms
    ]


def random_cases(n: int, seed: int = 17) -> list[Case]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        start = int(rng.integers(0, 10_000_000))
        k = int(rng.integers(0, 8))
        times = np.cumsum(rng.integers(1, 60_000, k)) + start
        progress = np.sort(np.where(rng.random(k) < 0.15, 0.0, rng.random(k)))
        if k and rng.random() < 0.1:
            progress[-1] = 1.0
        now = int(times[-1] if k else start) + int(rng.integers(0, 30_000))
        out.append(Case(start, times.tolist(), progress.tolist(), now))
    return out


def text() -> str:
    return render(HEADER, COLUMNS, line, hand_cases() + random_cases(300))


if __name__ == "__main__":
    write(VECTORS, text())
