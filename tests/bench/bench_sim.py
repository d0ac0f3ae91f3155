"""Simulator speed for every policy: CPU time, ratio to ``none``, scaling and peak memory.

Workloads: the Google-2011-fitted default (``hedge.traces.synthetic.default_workload``)
with enough jobs for each size (``day``), and the same jobs all arriving at t = 0
(``burst``: the all-at-once arrival, where simulated time is one long tail); cluster: 1,000
nodes x 4 slots (about 70 % busy at the day's load).

Each (workload, size, policy) runs in a child process of its own, so a slow policy cannot
block the table and the child's peak resident memory (``ru_maxrss``, which includes the
interpreter, numba and the workload itself: about 200 MB before the run) is that run's.
A child that exceeds ``--cpu-limit`` CPU seconds is stopped (RLIMIT_CPU) and printed as
``>limit``. Children run one at a time unless ``--jobs`` says otherwise.

Printed per run: CPU s of ``simulate`` alone (``time.process_time`` in the child: the
simulator is single-threaded, and CPU time stays meaningful when other processes share the
cores), its ratio to ``none``'s CPU on the same workload in the same bench run, the scaling
ratio (CPU per task relative to the smallest size of that workload; 1.0 = linear), the
number of scans (``decide`` calls), the instants the loop visited (``steps``), the policy
gate's calls (``gates``: each over every due job at one instant) and the child's peak RSS
in MB. Then one line per
policy and workload saying which of issue 21's targets hold (<= 60 s at 1 M, <= 3x none,
scaling <= 1.2, peak <= 1 GB); a figure at a size other than 1 M is said so.

``--quick`` runs 10,000 and 100,000 tasks, the default 100,000 and 1,000,000 (nominal:
the fitted default's job count for that many tasks at 35.5 per job; the real count is
printed). Today the slowest policies (fresh-*, hedge-auto) take far more than the limit at
these sizes, so expect ``>limit`` rows and about 10 min of CPU per such policy and workload.
The measurements of each speed change (issue 21), with what was left after it, are in
docs/simulator-speed.md.

``--reference-sizes`` also times each run with ``Simulator.compiled = False`` (the numpy
reference code, bit-identical results; the gates of chronos, fresh-* and hedge-auto exist
only in the compiled form and raise a HedgeError there) and prints ``kernels``: its CPU
over the compiled run's.

Usage: .venv/bin/python tests/bench/bench_sim.py [--quick] [--sizes 100000,1000000]
       [--policies none,hadoop,...] [--workloads day,burst] [--jobs 1] [--cpu-limit 600]
       [--reference-sizes 100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

TASKS_PER_JOB = 35.5  # mean of the fitted default, measured on 20,000 jobs
TARGET_CPU_S, TARGET_VS_NONE, TARGET_SCALING, TARGET_PEAK_MB = 60.0, 3.0, 1.2, 1024.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 10,000 and 100,000")
    parser.add_argument("--sizes", default=None, help="default 100000,1000000")
    parser.add_argument("--policies", default=None, help="default: every registered policy")
    parser.add_argument("--workloads", default="day,burst")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=1, help="children at once")
    parser.add_argument("--cpu-limit", type=float, default=600.0)
    parser.add_argument("--reference-sizes", default="")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    from hedge.policy.base import available

    sizes = [int(s) for s in (args.sizes or ("10000,100000" if args.quick
                                              else "100000,1000000")).split(",") if s]
    policies = args.policies.split(",") if args.policies else available()
    policies = ["none"] + [p for p in policies if p != "none"]  # the baseline runs first
    workloads = [w for w in args.workloads.split(",") if w]
    runs = [(w, s, p) for w in workloads for s in sizes for p in policies]
    print(f"cluster: {args.nodes} nodes x {args.slots} slots; CPU limit per run "
          f"{args.cpu_limit:.0f} s; peak = child's ru_maxrss", flush=True)
    print(f"{'workload':>8} {'tasks':>8} {'policy':>15} {'cpu_s':>7} {'vs_none':>7} "
          f"{'scaling':>7} {'scans':>8} {'steps':>8} {'gates':>8} {'peak_MB':>7} "
          f"{'kernels':>7}", flush=True)
    results: dict[tuple[str, int, str], dict] = {}
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for key, out in zip(runs, pool.map(lambda r: _spawn(args, *r), runs), strict=True):
            results[key] = out
            _print_row(key, out, results, sizes)
    _print_targets(results, workloads, sizes, policies)


def _spawn(args, workload: str, size: int, policy: str) -> dict:
    """One run in a child process under the CPU limit; its JSON line, or why it failed."""
    limit = int(args.cpu_limit) + 30  # the child's set-up is not timed

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))

    cmd = [sys.executable, __file__, "--child", f"{workload}:{size}:{policy}",
           "--nodes", str(args.nodes), "--slots", str(args.slots),
           "--reference-sizes", args.reference_sizes]
    proc = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=cap)
    if proc.returncode != 0:
        reason = ">limit" if proc.returncode in (-24, -9, 152) else proc.stderr.strip()[-200:]
        return {"error": reason}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _child(args) -> None:
    """Run one simulation and print its figures as one JSON line."""
    import numpy as np

    from hedge.sim.am import AppMasters
    from hedge.sim.cluster import ClusterConfig
    from hedge.sim.engine import Simulator, simulate
    from hedge.traces.synthetic import default_workload

    kind, size, policy = args.child.split(":")
    cluster = ClusterConfig(nodes=args.nodes, slots=args.slots)
    # load (or compile) the kernels before timing
    simulate(default_workload(0, n_jobs=20), policy, ClusterConfig(nodes=20), seed=0)
    workload = default_workload(0, n_jobs=max(1, round(int(size) / TASKS_PER_JOB)))
    if kind == "burst":
        workload.arrival[:] = 0.0
    counts = _count_steps_and_gates(Simulator, AppMasters)
    began = time.process_time()
    result = simulate(workload, policy, cluster, seed=0)
    cpu = time.process_time() - began
    steps, gates = counts["steps"], counts["gates"]
    kernels = float("nan")
    if str(size) in args.reference_sizes.split(","):
        Simulator.compiled = False
        began = time.process_time()
        simulate(workload, policy, cluster, seed=0)
        kernels = (time.process_time() - began) / cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    span = float(np.nanmax(result.finish) - workload.arrival.min())
    print(json.dumps({"tasks": workload.n_tasks, "cpu": cpu, "scans": result.scans,
                      "peak_mb": peak_mb, "span": span, "kernels": kernels,
                      "steps": steps, "gates": gates}))


def _count_steps_and_gates(simulator, appmasters) -> dict[str, int]:
    """Count the instants the loop visits and the policy-gate calls (``_gated``) of the
    next run (two counters on the hot path: under 1 % of its time)."""
    counts = {"steps": 0, "gates": 0}
    next_time, gated = simulator._next_time, appmasters._gated

    def visit(sim, t):
        counts["steps"] += 1
        return next_time(sim, t)

    def gate(am, t, due):
        counts["gates"] += 1
        return gated(am, t, due)

    simulator._next_time, appmasters._gated = visit, gate
    return counts


def _print_row(key, out: dict, results: dict, sizes: list[int]) -> None:
    workload, size, policy = key
    if "error" in out:
        print(f"{workload:>8} {size:>8} {policy:>15} {out['error']}", flush=True)
        return
    none = results.get((workload, size, "none"), {})
    vs_none = out["cpu"] / none["cpu"] if "cpu" in none else float("nan")
    scaling = _scaling(results, workload, sizes, policy, size)
    print(f"{workload:>8} {out['tasks']:>8} {policy:>15} {out['cpu']:>7.1f} {vs_none:>7.2f} "
          f"{scaling:>7.2f} {out['scans']:>8} {out.get('steps', -1):>8} "
          f"{out.get('gates', -1):>8} {out['peak_mb']:>7.0f} {out['kernels']:>7.2f}",
          flush=True)


def _scaling(results: dict, workload: str, sizes: list[int], policy: str, size: int) -> float:
    """CPU per task at ``size`` over CPU per task at the smallest size (nan if unknown)."""
    small = results.get((workload, sizes[0], policy), {})
    big = results.get((workload, size, policy), {})
    if "cpu" not in small or "cpu" not in big:
        return float("nan")
    return (big["cpu"] / big["tasks"]) / (small["cpu"] / small["tasks"])


def _print_targets(results: dict, workloads: list[str], sizes: list[int],
                   policies: list[str]) -> None:
    """Issue 21's targets per policy and workload, at the largest size."""
    size = sizes[-1]
    note = "" if size == 1_000_000 else f" (at {size} tasks, not 1 M: the 60 s target " \
                                        "is for 1 M)"
    print(f"\ntargets{note}: cpu <= {TARGET_CPU_S:.0f} s, vs_none <= {TARGET_VS_NONE}, "
          f"scaling <= {TARGET_SCALING}, peak <= {TARGET_PEAK_MB:.0f} MB")
    for workload in workloads:
        none = results.get((workload, size, "none"), {})
        for policy in policies:
            out = results.get((workload, size, policy), {})
            if "cpu" not in out:
                print(f"{workload:>8} {policy:>15} not measured: {out.get('error', '?')}")
                continue
            checks = {
                "cpu": out["cpu"] <= TARGET_CPU_S,
                "vs_none": "cpu" in none and out["cpu"] <= TARGET_VS_NONE * none["cpu"],
                "scaling": _scaling(results, workload, sizes, policy, size) <= TARGET_SCALING,
                "peak": out["peak_mb"] <= TARGET_PEAK_MB,
            }
            missed = [k for k, ok in checks.items() if not ok]
            print(f"{workload:>8} {policy:>15} " + ("all met" if not missed
                                                    else "missed: " + ", ".join(missed)))


if __name__ == "__main__":
    main()
