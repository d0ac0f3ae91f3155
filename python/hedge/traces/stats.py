"""Straggler statistics of a workload (what ``hedge traces stats`` prints).

For every job j with tasks of observed run time ``d`` (``duration * straggler_factor``):

- ``n_tasks``, ``mean``, ``median``, ``max`` of d;
- stragglers by the mean rule: tasks with ``d > threshold * mean`` (threshold 1.5), and by
  the median rule: ``d > threshold * median``;
- tailing extent: ``max / mean`` and ``max / median`` (NaN when the denominator is 0).

Over the trace: the share of straggler tasks (stragglers / tasks), the share of *tailing
jobs* (jobs with at least one straggler), and quantiles of the per-job straggler fraction
and of both tail extents. Where input sizes exist (finite, > 0), each such task gets a
*slowdown index* ``(d / input) / (job mean d / job mean input)`` over the job's tasks with
sizes: 1 = processes bytes at the job's average rate, 2 = twice as slow.

Everything is vectorised over tasks (bincount / lexsort), no per-job Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hedge.errors import HedgeError
from hedge.model import REDUCE
from hedge.traces.arrays import unique_inverse
from hedge.traces.workload import Workload

QUANTILES = (0.5, 0.9, 0.99, 1.0)


@dataclass
class TraceStats:
    """Per-job arrays plus trace-level figures (see module docstring)."""

    source: str
    threshold: float
    job_ids: list[str]
    n_tasks: np.ndarray
    mean: np.ndarray
    median: np.ndarray
    max: np.ndarray
    stragglers_mean: np.ndarray
    stragglers_median: np.ndarray
    tail_mean: np.ndarray
    tail_median: np.ndarray
    slowdown: np.ndarray  # per task, NaN where the input size is unknown
    censored: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    unit: str = "jobs"  # "job:type groups" with by_type
    notes: list[str] = field(default_factory=list)  # assumptions the figures rest on

    @property
    def total_tasks(self) -> int:
        return int(self.n_tasks.sum())

    def straggler_share(self, rule: str) -> float:
        """Stragglers / tasks over the trace (rule "mean" or "median")."""
        count = self.stragglers_mean if rule == "mean" else self.stragglers_median
        return float(count.sum() / self.total_tasks) if self.total_tasks else float("nan")

    def tailing_share(self, rule: str) -> float:
        """Share of jobs with at least one straggler."""
        count = self.stragglers_mean if rule == "mean" else self.stragglers_median
        return float((count > 0).mean()) if len(count) else float("nan")

    def distributions(self) -> dict[str, dict[str, float]]:
        """Quantiles of per-job straggler fractions, tail extents and the slowdown index."""
        with np.errstate(invalid="ignore", divide="ignore"):
            series = {
                "straggler_fraction_mean_rule": self.stragglers_mean / self.n_tasks,
                "straggler_fraction_median_rule": self.stragglers_median / self.n_tasks,
                "tail_max_over_mean": self.tail_mean,
                "tail_max_over_median": self.tail_median,
                "task_slowdown_index": self.slowdown,
            }
        return {name: _quantiles(values) for name, values in series.items()}

    def summary(self) -> dict[str, object]:
        return {
            "source": self.source,
            "threshold": self.threshold,
            "jobs": len(self.job_ids),
            "unit": self.unit,
            "tasks": self.total_tasks,
            "censored_tasks": self.censored,
            "reader_counts": dict(self.counts),
            "notes": list(self.notes),
            "straggler_share_mean_rule": self.straggler_share("mean"),
            "straggler_share_median_rule": self.straggler_share("median"),
            "tailing_job_share_mean_rule": self.tailing_share("mean"),
            "tailing_job_share_median_rule": self.tailing_share("median"),
            "tasks_with_input_size": int(np.isfinite(self.slowdown).sum()),
            "distributions": self.distributions(),
        }

    def to_dict(self) -> dict[str, object]:
        """Summary plus every job's figures (JSON-ready: NaN becomes None)."""
        jobs = {
            "job_id": list(self.job_ids),
            "n_tasks": self.n_tasks.tolist(),
            "mean": _jsonable(self.mean),
            "median": _jsonable(self.median),
            "max": _jsonable(self.max),
            "stragglers_mean_rule": self.stragglers_mean.tolist(),
            "stragglers_median_rule": self.stragglers_median.tolist(),
            "tail_max_over_mean": _jsonable(self.tail_mean),
            "tail_max_over_median": _jsonable(self.tail_median),
        }
        out = _clean(self.summary())
        out["jobs_detail"] = jobs
        return out


def _quantiles(values: np.ndarray) -> dict[str, float | None]:
    finite = values[np.isfinite(values)]
    out: dict[str, float | None] = {"n": int(len(finite))}
    for q in QUANTILES:
        key = "max" if q == 1.0 else f"p{round(q * 100):d}"
        out[key] = float(np.quantile(finite, q)) if len(finite) else None
    out["mean"] = float(finite.mean()) if len(finite) else None
    return out


def _jsonable(values: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else float(v) for v in values]


def _clean(obj: object) -> object:
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def job_medians(task_job: np.ndarray, values: np.ndarray, n_jobs: int) -> np.ndarray:
    """Median of ``values`` per job (NaN for jobs without tasks), via one lexsort."""
    order = np.lexsort((values, task_job))
    sorted_values = values[order]
    sizes = np.bincount(task_job, minlength=n_jobs)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    out = np.full(n_jobs, np.nan)
    has = sizes > 0
    lo = starts[has] + (sizes[has] - 1) // 2
    hi = starts[has] + sizes[has] // 2
    out[has] = (sorted_values[lo] + sorted_values[hi]) / 2.0
    return out


def compute(workload: Workload, threshold: float = 1.5, by_type: bool = False) -> TraceStats:
    """Straggler statistics of ``workload`` (see the module docstring).

    ``by_type``: treat the maps and the reduces of a job as two groups (``job:MAP``,
    ``job:REDUCE``), so reduces are not compared with maps; default: one group per job.
    """
    if not threshold > 0:
        raise HedgeError(f"threshold={threshold!r}: expected a number > 0")
    workload.require_tasks("to compute statistics on")
    d = workload.duration * workload.straggler_factor
    job, names = workload.task_job, list(workload.job_ids)
    if by_type:
        key = job * 2 + (workload.task_type == REDUCE)
        groups, job, _ = unique_inverse(key)
        names = [f"{workload.job_ids[g // 2]}:{'REDUCE' if g % 2 else 'MAP'}" for g in groups]
    n_jobs = len(names)
    n = np.bincount(job, minlength=n_jobs)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(job, weights=d, minlength=n_jobs) / n
        median = job_medians(job, d, n_jobs)
        peak = np.full(n_jobs, -np.inf)
        np.maximum.at(peak, job, d)
        peak[n == 0] = np.nan
        by_mean = np.bincount(job, weights=d > threshold * mean[job], minlength=n_jobs)
        by_median = np.bincount(job, weights=d > threshold * median[job], minlength=n_jobs)
        tail_mean = np.where(mean > 0, peak / mean, np.nan)
        tail_median = np.where(median > 0, peak / median, np.nan)
    return TraceStats(
        source=workload.source,
        threshold=threshold,
        job_ids=names,
        n_tasks=n,
        mean=mean,
        median=median,
        max=peak,
        stragglers_mean=by_mean.astype(np.int64),
        stragglers_median=by_median.astype(np.int64),
        tail_mean=tail_mean,
        tail_median=tail_median,
        slowdown=slowdown_index(job, d, workload.input_bytes, n_jobs),
        censored=workload.censored,
        counts=dict(workload.counts),
        unit="job:type groups" if by_type else "jobs",
        notes=[*workload.notes, *_grouping_note(workload, by_type)],
    )


def _grouping_note(workload: Workload, by_type: bool) -> list[str]:
    """Say so when a job's maps and reduces are compared with each other."""
    if by_type or not (workload.task_type == REDUCE).any() \
            or not (workload.task_type != REDUCE).any():
        return []
    return ["maps and reduces of a job are compared with each other (one group per job); "
            "a reduce's run time includes its shuffle wait, so --by-type compares like with "
            "like"]


def slowdown_index(job: np.ndarray, elapsed: np.ndarray, size: np.ndarray,
                   n_jobs: int) -> np.ndarray:
    """``(elapsed / size) / (job mean elapsed / job mean size)`` for tasks with a size > 0
    (means over the job's tasks that have one); NaN elsewhere."""
    known = np.isfinite(size) & (size > 0)
    out = np.full(len(elapsed), np.nan)
    if not known.any():
        return out
    k_job = job[known]
    count = np.bincount(k_job, minlength=n_jobs)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_elapsed = np.bincount(k_job, weights=elapsed[known], minlength=n_jobs) / count
        mean_size = np.bincount(k_job, weights=size[known], minlength=n_jobs) / count
        rate = mean_elapsed / mean_size
        out[known] = (elapsed[known] / size[known]) / rate[k_job]
    out[~np.isfinite(out)] = np.nan
    return out


def format_text(stats: TraceStats, top: int = 10) -> str:
    """A readable summary: totals, shares, quantile table, the largest jobs."""
    s = stats.summary()
    lines = [
        f"trace: {s['source']}",
        f"{stats.unit}: {s['jobs']:,}   tasks: {s['tasks']:,}   censored tasks (not counted): "
        f"{s['censored_tasks']:,}",
    ]
    extra = {k: v for k, v in stats.counts.items() if v}
    if extra:
        lines.append("reader: " + ", ".join(f"{k} {v:,}" for k, v in extra.items()))
    lines += [f"note: {note}" for note in stats.notes]
    t = stats.threshold
    lines += [
        "",
        f"stragglers (task > {t:g} x job mean):   {_pct(s['straggler_share_mean_rule'])} of tasks,"
        f" tailing jobs {_pct(s['tailing_job_share_mean_rule'])}",
        f"stragglers (task > {t:g} x job median): "
        f"{_pct(s['straggler_share_median_rule'])} of tasks,"
        f" tailing jobs {_pct(s['tailing_job_share_median_rule'])}",
        "",
        f"{'distribution':32s} {'n':>8s} {'p50':>9s} {'p90':>9s} {'p99':>9s} {'max':>9s}",
    ]
    for name, q in s["distributions"].items():
        cells = " ".join(f"{_num(q[k]):>9s}" for k in ("p50", "p90", "p99", "max"))
        lines.append(f"{name:32s} {q['n']:>8,d} {cells}")
    order = np.argsort(-stats.n_tasks, kind="stable")[:top]
    lines += ["", f"largest {len(order)} jobs:",
              f"{'job':>24s} {'tasks':>7s} {'mean s':>9s} {'median s':>9s} {'max s':>9s} "
              f"{'strag>mean':>10s} {'max/mean':>9s} {'max/median':>10s}"]
    for j in order:
        lines.append(
            f"{stats.job_ids[j][-24:]:>24s} {stats.n_tasks[j]:>7,d} {_num(stats.mean[j]):>9s} "
            f"{_num(stats.median[j]):>9s} {_num(stats.max[j]):>9s} "
            f"{stats.stragglers_mean[j]:>10,d} {_num(stats.tail_mean[j]):>9s} "
            f"{_num(stats.tail_median[j]):>10s}")
    return "\n".join(lines)


def _pct(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    if x is None or not np.isfinite(x):
        return "-"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"
