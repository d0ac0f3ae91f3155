"""Fit the parameters of ``default_workload`` from Google 2011 task_events part files.

Run once; the result is committed as ``hedge/data/google2011_fit.json`` (the trace is not):

    python -m hedge.traces.fit ../shared/data/google_clusterdata_2011_2/task_events/*.csv.gz \\
        -o python/hedge/data/google2011_fit.json

From the completed tasks (FINISH minus last SCHEDULE) of the jobs in the parts, read as one
stream, it estimates (quantile tables are 101 points, p = 0, 0.01, ..., 1):

- ``tasks_per_job``: quantiles of completed tasks per job;
- ``interarrival_s``: quantiles of gaps between successive job arrivals (first SUBMIT);
- ``job_median_s``: quantiles of the per-job median task duration;
- ``job_log_sd``: quantiles, over jobs with >= 2 tasks, of the sd of log duration of the
  job's non-straggler tasks (duration <= 1.5 x job median);
- stragglers are tasks above 1.5 x their job's median, in jobs with >= 2 tasks:
  ``straggler_share`` (of those jobs' tasks, for reference), ``tailing_job_share`` (share of
  those jobs with at least one straggler), ``job_straggler_fraction`` (quantiles, over
  tailing jobs, of the share of their tasks that straggle: stragglers cluster in few jobs)
  and ``straggler_slowdown`` (quantiles of duration / job median of the stragglers).

These marginals are drawn independently by ``default_workload`` (no correlation between a
job's size and its durations is kept: a documented simplification).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from hedge.traces import google
from hedge.traces.attempts import to_workload
from hedge.traces.stats import compute, job_medians
from hedge.traces.workload import Workload

GRID = np.linspace(0.0, 1.0, 101)
STRAGGLER_THRESHOLD = 1.5


def quantile_table(values: np.ndarray) -> dict[str, list[float]]:
    return {"p": [round(float(p), 2) for p in GRID],
            "q": [float(f"{v:.6g}") for v in np.quantile(values, GRID)]}


def fit_workload(w: Workload) -> dict[str, object]:
    """The fitted parameters of one workload (see the module docstring)."""
    d = np.maximum(w.duration, 1e-3)  # a few tasks finish within the same microsecond
    job = w.task_job
    sizes = w.tasks_per_job
    median = job_medians(job, d, w.n_jobs)
    multi = sizes[job] > 1
    slow = multi & (d > STRAGGLER_THRESHOLD * median[job])
    body = multi & ~slow
    per_job_slow = np.bincount(job[slow], minlength=w.n_jobs)
    log_d = np.log(d)
    count = np.bincount(job[body], minlength=w.n_jobs)
    mean_log = np.bincount(job[body], weights=log_d[body], minlength=w.n_jobs)
    mean_sq = np.bincount(job[body], weights=log_d[body] ** 2, minlength=w.n_jobs)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = mean_sq / count - (mean_log / count) ** 2
    log_sd = np.sqrt(np.maximum(var[(sizes > 1) & (count > 0)], 0.0))
    stats = compute(w)
    return {
        "n_jobs": int(w.n_jobs),
        "n_tasks": int(w.n_tasks),
        "span_s": float(w.arrival.max() - w.arrival.min()),
        "tasks_per_job": quantile_table(sizes),
        "interarrival_s": quantile_table(np.diff(np.sort(w.arrival))),
        "job_median_s": quantile_table(median),
        "job_log_sd": quantile_table(log_sd),
        "straggler_share": float(slow.sum() / max(multi.sum(), 1)),
        "tailing_job_share": float((per_job_slow[sizes > 1] > 0).mean()),
        "job_straggler_fraction": quantile_table(
            (per_job_slow / sizes)[(sizes > 1) & (per_job_slow > 0)]),
        "straggler_slowdown": quantile_table(d[slow] / median[job][slow]),
        "sample_stats": {
            "censored_tasks": int(w.censored),
            "straggler_share_mean_rule": stats.straggler_share("mean"),
            "straggler_share_median_rule": stats.straggler_share("median"),
            "tailing_job_share_mean_rule": stats.tailing_share("mean"),
            "tailing_job_share_median_rule": stats.tailing_share("median"),
        },
    }


def fit_google(paths: list[Path]) -> dict[str, object]:
    """Fit from consecutive Google 2011 task_events part files."""
    paths = sorted(Path(p) for p in paths)
    fitted = fit_workload(to_workload(google.read_parts(paths)))
    fitted["source"] = {
        "trace": "Google clusterdata-2011-2 task_events",
        "files": [p.name for p in paths],
        "fitted_by": "python -m hedge.traces.fit (hedge.traces.fit.fit_google)",
    }
    return fitted


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="+", type=Path)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    fitted = fit_google(args.parts)
    args.out.write_text(json.dumps(fitted, indent=1) + "\n")
    print(f"wrote {args.out}: {fitted['n_jobs']} jobs, {fitted['n_tasks']} tasks")


if __name__ == "__main__":
    main()
