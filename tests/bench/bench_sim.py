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
these sizes, so expect ``>limit`` rows and about 10 min of CPU per such policy and workload;
adaptive, late, spark and oracle are gated (issue 21: 1-4 s CPU at 6,527 tasks, where
adaptive took 44 s before). A job its gate skips sleeps until its gate could want it or
it changes (``AppMasters.settle``; hadoop, spark and oracle say when, late's and
adaptive's jobs sleep only on Hadoop's cap), and the slots' reports are recorded only
where something reads them or a rate is about to change. Day, 26,045 / 97,059 tasks,
before -> after (one bench run each, CPU s; the machine was shared, so ``none`` itself
moved 0.5 -> 0.4 and 2.0 -> 1.4 s): hadoop 1.9 -> 1.6 / 7.9 -> 5.7 (steps 8,146 ->
2,873 / 25,012 -> 12,408; none visits 2,838 / 12,298), spark 2.8 -> 1.3 / 7.2 -> 4.5,
oracle 4.0 -> 2.7 / 16.8 -> 13.0, adaptive 10.4 -> 6.0 / 23.9 -> 14.1, late 6.5 -> 5.7 /
25.9 -> 19.9 (late and adaptive still visit every tick while a job is active: their
gates compare a job's attempts with each other, so any report can change the answer).
What is left of hadoop's and spark's 3-4x: each visited step still makes a few passes
over every slot (reports of the due jobs, the gate, the wake-up time, the slots about to
change rate), where an index of live slots by job would make them cost the due jobs'
slots; and oracle's gate passes jobs its ``decide`` then leaves alone (it scans them
every tick). Next step (one pass for the reports before a rate change, the rate update
and the rated jobs, ``kernels.heartbeats_and_rates``; no second recording of a job
skipped in the step, ``AppMasters._record``): passes of ``heartbeats_of`` at 26 k hadoop
4,852 -> 2,673, spark 5,441 -> 2,851, oracle 6,752 -> 4,200. CPU s, day 94,923 tasks,
minimum of 3 runs interleaved with the tree before (the machine was shared, single runs
varied up to 2x): none 1.19 -> 1.17, hadoop 4.19 -> 3.56 (3.5x -> 3.0x none), spark
3.95 -> 3.93, oracle 5.87 -> 5.78; late 18.4 -> 18.9 and adaptive 23.0 -> 21.9 (min of
2: within the noise); at 27,990 tasks every change is within the noise. What is left
of the per-step passes over every slot is mostly in the policies' gate and wake kernels
(``hedge.policy.baseline``: ``_hadoop_gate``, ``_hadoop_wake``: a pass over all slots
per call).

The ungated policies and adaptive (issue 21, S2; one bench run, shared machine, CPU s and
x none). Day 15,297 tasks: fresh-score 105.2 (652x), fresh-rate 145.3 (901x), window 2.0
(12.7x), hete-aware 2.1 (13.2x), adaptive 2.5 (15.6x: 6,718 steps, none 1,318); burst:
189.5 (551x), 132.2 (384x), 2.2, 1.9, 2.0 (none 0.3). Day 97,059 tasks: window 23.9
(15.0x), hete-aware 23.7 (14.9x), adaptive 21.4 (13.4x; 25,012 steps, none 12,298), none
1.6; fresh-* there exceed any useful limit. The fresh-* policies now recompute only the
time-dependent test when a scan sees the attempt table of the scan before
(``hedge.policy.detectors.FreshPolicy``): on 4,562 tasks of the day, 3 runs each interleaved
with the tree before (same digests), CPU s min-max: fresh-score 53.7-60.6 -> 32.1-39.9,
fresh-rate 46.1-59.9 -> 35.3-41.2; fresh-score day 15,297 tasks 105.2 -> 91.0 (separate
bench runs). No bit-identical gate or wake rule was found for
the five: the fresh-* remember the reports seen at each scan (a skipped scan at which a
report arrived changes that, and with nothing new the rule still moves with ``now``,
which only the job's own speed noise can judge); window and hete-aware change their state
at every scan (the node history records a task gone since the last scan with run time
``now - start`` and keeps each running attempt's progress; a window-start scan sets the
window's end); adaptive's gate moves with every report of any attempt of the job (the
job-wide mean), with time (rate estimates) and with the cluster's utilisation, so a job
could sleep only until its next report, and with ~2,800 busy slots each reporting every
3 s some job receives one at nearly every tick: no visit saved. A useful wake rule would
predict the reports' contents from the slots' trajectories (as hadoop's does) against a
bound of the job-wide mean and the worst utilisation; not done.
The time-driven policies (issue 21, S1; CPU s, x none in the same run): replicate, day
97,059 tasks, 32.7 (23.2x) -> 12.5 (6.1x), burst 44.2 (15.7x) -> 16.2 (6.5x) (a plan only
where it could decide a fork, a gate, sleep until a completion). chronos plans nothing here
(no deadlines); with ``deadline_factor`` 2 on the fitted day of 97,059 tasks (a script of
its own) chronos-clone 161 (96x) -> 20.9 (8.2x), chronos-restart 220 (132x) -> 14.5 (5.7x),
chronos-resume 181 (108x) -> 10.6 (4.1x). dolly and late: a gate (dolly) and a wake rule at
the next report (late) were measured, saved no CPU and were not kept. 1 M tasks (959,229,
day, one run each, load 2-4): none 21.8 s (peak 677 MB), spark 58.2 (2.67x, 692 MB),
hadoop 74.3 (3.41x, 696 MB), oracle 137.8 (6.32x, 715 MB).
window and hete-aware (issue 21, W): most of their CPU was scans, not the cost of one (97,059
tasks of the day: 18,732 scans, of which 4,329 window-start plans; the rest were completions
waking the job only so that its node history saw each finish). That history was a scan-cadence
artefact (a finished task's run time taken as ``now - start`` at the scan that noticed it gone);
it now reads each completed task's winning attempt with its true start and end
(``JobFacts.finished``, filled by the simulator and by ``hedge serve`` from the ended attempts
the shim sends), so completions no longer wake the job: scans 18,732 -> 7,193 (window) and
18,740 -> 7,197 (hete-aware); burst 22,609 -> 8,949 / 22,628 -> 8,213; their digests were
re-recorded (results move slightly, see commit 5266122). The bit-identical per-scan cuts
(winners among the gone attempts only, no ``np.isin``; the detector only when a plan has a
candidate) were within the noise on their own. CPU s (x none in the same run), each tree run
twice interleaved with the other on a machine at load 6-7 (single runs moved up to 2.5x: min
and max given), before (d57360f) -> after (627dc79): day 15,297 window 1.6-1.8 (5.6-10.4x) ->
0.9-2.3 (3.3-12.9x), hete-aware 1.5-2.6 -> 0.7-1.3 (2.7-7.5x); day 97,059 window 23.4-24.3
(11.6-11.7x) -> 10.7-11.6 (4.3-5.6x), hete-aware 19.6-21.7 (9.7-10.4x) -> 7.3-9.2
(3.0-4.4x); burst 15,297 window 2.4 (9.3-12.1x) -> 0.9-2.3 (2.7-7.9x), hete-aware 2.5-2.6 ->
0.9-1.2 (3.2-3.6x); burst 97,059 window 30.7-31.2 (12.5-13.0x) -> 12.8-14.8 (5.2-5.5x),
hete-aware 21.2-33.3 (8.9-13.5x) -> 9.5-11.8 (4.1-4.2x); none 2.0-2.8 at 97,059. What is
left: about 4,300 window-start plans at 97,059 tasks (one per window of 0.2 x the job's
fastest task; a plan with no candidate now costs a few array passes, the others the detector,
slot prediction and allocation) and the simulator's snapshot per scan; neither policy meets
3x none yet.
fresh-score and fresh-rate (issue 21, D): a scan gate (a job sleeps while its attempt table
is the one its last scan saw and the rule cannot yet flag a task it could copy: a bound on the
rule under a fixed table, ``hedge.detect.fresh.quiet_until``, or until a report could arrive)
and cheaper scans of a changed table (``PreviousReports`` in place; one peer measure per task
type). CPU s (x none, same run), before (d57360f) -> after (55fddf7), loaded machine (load
7-12): day 6,419 tasks, 3 runs each (two interleaved pairs): fresh-score 82.7-91.1
(535-1011x) -> 58.4-65.0 (433-771x), scans 58,519 -> 29,586; fresh-rate 78.8-99.3 -> 51.2-77.3
(529-1101x -> 488-816x), scans 58,519 -> 43,646; day 15,297, one run: fresh-score
103.2 (338x) -> 58.3 (174x), scans 75,525 -> 28,279; fresh-rate 93.9 (308x) -> 73.6 (220x),
scans 75,525 -> 65,798; burst 6,419: fresh-score 98.3 (934x) -> 68.6 (586x), fresh-rate 90.8
(862x) -> 82.8 (707x); burst 15,297: fresh-score 121.4 (298x) -> 69.0 (148x), scans 111,153
-> 34,015; fresh-rate 126.8 (311x) -> 90.8 (195x), scans 111,153 -> 71,522. Same digests. What
is left: nearly every remaining scan sees a new report (fresh-rate: most of them; each about
2 ms: the fresh ECT, peer rates and speed noise of hedge.estimate.runtime about 30 %, the
rule 12 %, snapshot validation 10 %, the snapshot 6 %), and the loop still visits every tick
(steps unchanged: some job receives a report at nearly every tick). Next: one compiled pass
per changed table (bit-identical sums and medians), or memory of the reports the AM received
rather than those seen at scans (a semantic change; it would let a gate skip a report's
arrival only with a bound on the rule over the reports to come). adaptive: not changed here.
late and replicate, cheaper scans (issue 21, task L; scans and steps unchanged). late:
``decide`` takes a type's quantile only when an attempt could be copied, both quantiles
from the sorted neighbours (``np.quantile`` only within rounding of the cut), slow nodes by
``bincount``; replicate: ``best_policy`` builds the kill step functions once for the p
grid and takes a min instead of sorting Plan objects (3.0 -> 1.9 ms a call). CPU s, each
tree run twice interleaved with the other (load 7-9; min and max), x none = over the
lower none of the run (15,297 tasks: day 0.20, burst 0.19; 97,059: day 1.50, burst 2.00),
before (55fddf7) -> after (5e92241): day 15,297 late 3.9-5.6 (19.5x) -> 4.0-5.6 (20.0x),
replicate 1.16-1.36 (5.8x) -> 0.90-1.30 (4.5x); burst 15,297 late 4.6-6.5 -> 5.2-5.8
(within the noise), replicate 1.35-1.60 (7.1x) -> 1.29-1.33 (6.8x); day 97,059 late
19.2-26.0 (12.8x) -> 17.9-22.9 (11.9x), replicate 14.0-14.1 (9.3x) -> 10.2-12.1 (6.8x);
burst 97,059 late 24.8-26.2 (12.4x) -> 19.7-22.4 (9.9x), replicate 14.8-17.3 (7.4x) ->
11.6-15.6 (5.8x). What is left: late scans ~4,600 times at 15,297 tasks (most scans copy a
task) and visits every tick while a job is active; a wake rule (a cell of fewer than two
busy slots or with every task copied sleeps until it changes, else until its next report or
an uncopied slot turns a minute old) halved the steps at 30,000 tasks but cut only 12 % at
97,059 and cost more than it saved (re-evaluated at every rate change), so it was not
kept: a useful one needs bounds of the reported rates over a horizon. replicate: a plan at
every completion from half the type's tasks until the fork.

Compiled cores, 2026-11-26 (issue 21; results bit-identical, golden digests; CPU s, x none
in the same run; ``--sizes 15000`` and ``97000`` now give 22,102 and 94,923 tasks): hedge-auto
(its judge in numba kernels, ``hedge.policy.auto_kernels``; scans unchanged) day 22,102
34.8 (143x) -> 10.8 (48x), 94,923 236.2 (147x) -> 79.7 (56x), one run per tree; Google 2011
part 1 71.9-77.2 -> 23.6-25.0 (two interleaved runs). fresh-* (verdict, new-table inputs and
report memory compiled, ``hedge.detect.fresh_kernels``, ``hedge.estimate.runtime_kernels``;
fresh-rate's scans 99,513 -> 43,032 by sleeping where its bar is NaN), two interleaved runs,
day 22,102: fresh-score 56.1-57.5 (234-269x) -> 21.5-22.1 (73-105x), fresh-rate 79.1-82.0
(342-370x) -> 19.5-21.9 (64-107x); burst 22,102: 62.2-64.1 -> 23.8-23.9, 84.1-95.7 ->
27.0-28.5. window and hete-aware (a compiled candidates pass, fewer equal slots in the
allocation): within the noise (day 94,923 window 9.3-9.6x -> 8.6-9.7x none). What is left
for all three: the scans themselves (each now costs about as much in the simulator's
snapshot and actuation, ``hedge.sim.am``, as in the policy) and, for window, a gate that
keeps its window starts.
The simulator's own work per scan (issue 21, A; results bit-identical, scans unchanged): the
running attempts' snapshot columns for every due job in one compiled pass per scan instant
(``kernels.running_columns``: last received report, first progress, task facts), sliced per
job into ``AttemptTable.of_columns`` (no per-job gathers, no dtype checks); queued copies
grouped by job once per instant; ``ClusterFacts.slot_free_at`` compiled
(``kernels.slot_free_at``); ``settle``'s choice of sleeping jobs in one pass
(``kernels.settling``); one busy-slot sum for the gates. CPU s (x none in the same run), the
tree before (ab1e439) and it plus these three commits each run twice, interleaved, load 5-7;
day 22,102: hedge-auto 9.5-10.2 (45.6-47.4x) -> 8.3-8.5 (42.5-42.7x), fresh-score 15.7-15.9
(70-80x) -> 13.5-14.0 (68-71x), late 2.7-2.8 (12.1-13.8x) -> 2.5-2.6 (12.7-12.9x), adaptive
2.3 (10.2-11.8x) -> 2.2 (11.0-11.1x), none 0.2; day 94,923, one run each: hedge-auto 62.3
(60.8x) -> 54.4 (52.2x), none 1.0; peak memory unchanged (298 -> 299 MB). What is left:
for hedge-auto and fresh-* about four fifths of a scan is now the policy's ``decide`` (a
profile of hedge-auto at 22,102 tasks: ``decide`` 10.7 s of 14.6, the simulator's snapshot,
actuation and cluster facts about 2.9 s; fresh-score spends about a quarter of its CPU in
its policy's ``ReportHistory.check``, 5.2 of 22.6 s profiled, model and policy code);
late and adaptive scan rarely (1,499 and 950 scans in 10,852 steps) and their cost is the
per-step gate, wake and record passes of every visited tick.
``--reference-sizes`` also times each run with ``Simulator.compiled = False`` (the numpy
reference code, bit-identical results; the gates of chronos and of fresh-* exist only in the
compiled form and they raise a HedgeError there) and prints ``kernels``: its CPU over the compiled run's.

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
