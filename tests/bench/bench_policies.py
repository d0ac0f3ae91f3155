"""Policies on real traces under the trace straggler model, against none and the oracle.

For each workload (the real traces of ../shared/data that are present, and a synthetic grid)
and each trace model (``calibrated`` and ``inherent``: nothing to gain), every policy runs on
the same workload and cluster (the trace's own machines, as ``hedge simulate`` takes them;
seed 0), and the table prints, relative to ``none`` in the same run:

- ``mean`` and ``p95``: job time ratios (lower is better);
- ``machine``: machine-time ratio; ``waste``: slot-seconds of killed attempts over hadoop's
  (``-`` when hadoop wasted nothing); ``lost``: the share of the policy's own waste held by
  killed copies (races its copies lost); the rest is originals killed when a copy won;
- ``of oracle``: the share of the oracle's mean-job-time gain over none that the policy
  captures (1.0 = all of it; ``-`` when the oracle gains nothing).

``oracle:after_reports=2`` is the same oracle allowed to copy a task only once two progress
reports of it have reached the AM (the first moment a start-up-free rate exists): its share
is what remains for any policy that detects from heartbeats, however good its judgement, so
a policy's shortfall splits into waiting for reports (1 - that share) and judgement (the rest).

Issue 16's targets read off it: hedge-auto's mean and p95 at or below every baseline's with
waste at or below hadoop's; at least 0.7 of the oracle's gain; under ``inherent`` within 1% of
none in job and machine time. Where the first two pull apart (a baseline faster than
hedge-auto only by wasting more), the verdict also says whether any baseline beats hedge-auto
on both mean job time and waste (``hedge.sim.standings``: hedge-auto is then on the frontier
an operator chooses from). Nothing is tuned here: hedge-auto runs with its defaults.

Each workload's table ends with hedge-auto's targets, met or MISSED, with the figure. The
real traces are one workload each, run on seed 0 (``--trace-seeds`` for more: the trace is the
workload, but under the calibrated model the seed draws the copies' slowdowns; on Google 2011
part 0, seeds 0-2, hedge-auto's share of the oracle's gain was 0.71, 0.67 and 0.51); each
synthetic workload runs on several seeds, since one seed's share moves by up to 0.3
(synthetic-busy, hedge-auto of 2026-11-26: 0.70-0.98 over seeds 0-7).

Usage: .venv/bin/python tests/bench/bench_policies.py [--quick] [--policies a,b,...]
  [--seeds 0,1,2] [--trace-seeds 0] [--workloads google-part0,yh1-tr,...]
  [--policies-for WORKLOAD=a,b,...]
  [--cpu-limit SECONDS]
  --quick: the MRv1 sample and one synthetic workload, seed 0 only (about a minute of CPU).
  --policies-for: the policies of one workload (repeatable), in place of --policies there;
    e.g. --policies-for alibaba-2017=none,hadoop,hedge-auto,oracle.
  --cpu-limit: each run in a child process held to that many CPU seconds; a run that
    passes it is listed as not finished (with the CPU it had) and the others still compare.
    Alibaba 2017 and YH1 need it: their slow baselines take far longer than ``none``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import resource
import signal
import time
from multiprocessing.connection import Connection
from pathlib import Path

from hedge.errors import HedgeError
from hedge.policy.params import parse_policy_list, policy_spec
from hedge.sim.cli import parse_seeds
from hedge.sim.cluster import ClusterConfig, cluster_from_trace
from hedge.sim.standings import standings
from hedge.sim.sweep import RunSpec, WorkloadSource, run_one, workload_for

CEILING = "oracle:copy=median,after_reports=2"  # the oracle an AM could at best approach
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
TRACES = {  # name -> path under ../shared/data: each format issue 16 names, once
    "mrv1-sample": "hadoop_testdata/rumen_small-trace-test/mr1_sample-job-tracker-logs.gz",
    "google-part0": "google_clusterdata_2011_2/task_events/part-00000-of-00500.csv.gz",
    "google-part1": "google_clusterdata_2011_2/task_events/part-00001-of-00500.csv.gz",
    "alibaba-2017": "alibaba_v2017/batch_task.csv",
    "sls-rumen": "hadoop_testdata/hadoop-sls/2jobs2min-rumen-jh.json",
    "gridmix-rumen": "hadoop_testdata/gridmix_system_traces/trace_12m.json.gz",
    "swim-fb": "swim_facebook/FB-2009_samples_24_times_1hr_0.tsv",
    "yh1-tr": "hawk_eagle_tr_traces/YH1_sub.tr.gz",
    "spark-yarn": "spark_eventlogs/application_1628109047826_1317105",
}
# Alibaba 2017 records some tasks as ending a second before they were created; hedge refuses
# them unless told to drop them (and counts them): the bench drops them.
DROP_NEGATIVE = {"alibaba-2017"}
# Not run by default, for their CPU: the Hawk/Eagle Google subtrace, 10,000 jobs (``none``
# alone takes about 80 s), and SWIM's FB-2010 day, 8.5 M synthesised tasks on 472 nodes
# (none, hadoop and hedge-auto together 344 s of CPU and 4.8 GB); --workloads goog-tr or
# swim-fb-2010 runs them (with --cpu-limit: the slow baselines take far longer).
OPTIONAL = {"goog-tr": "hawk_eagle_tr_traces/GOOG_subtrace.tr.gz",
            "swim-fb-2010": "swim_facebook/FB-2010_samples_24_times_1hr_0.tsv"}
SYNTHETIC = {  # name -> (spec, cluster)
    "synthetic-busy": ("jobs=40,tasks=40,straggler_ratio=0.1,slowdown=2:5", "nodes=40,slots=4"),
    "synthetic-idle": ("jobs=40,tasks=40,straggler_ratio=0.1,slowdown=2:5", "nodes=400,slots=4"),
}
POLICIES = ("none", "hadoop", "late", "mantri", "dolly", "spark", "spark-legacy", "adaptive",
            "fresh-rate", "chronos-clone", "window", "hedge-auto", "oracle:after_reports=2",
            "oracle:copy=median", CEILING, *(f"{CEILING},margin={m}" for m in (10, 30, 100, 300, 1000)),
            "oracle")


def workloads(quick: bool, chosen: set[str] | None = None,
              ) -> list[tuple[str, WorkloadSource, ClusterConfig]]:
    """The workloads to run: ``chosen`` names them (default: every one but OPTIONAL's, or with
    ``quick`` the MRv1 sample and synthetic-busy)."""
    if chosen is None:
        chosen = {"mrv1-sample", "synthetic-busy"} if quick else {*TRACES, *SYNTHETIC}
    out = []
    for name, relative in {**TRACES, **OPTIONAL}.items():
        if name not in chosen:
            continue
        path = SHARED / relative
        if not path.exists():
            print(f"skipped {name}: {path} not found")
            continue
        for model in ("calibrated", "inherent"):
            source = WorkloadSource(trace=str(path), trace_model=model,
                                    drop_negative=name in DROP_NEGATIVE)
            wl = workload_for(source, 0)
            cluster = cluster_from_trace("", len(wl.machine_names), wl.slots_per_machine,
                                         wl.slot_demand())
            out.append((f"{name} ({model})", source, cluster.config))
    for name, (spec, cluster) in SYNTHETIC.items():
        if name not in chosen:
            continue
        out.append((name, WorkloadSource(synthetic=spec), ClusterConfig(
            **{k: int(v) for k, v in (kv.split("=") for kv in cluster.split(","))})))
    return out


def ratio(x: float, base: float) -> str:
    return f"{x / base:.3f}" if base and math.isfinite(x) and math.isfinite(base) else "-"


def run_limited(spec: RunSpec, cpu_limit: float | None) -> tuple[dict | None, float]:
    """One run's summary row and the CPU seconds it took; the row is None when the run
    passed ``cpu_limit`` (None: no limit, run in this process)."""
    if cpu_limit is None:
        start = time.process_time()
        row = run_one(spec).row
        return row, time.process_time() - start
    workload_for(spec.source, spec.seed)  # loaded once here, inherited by each forked child
    reader, writer = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(
        target=_child, args=(spec, cpu_limit, writer))
    before = _children_cpu()
    child.start()
    writer.close()  # the child holds the only writer: EOF when it dies without a row
    try:
        row = reader.recv()
    except EOFError:
        row = None
    child.join()
    cpu = _children_cpu() - before
    # the kernel ends a child past its soft limit with SIGXCPU, past its hard one with SIGKILL
    if row is None and child.exitcode not in (-signal.SIGXCPU, -signal.SIGKILL):
        raise RuntimeError(f"{spec.policy}: the run failed (exit code {child.exitcode})")
    return row, cpu


def _child(spec: RunSpec, cpu_limit: float, writer: Connection) -> None:
    soft = math.ceil(cpu_limit)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    writer.send(run_one(spec).row)
    writer.close()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # waited-for children only
    return usage.ru_utime + usage.ru_stime


def run(name: str, source: WorkloadSource, cluster: ClusterConfig, policies: list[str],
        seed: int = 0, cpu_limit: float | None = None) -> None:
    rows, cpu, unfinished = {}, {}, {}
    for policy in policies:
        row, seconds = run_limited(RunSpec(source, policy, seed, cluster), cpu_limit)
        if row is None:
            unfinished[policy] = seconds
        else:
            rows[policy], cpu[policy] = row, seconds
    if "none" not in rows:
        print(f"\n{name}: none did not finish within {cpu_limit:.0f} s of CPU; nothing to "
              "compare against")
        return
    none, hadoop = rows["none"], rows.get("hadoop")
    oracle_gain = none["mean_job_time"] - rows["oracle"]["mean_job_time"] \
        if "oracle" in rows else 0.0
    print(f"\n{name}: {none['jobs']} jobs, {none['tasks']} tasks, {cluster.nodes} nodes x "
          f"{cluster.slots} slots; none's jobs waited "
          f"{none['first_slot_wait_s'] / none['mean_job_time']:.0%} of their mean job time "
          "for a first slot")
    width = max(22, *(len(p) for p in rows))
    print(f"  {'policy':{width}} {'mean':>6} {'p95':>6} {'machine':>8} {'waste':>6} {'copies':>7} "
          f"{'won':>5} {'lost':>5} {'of oracle':>9} {'cpu s':>6}")
    for policy, row in rows.items():
        waste = ratio(row["wasted_s"], hadoop["wasted_s"]) if hadoop else "-"
        gain = none["mean_job_time"] - row["mean_job_time"]
        share = f"{gain / oracle_gain:.2f}" if oracle_gain > 1e-9 else "-"
        lost = f"{row['wasted_copies_s'] / row['wasted_s']:.2f}" if row["wasted_s"] else "-"
        print(f"  {policy:{width}} {ratio(row['mean_job_time'], none['mean_job_time']):>6} "
              f"{ratio(row['p95_job_time'], none['p95_job_time']):>6} "
              f"{ratio(row['machine_time'], none['machine_time']):>8} {waste:>6} "
              f"{row['copies_launched']:>7} {row['copies_won']:>5} {lost:>5} {share:>9} "
              f"{cpu[policy]:>6.1f}", flush=True)
    for policy, seconds in unfinished.items():
        print(f"  {policy:{width}} did not finish: stopped at {seconds:.0f} s of CPU "
              f"(--cpu-limit {cpu_limit:g})", flush=True)
    if "hedge-auto" in rows:
        print(f"  hedge-auto targets: {verdict(rows, name.endswith('(inherent)'))}"
              + (f" (not checked against {', '.join(unfinished)}: unfinished)"
                 if unfinished else ""))
    elif "hedge-auto" in unfinished:
        print("  hedge-auto targets: not checked (hedge-auto did not finish)")


def verdict(rows: dict[str, dict], inherent: bool) -> str:
    """Issue 16's targets for hedge-auto on one workload, each met or missed with its
    figure (under ``inherent``: the no-harm target only)."""
    auto, none = rows["hedge-auto"], rows["none"]
    if inherent:
        worst = max(auto["mean_job_time"] / none["mean_job_time"],
                    auto["machine_time"] / none["machine_time"])
        return f"no harm (within 1% of none): {_met(worst <= 1.01)} ({worst:.3f})"
    out = []
    for key, label in (("mean_job_time", "mean"), ("p95_job_time", "p95")):
        rivals = {p: r[key] for p, r in rows.items()
                  if p not in ("none", "hedge-auto") and not p.startswith("oracle")}
        beaten_by = [p for p, v in rivals.items() if v < auto[key] - 1e-9]
        out.append(f"{label} <= every baseline: {_met(not beaten_by)}"
                   + (f" (beaten by {','.join(beaten_by)})" if beaten_by else ""))
    if "hadoop" in rows:
        hadoop_waste = rows["hadoop"]["wasted_s"]
        out.append(f"waste <= hadoop's: {_met(auto['wasted_s'] <= hadoop_waste + 1e-9)}")
    # where the two targets above pull apart: a baseline faster only by wasting more
    ranked = standings([{**r, "policy": p} for p, r in rows.items()])
    auto_standing = next(s for s in ranked if s.policy == "hedge-auto")
    beaters = [s.policy for s in ranked if s.beats(auto_standing)]
    out.append("not beaten on both mean and waste: " + _met(not beaters)
               + (f" (by {','.join(beaters)})" if beaters else ""))
    if "oracle" in rows:
        gain = none["mean_job_time"] - rows["oracle"]["mean_job_time"]
        if gain < 0.01 * none["mean_job_time"]:  # within the no-harm tolerance: noise
            out.append(f"share of oracle's gain: none to share (the oracle gains "
                       f"{gain / none['mean_job_time']:.1%} of none's mean job time)")
        else:
            share = (none["mean_job_time"] - auto["mean_job_time"]) / gain
            out.append(f">= 0.7 of oracle's gain: {_met(share >= 0.7)} ({share:.2f})"
                       + _ceiling(rows, gain))
    return "; ".join(out)


def _ceiling(rows: dict[str, dict], gain: float) -> str:
    """What an AM could reach at most, for context: the oracle told only a copy's
    distribution and held to two progress reports, its share and waste over hadoop's; and,
    of its runs with a larger ``margin`` (only copies that save that many seconds), the best
    share at no more than hadoop's waste (hedge-auto's waste target)."""
    none, hadoop = rows["none"], rows.get("hadoop")
    ceilings = {p: r for p, r in rows.items() if p.startswith(CEILING)}
    if CEILING not in ceilings or hadoop is None:
        return ""

    def share(row: dict) -> float:
        return (none["mean_job_time"] - row["mean_job_time"]) / gain

    top = ceilings[CEILING]
    text = (f" [an AM's ceiling ({CEILING}): {share(top):.2f} at "
            f"{ratio(top['wasted_s'], hadoop['wasted_s'])} x hadoop's waste")
    frugal = [(share(r), p) for p, r in ceilings.items()
              if r["wasted_s"] <= hadoop["wasted_s"] + 1e-9]
    if len(ceilings) > 1:
        best = max(frugal, default=None)
        text += (f"; within hadoop's waste, by margin: {best[0]:.2f} ({best[1]})" if best
                 else "; none of its margins stays within hadoop's waste")
    return text + "]"


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--seeds", default=None,
                        help="seeds of the synthetic workloads (default 0,1,2; --quick 0)")
    parser.add_argument("--trace-seeds", default="0",
                        help="seeds of the real traces (default 0); the trace is the workload, "
                        "but under the calibrated model the seed draws the copies' slowdowns")
    parser.add_argument("--workloads", default=None,
                        help="comma-separated names of " + ", ".join(
                            [*TRACES, *OPTIONAL, *SYNTHETIC]) + " (default: all but "
                        + ", ".join(OPTIONAL) + ")")
    parser.add_argument("--policies-for", action="append", default=[],
                        metavar="WORKLOAD=POLICIES",
                        help="the policies of one workload, in place of --policies there "
                        "(repeatable)")
    parser.add_argument("--cpu-limit", type=float, default=None, metavar="SECONDS",
                        help="CPU seconds each run may take, in a child process; a run "
                        "past it is listed as not finished (default: no limit)")
    options = parser.parse_args()
    if options.cpu_limit is not None and not (math.isfinite(options.cpu_limit)
                                              and options.cpu_limit > 0):
        parser.error(f"--cpu-limit {options.cpu_limit:g}: expected a positive number of "
                     "seconds")
    chosen = None
    if options.workloads:
        chosen = {w.strip() for w in options.workloads.split(",")}
        unknown = chosen - {*TRACES, *OPTIONAL, *SYNTHETIC}
        if unknown:
            parser.error(f"--workloads: unknown {', '.join(sorted(unknown))}; expected names "
                         f"from {', '.join([*TRACES, *OPTIONAL, *SYNTHETIC])}")
    seeds = seed_list(parser, options.seeds or ("0" if options.quick else "0,1,2"), "--seeds")
    policies = policy_names(parser, options.policies, "--policies")
    per_workload = {}
    for item in options.policies_for:
        workload, sep, text = item.partition("=")
        workload = workload.strip()
        if not sep or workload not in {*TRACES, *OPTIONAL, *SYNTHETIC}:
            parser.error(f"--policies-for {item!r}: expected WORKLOAD=POLICIES with WORKLOAD "
                         f"one of {', '.join([*TRACES, *OPTIONAL, *SYNTHETIC])}")
        per_workload[workload] = policy_names(parser, text, f"--policies-for {workload}")
    trace_seeds = seed_list(parser, options.trace_seeds, "--trace-seeds")
    for name, source, cluster in workloads(options.quick, chosen):
        for seed in (seeds if source.synthetic else trace_seeds):
            label = f"{name} seed {seed}" if source.synthetic or len(trace_seeds) > 1 else name
            run(label, source, cluster, per_workload.get(name.split(" (")[0], policies), seed,
                options.cpu_limit)


def seed_list(parser: argparse.ArgumentParser, text: str, option: str) -> list[int]:
    """Seeds as ``hedge simulate --seed`` takes them (``0,1,2`` or ``0-4``); anything else
    ends the bench with the message (exit code 2)."""
    try:
        return parse_seeds(text, option)
    except HedgeError as error:
        parser.error(str(error))


def policy_names(parser: argparse.ArgumentParser, text: str, option: str) -> list[str]:
    """``text``'s policies as run specs, ``none`` first if missing (every ratio needs it);
    an unknown policy or parameter ends the bench with the message and exit code 2."""
    try:
        names = [name + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params
                         else "") for name, params in parse_policy_list(text, option)]
        for name in names:
            policy_spec(name, option)
    except HedgeError as err:  # messages about a parameter name the option already
        parser.error(str(err) if str(err).startswith(option) else f"{option} {text!r}: {err}")
    if not names:
        parser.error(f"{option} {text!r}: no policy named")
    return names if "none" in names else ["none", *names]


if __name__ == "__main__":
    main()
