"""Benchmark: the detection-accuracy study and the estimation-error study (issue 4).

Run: .venv/bin/python tests/bench/bench_detect.py [--repetitions 50]

Prints, each measured in this run:
- the published grid's wall time against the 2-minute budget;
- per grid (published; noisy:0.3 + jvm 1:10): mean FP/FN of each detector over the cells
  where classic rate-based FP > 20 %, hedge's fresh-* as ratios of the classic detector,
  and how many cells meet the issue's targets;
- median absolute run-time error of jvm/fresh/rate as ratios of legacy (JVM delay 1-10 s).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hedge.detect.cli import target_summary
from hedge.detect.estimation_error import estimation_error
from hedge.detect.study import D_AVG, STUDY_DETECTORS, StudyConfig, grid, run_study

BUDGET_S = 120.0


def summarise(rows: list[dict], label: str) -> None:
    def key(r: dict) -> tuple:
        return tuple(sorted((k, v) for k, v in r.items()
                            if not k.startswith(("fp", "fn", "detector"))))

    hot = {key(r) for r in rows if r["detector"] == "rate" and r["fp_mean"] > 0.2}
    print(f"\n== {label}: {len(hot)} cells where classic rate FP > 20 %")
    print(f"{'detector':>12} {'mean FP':>8} {'mean FN':>8} {'FP / rate':>10}")
    stats = {}
    for name in STUDY_DETECTORS:
        cells = [r for r in rows if r["detector"] == name and key(r) in hot]
        if cells:
            stats[name] = (
                float(np.mean([r["fp_mean"] for r in cells])),
                float(np.nanmean([np.nan if r["fn_mean"] is None else r["fn_mean"]
                                  for r in cells])),
            )
    base = stats.get("rate", (float("nan"),))[0]
    for name, (fp, fn) in stats.items():
        print(f"{name:>12} {fp:8.3f} {fn:8.3f} {fp / base:10.2f}")
    for line in target_summary(rows, realism="progress" in rows[0]):
        if not line.startswith("  miss"):
            print(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    t0 = time.perf_counter()
    rows, _ = run_study(grid(), STUDY_DETECTORS, args.repetitions, args.seed)
    elapsed = time.perf_counter() - t0
    print(f"published grid, {len(STUDY_DETECTORS)} detectors, {args.repetitions} reps: "
          f"{elapsed:.1f} s = {elapsed / BUDGET_S:.2f} x the 2-minute budget")
    summarise(rows, "published grid")

    t0 = time.perf_counter()
    rows, _ = run_study(grid(progress="noisy:0.3", jvm_delay="1:10"), STUDY_DETECTORS,
                        args.repetitions, args.seed)
    print(f"\nrealism grid: {time.perf_counter() - t0:.1f} s")
    summarise(rows, "noisy:0.3 + jvm-delay 1:10")

    print("\n== run-time estimation error, JVM start-up 1-10 s, n=50, f=0.25, Pareto latency")
    print("(same (attempt, scan) pairs for all; 'own' = each over the pairs it covers)")
    print(f"{'progress':>10} {'d':>5} {'legacy s':>9} {'jvm/leg':>8} {'fresh/leg':>10} "
          f"{'rate/leg':>9} {'own fresh/leg':>14}")
    rng = np.random.default_rng(args.seed)
    for progress in ("linear", "noisy:0.3"):
        for d in D_AVG:
            cfg = StudyConfig(50, d, 0.25, "uniform", "pareto", progress, "1:10")
            rows = {r.estimator: r for r in estimation_error(cfg, args.repetitions, rng)}
            err = {name: r.median_abs_error for name, r in rows.items()}
            own = rows["fresh"].own_median_abs_error / rows["legacy"].own_median_abs_error
            print(f"{progress:>10} {d:>5g} {err['legacy']:9.2f} "
                  f"{err['jvm'] / err['legacy']:8.3f} {err['fresh'] / err['legacy']:10.3f} "
                  f"{err['rate'] / err['legacy']:9.3f} {own:14.3f}")


if __name__ == "__main__":
    main()
