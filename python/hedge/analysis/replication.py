"""Single-fork task replication (Wang, Joshi, Wornell): latency and cost of policy (p, r, l).

Policy pi(p, r, l) (SPECULATION-MATH.md B0): wait until (1 - p) n of the job's n tasks
finished (time S), then give each of the m = p n unfinished tasks r + 1 running copies:
``keep`` (l = 1) keeps the original and adds r replicas, ``kill`` (l = 0) relaunches it
with r + 1 fresh copies. A task ends with its first copy; the others are cancelled.
Latency T = S + max_j Y_j, cost C = sum_i min(X_i, S) + (r + 1) sum_j Y_j (B2).

- Closed forms for exponential, shifted-exponential and Pareto durations (B2, B3):
  :func:`exponential`, :func:`shifted_exponential`, :func:`pareto`.
- The exact step-function computation for an empirical distribution (B4): :func:`evaluate`,
  and the search minimising J = E[T] + lambda E[C]/n: :func:`search`, :func:`best_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import quad
from scipy.special import gammaln, hyp2f1

from hedge.analysis.fitting import Empirical
from hedge.errors import HedgeError

P_GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
R_GRID = (0, 1, 2, 3)
# Hadoop's default speculation, as a single-fork stand-in: at most 10% of tasks
# (mapreduce.job.speculative.speculative-cap-running-tasks) get one extra copy, the original
# keeps running.
HADOOP_DEFAULT = (0.1, 1, True)
EULER_GAMMA = 0.5772156649015329


@dataclass(frozen=True)
class Plan:
    """One single-fork policy with its expected latency E[T], cost E[C]/n and J."""

    p: float
    r: int
    keep: bool
    latency: float
    cost_per_task: float
    objective: float

    @property
    def mode(self) -> str:
        return "keep" if self.keep else "kill"


def _check(n_tasks: int, p: float, r: int) -> int:
    """m = max(1, round(p n)), after validating n, p and r."""
    if int(n_tasks) != n_tasks or n_tasks < 1:
        raise HedgeError(f"n_tasks = {n_tasks!r}: expected a positive integer")
    if not 0 < p < 1:
        raise HedgeError(f"p = {p!r}: expected the unfinished fraction at the fork in (0, 1)")
    if int(r) != r or r < 0:
        raise HedgeError(f"r = {r!r}: expected a non-negative integer number of replicas")
    return max(1, int(round(p * n_tasks)))


def _harmonic(n: int) -> float:
    return float(np.sum(1.0 / np.arange(1, n + 1)))


def _expected_max(survival, m: int, upper: float = np.inf, points=None) -> float:
    """E[Y_{m:m}] = integral over y >= 0 of 1 - (1 - F_Y-bar(y))^m (B2), by quadrature."""
    def integrand(y: float) -> float:
        return -np.expm1(m * np.log1p(-min(survival(y), 1.0)))

    if points:
        edges = [0.0, *sorted(points), upper]
        return sum(quad(integrand, a, b, limit=400, epsrel=1e-10)[0]
                   for a, b in zip(edges[:-1], edges[1:], strict=True))
    return quad(integrand, 0.0, upper, limit=400, epsrel=1e-10)[0]


def exponential(n_tasks: int, p: float, r: int, keep: bool, mu: float) -> tuple[float, float]:
    """Exp(mu), keep or kill (Y ~ Exp((r+1) mu), B1), exact for finite n (B3):

    E[T] = (H_n - H_{pn})/mu + H_{pn}/((r+1) mu); E[C]/n = 1/mu.
    """
    m = _check(n_tasks, p, r)
    if not mu > 0:
        raise HedgeError(f"mu = {mu!r}: expected a positive rate")
    latency = (_harmonic(n_tasks) - _harmonic(m)) / mu + _harmonic(m) / ((r + 1) * mu)
    return latency, 1.0 / mu


def shifted_exponential(n_tasks: int, p: float, r: int, keep: bool, delta: float,
                        mu: float) -> tuple[float, float]:
    """X = delta + Exp(mu) (B1, B3).

    kill (exact): E[T] = 2 delta + (H_n - H_{pn})/mu + H_{pn}/((r+1) mu),
    E[C]/n = delta + 1/mu + (r+1) p delta.
    keep: Y-bar(y) = e^{-mu y} (y < delta), e^{r mu delta} e^{-(r+1) mu y} (y >= delta);
    E[T] = x_p + E[Y_{m:m}] (S -> x_p = delta + ln(1/p)/mu, max by quadrature),
    E[C]/n = delta + 1/mu + p r (1 - e^{-mu delta})/mu.
    """
    m = _check(n_tasks, p, r)
    if not (mu > 0 and delta >= 0):
        raise HedgeError(f"delta = {delta!r}, mu = {mu!r}: expected delta >= 0 and mu > 0")
    if not keep:
        order = delta + (_harmonic(n_tasks) - _harmonic(m)) / mu
        return (order + delta + _harmonic(m) / ((r + 1) * mu),
                delta + 1 / mu + (r + 1) * p * delta)

    def survival(y: float) -> float:
        return np.exp(-mu * y) if y < delta else np.exp(r * mu * delta - (r + 1) * mu * y)

    x_p = delta + np.log(1 / p) / mu
    latency = x_p + _expected_max(survival, m, points=[delta] if delta > 0 else None)
    return latency, delta + 1 / mu + p * r * -np.expm1(-mu * delta) / mu


def pareto_keep_mean(p: float, r: int, x_m: float, alpha: float) -> float:
    """E[Y] for keep under Pareto(x_m, alpha), x_p = x_m p^(-1/alpha) (B3):

    x_p/(alpha-1) [1 - (x_p/(x_p + x_m))^(alpha-1)]
    + x_m (x_p/x_m)^alpha 2F1(alpha, (r+1) alpha - 1; (r+1) alpha; -x_p/x_m)/((r+1) alpha - 1),
    and x_p/(alpha - 1) at r = 0.
    """
    x_p = x_m * p ** (-1 / alpha)
    head = x_p / (alpha - 1)
    if r == 0:
        return head
    c = (r + 1) * alpha
    return (head * -np.expm1((alpha - 1) * np.log(x_p / (x_p + x_m)))
            + x_m * (x_p / x_m) ** alpha * hyp2f1(alpha, c - 1, c, -x_p / x_m) / (c - 1))


def pareto(n_tasks: int, p: float, r: int, keep: bool, x_m: float,
           alpha: float) -> tuple[float, float]:
    """Pareto(x_m, alpha) (B1-B3), alpha > 1.

    kill (exact): E[T] = E[X_{k:n}] + E[Y_{m:m}], k = n - m, with
    E[X_{k:n}] = x_m G(n+1) G(n-k+1-1/alpha)/(G(n-k+1) G(n+1-1/alpha)) and
    E[Y_{m:m}] = x_m G(m+1) G(1-1/A)/G(m+1-1/A), A = (r+1) alpha;
    E[C]/n = x_m [ (alpha - p^(1-1/alpha))/(alpha-1) + p (r+1)^2 alpha/((r+1) alpha - 1) ].
    keep: E[T] = x_p + E[Y_{m:m}] with Y-bar(y) = (x_p/(x_p+y))^alpha min(1, (x_m/y)^(r alpha))
    (S -> x_p, max by quadrature); E[C]/n = x_m (alpha - p^(1-1/alpha))/(alpha-1)
    + (r+1) p E[Y] with E[Y] from :func:`pareto_keep_mean`.
    """
    m = _check(n_tasks, p, r)
    if not (x_m > 0 and alpha > 1):
        raise HedgeError(f"x_m = {x_m!r}, alpha = {alpha!r}: expected x_m > 0 and alpha > 1 "
                         "(a finite mean)")
    sunk = x_m * (alpha - p ** (1 - 1 / alpha)) / (alpha - 1)
    if not keep:
        a, n, k = (r + 1) * alpha, n_tasks, n_tasks - m
        order = x_m * np.exp(gammaln(n + 1) + gammaln(n - k + 1 - 1 / alpha)
                             - gammaln(n - k + 1) - gammaln(n + 1 - 1 / alpha))
        top = x_m * np.exp(gammaln(m + 1) + gammaln(1 - 1 / a) - gammaln(m + 1 - 1 / a))
        return float(order + top), float(sunk + x_m * p * (r + 1) ** 2 * alpha / (a - 1))
    x_p = x_m * p ** (-1 / alpha)

    def survival(y: float) -> float:
        copies = 1.0 if y <= x_m else (x_m / y) ** (r * alpha)
        return (x_p / (x_p + y)) ** alpha * copies

    latency = x_p + _expected_max(survival, m, points=[x_m] if r else None)
    return float(latency), float(sunk + (r + 1) * p * pareto_keep_mean(p, r, x_m, alpha))


def _integrals(breaks: np.ndarray, surv: np.ndarray, m: list[int],
               ) -> tuple[np.ndarray, np.ndarray]:
    """Exact integrals of a step survival function: E[Y] along the last axis, and E[Y_{m:m}]
    for each m of the list (a new first axis).

    ``surv[..., j]`` holds on [breaks[j], breaks[j+1]); it is 0 from breaks[-1] on.
    """
    width = np.diff(breaks)
    s = surv[..., :-1]
    with np.errstate(divide="ignore"):
        log_alive = np.log1p(-np.minimum(s, 1.0))
    counts = np.asarray(m, dtype=np.float64).reshape((-1,) + (1,) * s.ndim)
    top = -np.expm1(counts * log_alive)
    return (s * width).sum(-1), (top * width).sum(-1)


def evaluate(dist: Empirical, n_tasks: int, p: float,
             r_grid: tuple[int, ...] = R_GRID) -> dict[tuple[int, bool], tuple[float, float]]:
    """(E[T], E[C]/n) of every (r, keep|kill) for one p under the empirical F_hat (B4).

    x_p = F_hat^{-1}(1 - p); E_min = (1/M) sum min(x_i, x_p);
    kill: Y-bar = F_hat-bar(y)^(r+1); keep: Y-bar = F_hat-bar(x_p + y) F_hat-bar(y)^r / F_hat-bar(x_p).
    Both are step functions, so E[Y] = int Y-bar and E[Y_{m:m}] = int 1 - (1 - Y-bar)^m are
    exact sums over the breakpoints {x_i} U {x_i - x_p}. E[T] = x_p + E[Y_{m:m}],
    E[C]/n = E_min + (r+1) p E[Y]. A keep policy is undefined (omitted) when no sample
    exceeds x_p.
    """
    return _grid(dist, n_tasks, (p,), r_grid)[0]


def _grid(dist: Empirical, n_tasks: int, p_grid: tuple[float, ...], r_grid: tuple[int, ...],
          ) -> list[dict[tuple[int, bool], tuple[float, float]]]:
    """``evaluate`` for every p of the grid. The kill policies' step functions do not depend
    on p (only m = p n does), so they are built once for the whole grid (a search makes
    plans at every completion of a running job: issue 21)."""
    ms = [_check(n_tasks, p, max(r_grid)) for p in p_grid]
    r = np.asarray(r_grid, dtype=np.float64)[:, None]
    breaks = np.concatenate([[0.0], np.unique(dist.x)])
    kill_mean, kill_top = _integrals(breaks, dist.survival(breaks)[None, :] ** (r + 1), ms)
    out = []
    for i, (p, m) in enumerate(zip(p_grid, ms, strict=True)):
        x_p = dist.quantile(1 - p)
        sunk = dist.truncated_mean(x_p)
        plans = {(int(ri), False): (x_p + kill_top[i, k], sunk + (ri + 1) * p * kill_mean[k])
                 for k, ri in enumerate(r_grid)}
        alive = dist.survival(x_p)
        if alive > 0:
            shifted = dist.x[dist.x > x_p] - x_p
            keep_breaks = np.unique(np.concatenate([[0.0], dist.x, shifted]))
            keep_breaks = keep_breaks[keep_breaks <= shifted.max()]
            surv = (dist.survival(x_p + keep_breaks) / alive
                    * dist.survival(keep_breaks)[None, :] ** r)
            mean, top = _integrals(keep_breaks, surv, [m])
            plans.update({(int(ri), True): (x_p + top[0, k], sunk + (ri + 1) * p * mean[k])
                          for k, ri in enumerate(r_grid)})
        out.append(plans)
    return out


def no_replication(dist: Empirical, n_tasks: int) -> tuple[float, float]:
    """(E[T], E[C]/n) without replication: E[X_{n:n}] = int 1 - F_hat^n, and E[X]."""
    breaks = np.concatenate([[0.0], np.unique(dist.x)])
    _, top = _integrals(breaks, dist.survival(breaks), [n_tasks])
    return float(top[0]), dist.mean()


def search(samples: object, n_tasks: int, cost_weight: float, p_grid=P_GRID,
           r_grid=R_GRID) -> list[Plan]:
    """Every single-fork policy on the grid, best first by J = E[T] + lambda E[C]/n (B4)."""
    return [Plan(p, r, keep, latency, cost, objective)
            for objective, r, p, keep, latency, cost
            in sorted(_scored(samples, n_tasks, cost_weight, p_grid, r_grid))]


def best_policy(samples: object, n_tasks: int, cost_weight: float, p_grid=P_GRID,
                r_grid=R_GRID) -> tuple[float, int, bool]:
    """(p, r, keep) minimising J = E[T] + cost_weight E[C]/n over the grids (B4)."""
    _, r, p, keep, _, _ = min(_scored(samples, n_tasks, cost_weight, p_grid, r_grid))
    return p, r, keep


def _scored(samples: object, n_tasks: int, cost_weight: float, p_grid, r_grid,
            ) -> list[tuple[float, int, float, bool, float, float]]:
    """(J, r, p, keep, E[T], E[C]/n) of every policy on the grid: the ranking key first
    (no two policies share one), so a sort or a min orders them (no Plan objects built
    for a min: the simulator's replicate plans at every completion, issue 21)."""
    dist = samples if isinstance(samples, Empirical) else Empirical.of(samples)
    if not cost_weight >= 0:
        raise HedgeError(f"cost_weight = {cost_weight!r}: expected lambda >= 0")
    if len(p_grid) == 0 or len(r_grid) == 0:
        raise HedgeError("p_grid and r_grid must not be empty")
    scored = []
    for p, evaluated in zip(p_grid, _grid(dist, n_tasks, tuple(p_grid), tuple(r_grid)),
                            strict=True):
        for (r, keep), (latency, cost) in evaluated.items():
            scored.append((float(latency + cost_weight * cost), r, float(p), keep,
                           float(latency), float(cost)))
    return scored
