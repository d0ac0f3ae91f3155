"""Policy x seed sweeps, run in parallel processes.

Each run builds its workload inside the worker (from a trace path or a synthetic spec), so
nothing large crosses process boundaries; a run returns a ``RunSummary``: the table row
plus the few arrays the report plots.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from hedge.errors import HedgeError
from hedge.policy.base import policy_class
from hedge.policy.limits import SpeculationSettings
from hedge.policy.params import policy_spec
from hedge.sim.cluster import ClusterConfig, parse_blacklist
from hedge.sim.engine import simulate
from hedge.sim.metrics import summarize
from hedge.traces.workload import Workload


@dataclass(frozen=True)
class WorkloadSource:
    """Where a run's workload comes from: a trace path, a synthetic spec, or the default."""

    trace: str | None = None
    synthetic: str | None = None
    drop_negative: bool = False  # skip trace rows with a negative duration (Alibaba 2017)
    trace_model: str = "calibrated"  # hedge.traces.straggler_model.parse text

    def build(self, seed: int) -> Workload:
        if self.trace:
            from hedge.traces import load, straggler_model

            workload = load(self.trace, **({"negative": "drop"} if self.drop_negative else {}))
            workload = workload.require_tasks("to replay")
            return straggler_model.apply(workload, straggler_model.parse(self.trace_model))
        from hedge.traces import synthetic

        if not self.synthetic or self.synthetic == "default":
            return synthetic.default_workload(seed)
        if self.synthetic.startswith("default:"):  # the default's first N jobs: default:jobs=N
            return synthetic.default_workload(seed, n_jobs=default_jobs(self.synthetic))
        return synthetic.generate(synthetic.parse_spec(self.synthetic), seed)


def default_jobs(spec: str) -> int:
    """N from ``default:jobs=N``; anything else is a HedgeError naming the valid form."""
    key, _, value = spec.removeprefix("default:").partition("=")
    if key != "jobs" or not value.isdigit() or int(value) < 1:
        raise HedgeError(f"--synthetic {spec}: expected 'default' or 'default:jobs=N' with an "
                         "integer N >= 1")
    return int(value)


@dataclass
class RunSummary:
    """One run: its table row and the arrays behind the report's plots."""

    row: dict
    job_time: np.ndarray
    copy_start: np.ndarray
    degradation: list[dict]
    notes: list[str]  # what the workload rests on (its reader's and model's assumptions)


@dataclass(frozen=True)
class RunSpec:
    source: WorkloadSource
    policy: str
    seed: int
    cluster: ClusterConfig
    deadline_factor: float | None = None
    progress: bool | str = False  # a str: the progress line's label, e.g. '[2/4] late'
    deadline: float | None = None  # fixed relative deadline (s), instead of the factor
    blacklist: str | None = None  # hedge.sim.cluster.parse_blacklist text
    # the user's speculation settings (-D, --conf; hedge.policy.conf); None: Hadoop's
    speculation: SpeculationSettings | None = None


_CACHE: dict[tuple[WorkloadSource, int], Workload] = {}


def workload_for(source: WorkloadSource, seed: int) -> Workload:
    """The run's workload, built once per process (the last one is kept)."""
    key = (source, 0 if source.trace else seed)
    if key not in _CACHE:
        _CACHE.clear()  # keep one workload per process
        _CACHE[key] = source.build(seed)
    return _CACHE[key]


def run_one(spec: RunSpec) -> RunSummary:
    """Simulate one (policy, seed) and summarise it."""
    workload = workload_for(spec.source, spec.seed)
    name, params = policy_spec(spec.policy)  # policy: name[:key=value,...]
    result = simulate(workload, name, spec.cluster, seed=spec.seed, policy_params=params,
                      speculation=spec.speculation,
                      deadline_factor=spec.deadline_factor, progress=spec.progress,
                      deadline=spec.deadline, blacklist=parse_blacklist(spec.blacklist))
    row = summarize(result)
    row["policy"] = spec.policy
    row["seed"] = spec.seed
    row["tasks"] = int(workload.n_tasks)
    row["wall_seconds"] = round(result.wall_seconds, 3)
    att = result.attempts
    gap = policy_class(name).live_am_gap  # an assumption the figures rest on
    return RunSummary(row=row, job_time=result.job_time, copy_start=att.start[att.copy],
                      degradation=result.degradation.as_records(),
                      notes=[*workload.notes, *([gap] if gap else []), *result.policy_notes])


def run_many(specs: list[RunSpec], jobs: int = 1) -> list[RunSummary]:
    """Run every spec, in ``jobs`` processes when > 1; results in the order of ``specs``."""
    if jobs <= 1 or len(specs) <= 1:
        return [run_one(s) for s in specs]
    with ProcessPoolExecutor(max_workers=min(jobs, len(specs))) as pool:
        return list(pool.map(run_one, specs))
