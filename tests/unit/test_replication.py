"""Single-fork replication against SPECULATION-MATH.md B1-B4."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.analysis import replication as rep
from hedge.analysis.fitting import Empirical
from hedge.errors import HedgeError

# (law, params, n, p, r, E[T] kill, E[T] keep, E[C]/n kill, E[C]/n keep): table B3, analytic
B3 = [
    ("exp", (1.0,), 100, 0.1, 1, "3.7229", "3.7229", "1", "1"),
    ("exp", (2.0,), 1000, 0.2, 2, "1.7834", "1.7834", "0.5", "0.5"),
    ("exp", (0.5,), 400, 0.05, 3, "7.7432", "7.7432", "2", "2"),
    ("sexp", (1.0, 1.0), 1000, 0.1, 1, "6.8918", "6.3963", "2.2", "2.0632"),
    ("sexp", (2.0, 0.5), 500, 0.2, 2, "10.669", "10.010", "5.2", "4.5057"),
    ("sexp", (0.5, 2.0), 2000, 0.05, 1, "3.7923", "3.5447", "1.05", "1.0158"),
    ("pareto", (1.0, 2.0), 1000, 0.1, 1, "7.0375", "8.676", "1.9504", "1.9034"),
    ("pareto", (1.0, 1.5), 500, 0.2, 2, "6.2359", "6.8738", "2.6018", "2.4643"),
    ("pareto", (2.0, 3.0), 2000, 0.05, 1, "10.290", "11.199", "3.1043", "3.0167"),
]
LAWS = {"exp": rep.exponential, "sexp": rep.shifted_exponential, "pareto": rep.pareto}


def close(got: float, printed: str) -> bool:
    decimals = len(printed.split(".")[1]) if "." in printed else 6
    return abs(got - float(printed)) <= 0.5 * 10.0**-decimals * (1 + 1e-9)


@pytest.mark.parametrize("row", B3, ids=lambda row: f"{row[0]}{row[1]}-n{row[2]}")
def test_closed_forms_reproduce_table_b3(row):
    law, params, n, p, r, t_kill, t_keep, c_kill, c_keep = row
    for keep, want_t, want_c in ((False, t_kill, c_kill), (True, t_keep, c_keep)):
        latency, cost = LAWS[law](n, p, r, keep, *params)
        assert close(latency, want_t), (keep, latency, want_t)
        assert close(cost, want_c), (keep, cost, want_c)


def test_pareto_keep_mean_matches_reference_digits():
    """The 2F1 form of E[Y_keep] at the three printed points (8 digits, rel. error <= 1e-6)."""
    assert rep.pareto_keep_mean(0.1, 1, 1.0, 2.0) == pytest.approx(1.0980789, rel=1e-6)
    assert rep.pareto_keep_mean(0.2, 2, 1.0, 1.5) == pytest.approx(1.0565919, rel=1e-6)
    assert rep.pareto_keep_mean(0.05, 1, 2.0, 3.0) == pytest.approx(1.5239768, rel=1e-6)
    assert rep.pareto_keep_mean(0.1, 0, 1.0, 2.0) == pytest.approx(10**0.5 / 1.0)


def _quantile_sample(inverse_cdf, m=40_000):
    """A deterministic 'perfect' sample: F^{-1} at the midpoints of m equal slices."""
    return inverse_cdf((np.arange(m) + 0.5) / m)


def test_empirical_matches_closed_forms_on_a_quantile_sample():
    # Pareto(1, 2): keep uses S -> x_p in both computations
    par = Empirical.of(_quantile_sample(lambda u: (1 - u) ** -0.5))
    got = rep.evaluate(par, 1000, 0.1, (1,))
    latency, cost = rep.pareto(1000, 0.1, 1, True, 1.0, 2.0)
    assert got[(1, True)][0] == pytest.approx(latency, rel=0.01)
    assert got[(1, True)][1] == pytest.approx(cost, rel=0.01)
    # kill: E[C]/n is exact in the limit; the latency uses x_p instead of E[X_{k:n}]
    _, cost = rep.pareto(1000, 0.1, 1, False, 1.0, 2.0)
    assert got[(1, False)][1] == pytest.approx(cost, rel=0.01)
    # SExp(1, 1), keep
    sexp = Empirical.of(_quantile_sample(lambda u: 1 - np.log1p(-u)))
    got = rep.evaluate(sexp, 1000, 0.1, (1,))
    latency, cost = rep.shifted_exponential(1000, 0.1, 1, True, 1.0, 1.0)
    assert got[(1, True)][0] == pytest.approx(latency, rel=0.01)
    assert got[(1, True)][1] == pytest.approx(cost, rel=0.005)
    # Exp(1): memoryless, so keep and kill agree, and E[C]/n = E[X]
    exp = Empirical.of(_quantile_sample(lambda u: -np.log1p(-u)))
    got = rep.evaluate(exp, 100, 0.1, (0, 2))
    for r in (0, 2):
        assert got[(r, True)][0] == pytest.approx(got[(r, False)][0], rel=1e-3)
        assert got[(r, True)][1] == pytest.approx(1.0, rel=1e-3)
        harmonic = np.sum(1 / np.arange(1, 11))
        assert got[(r, False)][0] == pytest.approx(np.log(10) + harmonic / (r + 1), rel=0.01)


def test_step_function_integrals_by_hand():
    """Samples {1, 2, 4}, n = 2, p = 0.5 (m = 1): x_p = F^-1(0.5) = 2, E_min = (1+2+2)/3."""
    dist = Empirical.of([1.0, 2.0, 4.0])
    got = rep.evaluate(dist, 2, 0.5, (0, 1))
    # kill, r = 0: Y = one fresh draw, E[Y] = 7/3; m = 1 so E[max] = E[Y]
    assert got[(0, False)] == pytest.approx((2 + 7 / 3, 5 / 3 + 0.5 * 7 / 3))
    # kill, r = 1: Y = min of 2 draws: P(Y > y) = 1 on [0,1), 4/9 on [1,2), 1/9 on [2,4)
    mean = 1 + 4 / 9 + 2 / 9
    assert got[(1, False)] == pytest.approx((2 + mean, 5 / 3 + 2 * 0.5 * mean))
    # keep, r = 0: residual of X | X > 2, i.e. 4 - 2 = 2
    assert got[(0, True)] == pytest.approx((4.0, 5 / 3 + 0.5 * 2))
    # keep, r = 1: min(2, fresh): P(Y > y) = 1 on [0,1), 2/3 on [1,2) -> E[Y] = 5/3
    assert got[(1, True)] == pytest.approx((2 + 5 / 3, 5 / 3 + 2 * 0.5 * 5 / 3))


def test_no_replication_is_expected_maximum():
    dist = Empirical.of([1.0, 3.0])
    # max of 2 draws from {1, 3}: 3 unless both are 1 -> 3 - 2 * 1/4
    assert rep.no_replication(dist, 2) == pytest.approx((2.5, 2.0))


def test_search_picks_reference_policies_on_body_plus_tail_trace():
    """B4: 0.9 SExp(1, 2) + 0.1 Pareto(2, 1.5), n = 1000: the reference's picks for lambda 0.3
    and 3, and for lambda = 30 one of the two policies the reference found best."""
    rng = np.random.default_rng(4)
    m = 20_000
    body = 1 + rng.exponential(0.5, m)
    tail = 2 * rng.random(m) ** (-1 / 1.5)
    samples = np.where(rng.random(m) < 0.9, body, tail)
    assert rep.best_policy(samples, 1000, 0.3) == (0.5, 3, True)
    assert rep.best_policy(samples, 1000, 3.0) == (0.2, 3, True)
    assert rep.best_policy(samples, 1000, 30.0) in {(0.05, 1, False), (0.05, 2, True)}
    plans = rep.search(samples, 1000, 3.0)
    assert len(plans) == 56
    assert plans[0].objective == pytest.approx(10.121, rel=0.03)  # reference J-hat
    assert all(a.objective <= b.objective for a, b in zip(plans[:-1], plans[1:], strict=True))


def test_cost_weight_trades_latency_for_cost():
    rng = np.random.default_rng(5)
    samples = 1 + rng.pareto(1.8, 5000)
    cheap = rep.search(samples, 200, 0.0)[0]
    thrifty = rep.search(samples, 200, 1000.0)[0]
    assert cheap.latency <= thrifty.latency
    assert thrifty.cost_per_task <= cheap.cost_per_task


def test_bad_input():
    with pytest.raises(HedgeError, match=r"p = 1.0: expected .* \(0, 1\)"):
        rep.best_policy([1, 2, 3], 10, 1.0, p_grid=(1.0,))
    with pytest.raises(HedgeError, match=r"p = 0: expected"):
        rep.exponential(10, 0, 1, True, 1.0)
    with pytest.raises(HedgeError, match=r"samples\[1\] = -2.0"):
        rep.best_policy([1, -2, 3], 10, 1.0)
    with pytest.raises(HedgeError, match="no durations"):
        rep.best_policy([], 10, 1.0)
    with pytest.raises(HedgeError, match="cost_weight = -1"):
        rep.best_policy([1, 2], 10, -1)
    with pytest.raises(HedgeError, match="alpha = 1.0"):
        rep.pareto(10, 0.1, 1, True, 1.0, 1.0)
    with pytest.raises(HedgeError, match="n_tasks = 0"):
        rep.best_policy([1, 2], 0, 1.0)


def test_search_of_the_whole_grid_equals_evaluate_per_p_bit_for_bit():
    """The kill step functions are built once for every p (``_grid``); each p's figures
    must still be exactly those of ``evaluate`` on that p alone, and best_policy the first
    of search's ranking."""
    rng = np.random.default_rng(8)
    for samples, n in ((1 + rng.pareto(1.5, 300), 900), (rng.integers(1, 5, 40) * 1.0, 37),
                       (np.array([2.0, 2.0, 7.0]), 3)):
        dist = Empirical.of(samples)
        plans = rep.search(dist, n, 0.7)
        for plan in plans:
            assert rep.evaluate(dist, n, plan.p)[(plan.r, plan.keep)] == (
                plan.latency, plan.cost_per_task)
        assert len(plans) == sum(len(rep.evaluate(dist, n, p)) for p in rep.P_GRID)
        best = plans[0]
        assert rep.best_policy(dist, n, 0.7) == (best.p, best.r, best.keep)
