"""Node analyzer evaluation and timing (run: .venv/bin/python tests/bench/bench_nodes.py).

1. Real traces in ../shared/data: interval ranking (95% CI of the mean) per trace: level
   sizes, and rank stability between the two halves of each trace.
2. ML-NA on a synthetic task history with planted, drifting weak nodes (the simulator was
   not available with degraded nodes + blacklisting when this was written): accuracy,
   precision and recall of next-period weak-node prediction, against two baselines measured
   in the same run: "persistence" (this period's k-means label) and "ranking" (this
   period's weak set from interval ranking).
3. Timing: vectorised ranking vs a straightforward per-node Python loop, same input.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from hedge.nodes.history import HISTORY_SCHEMA
from hedge.nodes.mlna import MLNAParams
from hedge.nodes.normalize import normalize
from hedge.nodes.ranking import rank_nodes, select_weak
from hedge.nodes.sources import load_histories, load_history
from hedge.nodes.stability import half_stability
from hedge.nodes.synthetic import synthetic_history
from hedge.reproduce.thesis import mlna_scores

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def real_traces() -> None:
    print("== 1. interval ranking (mean-ci, min 3 tasks) on real traces ==")
    hd = DATA / "hadoop_testdata"
    cases = [
        ("google 2011 task_events part 0", [DATA / "google_clusterdata_2011_2/task_events/"
                                            "part-00000-of-00500.csv.gz"], False),
        ("google 2011 task_events part 1", [DATA / "google_clusterdata_2011_2/task_events/"
                                            "part-00001-of-00500.csv.gz"], False),
        ("gridmix traces (23 files, 7-8 hosts each)",
         sorted((hd / "gridmix_system_traces").glob("*.json.gz")), True),
        ("rumen mr2 folder-input-trace", [hd / "rumen_small-trace-test/"
                                          "mr2_folder-input-trace.json.gz"], True),
        ("rumen mr1 job-tracker-logs-trace", [hd / "rumen_small-trace-test/"
                                              "mr1_job-tracker-logs-trace-output.gz"], True),
        ("sls 2jobs2min", [hd / "hadoop-sls/2jobs2min-rumen-jh.json"], True),
        (".jhist Sleep job", sorted((hd / "hadoop-mapreduce-client-hs").glob("*SUCCEEDED*")),
         True),
    ]
    for name, paths, by_type in cases:
        missing = [p for p in paths if not p.exists()]
        if not paths or missing:
            print(f"{name}: skipped, missing {missing or 'files'}")
            continue
        history = load_histories([str(p) for p in paths])
        data = normalize(history, by_type=by_type)
        ranking = rank_nodes(data, method="mean-ci")
        sizes = ranking.level_sizes()
        ranked = int((ranking.level >= 0).sum())
        halves = half_stability(data).summary()
        print(f"{name}: {history.num_rows} attempts, {data.n_nodes} nodes with normalised "
              f"durations, {ranked} ranked; levels {len(sizes) - (-1 in sizes)}; "
              f"level sizes {sizes}; weak(auto,k=5) "
              f"{len(select_weak(ranking, 'auto', 5))}")
        print(f"   halves: common {halves['common_nodes']}, spearman(mean) "
              f"{halves['spearman_mean']}, spearman(level) {halves['spearman_level']}, "
              f"same level {halves['same_level']}, jaccard(level 0) "
              f"{halves['jaccard_level0']}")


def evaluate(history: pa.Table, nodes: np.ndarray, weak: np.ndarray, period_seconds: float,
             params: MLNAParams, first_test: int) -> None:
    """Predict each period >= first_test from the history before it; compare with truth
    (:func:`hedge.reproduce.thesis.mlna_scores`).

    ``weak[p, i]``: ground truth for node ``nodes[i]`` (sorted names) in period p.
    """
    scores, periods, n_weak = mlna_scores(history, nodes, weak, period_seconds, params,
                                          first_test)
    print(f"   {weak.shape[0] - first_test} test periods, {periods} node-periods, "
          f"{n_weak} weak")
    for name, (acc, prec, rec) in scores.items():
        print(f"   {name:<13} accuracy {acc:.3f}  precision {prec:.3f}  recall {rec:.3f}")


def synthetic_mlna() -> None:
    print("== 2a. ML-NA on a synthetic task history with planted weak nodes ==")
    s = synthetic_history(n_nodes=100, n_periods=12, period_days=5, day_seconds=3600.0,
                          jobs_per_day=12, tasks_per_job=40, slowdown=2.0, noise=0.25,
                          seed=7, initial_weak=0.1, p_become_weak=0.02, p_recover=0.1)
    print("   100 nodes, slowdown 2x, noise sigma 0.25, P(become weak) 0.02, "
          "P(recover) 0.1 per period")
    evaluate(s.history, s.nodes, s.weak, s.period_seconds,
             MLNAParams(period_days=5, day_seconds=3600.0, window=6), first_test=6)


def simulated_mlna() -> None:
    print("== 2b. ML-NA on task histories from the simulator (ground-truth degraded nodes) ==")
    try:
        from hedge.sim.cluster import ClusterConfig
        from hedge.sim.engine import simulate
        from hedge.traces.synthetic import generate
    except ImportError as exc:
        print(f"   skipped: simulator not available ({exc})")
        return
    day, period_days, n_periods = 300.0, 5, 14
    period = day * period_days
    workload = generate(f"jobs={int(n_periods * period * 0.05)},tasks=20,mean=30,rate=0.05",
                        seed=3)
    config = ClusterConfig(nodes=40, slots=2, degraded=0.25, degrade_factor=3.0,
                           degrade_period=6 * period, degrade_gap=8 * period)
    result = simulate(workload, "none", config, seed=3)
    a = result.attempts
    names = np.array([f"n{i:03d}" for i in range(config.nodes)])
    n = len(a)
    history = pa.table({
        "job": [f"job{j}" for j in a.job], "task": [str(t) for t in a.task],
        "attempt": [str(i) for i in range(n)], "node": names[a.node].tolist(),
        "type": [""] * n, "start": a.start, "end": a.end,
        "state": np.where(a.outcome == 2, "KILLED", "SUCCEEDED").tolist(),
        "speculative": a.copy.astype(bool)}).cast(HISTORY_SCHEMA)
    d = result.degradation
    weak = np.zeros((n_periods, config.nodes), dtype=bool)
    for p in range(n_periods):  # weak: degraded for more than half of the period
        lo, hi = p * period, (p + 1) * period
        overlap = np.clip(np.minimum(d.end, hi) - np.maximum(d.start, lo), 0, None)
        share = np.bincount(d.node, weights=overlap, minlength=config.nodes) / period
        weak[p] = share > 0.5
    print(f"   {config.nodes} nodes x {config.slots} slots, {workload.n_jobs} jobs, {n} "
          f"attempts, policy none; degraded={config.degraded} factor 3x, episodes mean "
          f"{6 * period:g} s, gaps mean {8 * period:g} s; period = {period_days} x {day:g} s")
    evaluate(history, names, weak, period,
             MLNAParams(period_days=period_days, day_seconds=day, window=6), first_test=7)


def naive_rank(data) -> np.ndarray:
    """Per-node loop baseline: np.quantile per node and a per-node edge check per level."""
    lo, hi = [], []
    for i in range(data.n_nodes):
        z = data.z[data.node == i]
        lo.append(np.quantile(z, 0.025) if len(z) else np.nan)
        hi.append(np.quantile(z, 0.975) if len(z) else np.nan)
    return np.array(lo), np.array(hi)


def timing() -> None:
    print("== 3. timing ==")
    path = DATA / "google_clusterdata_2011_2/task_events/part-00000-of-00500.csv.gz"
    if not path.exists():
        print(f"skipped: {path} missing")
        return
    t0 = time.perf_counter()
    history = load_history(path)
    t1 = time.perf_counter()
    data = normalize(history)
    t2 = time.perf_counter()
    rank_nodes(data, method="band")
    t3 = time.perf_counter()
    naive_rank(data)
    t4 = time.perf_counter()
    print(f"google part 0: load {t1 - t0:.2f} s ({history.num_rows} attempts), normalise "
          f"{t2 - t1:.3f} s, rank (band, {data.n_nodes} nodes) {t3 - t2:.3f} s; per-node loop "
          f"baseline for the intervals alone {t4 - t3:.3f} s -> vectorised is "
          f"{(t4 - t3) / (t3 - t2):.1f}x faster")


if __name__ == "__main__":
    if not DATA.is_dir():
        print(f"needs the shared traces at {DATA}", file=sys.stderr)
    else:
        real_traces()
        timing()
    synthetic_mlna()
    simulated_mlna()
