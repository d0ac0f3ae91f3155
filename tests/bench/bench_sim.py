"""Simulator speed: tasks/s, speed-up over real time, and scaling with the task count.

Workload: the Google-2011-fitted default (``hedge.traces.synthetic.default_workload``) with
enough jobs for each size; cluster: 1,000 nodes x 4 slots (about 70 % busy at that load).
For each size it runs ``none`` (the baseline of this run: no scans at all) and ``hadoop``,
and prints

- tasks/s and the speed-up over real time (simulated seconds per wall second; YARN's
  Scheduler Load Simulator replays at wall-clock speed, 1x);
- hadoop's wall time relative to none's on the same workload;
- the scaling ratio (CPU time per task relative to the smallest size; 1.0 = linear).

The per-step work runs in compiled kernels (``hedge.sim.kernels``, numba). Before timing,
a tiny run loads them (printed: ``jit warm-up``, about 6 s CPU when numba's cache is cold,
0.3 s when warm). ``--reference-sizes`` (default 100,000) also runs each policy with
``Simulator.compiled = False`` (the numpy reference code, bit-identical results, i.e. the
code paths the kernels replaced) and prints ``kernels``: its CPU time over the compiled run's.

Times are CPU seconds of this process (``time.process_time``; the simulator is single-
threaded, so on an idle machine they equal wall time, and they stay meaningful when other
processes share the cores); wall seconds are printed beside them. ``--none-sizes`` adds
sizes run under ``none`` only (default 5,000,000: about 2 min; ``--none-sizes ""`` skips).
With ``--sizes 100000,1000000 --none-sizes ""`` the run takes about 2 min CPU (hadoop at
1 M: about 50 s, none about 23 s, the numpy references at 100 k about 17 s).

Usage: .venv/bin/python tests/bench/bench_sim.py [--sizes 100000,1000000]
       [--policies none,hadoop] [--none-sizes 5000000] [--reference-sizes 100000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hedge.policy.base import available
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import Simulator, simulate
from hedge.traces.synthetic import default_workload

TASKS_PER_JOB = 35.5  # mean of the fitted default, measured on 20,000 jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--policies", default="none,hadoop")
    parser.add_argument("--none-sizes", default="5000000")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--reference-sizes", default="100000")
    args = parser.parse_args()
    available()  # import every policy module before timing
    began = time.process_time()
    for policy in args.policies.split(","):  # load (or compile) the kernels
        simulate(default_workload(0, n_jobs=20), policy, ClusterConfig(nodes=20), seed=0)
    print(f"jit warm-up: {time.process_time() - began:.1f} s CPU")
    reference = {int(s) for s in args.reference_sizes.split(",") if s}
    cluster = ClusterConfig(nodes=args.nodes, slots=args.slots)
    policies = args.policies.split(",")
    base_per_task: dict[str, float] = {}
    print(f"cluster: {args.nodes} nodes x {args.slots} slots")
    print(f"{'tasks':>9} {'jobs':>6} {'policy':>7} {'cpu_s':>7} {'wall_s':>7} {'tasks/s':>8} "
          f"{'sim_s':>9} {'x_real':>7} {'vs_none':>7} {'scaling':>7} {'scans':>7} {'kernels':>7}")
    runs = [(int(s), policies) for s in args.sizes.split(",") if s]
    runs += [(int(s), ["none"]) for s in args.none_sizes.split(",") if s]
    for size, names in runs:
        workload = default_workload(0, n_jobs=max(1, round(size / TASKS_PER_JOB)))
        cpus: dict[str, float] = {}
        for policy in names:
            began, began_cpu = time.perf_counter(), time.process_time()
            result = simulate(workload, policy, cluster, seed=0)
            cpu = time.process_time() - began_cpu
            wall = time.perf_counter() - began
            cpus[policy] = cpu
            span = float(np.nanmax(result.finish) - workload.arrival.min())
            per_task = cpu / workload.n_tasks
            base_per_task.setdefault(policy, per_task)
            vs_none = cpu / cpus["none"] if "none" in cpus else float("nan")
            speedup = _reference_cpu(workload, policy, cluster) / cpu \
                if size in reference else float("nan")
            print(f"{workload.n_tasks:>9} {workload.n_jobs:>6} {policy:>7} {cpu:>7.1f} "
                  f"{wall:>7.1f} {workload.n_tasks / cpu:>8.0f} {span:>9.0f} {span / cpu:>7.0f} "
                  f"{vs_none:>7.2f} {per_task / base_per_task[policy]:>7.2f} "
                  f"{result.scans:>7} {speedup:>7.2f}", flush=True)


def _reference_cpu(workload, policy: str, cluster: ClusterConfig) -> float:
    """CPU seconds of the same run on the numpy reference code (no compiled kernels)."""
    Simulator.compiled = False
    try:
        began = time.process_time()
        simulate(workload, policy, cluster, seed=0)
        return time.process_time() - began
    finally:
        Simulator.compiled = True


if __name__ == "__main__":
    main()
