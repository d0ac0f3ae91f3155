"""Simulator speed: tasks/s, speed-up over real time, and scaling with the task count.

Workload: the Google-2011-fitted default (``hedge.traces.synthetic.default_workload``) with
enough jobs for each size; cluster: 1,000 nodes x 4 slots (about 70 % busy at that load).
For each size it runs ``none`` (the baseline of this run: no scans at all) and ``hadoop``,
and prints

- tasks/s and the speed-up over real time (simulated seconds per wall second; YARN's
  Scheduler Load Simulator replays at wall-clock speed, 1x);
- hadoop's wall time relative to none's on the same workload;
- the scaling ratio (wall time per task relative to the smallest size; 1.0 = linear).

Usage: .venv/bin/python tests/bench/bench_sim.py [--sizes 100000,1000000] [--policies none,hadoop]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hedge.policy.base import available
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import simulate
from hedge.traces.synthetic import default_workload

TASKS_PER_JOB = 35.5  # mean of the fitted default, measured on 20,000 jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--policies", default="none,hadoop")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--slots", type=int, default=4)
    args = parser.parse_args()
    available()  # import every policy module before timing
    cluster = ClusterConfig(nodes=args.nodes, slots=args.slots)
    policies = args.policies.split(",")
    base_per_task: dict[str, float] = {}
    print(f"cluster: {args.nodes} nodes x {args.slots} slots")
    print(f"{'tasks':>9} {'jobs':>6} {'policy':>7} {'wall_s':>8} {'tasks/s':>9} "
          f"{'sim_s':>9} {'x_real':>8} {'vs_none':>8} {'scaling':>8} {'scans':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        workload = default_workload(0, n_jobs=max(1, round(size / TASKS_PER_JOB)))
        walls: dict[str, float] = {}
        for policy in policies:
            began = time.perf_counter()
            result = simulate(workload, policy, cluster, seed=0)
            wall = time.perf_counter() - began
            walls[policy] = wall
            span = float(np.nanmax(result.finish) - workload.arrival.min())
            per_task = wall / workload.n_tasks
            base_per_task.setdefault(policy, per_task)
            vs_none = wall / walls["none"] if "none" in walls else float("nan")
            print(f"{workload.n_tasks:>9} {workload.n_jobs:>6} {policy:>7} {wall:>8.1f} "
                  f"{workload.n_tasks / wall:>9.0f} {span:>9.0f} {span / wall:>8.0f} "
                  f"{vs_none:>8.2f} {per_task / base_per_task[policy]:>8.2f} "
                  f"{result.scans:>8}", flush=True)


if __name__ == "__main__":
    main()
