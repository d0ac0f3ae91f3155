"""Synthetic workloads: from a command-line spec, or the Google-2011-fitted default.

Spec (``parse_spec("jobs=50,tasks=200,dist=pareto:1.5,straggler_ratio=0.1")``), keys:

- ``jobs`` (int >= 1, 50), ``tasks`` (maps per job, int >= 1, 200), ``reduces`` (reduces
  per job, int >= 0, 0)
- ``dist``: task work distribution with mean ``mean``: ``uniform`` (on [0.5, 1.5] x mean),
  ``pareto:a`` (a > 1; Pareto I with scale mean (a-1)/a), ``lognormal:s`` (s > 0; log-sd s,
  log-mean ln(mean) - s^2/2), ``constant``; default ``lognormal:0.5``
- ``mean`` (mean task work, s, > 0, 10)
- ``straggler_ratio`` (in [0, 1], 0): exactly round(ratio x tasks) tasks, chosen uniformly,
  get a ``straggler_factor`` drawn uniformly from ``slowdown`` (``lo:hi``, 1 <= lo <= hi,
  default 2:5). ``duration`` stays the normal work; the simulator applies the factor.
- ``rate`` (job arrivals per s, Poisson, >= 0, 0): 0 puts every job at time 0.

``generate(spec, seed)`` is deterministic in ``seed``. ``default_workload(seed)`` draws a
workload from parameters fitted to the Google 2011 sample (``hedge/data/google2011_fit.json``,
see ``hedge.traces.fit``); it needs no trace at run time.
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np

from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE
from hedge.traces.workload import Workload

DEFAULTS: dict[str, object] = {
    "jobs": 50, "tasks": 200, "reduces": 0, "dist": ("lognormal", 0.5), "mean": 10.0,
    "straggler_ratio": 0.0, "slowdown": (2.0, 5.0), "rate": 0.0,
}
_RANGES = {
    "jobs": "an integer >= 1", "tasks": "an integer >= 1", "reduces": "an integer >= 0",
    "dist": "uniform, constant, pareto:<shape > 1> or lognormal:<sigma > 0>",
    "mean": "a number > 0 (seconds)", "straggler_ratio": "a number in [0, 1]",
    "slowdown": "lo:hi with 1 <= lo <= hi",
    "rate": "0 or a number >= 1e-8 (jobs per second)",
}


MIN_RATE = 1e-8


def _bad(key: str, value: str) -> HedgeError:
    return HedgeError(f"synthetic spec: key '{key}': expected {_RANGES[key]}, found {value!r}")


def _parse_value(key: str, value: str) -> object:
    try:
        if key in ("jobs", "tasks", "reduces"):
            number = int(value)
            if number < (0 if key == "reduces" else 1):
                raise ValueError
            return number
        if key in ("mean", "rate", "straggler_ratio"):
            number = float(value)
            # a rate below MIN_RATE spaces jobs by more than 1e8 s (1e-320 made 1/rate
            # infinite and stalled the simulator)
            ok = {"mean": number > 0, "rate": number == 0 or number >= MIN_RATE,
                  "straggler_ratio": 0 <= number <= 1}[key]
            if not (ok and np.isfinite(number)):
                raise ValueError
            return number
        if key == "slowdown":
            lo, hi = (float(v) for v in value.split(":"))
            if not (1 <= lo <= hi and np.isfinite(hi)):
                raise ValueError
            return (lo, hi)
        name, _, param = value.partition(":")
        if name in ("uniform", "constant") and not param:
            return (name, 0.0)
        shape = float(param)
        valid = (name == "pareto" and shape > 1) or (name == "lognormal" and shape > 0)
        if valid and np.isfinite(shape):
            return (name, shape)
        raise ValueError
    except ValueError:
        raise _bad(key, value) from None


def parse_spec(text: str) -> dict[str, object]:
    """``key=value,...`` -> a complete, validated spec (defaults filled in)."""
    spec = dict(DEFAULTS)
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise HedgeError(f"synthetic spec: {item!r}: expected key=value")
        if key not in DEFAULTS:
            raise HedgeError(f"synthetic spec: unknown key {key!r}; valid keys: "
                             f"{', '.join(DEFAULTS)}")
        spec[key] = _parse_value(key, value.strip())
    return spec


def draw_work(rng: np.random.Generator, dist: tuple[str, float], mean: float, n: int
              ) -> np.ndarray:
    """``n`` task work amounts with the given distribution and mean (see module docstring)."""
    name, shape = dist
    if name == "constant":
        return np.full(n, mean)
    if name == "uniform":
        return rng.uniform(0.5 * mean, 1.5 * mean, n)
    if name == "pareto":
        return (rng.pareto(shape, n) + 1.0) * mean * (shape - 1.0) / shape
    return rng.lognormal(np.log(mean) - shape**2 / 2.0, shape, n)


def mark_stragglers(rng: np.random.Generator, n: int, ratio: float,
                    slowdown: tuple[float, float]) -> np.ndarray:
    """Straggler factors: round(ratio * n) tasks chosen uniformly get U(lo, hi), others 1."""
    factor = np.ones(n)
    chosen = rng.choice(n, size=int(round(ratio * n)), replace=False)
    factor[chosen] = rng.uniform(slowdown[0], slowdown[1], len(chosen))
    return factor


def generate(spec: dict[str, object] | str, seed: int = 0) -> Workload:
    """A synthetic workload from a spec (a dict from ``parse_spec`` or its text)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    unknown = set(spec) - set(DEFAULTS)
    if unknown:
        raise HedgeError(f"synthetic spec: unknown key {sorted(unknown)[0]!r}; valid keys: "
                         f"{', '.join(DEFAULTS)}")
    spec = {**DEFAULTS, **spec}
    rng = np.random.default_rng(seed)
    jobs, maps, reduces = int(spec["jobs"]), int(spec["tasks"]), int(spec["reduces"])
    per_job = maps + reduces
    n = jobs * per_job
    rate = float(spec["rate"])
    arrival = np.zeros(jobs)
    if rate > 0:
        arrival = np.r_[0.0, np.cumsum(rng.exponential(1.0 / rate, jobs - 1))]
    work = draw_work(rng, spec["dist"], float(spec["mean"]), n)
    factor = mark_stragglers(rng, n, float(spec["straggler_ratio"]), spec["slowdown"])
    types = np.tile(np.r_[np.full(maps, MAP), np.full(reduces, REDUCE)], jobs)
    return Workload(
        job_ids=[f"job{j}" for j in range(jobs)],
        arrival=arrival,
        job_offsets=np.arange(jobs + 1) * per_job,
        task_type=types,
        duration=work,
        input_bytes=np.full(n, np.nan),
        machine=np.full(n, -1),
        straggler_factor=factor,
        source=f"synthetic:{_format(spec)} seed={seed}",
    )


def _format(spec: dict[str, object]) -> str:
    def text(value: object) -> str:
        if isinstance(value, tuple) and isinstance(value[0], str):
            return value[0] if value[0] in ("uniform", "constant") else f"{value[0]}:{value[1]:g}"
        if isinstance(value, tuple):
            return f"{value[0]:g}:{value[1]:g}"
        return f"{value:g}" if isinstance(value, float) else str(value)

    return ",".join(f"{k}={text(v)}" for k, v in spec.items())


# ---------------------------------------------------------------- Google-2011-fitted default

FIT_RESOURCE = "google2011_fit.json"


def load_fit() -> dict[str, object]:
    """The committed fitted parameters (``hedge/data/google2011_fit.json``)."""
    text = resources.files("hedge").joinpath("data", FIT_RESOURCE).read_text()
    return json.loads(text)


def _sample(rng: np.random.Generator, table: dict[str, list[float]], n: int,
            log: bool = False) -> np.ndarray:
    """Inverse-CDF sampling from a quantile table {"p": [...], "q": [...]}, linear between
    quantiles (in log space for positive, heavy-tailed quantities)."""
    p, q = np.asarray(table["p"]), np.asarray(table["q"], dtype=float)
    u = rng.uniform(0.0, 1.0, n)
    if log:
        return np.exp(np.interp(u, p, np.log(np.maximum(q, 1e-9))))
    return np.interp(u, p, q)


def _rank_in_job(job: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Rank of every task's key within its job (tasks are grouped by job)."""
    order = np.lexsort((keys, job))
    starts = np.r_[0, np.flatnonzero(np.diff(job[order])) + 1]
    first = np.zeros(len(job), dtype=np.int64)
    first[starts] = starts
    rank = np.empty(len(job), dtype=np.int64)
    rank[order] = np.arange(len(job)) - np.maximum.accumulate(first)
    return rank


def default_workload(seed: int = 0, n_jobs: int | None = None) -> Workload:
    """A Google-2011-like workload drawn from the fitted parameters.

    Per job: task count, median task work and the log-sd of the non-straggler tasks are
    drawn (independently) from the fitted quantile tables; task work is log-normal with that
    median and sd; gaps between arrivals come from the fitted inter-arrival table. A job
    with >= 2 tasks is *tailing* with the fitted probability; then the fitted share of its
    tasks straggle, each with a ``straggler_factor`` drawn from the fitted table of straggler
    slowdowns (task / job median). ``n_jobs`` defaults to the sample's count.
    """
    fit = load_fit()
    rng = np.random.default_rng(seed)
    jobs = int(fit["n_jobs"]) if n_jobs is None else int(n_jobs)
    if jobs < 1:
        raise HedgeError(f"n_jobs={n_jobs!r}: expected an integer >= 1")
    sizes = np.maximum(1, np.rint(_sample(rng, fit["tasks_per_job"], jobs, log=True))
                       ).astype(np.int64)
    gaps = _sample(rng, fit["interarrival_s"], jobs - 1)
    arrival = np.r_[0.0, np.cumsum(gaps)]
    median = _sample(rng, fit["job_median_s"], jobs, log=True)
    sigma = _sample(rng, fit["job_log_sd"], jobs)
    job = np.repeat(np.arange(jobs), sizes)
    n = len(job)
    work = median[job] * np.exp(sigma[job] * rng.standard_normal(n))
    # stragglers cluster: a multi-task job is tailing with the fitted probability, and then
    # round(fraction x size) (at least one) of its tasks, chosen at random, straggle
    tailing = (sizes > 1) & (rng.uniform(0.0, 1.0, jobs) < float(fit["tailing_job_share"]))
    fraction = _sample(rng, fit["job_straggler_fraction"], jobs)
    k = np.where(tailing, np.maximum(1, np.rint(fraction * sizes)), 0)
    rank = _rank_in_job(job, rng.uniform(0.0, 1.0, n))
    straggler = rank < k[job]
    factor = np.ones(n)
    factor[straggler] = _sample(rng, fit["straggler_slowdown"], int(straggler.sum()), log=True)
    return Workload(
        job_ids=[f"g{j}" for j in range(jobs)],
        arrival=arrival,
        job_offsets=np.r_[0, np.cumsum(sizes)],
        task_type=np.full(n, MAP),
        duration=work,
        input_bytes=np.full(n, np.nan),
        machine=np.full(n, -1),
        straggler_factor=factor,
        source=f"default (Google 2011 fit) seed={seed}",
    )
