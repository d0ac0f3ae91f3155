"""Blacklisting weak nodes in the simulator: job time and copy success vs plain `hadoop`.

Run: ``.venv/bin/python tests/bench/bench_blacklist.py [--seeds 1,2,3]``.

Procedure (issue 7's evaluation), per seed:
1. History: a workload runs under ``hadoop`` on a cluster where a fraction of nodes is
   degraded (ground truth from the simulator). Its attempts become a task history.
2. Analysis: normalised durations and interval ranking (``hedge.nodes``) order the nodes
   weakest first (level, then mean normalised duration); the k weakest are blacklisted.
3. Evaluation: a *new* workload runs under ``hadoop`` on the same cluster (same seed: same
   node speeds and degradation), once per k = 0..5 with those k nodes blacklisted.
The control repeats everything on a cluster without degraded nodes: blacklisting must cost
nothing there beyond noise. Figures are ratios against k = 0 (plain `hadoop`) of the same run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from hedge.nodes.history import HISTORY_SCHEMA  # noqa: E402
from hedge.nodes.normalize import normalize  # noqa: E402
from hedge.nodes.ranking import rank_nodes  # noqa: E402
from hedge.sim.cluster import ClusterConfig  # noqa: E402
from hedge.sim.engine import simulate  # noqa: E402
from hedge.sim.metrics import summarize  # noqa: E402
from hedge.traces.synthetic import generate  # noqa: E402

WORKLOAD = "jobs=120,tasks=40,mean=30,rate=0.08,straggler_ratio=0.05"
KS = range(6)


def cluster(degraded: float) -> ClusterConfig:
    # degraded nodes turn slow almost at once and stay slow for the whole horizon
    return ClusterConfig(nodes=40, slots=4, heterogeneity=1.5, degraded=degraded,
                         degrade_factor=4.0, degrade_period=1e7, degrade_gap=1.0)


def history_of(result) -> pa.Table:
    """The simulator's attempt records as a hedge.nodes task history."""
    a = result.attempts
    n = len(a)
    return pa.table({
        "job": [f"job{j}" for j in a.job], "task": [str(t) for t in a.task],
        "attempt": [str(i) for i in range(n)], "node": [f"n{i:03d}" for i in a.node],
        "type": [""] * n, "start": a.start, "end": a.end,
        "state": np.where(a.outcome == 2, "KILLED", "SUCCEEDED").tolist(),
        "speculative": a.copy.astype(bool)}).cast(HISTORY_SCHEMA)


def weakest_first(history: pa.Table) -> np.ndarray:
    """Node indices ordered weakest first: ranking level, then mean normalised duration."""
    ranking = rank_nodes(normalize(history), method="mean-ci")
    ranked = ranking.level >= 0
    order = np.lexsort((-ranking.mean[ranked], ranking.level[ranked]))
    names = ranking.nodes[ranked][order]
    return np.array([int(name[1:]) for name in names], dtype=np.int64)


def run_seed(seed: int, degraded: float) -> list[dict]:
    config = cluster(degraded)
    past = simulate(generate(WORKLOAD, seed=1000 + seed), "hadoop", config, seed=seed)
    order = weakest_first(history_of(past))
    truth = set(np.unique(past.degradation.node).tolist()) if degraded else set()
    future = generate(WORKLOAD, seed=2000 + seed)
    rows = []
    for k in KS:
        chosen = order[:k]
        result = simulate(future, "hadoop", config, seed=seed, blacklist=chosen.tolist())
        row = summarize(result)
        row.update(k=k, seed=seed, hits=len(truth & set(chosen.tolist())), weak=len(truth))
        rows.append(row)
    return rows


def report(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(" k | weak nodes hit | mean job time (x k=0) | p95 (x k=0) | copies won/launched")
    for k in KS:
        at = [r for r in rows if r["k"] == k]
        base = [r for r in rows if r["k"] == 0]
        mean = np.mean([a["mean_job_time"] / b["mean_job_time"] for a, b in zip(at, base, strict=True)])
        p95 = np.mean([a["p95_job_time"] / b["p95_job_time"] for a, b in zip(at, base, strict=True)])
        won = sum(r["copies_won"] for r in at)
        launched = sum(r["copies_launched"] for r in at)
        hits = sum(r["hits"] for r in at)
        weak = sum(r["weak"] for r in at)
        print(f" {k} | {hits:3d} of {k * len(at):3d} (weak {weak:2d}) | {mean:21.3f} | "
              f"{p95:11.3f} | {won}/{launched} = {won / max(launched, 1):.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"workload {WORKLOAD}; cluster 40 nodes x 4 slots, heterogeneity 1.5; "
          f"policy hadoop; seeds {seeds}")
    weak_rows = [r for s in seeds for r in run_seed(s, degraded=0.1)]
    report("10% of nodes degraded 4x (ground truth):", weak_rows)
    control = [r for s in seeds for r in run_seed(s, degraded=0.0)]
    report("control, no degraded nodes:", control)
    return 0


if __name__ == "__main__":
    sys.exit(main())
