"""Chronos: PoCD and machine time of deadline-critical jobs under speculation, and the optimal r.

Model (SPECULATION-MATH.md, A0): a job of N tasks meets its deadline D iff every task does;
attempt run times are iid Pareto(t_min, beta); progress is linear and estimates are perfect.
Strategies (r = extra attempts per task):

- ``none``: no speculation (Hadoop-NS, A2);
- ``clone``: r extra attempts at launch, at tau_kill keep the best-progress one (A3);
- ``restart``: at tau_est a task whose original would miss D gets r fresh attempts, at
  tau_kill keep the smallest estimated completion (A4);
- ``resume``: at tau_est the straggler is killed and r + 1 attempts process the input it had
  not reached (A5).

Every function is vectorised over ``r`` (a scalar or an array of non-negative integers) and
returns a float for a scalar ``r``. Times are absolute (the job starts at 0). ``tau_est`` and
``tau_kill`` default to :func:`default_taus`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import hyp2f1

from hedge.errors import HedgeError

STRATEGIES = ("none", "clone", "restart", "resume")
R_MAX = 300


@dataclass(frozen=True)
class _Params:
    strategy: str
    n_tasks: int
    deadline: float
    t_min: float
    beta: float
    tau_est: float
    tau_kill: float


def default_taus(deadline: float, t_min: float,
                 tau_est: float | None = None) -> tuple[float, float]:
    """tau_est = min(0.1 D, D - t_min); tau_kill = tau_est + min(tau_est, t_min (1 - tau_est/D)).

    The first keeps (a4) (a new attempt can still meet D); the second keeps (a3) for every
    strategy (no attempt finishes before the kill decision), matching settings S1 and S2.
    A given ``tau_est`` is kept and only tau_kill derived from it (capped at D).
    """
    if tau_est is None:
        tau_est = min(0.1 * deadline, deadline - t_min)
    gap = max(0.0, min(tau_est, t_min * (1.0 - tau_est / deadline)))
    return tau_est, min(deadline, tau_est + gap)


# The Pareto shapes the closed forms are evaluated for: fitted traces give about 0.5 to 5.
MIN_BETA, MAX_BETA = 0.01, 1000.0


def _params(strategy: str, n_tasks: int, deadline: float, t_min: float, beta: float,
            tau_est: float | None, tau_kill: float | None) -> _Params:
    """Validated parameters (HedgeError naming the bad value otherwise)."""
    if strategy not in STRATEGIES:
        raise HedgeError(f"strategy '{strategy}': expected one of {', '.join(STRATEGIES)}")
    # at most 2^53: the model computes in float64 (a larger int reached numpy as a Python
    # object and failed inside np.log)
    if int(n_tasks) != n_tasks or not 1 <= n_tasks <= 2**53:
        raise HedgeError(f"n_tasks = {n_tasks!r}: expected a positive integer <= 2^53")
    if not t_min > 0:
        raise HedgeError(f"t_min = {t_min!r}: expected a positive minimum run time")
    if not MIN_BETA <= beta <= MAX_BETA:
        raise HedgeError(f"beta = {beta!r}: expected a Pareto shape in [{MIN_BETA:g}, "
                         f"{MAX_BETA:g}] (beyond it the closed forms overflow in float64: "
                         "above, every attempt takes t_min; below, none ends)")
    if not deadline > t_min:
        raise HedgeError(
            f"deadline = {deadline!r} <= t_min = {t_min!r}: no attempt can finish by the deadline"
        )
    tau_est, default_kill = default_taus(deadline, t_min, tau_est)
    tau_est = float(tau_est)
    tau_kill = default_kill if tau_kill is None else float(tau_kill)
    if tau_est < 0:
        raise HedgeError(f"tau_est = {tau_est!r}: expected a time >= 0")
    if tau_kill < tau_est:
        raise HedgeError(f"tau_kill = {tau_kill!r} < tau_est = {tau_est!r}: kill after estimating")
    if strategy in ("restart", "resume") and tau_est > deadline - t_min:
        raise HedgeError(
            f"tau_est = {tau_est!r} > deadline - t_min = {deadline - t_min!r}: an attempt "
            f"launched at tau_est needs at least t_min and cannot meet the deadline"
        )
    if tau_kill > deadline:
        raise HedgeError(f"tau_kill = {tau_kill!r} > deadline = {deadline!r}: expected <= D")
    return _Params(strategy, int(n_tasks), float(deadline), float(t_min), float(beta),
                   tau_est, tau_kill)


def _as_r(r: object) -> np.ndarray:
    arr = np.asarray(r, dtype=np.float64)
    if np.any(arr < 0) or np.any(arr != np.floor(arr)):
        raise HedgeError(f"r = {r!r}: expected non-negative integers")
    return arr


def _out(value: np.ndarray) -> float | np.ndarray:
    return float(value) if np.ndim(value) == 0 else value


def _failure(p: _Params, r: np.ndarray) -> np.ndarray:
    """Per-task probability x(r) of missing D, so PoCD = (1 - x)^N (a5).

    - none (A2): (t_min/D)^beta
    - clone (Thm 1): (t_min/D)^(beta (r+1))
    - restart (Thm 3): (t_min/D)^beta (t_min/(D - tau_est))^(r beta)
    - resume (Thm 5): (t_min/D)^beta (t_min/(D - tau_est))^((r+1) beta)
      * 2F1(-(r+1) beta, beta; beta+1; tau_est/D)
    """
    b, d, t = p.beta, p.deadline, p.t_min
    base = (t / d) ** b
    if p.strategy == "none":
        return np.full_like(r, base)
    if p.strategy == "clone":
        return np.exp(b * (r + 1) * np.log(t / d))
    late = np.log(t / (d - p.tau_est))
    if p.strategy == "restart":
        return base * np.exp(r * b * late)
    k = (r + 1) * b
    return base * np.exp(k * late) * hyp2f1(-k, b, b + 1, p.tau_est / d)


def _log_pocd(p: _Params, r: np.ndarray) -> np.ndarray:
    """log PoCD = N log1p(-x), exact even when PoCD rounds to 1."""
    return p.n_tasks * np.log1p(-_failure(p, r))


def _truncated_mean(a: np.ndarray, t_min: float, tau: float) -> np.ndarray:
    """E[min(M, tau)] for M ~ Pareto(t_min, a) (A1).

    tau <= t_min: tau; else t_min + t_min (1 - (t_min/tau)^(a-1))/(a-1), or
    t_min (1 + ln(tau/t_min)) at a = 1.
    """
    if tau <= t_min:
        return np.full_like(a, tau)
    log_ratio = np.log(t_min / tau)
    am1 = a - 1.0
    near_one = np.abs(am1) < 1e-12
    safe = np.where(near_one, 1.0, am1)
    general = t_min + t_min * (-np.expm1(am1 * log_ratio)) / safe
    return np.where(near_one, t_min * (1.0 - log_ratio), general)


def _mean_below_deadline(p: _Params) -> float:
    """E[T; T <= D] = (beta t_min/(beta-1)) (1 - (t_min/D)^(beta-1)) (A1); t_min ln(D/t_min) at 1."""
    b, t, d = p.beta, p.t_min, p.deadline
    if abs(b - 1.0) < 1e-12:
        return t * np.log(d / t)
    return b * t / (b - 1.0) * -np.expm1((b - 1.0) * np.log(t / d))


def _restart_completion(p: _Params, r: np.ndarray) -> np.ndarray:
    """E[C | T_0 > D], C = min(T_0, tau_est + M_r), M_r ~ Pareto(t_min, r beta) (Thm 4).

    = tau_est + E[min(M_r, D - tau_est)]
      + D (t_min/D)^(r beta) 2F1(r beta, (r+1) beta - 1; (r+1) beta; tau_est/D)/((r+1) beta - 1),
    and beta D/(beta - 1) at r = 0. The 2F1 term is evaluated through Euler's transformation
    2F1(a, b; c; z) = (1-z)^(c-a-b) 2F1(c-a, c-b; c; z), i.e. as
    (D - tau_est) (t_min/(D - tau_est))^(r beta) 2F1(beta, 1; (r+1) beta; tau_est/D)/((r+1) beta - 1),
    which stays finite for large r (the direct form overflows as (1-z)^(-r beta)).
    """
    b, t, d, te = p.beta, p.t_min, p.deadline, p.tau_est
    rb = r * b
    c = rb + b
    head = te + _truncated_mean(rb, t, d - te)
    tail = (d - te) * np.exp(rb * np.log(t / (d - te))) * hyp2f1(b, 1.0, c, te / d) / (c - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        no_copies = b * d / (b - 1.0) if b > 1 else np.inf
    return np.where(r == 0, no_copies, head + tail)


def _machine_time(p: _Params, r: np.ndarray) -> np.ndarray:
    """Expected total machine time of the job, E[T_s(r)] (A2-A5, a6)."""
    b = p.beta
    k = (r + 1) * b
    shape = np.full_like(r, b) if p.strategy == "none" else k
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(shape > 1, _finite_machine_time(p, r, k), np.inf)


def _finite_machine_time(p: _Params, r: np.ndarray, k: np.ndarray) -> np.ndarray:
    """E[T_s(r)] where the kept attempt's Pareto shape exceeds 1 (else the mean is infinite)."""
    n, b, t, d = p.n_tasks, p.beta, p.t_min, p.deadline
    if p.strategy == "none":
        return np.full_like(r, n * b * t / (b - 1.0))
    if p.strategy == "clone":
        # Thm 2: N [ E[M] + r E[min(M, tau_kill)] ], M ~ Pareto(t_min, (r+1) beta)
        return n * (k * t / (k - 1.0) + r * _truncated_mean(k, t, p.tau_kill))
    straggle = (t / d) ** b
    if p.strategy == "restart":
        # Thm 4, general: killed copies run min(C, tau_kill) - tau_est = min(M_r, tau_kill -
        # tau_est) (T_0 > D >= tau_kill), which is tau_kill - tau_est under (a3).
        killed = np.where(r > 0, r * _truncated_mean(r * b, t, p.tau_kill - p.tau_est), 0.0)
        return n * (_mean_below_deadline(p) + straggle * (killed + _restart_completion(p, r)))
    # Thm 6 (a3): tau_est + r (tau_kill - tau_est) + E[1 - phi] E[M_(r+1)]
    remaining = 1.0 - p.tau_est * b / ((b + 1.0) * d)
    straggler = p.tau_est + r * (p.tau_kill - p.tau_est) + remaining * k * t / (k - 1.0)
    return n * (_mean_below_deadline(p) + straggle * straggler)


def _check_mean(p: _Params, r: np.ndarray) -> None:
    """The machine time is finite iff the kept attempt has a finite mean."""
    shape = p.beta if p.strategy == "none" else (np.min(r) + 1) * p.beta
    if shape <= 1:
        what = "" if p.strategy == "none" else f" (r+1)*beta at r = {int(np.min(r))} is"
        raise HedgeError(
            f"beta = {p.beta!r}:{what} {shape:g} <= 1, so the expected machine time of "
            f"'{p.strategy}' is infinite (Pareto mean needs shape > 1)"
        )
    # relative slack: default_taus puts tau_kill exactly on the (a3) bound, which the
    # subtraction can overshoot by an ulp (D=32, t_min=1: 0.9000000000000004 > 0.9)
    bound = p.t_min * (1 - p.tau_est / p.deadline)
    if p.strategy == "resume" and p.tau_kill - p.tau_est > bound * (1 + 1e-9):
        raise HedgeError(
            f"tau_kill - tau_est = {p.tau_kill - p.tau_est!r} > t_min (1 - tau_est/D) = "
            f"{p.t_min * (1 - p.tau_est / p.deadline)!r}: the resume cost (Thm 6) needs (a3), "
            "no resumed attempt finishing before tau_kill"
        )


def pocd(strategy: str, n_tasks: int, deadline: float, t_min: float, beta: float, r: object,
         tau_est: float | None = None, tau_kill: float | None = None) -> float | np.ndarray:
    """Probability of completion before the deadline, R_s(r) = (1 - x_s(r))^N (Thm 1, 3, 5).

    See ``_failure`` for x_s(r) per strategy.
    """
    p = _params(strategy, n_tasks, deadline, t_min, beta, tau_est, tau_kill)
    return _out(np.exp(_log_pocd(p, _as_r(r))))


def machine_time(strategy: str, n_tasks: int, deadline: float, t_min: float, beta: float,
                 r: object, tau_est: float | None = None,
                 tau_kill: float | None = None) -> float | np.ndarray:
    """Expected machine time of the job E[T_s(r)] (A2, Thm 2, Thm 4, Thm 6).

    - none: N beta t_min/(beta - 1)
    - clone: N [ k t_min/(k-1) + r E[min(M, tau_kill)] ], k = (r+1) beta
    - restart: N { E[T; T<=D] + (t_min/D)^beta [ r E[min(M_r, tau_kill - tau_est)]
      + E[C | T_0 > D] ] }
    - resume: N { E[T; T<=D] + (t_min/D)^beta [ tau_est + r (tau_kill - tau_est)
      + (1 - tau_est beta/((beta+1) D)) k t_min/(k-1) ] }
    """
    p = _params(strategy, n_tasks, deadline, t_min, beta, tau_est, tau_kill)
    rr = _as_r(r)
    _check_mean(p, rr)
    return _out(_machine_time(p, rr))


def _utility(p: _Params, r: np.ndarray, theta: float, price: float, r_min: float) -> np.ndarray:
    """U(r) = log(R(r) - R_min) - theta C E[T(r)] (A6); -inf where R(r) <= R_min.

    R - R_min is computed as (1 - R_min) + expm1(log R) so it keeps its digits near R = 1.
    """
    margin = (1.0 - r_min) + np.expm1(_log_pocd(p, r))
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = np.where(margin > 0, np.log(np.where(margin > 0, margin, 1.0)), -np.inf)
    return gain - theta * price * _machine_time(p, r)


def _check_weights(theta: float, price: float, r_min: float) -> None:
    if not theta >= 0:
        raise HedgeError(f"theta = {theta!r}: expected a weight >= 0")
    if not price >= 0:
        raise HedgeError(f"price = {price!r}: expected a price >= 0")
    if not 0 <= r_min < 1:
        raise HedgeError(f"r_min = {r_min!r}: expected a minimum PoCD in [0, 1)")


def utility(strategy: str, n_tasks: int, deadline: float, t_min: float, beta: float, r: object,
            tau_est: float | None = None, tau_kill: float | None = None, theta: float = 1e-3,
            price: float = 1.0, r_min: float = 0.0) -> float | np.ndarray:
    """Net utility U(r) = log(R(r) - R_min) - theta * price * E[T(r)] (A6), -inf if infeasible."""
    p = _params(strategy, n_tasks, deadline, t_min, beta, tau_est, tau_kill)
    _check_weights(theta, price, r_min)
    rr = _as_r(r)
    _check_mean(p, rr)
    return _out(_utility(p, rr, theta, price, r_min))


def concavity_threshold(strategy: str, n_tasks: int, deadline: float, t_min: float, beta: float,
                        tau_est: float | None = None) -> float:
    """r-hat above which U is concave (A7, N x(r) <= 1).

    clone: ln N/(beta ln(D/t_min)) - 1; restart: (ln N - beta ln(D/t_min))/(beta
    ln((D - tau_est)/t_min)); resume: the restart value - 1. 0 for ``none`` and when
    (D - tau_est) = t_min (PoCD does not depend on r then).
    """
    p = _params(strategy, n_tasks, deadline, t_min, beta, tau_est, None)
    log_n, log_d = np.log(p.n_tasks), np.log(p.deadline / p.t_min)
    if strategy == "none":
        return 0.0
    if strategy == "clone":
        return max(0.0, log_n / (beta * log_d) - 1.0)
    log_late = np.log((p.deadline - p.tau_est) / p.t_min)
    if log_late <= 0:
        return 0.0
    value = (log_n - beta * log_d) / (beta * log_late) - (strategy == "resume")
    return max(0.0, float(value))


def _doubling(r_0: int, r_max: int) -> np.ndarray:
    """r_0, r_0 + 1, r_0 + 2, r_0 + 4, ... capped at r_max (the doubling steps of A8)."""
    span = max(r_max - r_0, 1)
    steps = r_0 + np.concatenate([[0], 2 ** np.arange(int(np.log2(span)) + 1)])
    return np.unique(np.minimum(steps, r_max)).astype(np.float64)


def _smallest_feasible(p: _Params, r_min: float, r_max: int) -> int:
    """Smallest r with R(r) > R_min (A8 step 1); PoCD is non-decreasing in r.

    Doubling finds a bracket (lo, hi] with R(lo) <= R_min < R(hi); the bracket is then
    scanned in one vectorised call (the same answer as bisection, in fewer numpy calls).
    Exact PoCD is used rather than the closed-form bounds of A8, which rounding can put off
    by one. HedgeError, naming the best reachable PoCD and its r, if no r <= r_max works.
    """
    def feasible(r: np.ndarray) -> np.ndarray:
        return (1.0 - r_min) + np.expm1(_log_pocd(p, r)) > 0

    steps = _doubling(0, r_max)
    ok = feasible(steps)
    if ok[0]:
        return 0
    if p.strategy == "none" or not ok[-1]:
        reach = np.exp(_log_pocd(p, np.arange(r_max + 1.0)))
        best = int(np.argmax(reach))
        raise HedgeError(
            f"r_min = {r_min!r} is not reachable with '{p.strategy}': the best PoCD is "
            f"{reach[best]:.6g} at r = {best} (r <= {r_max}); lower r_min or change the deadline"
        )
    k = int(np.argmax(ok))
    bracket = np.arange(steps[k - 1] + 1, steps[k] + 1)
    return int(bracket[np.argmax(feasible(bracket))])


def optimal_r(strategy: str, n_tasks: int, deadline: float, t_min: float, beta: float,
              tau_est: float | None = None, tau_kill: float | None = None, theta: float = 1e-3,
              price: float = 1.0, r_min: float = 0.0,
              r_max: int = R_MAX) -> tuple[int, float, float, float]:
    """argmax over integer r in [0, r_max] of U(r), with its PoCD, machine time and utility.

    Algorithm 1 (A8): r_f = smallest feasible r; exhaustive search on [r_f, r_0] with
    r_0 = max(r_f, ceil(r-hat)); on [r_0, r_max] U is concave (A7), so a line search on
    Delta(r) = U(r+1) - U(r) (doubling, then the first Delta <= 0 inside the bracket) finds
    the maximum. The best of both parts wins, ties to the smallest r. r below
    floor(1/beta) is skipped: the kept attempt's mean, hence the cost, is infinite there.
    ``none`` returns r = 0. HedgeError when no r <= r_max reaches R_min (naming the best
    PoCD reachable and its r).
    """
    p = _params(strategy, n_tasks, deadline, t_min, beta, tau_est, tau_kill)
    _check_weights(theta, price, r_min)
    # the first r whose kept attempt has a finite mean ((r+1) beta > 1), and is feasible
    r_f = max(_smallest_feasible(p, r_min, r_max), int(np.floor(1.0 / beta)))
    _check_mean(p, np.array(float(min(r_f, r_max))))
    if strategy == "none":
        best = 0
    else:
        def u(values: np.ndarray) -> np.ndarray:
            return _utility(p, np.asarray(values, dtype=np.float64), theta, price, r_min)

        r_hat = concavity_threshold(strategy, n_tasks, deadline, t_min, beta, p.tau_est)
        r_0 = int(min(r_max, max(r_f, np.ceil(r_hat))))
        head = np.arange(r_f, r_0 + 1)
        head_u = u(head)
        best = int(head[np.argmax(head_u)])
        peak, peak_u = _line_search(u, r_0, r_max)
        if peak > r_0 and peak_u > head_u.max():
            best = peak
    rr = np.array(float(best))
    log_pocd, cost = _log_pocd(p, rr), _machine_time(p, rr)
    margin = (1.0 - r_min) + np.expm1(log_pocd)
    return (best, float(np.exp(log_pocd)), float(cost),
            float(np.log(margin) - theta * price * cost))


def _line_search(u, r_0: int, r_max: int) -> tuple[int, float]:
    """(r, U(r)) for the first r in [r_0, r_max] with Delta(r) = U(r+1) - U(r) <= 0 (U is
    concave there), or r_max.

    Delta is evaluated at the doubling steps in one vectorised call; the bracket
    (lo, hi] with Delta(lo) > 0 >= Delta(hi) is then scanned in one more call (the answer
    bisection would give, in fewer numpy calls).
    """
    steps = _doubling(r_0, r_max)
    values = u(np.concatenate([steps, steps + 1]))
    with np.errstate(invalid="ignore"):  # -inf - -inf: both worthless, no gain either way
        delta = values[len(steps):] - values[: len(steps)]
    down = np.flatnonzero(~(delta > 0))
    if len(down) == 0:
        return r_max, float(values[len(steps) - 1])
    if down[0] == 0:
        return int(steps[0]), float(values[0])
    lo, hi = int(steps[down[0] - 1]), int(steps[down[0]])
    values = u(np.arange(lo + 1, hi + 2, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        k = int(np.argmax(~(np.diff(values) > 0)))
    return lo + 1 + k, float(values[k])
