"""Pareto MLE, goodness of fit and empirical distributions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hedge.analysis.fitting import Empirical, TailWarning, fit_pareto, job_durations
from hedge.errors import HedgeError
from hedge.traces.workload import Workload


def test_mle_by_hand():
    x = [1.0, np.e, np.e**2]
    fit = fit_pareto(x, warn=False)
    assert fit.t_min == 1.0
    assert fit.beta == pytest.approx(3 / 3.0)  # n / sum ln(x / t_min) = 3 / (0 + 1 + 2)


def test_mle_recovers_parameters_and_accepts_pareto():
    rng = np.random.default_rng(1)
    x = 5.0 * rng.random(20_000) ** (-1 / 1.7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TailWarning)
        fit = fit_pareto(x)
    assert fit.t_min == pytest.approx(5.0, rel=1e-3)
    assert fit.beta == pytest.approx(1.7, rel=0.03)
    assert fit.pareto_like and fit.ks_statistic < 0.02


def test_warns_when_not_pareto():
    rng = np.random.default_rng(2)
    x = rng.normal(100, 5, 5000).clip(50)
    with pytest.warns(TailWarning, match="do not look Pareto"):
        fit = fit_pareto(x)
    assert not fit.pareto_like


def test_tail_fit_uses_upper_fraction():
    rng = np.random.default_rng(3)
    body = rng.uniform(1, 2, 9000)
    tail = 2 * rng.random(1000) ** (-1 / 2.5)
    fit = fit_pareto(np.concatenate([body, tail]), tail=0.05, warn=False)
    assert fit.n == 500
    assert fit.beta == pytest.approx(2.5, rel=0.2)


def test_fit_bad_input():
    with pytest.raises(HedgeError, match=r"samples\[0\] = 0.0"):
        fit_pareto([0.0, 1.0])
    with pytest.raises(HedgeError, match="all 3 durations equal"):
        fit_pareto([2.0, 2.0, 2.0])
    with pytest.raises(HedgeError, match="tail = 0"):
        fit_pareto([1.0, 2.0], tail=0)
    with pytest.raises(HedgeError, match="at least 2"):
        fit_pareto([1.0])


def test_empirical_step_function():
    dist = Empirical.of([4.0, 1.0, 2.0, 2.0])
    assert list(dist.survival([0.5, 1.0, 2.0, 3.9, 4.0])) == [1.0, 0.75, 0.25, 0.25, 0.0]
    assert [dist.quantile(q) for q in (0.0, 0.25, 0.26, 0.5, 0.75, 0.76, 1.0)] == [
        1.0, 1.0, 2.0, 2.0, 2.0, 4.0, 4.0]
    assert dist.truncated_mean(2.0) == pytest.approx(7 / 4)
    assert dist.mean() == pytest.approx(9 / 4)


def test_job_durations_from_workload():
    wl = Workload.from_jobs(["a", "b"], [0, 1], [np.array([1.0, 0.0, 3.0]), np.array([2.0])])
    got = job_durations(wl, min_tasks=2)
    assert list(got) == ["a"] and list(got["a"]) == [1.0, 3.0]
