"""Task-duration distributions for planning: Pareto fits and empirical distributions.

- :func:`fit_pareto`: maximum-likelihood Pareto(t_min, beta) with a Kolmogorov-Smirnov
  goodness-of-fit statistic, warning (:class:`TailWarning`) when the data is not Pareto-like.
- :class:`Empirical`: the step-function distribution of observed durations (survival,
  quantile, truncated mean), the input of the replication search (SPECULATION-MATH.md B4).
- :func:`job_durations`: per-job duration samples of a :class:`~hedge.traces.workload.Workload`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from hedge.errors import HedgeError
from hedge.traces.workload import Workload

# below this KS p-value the fitted Pareto is rejected as a description of the data
PARETO_P_VALUE = 0.01


class TailWarning(UserWarning):
    """The observed durations do not look Pareto-distributed."""


def durations(samples: object, what: str = "samples") -> np.ndarray:
    """Validated 1-D float array of positive, finite durations (HedgeError otherwise)."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    if len(x) == 0:
        raise HedgeError(f"{what}: no durations, expected at least one")
    bad = ~np.isfinite(x) | (x <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise HedgeError(f"{what}[{i}] = {float(x[i])!r}: expected a positive, finite duration")
    return x


@dataclass(frozen=True)
class ParetoFit:
    """Pareto(t_min, beta) fitted to ``n`` durations, with its goodness of fit."""

    t_min: float
    beta: float
    n: int
    ks_statistic: float
    p_value: float

    @property
    def pareto_like(self) -> bool:
        return self.p_value >= PARETO_P_VALUE


def fit_pareto(samples: object, tail: float = 1.0, warn: bool = True) -> ParetoFit:
    """Maximum-likelihood Pareto fit of the largest ``tail`` fraction of the durations.

    MLE: t_min = min x_i, beta = n / sum ln(x_i / t_min). Goodness of fit: the KS statistic
    sup |F_n - F| against the fitted law and its p-value (approximate: the parameters come
    from the same data, which makes the test lenient). Warns with :class:`TailWarning` when
    p < 0.01. ``tail`` < 1 fits only the upper tail (t_min is then that quantile).
    """
    x = durations(samples)
    if not 0 < tail <= 1:
        raise HedgeError(f"tail = {tail!r}: expected a fraction in (0, 1]")
    x = np.sort(x)[int(np.floor((1 - tail) * len(x))):]
    if len(x) < 2:
        raise HedgeError(f"fit_pareto: {len(x)} duration(s) in the tail, expected at least 2")
    t_min = float(x[0])
    spread = float(np.log(x / t_min).sum())
    if spread <= 0:
        raise HedgeError(f"fit_pareto: all {len(x)} durations equal {t_min}, no tail to fit")
    beta = len(x) / spread
    ks = stats.kstest(x, stats.pareto(beta, scale=t_min).cdf)
    fit = ParetoFit(t_min, beta, len(x), float(ks.statistic), float(ks.pvalue))
    if warn and not fit.pareto_like:
        warnings.warn(
            f"durations do not look Pareto (KS D = {fit.ks_statistic:.3g}, p = "
            f"{fit.p_value:.2g} over {fit.n} samples): closed forms assuming Pareto(t_min = "
            f"{t_min:.4g}, beta = {beta:.3g}) may be far off; prefer the empirical distribution",
            TailWarning, stacklevel=2)
    return fit


@dataclass(frozen=True)
class Empirical:
    """The empirical distribution F_hat of observed durations (a step function).

    ``x`` holds the sorted samples; F_hat(y) = #{x_i <= y}/M.
    """

    x: np.ndarray

    @classmethod
    def of(cls, samples: object, what: str = "samples") -> Empirical:
        return cls(np.sort(durations(samples, what)))

    def __len__(self) -> int:
        return len(self.x)

    def survival(self, y: object) -> np.ndarray:
        """F_hat-bar(y) = #{x_i > y}/M, vectorised over y."""
        return 1.0 - np.searchsorted(self.x, y, side="right") / len(self.x)

    def quantile(self, q: float) -> float:
        """F_hat^{-1}(q) = the smallest sample x with F_hat(x) >= q (inverted cdf)."""
        k = int(np.ceil(q * len(self.x) - 1e-9))
        return float(self.x[min(max(k, 1), len(self.x)) - 1])

    def truncated_mean(self, cap: float) -> float:
        """(1/M) sum min(x_i, cap)."""
        return float(np.minimum(self.x, cap).mean())

    def mean(self) -> float:
        return float(self.x.mean())


def job_durations(workload: Workload, min_tasks: int = 1) -> dict[str, np.ndarray]:
    """Positive task durations of each job with at least ``min_tasks`` of them, by job id."""
    out: dict[str, np.ndarray] = {}
    for j, job_id in enumerate(workload.job_ids):
        d = workload.duration[workload.job_tasks(j)]
        d = d[d > 0]
        if len(d) >= min_tasks:
            out[job_id] = d
    return out
