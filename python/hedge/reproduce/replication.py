"""``hedge reproduce replication``: single-fork replication (Wang, Joshi, Wornell, SIGMETRICS
2014; arXiv 1404.1328 and 1503.03128), closed forms (:mod:`hedge.analysis.replication`)
against a Monte Carlo of the policy itself.

Policy (p, r, keep|kill): when (1 - p) n of the job's n tasks have finished (time S), each
of the m = p n unfinished tasks gets r + 1 running copies (keep: the original and r replicas;
kill: r + 1 fresh copies); a task ends with its first copy. Latency T = S + max_j Y_j, cost
C = sum_i min(X_i, S) + (r + 1) sum_j Y_j (SPECULATION-MATH.md B0-B2).

The papers' claims (qualitative here): the tail of the task-time distribution decides the
trade-off; with a heavy tail (Pareto) replication can cut latency *and* cost; with a light
tail (exponential, shifted exponential) it cuts latency at a cost that does not fall.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import gammaln

from hedge.analysis import replication as closed
from hedge.report.page import finish
from hedge.reproduce.table import Reproduction, Row

TITLE = "Efficient Task Replication for Fast Response Times in Parallel Computation"
CITATION = ("Wang, Joshi, Wornell, SIGMETRICS 2014 (arXiv 1404.1328); extended: 'Using "
            "Straggler Replication to Reduce Latency in Large-scale Parallel Computing' "
            "(arXiv 1503.03128)")


@dataclass(frozen=True)
class Dist:
    """A task-time distribution: its closed forms and a sampler."""

    label: str
    tail: str  # "heavy" or "light"
    n_tasks: int
    closed: Callable[[int, float, int, bool], tuple[float, float]]  # (n, p, r, keep)
    draw: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
    baseline: tuple[float, float]  # no replication: E[X_{n:n}], E[X]


def _harmonic(n: int) -> float:
    return float(np.sum(1.0 / np.arange(1, n + 1)))


def _pareto_max(n: int, x_m: float, alpha: float) -> float:
    """E[X_{n:n}] of Pareto(x_m, alpha): x_m G(n+1) G(1-1/alpha) / G(n+1-1/alpha)."""
    return x_m * math.exp(gammaln(n + 1) + gammaln(1 - 1 / alpha) - gammaln(n + 1 - 1 / alpha))


# The settings of SPECULATION-MATH.md B3's Monte Carlo table (one per family).
DISTS = (
    Dist("Pareto(x_m=1, alpha=2)", "heavy", 1000,
         lambda n, p, r, keep: closed.pareto(n, p, r, keep, 1.0, 2.0),
         lambda rng, shape: 1.0 + rng.pareto(2.0, shape),
         (_pareto_max(1000, 1.0, 2.0), 2.0)),
    Dist("Exp(mu=1)", "light", 100,
         lambda n, p, r, keep: closed.exponential(n, p, r, keep, 1.0),
         lambda rng, shape: rng.exponential(1.0, shape),
         (_harmonic(100), 1.0)),
    Dist("SExp(delta=1, mu=1)", "light", 1000,
         lambda n, p, r, keep: closed.shifted_exponential(n, p, r, keep, 1.0, 1.0),
         lambda rng, shape: 1.0 + rng.exponential(1.0, shape),
         (1.0 + _harmonic(1000), 2.0)),
)
MC_POLICY = (0.1, 1)  # (p, r) of the Monte Carlo rows, keep and kill
P_GRID = closed.P_GRID
R_GRID = (1, 2, 3)


def monte_carlo(dist: Dist, p: float, r: int, keep: bool, jobs: int,
                rng: np.random.Generator) -> tuple[float, float, float, float]:
    """Simulated (E[T], s.e., E[C]/n, s.e.) of policy (p, r, keep) over ``jobs`` jobs."""
    n = dist.n_tasks
    m = max(1, int(round(p * n)))
    x = np.sort(dist.draw(rng, (jobs, n)), axis=1)
    fork = x[:, n - m - 1]  # S: the (n - m)-th finish
    fresh = dist.draw(rng, (jobs, m, r + (0 if keep else 1)))
    copies = fresh.min(-1) if fresh.shape[-1] else np.full((jobs, m), np.inf)
    y = np.minimum(x[:, n - m:] - fork[:, None], copies) if keep else copies
    latency = fork + y.max(1)
    cost = (np.minimum(x, fork[:, None]).sum(1) + (r + 1) * y.sum(1)) / n
    se = math.sqrt(jobs)
    return (float(latency.mean()), float(latency.std(ddof=1) / se),
            float(cost.mean()), float(cost.std(ddof=1) / se))


def _agreement_rows(dist: Dist, jobs: int, rng: np.random.Generator) -> list[Row]:
    p, r = MC_POLICY
    rows = []
    for keep in (False, True):
        model = dist.closed(dist.n_tasks, p, r, keep)
        t, t_se, c, c_se = monte_carlo(dist, p, r, keep, jobs, rng)
        mode = "keep" if keep else "kill"
        for what, value, mc, se in (("E[T]", model[0], t, t_se), ("E[C]/n", model[1], c, c_se)):
            z = abs(mc - value) / se if se > 0 else (0.0 if mc == value else math.inf)
            approx = keep and not dist.label.startswith("Exp")  # S taken at x_p
            rows.append(Row(
                f"{what}, {dist.label}, n={dist.n_tasks}, p={p}, r={r}, {mode}: closed form "
                f"vs Monte Carlo ({jobs} jobs)",
                f"{value:.4f} (closed form, B2/B3)",
                f"{mc:.4f} ± {se:.4f}",
                f"{mc - value:+.4f} ({z:.1f} s.e.)",
                "" if z <= 3 else ("the keep closed form puts S at x_p (large-n limit, B2); "
                                   "the Monte Carlo draws S" if approx and what == "E[T]"
                                   else "more than 3 standard errors: check the model"),
            ))
    return rows


def frontier(dist: Dist) -> list[tuple[float, int, bool, float, float]]:
    """(p, r, keep, E[T], E[C]/n) of every policy on the grid, closed forms."""
    return [(p, r, keep, *dist.closed(dist.n_tasks, p, r, keep))
            for p in P_GRID for r in R_GRID for keep in (False, True)]


def _claim_row(dist: Dist, points: list[tuple]) -> Row:
    base_t, base_c = dist.baseline
    both = [pt for pt in points if pt[3] < base_t and pt[4] < base_c - 1e-12]
    cheapest = min(points, key=lambda pt: pt[4])
    p, r, keep, t, c = cheapest
    shown = (f"no replication E[T] {base_t:.3f}, E[C]/n {base_c:.3f}; cheapest policy "
             f"(p={p}, r={r}, {'keep' if keep else 'kill'}) E[T] {t:.3f}, E[C]/n {c:.4f}; "
             f"{len(both)} of {len(points)} policies lower in both")
    if dist.tail == "heavy":
        claim = "replication can cut latency and cost at once"
        agrees = bool(both)
        why = "" if agrees else "no policy on the grid cuts both at this n and tail"
    else:
        claim = "latency falls, cost grows (no policy cheaper than no replication)"
        agrees = not both
        why = "" if agrees else "a light-tailed policy came out cheaper: check the grid"
    if agrees and dist.tail == "light" and abs(c - base_c) < 1e-9:
        return Row(f"{dist.label} ({dist.tail} tail), n={dist.n_tasks}", claim, shown,
                   "agrees in part",
                   "cost does not fall, but for Exp it stays exactly 1/mu for every (p, r, l) "
                   "rather than growing: memorylessness makes a copy's time cost what the "
                   "original's remaining time would have")
    return Row(f"{dist.label} ({dist.tail} tail), n={dist.n_tasks}", claim, shown,
               "agrees" if agrees else "disagrees", why)


def _figure(dist: Dist, points: list[tuple], path: Path) -> None:
    """Latency against cost of every policy on the grid, and no replication."""
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for keep, marker in ((False, "o"), (True, "^")):
        pts = [pt for pt in points if pt[2] == keep]
        ax.scatter([pt[4] for pt in pts], [pt[3] for pt in pts], marker=marker, s=18,
                   label=f"{'keep' if keep else 'kill'} (p, r on the grid)")
    ax.scatter([dist.baseline[1]], [dist.baseline[0]], marker="*", s=120, color="k",
               label="no replication")
    ax.set_yscale("log")
    finish(fig, ax, "E[C]/n (machine time per task)", "E[T] (job latency)",
           f"{dist.label}, n = {dist.n_tasks}: latency vs cost", path, legend=True)


def reproduce(out: Path, quick: bool = False) -> Reproduction:
    jobs = 400 if quick else 4000
    rng = np.random.default_rng(0)
    curves = {d.label: frontier(d) for d in DISTS}
    rows = [_claim_row(d, curves[d.label]) for d in DISTS]
    for dist in DISTS:
        rows += _agreement_rows(dist, jobs, rng)
    figures = [f"latency_vs_cost_{d.label.split('(')[0].lower()}.png" for d in DISTS]
    for dist, name in zip(DISTS, figures, strict=True):
        _figure(dist, curves[dist.label], out / name)
    return Reproduction(
        seed="replication", title=TITLE, citation=CITATION, rows=rows,
        figures=figures,
        readings=[
            "kill = r + 1 fresh copies, keep = the original and r replicas; every other copy "
            "is cancelled when a task's first copy ends (SPECULATION-MATH.md B0, B2)",
            "cost = machine time of all copies, including the original's time before the "
            "fork; 'replication cuts cost' means E[C]/n below E[X] (no replication)",
            "the distributions and sizes are those of SPECULATION-MATH.md B3's Monte Carlo "
            "table (the talk's families: Pareto, exponential, shifted exponential)",
            f"the claim is checked over the grid p in {P_GRID}, r in {R_GRID}, keep and kill",
        ],
        notes=[
            "published figures are qualitative claims (the papers' PDFs are not here); the "
            "closed forms are hedge's (re-derived in SPECULATION-MATH.md part B)",
            "keep under Pareto and shifted exponential: the closed form takes S at x_p "
            "(large-n limit); kill and exponential are exact in expectation",
            f"Monte Carlo: {jobs} jobs per row, numpy seed 0"
            + ("; --quick: 400 jobs, wider standard errors" if quick else ""),
        ],
    )
