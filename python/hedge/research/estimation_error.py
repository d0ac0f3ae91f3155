"""How well do the runtime estimators predict an attempt's final run time?

Jobs come from the detection study's model (:func:`hedge.research.study.simulate`) with JVM
start-up delays (default uniform in [1, 10] s). At every scan (each second while the job
runs) each running attempt's estimated run time ``ECT - launch`` is compared with its true
run time (start-up included). Reported per estimator: the median absolute error over
the (attempt, scan) pairs where *every* estimator has an estimate (a like-for-like
comparison), the fraction of running (attempt, scan) pairs it could estimate at all, and
its median absolute error over those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hedge.estimate.runtime import fresh_arrays, jvm_arrays, legacy_arrays, rate_arrays
from hedge.research.study import StudyConfig, observe, simulate

ESTIMATORS = ("legacy", "rate", "jvm", "fresh")


@dataclass
class ErrorRow:
    """One configuration's result for one estimator."""

    estimator: str
    tasks: int
    d_avg: float
    progress: str
    jvm_delay: str
    median_abs_error: float  # over the pairs every estimator covers
    coverage: float
    own_median_abs_error: float  # over the pairs this estimator covers


def _estimates(view) -> dict[str, np.ndarray]:
    v = view
    return {
        "legacy": legacy_arrays(v.start, v.progress, v.sent, v.received),
        "rate": rate_arrays(v.start, v.progress, v.sent, v.now),
        "jvm": jvm_arrays(v.progress, v.sent, v.received, v.first_progress_time,
                          v.first_progress),
        "fresh": fresh_arrays(v.start, v.progress, v.sent, v.first_progress_time,
                              v.first_progress, v.now),
    }


def estimation_error(cfg: StudyConfig, reps: int, rng: np.random.Generator) -> list[ErrorRow]:
    """Median absolute run-time error of each estimator on ``reps`` jobs of ``cfg``."""
    hb = simulate(cfg, reps, rng)
    steps = np.arange(int(np.ceil(hb.end.max() - hb.start.min())) + 1)
    times = hb.start.min(-1, keepdims=True) + steps  # (R, T)
    view = observe(hb, times)
    running = view.candidates & (view.now < hb.end[:, None, :])
    truth = (hb.end - hb.start)[:, None, :]
    errors = {name: np.abs(ect - view.start - truth) for name, ect in _estimates(view).items()}
    common = running & np.logical_and.reduce([np.isfinite(e) for e in errors.values()])
    rows = []
    for name, err in errors.items():
        rows.append(ErrorRow(
            estimator=name, tasks=cfg.tasks, d_avg=cfg.d_avg, progress=cfg.progress,
            jvm_delay=cfg.jvm_delay,
            median_abs_error=float(np.median(err[common])) if common.any() else float("nan"),
            coverage=float((np.isfinite(err) & running).sum() / max(1, running.sum())),
            own_median_abs_error=float(np.median(err[running & np.isfinite(err)]))
            if (running & np.isfinite(err)).any() else float("nan"),
        ))
    return rows
