"""Trace reader throughput: hedge's Google 2011 task_events reader (pyarrow CSV + numpy
pairing) against a plain Python baseline measured in the same run (csv module, one dict
per task: the per-row approach the readers avoid), plus generator throughput.

    .venv/bin/python tests/bench/bench_traces.py
"""

from __future__ import annotations

import csv
import gzip
import time
from pathlib import Path

from hedge.traces import load
from hedge.traces.synthetic import default_workload, generate

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
GOOGLE = DATA / "google_clusterdata_2011_2/task_events/part-00000-of-00500.csv.gz"


def python_baseline(path: Path) -> int:
    """Pair SCHEDULE and FINISH per task with Python dicts; returns finished tasks."""
    started: dict[tuple[str, str], int] = {}
    finished = 0
    with gzip.open(path, "rt") as f:
        for row in csv.reader(f):
            key, kind, t = (row[2], row[3]), int(row[5]), int(row[0])
            if kind == 1:
                started[key] = t
            elif kind in (2, 3, 4, 5, 6) and key in started:
                finished += kind == 4 and started.pop(key) > 0
    return finished


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def main() -> None:
    if GOOGLE.exists():
        rows = 450_146  # PROVENANCE.md
        _, base = timed(python_baseline, GOOGLE)
        w, fast = timed(load, GOOGLE)
        print(f"google task_events part-00000 ({rows:,} events): python csv baseline "
              f"{base:.2f} s ({rows / base:,.0f} events/s); hedge load {fast:.2f} s "
              f"({rows / fast:,.0f} events/s, {w.n_tasks:,} tasks); speed-up {base / fast:.1f}x")
    else:
        print(f"skipped Google reader bench: {GOOGLE} not found")
    w, t = timed(generate, "jobs=1000,tasks=1000,dist=pareto:1.5,straggler_ratio=0.1", seed=0)
    print(f"synthetic generate: {w.n_tasks:,} tasks in {t:.2f} s ({w.n_tasks / t:,.0f} tasks/s)")
    w, t = timed(default_workload, 0, n_jobs=30_000)
    print(f"default_workload: {w.n_jobs:,} jobs, {w.n_tasks:,} tasks in {t:.2f} s "
          f"({w.n_tasks / t:,.0f} tasks/s)")


if __name__ == "__main__":
    main()
