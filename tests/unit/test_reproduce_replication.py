"""`hedge reproduce replication`: the Monte Carlo of single-fork replication against the
closed forms, and the papers' tail claims."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.reproduce import replication as rep


@pytest.mark.parametrize("dist", rep.DISTS, ids=lambda d: d.label)
@pytest.mark.parametrize("keep", [False, True])
def test_monte_carlo_agrees_with_the_closed_forms(dist, keep) -> None:
    latency, cost = dist.closed(dist.n_tasks, 0.1, 1, keep)
    t, t_se, c, c_se = rep.monte_carlo(dist, 0.1, 1, keep, 400, np.random.default_rng(1))
    assert abs(t - latency) <= 4 * t_se and abs(c - cost) <= 4 * c_se


def test_keeping_the_original_without_replicas_is_no_replication() -> None:
    """r = 0, keep: the job is the plain maximum of its tasks, and costs their sum."""
    dist = rep.DISTS[1]  # Exp(1), n = 100: E[X_{n:n}] = H_100
    t, t_se, c, c_se = rep.monte_carlo(dist, 0.1, 0, True, 2000, np.random.default_rng(2))
    assert abs(t - dist.baseline[0]) <= 4 * t_se and abs(c - dist.baseline[1]) <= 4 * c_se


def test_claims_and_files(tmp_path) -> None:
    result = rep.reproduce(tmp_path, quick=True)
    claims = {row.quantity.split(" (")[0]: row for row in result.rows[:3]}
    assert claims["Pareto(x_m=1, alpha=2)"].difference == "agrees"  # latency and cost fall
    assert claims["SExp(delta=1, mu=1)"].difference == "agrees"  # cost rises
    assert claims["Exp(mu=1)"].difference == "agrees in part"  # cost stays exactly 1/mu
    agreement = result.rows[3:]
    assert len(agreement) == 12 and all(row.why == "" for row in agreement)
    assert all((tmp_path / f).stat().st_size > 1000 for f in result.figures)
