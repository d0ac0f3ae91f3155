"""``hedge simulate``: replay a workload under each policy and compare them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hedge.errors import HedgeError
from hedge.outputs import check_output, write_atomic
from hedge.sim.memory import MemoryNeed, check_fits
from hedge.sim.paired import paired_summary
from hedge.sim.standings import standings_lines

# the simulator, the policies and the traces (numpy, numba, pyarrow, scipy) are imported
# where a run needs them: `hedge simulate --help` needs none of them
if TYPE_CHECKING:
    from hedge.policy.conf import UserSettings
    from hedge.sim.cluster import ClusterChoice
    from hedge.sim.sweep import RunSpec, RunSummary, WorkloadSource
    from hedge.traces.workload import Workload

# the default workload keeps ~3,000 slots busy: 1,000 nodes x 4 slots runs it at ~75 % load
DEFAULT_WORKLOAD_CLUSTER = "nodes=1000,slots=4"


def parse_seeds(text: str, option: str = "--seed") -> list[int]:
    """``"3"``, ``"1,2,5"`` or ``"0-4"`` -> seeds (non-negative integers, as numpy takes);
    a HedgeError naming ``option`` otherwise."""
    expected = f"{option} {text!r}: expected N, N1,N2,... or LOW-HIGH with 0 <= LOW <= HIGH"
    parts = text.split("-")
    try:
        if len(parts) == 2:
            low, high = int(parts[0]), int(parts[1])
            if not 0 <= low <= high:
                raise ValueError(text)
            return list(range(low, high + 1))
        if len(parts) == 1:
            return [int(x) for x in text.split(",")]
    except ValueError:
        pass
    raise HedgeError(expected)


def _policies(text: str, user: UserSettings | None = None) -> list[str]:
    """``--policy`` -> one ``name[:key=value,...]`` per run, each checked
    (hedge.policy.params); the parameters ``-D``/``--conf`` set (``spark.speculation.*`` for
    ``spark``, the ``mapreduce.job.speculative.*`` DefaultSpeculator reads for ``hadoop``) come
    first, ``--policy``'s own after them."""
    from hedge.policy import available
    from hedge.policy.params import parse_policy_list, policy_params, spec_text

    extra = user.policy_params if user is not None else {}
    entries = parse_policy_list(text)
    known = available()
    if [name for name, raw in entries] == ["all"] and not entries[0][1]:
        entries = [(name, {}) for name in known]
    if not entries:
        raise HedgeError("--policy: no policy given")
    specs = []
    for name, raw in entries:
        if name not in known:
            raise HedgeError(f"--policy: unknown policy '{name}', expected one of: "
                             f"{', '.join(known)}")
        for key in raw:
            if "." in key and key.split(".")[0] in ("mapreduce", "hedge", "spark"):
                raise HedgeError(f"--policy {name}:{key}: a configuration property, not a "
                                 f"parameter of '{name}'; give it as -D {key}=VALUE")
        merged = {**extra.get(name, {}), **raw}
        policy_params(name, merged, origin=f"--policy {name}:")  # raises on a bad name/value
        specs.append(spec_text(name, merged))
    return specs


def _cluster(source: WorkloadSource, text: str, workload: Workload | None) -> ClusterChoice:
    """The run's cluster: --cluster over the trace's machines (a trace), over the size made
    for the default workload, or over hedge.sim.cluster's defaults."""
    from hedge.sim.cluster import choose_cluster, cluster_from_trace, parse_cluster

    if workload is not None:
        return cluster_from_trace(text, len(workload.machine_names), workload.slots_per_machine,
                                  workload.slot_demand())
    if _is_default(source.synthetic):
        return choose_cluster(text, "sized for the default workload's load, about 75 %",
                              **parse_cluster(DEFAULT_WORKLOAD_CLUSTER).as_dict())
    return choose_cluster(text, "hedge.sim.cluster's defaults")


def _is_default(synthetic: str | None) -> bool:
    return synthetic is None or synthetic.split(":")[0] == "default"


def _size(source: WorkloadSource, workload: Workload | None) -> tuple[int, int]:
    """(jobs, tasks) of the workload, from the spec when it is not built yet (the default's
    task count is its fitted mean per job)."""
    from hedge.sim.sweep import default_jobs
    from hedge.traces import synthetic

    if workload is not None:
        return workload.n_jobs, workload.n_tasks
    if _is_default(source.synthetic):
        fit = synthetic.load_fit()
        spec = source.synthetic or "default"
        jobs = default_jobs(spec) if spec != "default" else int(fit["n_jobs"])
        return jobs, math.ceil(jobs * float(fit["n_tasks"]) / float(fit["n_jobs"]))
    spec = synthetic.parse_spec(str(source.synthetic))
    jobs = int(spec["jobs"])
    return jobs, jobs * (int(spec["tasks"]) + int(spec["reduces"]))


def _size_options(cluster_text: str, synthetic: str | None, trace: str | None,
                  workers: int) -> str:
    """The options that set a run's size, for the out-of-memory message."""
    given = [f"--cluster {cluster_text}" if cluster_text else "",
             f"--synthetic {synthetic}" if synthetic else "", f"--trace {trace}" if trace else "",
             f"--workers {workers}" if workers > 1 else ""]
    return ", ".join(g for g in given if g) or "the default workload"


def _describe(source: WorkloadSource, workload: Workload) -> str:
    name = source.trace or f"synthetic {source.synthetic or 'default'} ({workload.source})"
    return f"{name}: {workload.n_jobs:,} jobs, {workload.n_tasks:,} tasks"


def _label(index: int, runs: int, policy: str, seed: int, seeds: int) -> str:
    """The progress line's label: ``[2/4] late`` (``[2/8] late seed 1`` with many seeds)."""
    return f"[{index + 1}/{runs}] {policy}" + (f" seed {seed}" if seeds > 1 else "")


@click.command("simulate")
@click.option("--trace", type=click.Path(), help="A task trace (any format hedge reads).")
@click.option("--drop-negative", is_flag=True,
              help="Skip trace rows with a negative duration instead of failing (Alibaba "
                   "2017 has some; `hedge traces stats --drop-negative` counts them).")
@click.option("--trace-model", default="calibrated", show_default=True,
              help="How long a copy of a trace task takes (docs/trace-model.md): calibrated "
                   "(fitted on real copy races), inherent (as long as the original), transient "
                   "(a fresh draw from its job and phase) or lam=X (transient share 0..1).")
@click.option("--synthetic", help="Synthetic workload spec, e.g. "
              "jobs=50,tasks=200,dist=pareto:1.5,straggler_ratio=0.1, or 'default' (the "
              "Google-2011 fit), or 'default:jobs=N' (its first N jobs).")
@click.option("--policy", "policy", multiple=True, default=("none,hadoop",),
              show_default=True,
              help="Comma-separated policies, or 'all' (every registered policy); may be "
                   "given more than once (--policy none --policy hadoop).")
@click.option("--cluster", "cluster_text", default="",
              help="e.g. nodes=100,slots=4,heterogeneity=3.0,contention=2.5 "
                   "(see hedge.sim.cluster for every key; keys not given keep the default). "
                   "Default: with --trace, one node per machine the trace names (its slots "
                   "per machine if recorded), or, naming none, enough nodes for its load; "
                   f"{DEFAULT_WORKLOAD_CLUSTER} for the default "
                   "workload; else hedge.sim.cluster's defaults.")
@click.option("--seed", "seed_text", default="0", show_default=True,
              help="Seed, list (1,2,3) or range (0-4); one run per policy and seed.")
@click.option("--out", type=click.Path(), help="Write DIR/report.html with plots.")
@click.option("--json", "json_path", type=click.Path(), help="Write the table as JSON.")
@click.option("--deadline-factor", type=float,
              help="Deadline = F x the job's no-straggler run time; reports PoCD.")
@click.option("--deadline", "deadline", type=float,
              help="Fixed relative deadline: every job's deadline = arrival + SECONDS "
                   "(Chronos' model); not with --deadline-factor.")
@click.option("--blacklist", "blacklist", default=None,
              help="Nodes that get no new container: NODE or NODE@START-END (seconds), "
                   "comma-separated, e.g. 3,7@600-1200.")
@click.option("--workers", "--jobs", "workers", default=1, show_default=True, type=int,
              help="Worker processes for the policy x seed sweep (--jobs: the old name; it "
                   "never meant MapReduce jobs).")
@click.option("-D", "defines", multiple=True, metavar="KEY=VALUE",
              help="A speculation setting, repeatable: mapreduce.{map,reduce}.speculative, "
                   "mapreduce.job.speculative.* (caps on every policy's copies, as the AM "
                   "applies them; DefaultSpeculator's for 'hadoop'), spark.speculation."
                   "{quantile,multiplier,minTaskRuntime} for 'spark'. Overrides --conf.")
@click.option("--conf", "conf", type=click.Path(dir_okay=False),
              help="A Hadoop configuration file (mapred-site.xml): its speculation settings, "
                   "as -D takes them; other properties are skipped.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def simulate(trace: str | None, drop_negative: bool, trace_model: str,
             synthetic: str | None, policy: tuple[str, ...],
             cluster_text: str, seed_text: str, out: str | None, json_path: str | None,
             deadline_factor: float | None, deadline: float | None, blacklist: str | None,
             workers: int, quiet: bool, defines: tuple[str, ...] = (),
             conf: str | None = None) -> None:
    """Simulate each policy on a trace or synthetic workload and print one table."""
    from hedge.policy.conf import user_settings
    from hedge.report.table import format_table, oracle_note
    from hedge.sim.cluster import COPIES_NOTE, KILLS_NOTE, parse_blacklist
    from hedge.sim.metrics import json_safe, queue_note
    from hedge.sim.sweep import RunSpec, WorkloadSource, workload_for

    if trace is not None and not trace.strip():
        # an empty path (an unset shell variable) must not fall back to the default workload
        raise HedgeError("--trace '': expected the path of a trace file")
    if synthetic is not None and not synthetic.strip():
        raise HedgeError("--synthetic '': expected a workload spec (e.g. jobs=50,tasks=200) "
                         "or 'default'")
    if trace and synthetic:
        raise HedgeError("give either --trace or --synthetic, not both")
    if trace and not Path(trace).exists():
        raise HedgeError(f"--trace {trace}: no such file")
    if workers < 1:
        raise HedgeError(f"--workers {workers}: expected an integer >= 1")
    user = user_settings(conf, defines)  # -D, --conf: hedge.policy.conf
    if deadline is not None and deadline_factor is not None:
        raise HedgeError("give either --deadline or --deadline-factor, not both")
    if deadline is not None and not deadline > 0:
        raise HedgeError(f"--deadline {deadline!r}: expected seconds > 0")
    if drop_negative and not trace:
        raise HedgeError("--drop-negative applies to --trace only")
    # where the results go is checked before the runs, which may take hours, not after
    if json_path:
        check_output(Path(json_path), "--json", directory=False)
    if out:
        check_output(Path(out), "--out", directory=True)
    if trace:
        from hedge.traces.straggler_model import parse

        parse(trace_model)  # a bad --trace-model fails before any run
    elif trace_model != "calibrated":
        raise HedgeError("--trace-model applies to --trace only (a synthetic workload draws "
                         "its stragglers itself)")
    source = WorkloadSource(trace=trace, synthetic=synthetic, drop_negative=drop_negative,
                            trace_model=trace_model)
    seeds = parse_seeds(seed_text)
    names = _policies(",".join(policy), user)
    # a trace is read first: its machines size the cluster; a synthetic workload is built
    # only once the memory check has passed
    workload = workload_for(source, seeds[0]) if trace else None
    choice = _cluster(source, cluster_text, workload)
    cluster = choice.config
    parsed = parse_blacklist(blacklist)
    if parsed is not None:
        parsed.check(cluster.nodes)
    n_runs = len(names) * len(seeds)
    processes = min(workers, n_runs)
    jobs, tasks = _size(source, workload)
    check_fits(MemoryNeed(cluster.nodes, cluster.slots, tasks, jobs), processes,
               _size_options(cluster_text, synthetic, trace, workers))
    workload = workload or workload_for(source, seeds[0])
    what = _describe(source, workload)
    click.echo(f"workload: {what}", err=True)
    click.echo(f"cluster: {choice.describe()}", err=True)
    overload = choice.overload()
    if overload:
        click.echo(f"warning: {overload}", err=True)
    click.echo(f"note: {KILLS_NOTE[cluster.kills]}", err=True)
    click.echo(f"note: {COPIES_NOTE[cluster.copies]}", err=True)
    show = not quiet and workers == 1
    specs = [RunSpec(source, p, s, cluster, deadline_factor,
                     progress=_label(i, n_runs, p, s, len(seeds)) if show else False,
                     deadline=deadline, blacklist=blacklist,
                     speculation=user.speculation)
             for i, (p, s) in enumerate((p, s) for p in names for s in seeds)]
    for warning in user.warnings + _unused(user, specs):
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"speculation: {user.describe()}", err=True)
    notes = [f"workload: {what}", f"cluster: {choice.describe()}",
             f"seeds: {seed_text}",
             f"deadline factor: {deadline_factor if deadline_factor else 'none'}",
             f"fixed deadline: {f'{deadline:g} s' if deadline else 'none'}",
             f"blacklist: {blacklist or 'none'}", KILLS_NOTE[cluster.kills],
             COPIES_NOTE[cluster.copies], *([overload] if overload else [])]
    runs = _run_all(specs, workers, Path(out) if out else None, notes)
    rows = [{**json_safe(r.row), "cluster": choice.as_dict()} for r in runs]
    click.echo(format_table(rows))
    paired = paired_summary(rows)  # several seeds: each policy against the first, per seed
    for line in paired:
        click.echo(line)
    standing = standings_lines(rows)  # which policy to turn on: fastest, and for its waste
    for line in standing:
        click.echo(line)
    for row in rows:  # the speculation settings the runs applied (-D, --conf)
        row["speculation"] = dict(user.applied)
    queued = queue_note(rows)  # job times that are mostly the cluster's queue
    passed = oracle_note(rows)  # a policy above the oracle: it is no bound here
    said = [n for n in (queued, passed) if n]
    for note in dict.fromkeys([*(n for run in runs for n in run.notes), *said]):
        click.echo(f"note: {note}")
    if drop_negative:
        click.echo("note: trace rows with a negative duration were skipped (--drop-negative)",
                   err=True)
    if json_path:  # whole or not at all
        write_atomic(Path(json_path), json.dumps(rows, indent=2) + "\n")
    if out:
        from hedge.report.html import write_report

        path = write_report(Path(out), runs, "hedge simulate",
                            [*notes, *said], [*paired, *standing])
        click.echo(f"report: {path}", err=True)


def _run_all(specs: list[RunSpec], workers: int, out: Path | None,
             notes: list[str]) -> list[RunSummary]:
    """Every run; in one process with --out, the report is written after each run but the
    last (marked partial), so the first figures appear after the first run, not the last."""
    from hedge.sim.sweep import run_many, run_one

    if workers > 1 or out is None or len(specs) == 1:
        return run_many(specs, workers)
    from hedge.report.html import write_report

    runs: list[RunSummary] = []
    for spec in specs[:-1]:
        runs.append(run_one(spec))
        partial = f"partial: {len(runs)} of {len(specs)} runs done; rewritten as runs finish"
        path = write_report(out, runs, "hedge simulate", [partial, *notes])
        if len(runs) == 1:
            click.echo(f"report: {path} ({partial})", err=True)
    return [*runs, run_one(specs[-1])]


def _unused(user: UserSettings, specs: list[RunSpec]) -> list[str]:
    """Warnings for settings that only set parameters of a policy this run does not simulate."""
    run = {spec.policy.split(":")[0] for spec in specs}
    targets: dict[str, list[str]] = {}  # setting -> the policies it sets parameters of
    for name, keys in user.policy_only.items():
        for key in keys:
            targets.setdefault(key, []).append(name)
    unused: dict[tuple[str, ...], list[str]] = {}  # policies -> settings none of them uses
    for key, names in targets.items():
        if not run & set(names):
            unused.setdefault(tuple(names), []).append(key)
    return [f"{', '.join(keys)}: set(s) parameters of the "
            f"{' and '.join(repr(n) for n in names)} polic{'y' if len(names) == 1 else 'ies'}, "
            "which this run does not simulate; ignored" for names, keys in unused.items()]
