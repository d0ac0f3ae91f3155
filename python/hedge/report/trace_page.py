"""``hedge traces stats TRACE --out DIR``: the statistics as a page of figures
(``DIR/report.html``, PNGs beside it, the data behind each in ``figures.json``).

- task durations: CDF of every task's observed run time;
- tail extent: CDF over jobs of max / median task time (1 = no tail);
- stragglers per job: histogram of the share of a job's tasks above threshold x its median
  (jobs with at least two tasks: a lone task cannot straggle behind its job);
- slowdown index: histogram over tasks with an input size (absent when none has one).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from hedge.report.page import finish, write_page
from hedge.traces.stats import TraceStats, format_text
from hedge.traces.workload import Workload


def _cdf(values: np.ndarray, path: Path, xlabel: str, ylabel: str, title: str) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    x = np.sort(values[np.isfinite(values)])
    if len(x):
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post")
        ax.set_xscale("symlog", linthresh=1.0)
    else:
        ax.text(0.5, 0.5, "no finite values", ha="center", transform=ax.transAxes)
    info = finish(fig, ax, xlabel, ylabel, title, path, legend=False)
    quantiles = np.quantile(x, [0.5, 0.9, 0.99, 1.0]).tolist() if len(x) else []
    return {**info, "n": int(len(x)), "p50_p90_p99_max": quantiles}


def _histogram(values: np.ndarray, path: Path, xlabel: str, title: str, bins: int = 40) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    x = values[np.isfinite(values)]
    counts: list[int] = []
    if len(x):
        counts = ax.hist(x, bins=bins)[0].astype(int).tolist()
    else:
        ax.text(0.5, 0.5, "no finite values", ha="center", transform=ax.transAxes)
    ax.set_ylim(bottom=0)
    info = finish(fig, ax, xlabel, "count", title, path, legend=False)
    return {**info, "n": int(len(x)), "counts": counts}


def write_trace_report(out: Path, workload: Workload, stats: TraceStats) -> Path:
    """Write the page of ``stats`` (computed on ``workload``) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    observed = workload.duration * workload.straggler_factor
    multi = stats.n_tasks >= 2
    t = stats.threshold
    figures = {
        "task_durations.png": _cdf(observed, out / "task_durations.png", "task time (s)",
                                   "fraction of tasks", "Task durations (CDF)"),
        "tail_extent.png": _cdf(stats.tail_median, out / "tail_extent.png",
                                "slowest task / job median", "fraction of jobs",
                                f"Tail extent per {stats.unit.rstrip('s')} (CDF)"),
        "stragglers_per_job.png": _histogram(
            stats.stragglers_median[multi] / stats.n_tasks[multi],
            out / "stragglers_per_job.png", f"share of tasks > {t:g} x median",
            f"Stragglers per {stats.unit.rstrip('s')} (>= 2 tasks)"),
    }
    if np.isfinite(stats.slowdown).any():
        figures["slowdown_index.png"] = _histogram(
            stats.slowdown, out / "slowdown_index.png", "slowdown index (1 = the job's rate)",
            "Slowdown index of tasks with an input size")
    notes = [f"trace: {stats.source}", *(f"note: {n}" for n in stats.notes)]
    return write_page(out, "hedge traces stats", notes, format_text(stats), figures)
