"""The detection-accuracy study: how often do detectors flag normal tasks / miss stragglers
when they judge tasks from asynchronous heartbeats?

Published setup, reproduced as stated (one job per repetition):

- n tasks (one per host), work uniform on [(1-f) d, (1+f) d];
- a task is a straggler iff its duration >= 1.2 x the job's mean duration;
- starts UNIFORM (all at 0) or SKEWED (the end times of an independent UNIFORM draw);
- heartbeats at the start, every ``hw`` = 6 s after it and at the end; linear progress;
- latency none, or Pareto (numpy ``pareto(5)`` x 1 s, redrawn while above 2 s);
- detection on the whole-second clock, every 1 s from the first whole second at or after
  the first end heartbeat is *received* up to the last end heartbeat's receipt (see
  :func:`detection_times`), over tasks with at least one received heartbeat that have not
  reported their end; a task is *detected* if flagged at least once;
- FP rate = detected non-stragglers / non-stragglers, FN rate = undetected stragglers /
  stragglers, per repetition (NaN when the denominator is 0), mean and median.

Realism switches beyond the published grid: ``noisy:X`` progress (speed redrawn at random
times, exponential gaps of mean ``SPEED_CHANGE_MEAN`` s, as the nominal speed times a factor
uniform in [1-X, 1+X]) and a JVM start-up delay uniform in [A, B] s (progress 0 until the
JVM is up; the duration includes it).

What the AM knows at a detection time (:class:`View`): per task the last received report,
the first progress report, and the report before the last (a real AM received it too;
hedge's fresh-* detectors measure speed changes from it). The setup above is unchanged.

The whole model is numpy arrays over (repetitions, detection times, tasks[, heartbeats]).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import numpy as np

from hedge.detect.fresh import fresh_rate_rule, fresh_score_rule
from hedge.detect.rules import masked_mean, ratio_rule, score_rule
from hedge.errors import HedgeError
from hedge.estimate.runtime import (
    borrowed_rate_spread_arrays,
    fresh_arrays,
    legacy_arrays,
    peer_rates,
    rate_arrays,
    speed_noise_arrays,
)
from hedge.research.study_grid import D_AVG, DEFAULT_DETECTORS, TASKS

HEARTBEAT = 6.0
STRAGGLER_FACTOR = 1.2
SPEED_CHANGE_MEAN = 5.0
LATENCY_CAP = 2.0

SPREAD = (0.0, 0.1, 0.25)
STARTS = ("uniform", "skewed")
LATENCY = ("none", "pareto")


@dataclass(frozen=True)
class StudyConfig:
    """One cell of the grid."""

    tasks: int
    d_avg: float
    f: float
    starts: str
    latency: str
    progress: str = "linear"  # or "noisy:X"
    jvm_delay: str = "none"  # or "A:B"


def parse_progress(text: str) -> float:
    """Noise amplitude X of ``linear`` (0) or ``noisy:X`` / ``noisy`` (X = 0.3)."""
    if text == "linear":
        return 0.0
    name, _, value = text.partition(":")
    try:
        x = float(value) if value else 0.3
    except ValueError:
        x = -1.0
    if name != "noisy" or not 0 <= x < 1:
        raise HedgeError(f"--progress '{text}': expected 'linear' or 'noisy:X' with 0 <= X < 1")
    return x


def parse_jvm_delay(text: str) -> tuple[float, float]:
    """Bounds (A, B) of ``A:B`` seconds, or (0, 0) for ``none``."""
    if text == "none":
        return 0.0, 0.0
    try:
        low, high = (float(v) for v in text.split(":"))
    except ValueError:
        low, high = -1.0, -2.0
    if not 0 <= low <= high:
        raise HedgeError(f"--jvm-delay '{text}': expected 'A:B' seconds with 0 <= A <= B")
    return low, high


@dataclass
class Heartbeats:
    """Simulated jobs: per (rep, task) truth, per (rep, task, heartbeat) reports.

    Regular heartbeats come first (send times start + hw j); the end heartbeat is at index
    ``n_regular``; later slots are padding (send = receive = +inf).
    """

    start: np.ndarray
    end: np.ndarray
    straggler: np.ndarray
    sent: np.ndarray
    received: np.ndarray
    progress: np.ndarray
    n_regular: np.ndarray
    first_positive: np.ndarray  # index of the first heartbeat with progress > 0
    # truth no AM sees (for oracle benchmarks): work time at the nominal speed (s), JVM
    # start-up delay (s), and the speed segments of noisy progress (None: linear)
    work: np.ndarray
    jvm: np.ndarray
    segments: SpeedSegments | None


@dataclass
class SpeedSegments:
    """Noisy progress of each (rep, task): speed ``speed[..., j]`` (progress per second)
    from work time ``bounds[..., j]`` to ``bounds[..., j + 1]``; the last lasts forever."""

    bounds: np.ndarray
    speed: np.ndarray


def _work_progress(rng: np.random.Generator, work: np.ndarray, noise: float,
                   ) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray,
                              SpeedSegments | None]:
    """Progress as a function of time since the work began, the time it reaches 1, and
    the speed segments (None for linear progress)."""
    if noise == 0:
        return (lambda tau: np.clip(tau / work[..., None], 0.0, 1.0)), work, None
    k = int(np.ceil(1.5 * work.max() / (1 - noise) / SPEED_CHANGE_MEAN)) + 2
    gaps = rng.exponential(SPEED_CHANGE_MEAN, (*work.shape, k))
    gaps[..., -1] = np.inf  # the last speed holds until the end
    speed = rng.uniform(1 - noise, 1 + noise, gaps.shape) / work[..., None]
    bounds = np.concatenate([np.zeros((*work.shape, 1)), np.cumsum(gaps, -1)], -1)
    reached = np.concatenate([np.zeros((*work.shape, 1)), np.cumsum(speed * gaps, -1)], -1)
    seg = np.minimum((reached[..., 1:] < 1).sum(-1), k - 1)
    at = np.take_along_axis
    finish = (at(bounds, seg[..., None], -1)[..., 0]
              + (1 - at(reached, seg[..., None], -1)[..., 0]) / at(speed, seg[..., None], -1)[..., 0])

    def progress(tau: np.ndarray) -> np.ndarray:
        i = np.clip((bounds[..., None, 1:] <= tau[..., :, None]).sum(-1), 0, k - 1)
        base = at(reached, i, -1) + at(speed, i, -1) * (tau - at(bounds, i, -1))
        return np.clip(np.where(tau > 0, base, 0.0), 0.0, 1.0)

    return progress, finish, SpeedSegments(bounds, speed)


def _latency(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """numpy pareto(5) x 1 s (Lomax), redrawn while above 2 s."""
    lat = rng.pareto(5.0, shape)
    while (over := lat > LATENCY_CAP).any():
        lat[over] = rng.pareto(5.0, int(over.sum()))
    return lat


def simulate(cfg: StudyConfig, reps: int, rng: np.random.Generator) -> Heartbeats:
    """Draw ``reps`` jobs of ``cfg`` and their heartbeats."""
    shape = (reps, cfg.tasks)
    low, high = (1 - cfg.f) * cfg.d_avg, (1 + cfg.f) * cfg.d_avg
    work = rng.uniform(low, high, shape)
    start = rng.uniform(low, high, shape) if cfg.starts == "skewed" else np.zeros(shape)
    jvm_low, jvm_high = parse_jvm_delay(cfg.jvm_delay)
    jvm = rng.uniform(jvm_low, jvm_high, shape)
    progress_of, finish, segments = _work_progress(rng, work, parse_progress(cfg.progress))
    duration = jvm + finish
    straggler = duration >= STRAGGLER_FACTOR * duration.mean(-1, keepdims=True)
    n_regular = np.ceil(duration / HEARTBEAT).astype(np.int64)  # j with hw j < duration
    slots = np.arange(int(n_regular.max()) + 1)
    offset = np.where(slots <= n_regular[..., None], slots * HEARTBEAT, np.inf)
    offset = np.where(slots == n_regular[..., None], duration[..., None], offset)
    progress = progress_of(np.where(np.isfinite(offset), offset, 0) - jvm[..., None])
    progress = np.where(slots == n_regular[..., None], 1.0, progress)
    sent = start[..., None] + offset
    lat = _latency(rng, sent.shape) if cfg.latency == "pareto" else np.zeros(sent.shape)
    first_positive = np.argmax(progress > 0, axis=-1)
    return Heartbeats(start, start + duration, straggler, sent, sent + lat, progress,
                      n_regular, first_positive, work, jvm, segments)


def end_received(hb: Heartbeats) -> np.ndarray:
    """When the AM receives each task's end heartbeat (rep, task)."""
    return np.take_along_axis(hb.received, hb.n_regular[..., None], -1)[..., 0]


@dataclass
class View:
    """What the AM knows at each detection time: arrays (rep, time, task)."""

    now: np.ndarray
    start: np.ndarray
    known: np.ndarray
    candidates: np.ndarray
    progress: np.ndarray
    sent: np.ndarray
    received: np.ndarray
    first_progress_time: np.ndarray
    first_progress: np.ndarray
    finished_runtime: np.ndarray  # run time of tasks whose end report arrived, else NaN
    prev_sent: np.ndarray  # the report before the last (NaN if none): an AM saw it too
    prev_progress: np.ndarray
    min_reports: int = 1  # fresh estimates: progress reports needed for a rate


def observe(hb: Heartbeats, times: np.ndarray, min_reports: int = 1) -> View:
    """The last received heartbeat of every task at every detection time ``times`` (rep, T).

    Regular heartbeats are hw = 6 s apart and latency is at most 2 s, so they arrive in
    order; only the end heartbeat can overtake the regular one before it.
    """
    now = times[..., None]  # (R, T, 1)
    slots = np.arange(hb.sent.shape[-1])
    regular = slots < hb.n_regular[..., None]
    recv_reg = np.where(regular, hb.received, np.inf)
    idx = (recv_reg[:, None, :, :] <= now[..., None]).sum(-1) - 1  # (R, T, n)
    ended = end_received(hb)[:, None, :] <= now
    idx = np.where(ended, hb.n_regular[:, None, :], idx)
    known = idx >= 0
    r = np.arange(hb.sent.shape[0])[:, None, None]
    k = np.arange(hb.sent.shape[1])[None, None, :]
    safe = np.maximum(idx, 0)

    def pick(a: np.ndarray, i: np.ndarray = safe, ok: np.ndarray = known) -> np.ndarray:
        return np.where(ok, a[r, k, i], np.nan)

    fp = np.broadcast_to(hb.first_positive[:, None, :], idx.shape)
    has_fp = known & (idx >= fp) & (hb.progress[r, k, fp] > 0)
    start = np.broadcast_to(hb.start[:, None, :], idx.shape)
    return View(
        now=now,
        start=start,
        known=known,
        candidates=known & ~ended,
        progress=np.where(known, hb.progress[r, k, safe], 0.0),
        sent=pick(hb.sent),
        received=pick(hb.received),
        first_progress_time=np.where(has_fp, hb.sent[r, k, fp], np.nan),
        first_progress=np.where(has_fp, hb.progress[r, k, fp], np.nan),
        finished_runtime=np.where(ended, (hb.end - hb.start)[:, None, :], np.nan),
        prev_sent=pick(hb.sent, np.maximum(idx - 1, 0), idx >= 1),
        prev_progress=pick(hb.progress, np.maximum(idx - 1, 0), idx >= 1),
        min_reports=min_reports,
    )


# --- detectors on the study's view (the same rules as hedge.detect.detectors) ----------


def _score(v: View) -> np.ndarray:
    return score_rule(v.progress, v.known, v.candidates)


def _rate(v: View) -> np.ndarray:
    etd = rate_arrays(v.start, v.progress, v.sent, v.now) - v.start
    return ratio_rule(etd, v.known, v.candidates, STRAGGLER_FACTOR)


def _fresh_inputs(v: View) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh ECTs, the job's speed noise and the borrowed rates' spread, for the fresh-*
    rules (one :func:`peer_rates` serves all three: unknown tasks have no progress report,
    so counting only the known ones changes nothing)."""
    columns = (v.start, v.progress, v.sent, v.first_progress_time, v.first_progress)
    peers = peer_rates(*columns, v.known)
    ect = fresh_arrays(*columns, v.now, v.min_reports, peers=peers)
    noise = speed_noise_arrays(*columns, v.prev_progress, v.prev_sent, v.known, peers=peers)
    spread = borrowed_rate_spread_arrays(*columns, peers=peers)
    return ect, noise, spread


def fresh_study_detector(kind: str, **params: float) -> Callable[[View], np.ndarray]:
    """A fresh-* detector on the study's view with non-default rule parameters
    (``kind`` ``fresh-rate`` or ``fresh-score``; e.g. ``z_last``), for parameter sweeps."""
    rule = {"fresh-rate": fresh_rate_rule, "fresh-score": fresh_score_rule}[kind]

    def detector(v: View) -> np.ndarray:
        ect, noise, spread = _fresh_inputs(v)
        return rule(ect, v.start, v.sent, v.received, v.now, v.known, v.candidates, noise,
                    rate_spread=spread, **params)

    return detector


_fresh_score = fresh_study_detector("fresh-score")
_fresh_rate = fresh_study_detector("fresh-rate")


def _hadoop(v: View) -> np.ndarray:
    """Legacy estimate > mean + 1 std of the run times of tasks known finished."""
    runtime = legacy_arrays(v.start, v.progress, v.sent, v.received) - v.start
    done = np.isfinite(v.finished_runtime)
    mean = masked_mean(v.finished_runtime, done)
    spread = np.sqrt(masked_mean((v.finished_runtime - mean[..., None]) ** 2, done))
    with np.errstate(invalid="ignore"):
        return v.candidates & (runtime > (mean + spread)[..., None])


def _job_ect(v: View) -> np.ndarray:
    """LATE ECT measured from the job's start (the earliest task start)."""
    job_start = v.start.min(-1, keepdims=True)
    return rate_arrays(v.start, v.progress, v.sent, v.now) - job_start


def _static(v: View) -> np.ndarray:
    return ratio_rule(_job_ect(v), v.known, v.candidates, 1.5, strict=True)


def _adaptive(v: View) -> np.ndarray:
    """Th = Q + alpha P + beta R with no QoS (Q = 1.5) and no cluster load known (R = 0):
    the value :func:`hedge.detect.adaptive_threshold` gives for these inputs."""
    th = 1.5 + 0.5 * (v.progress.mean(-1) - 0.5)
    return ratio_rule(_job_ect(v), v.known, v.candidates, th, strict=True)


# its keys are study_grid.DETECTOR_NAMES, in order (test_light_names.py)
STUDY_DETECTORS: dict[str, Callable[[View], np.ndarray]] = {
    "score": _score,
    "rate": _rate,
    "fresh-score": _fresh_score,
    "fresh-rate": _fresh_rate,
    "hadoop": _hadoop,
    "static": _static,
    "adaptive": _adaptive,
}


def detection_times(hb: Heartbeats) -> tuple[np.ndarray, np.ndarray]:
    """The AM's scans: (R, T) times and the mask of those that happen.

    The AM's loop runs on the simulation's whole-second clock and starts once it *knows*
    a task has ended: the first whole second at or after the first end heartbeat is
    received (not the task's true end, which the AM cannot see), then every 1 s, up to
    and including the last end heartbeat's receive time (while some task still counts as
    running for the AM).
    """
    received = end_received(hb)
    first, last = np.ceil(received.min(-1)), received.max(-1)
    steps = np.arange(max(0, int(np.floor((last - first).max()))) + 1)
    times = first[:, None] + steps
    return times, times <= last[:, None]


def rates(detected: np.ndarray, straggler: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per repetition: FP rate and FN rate (NaN where the denominator is 0)."""
    normal = ~straggler
    with np.errstate(invalid="ignore", divide="ignore"):
        fp = (detected & normal).sum(-1) / np.where(normal.any(-1), normal.sum(-1), np.nan)
        fn = (~detected & straggler).sum(-1) / np.where(straggler.any(-1), straggler.sum(-1),
                                                        np.nan)
    return fp, fn


def lead_times(first_flag: np.ndarray, hb: Heartbeats) -> tuple[np.ndarray, np.ndarray]:
    """Per repetition, over the detected stragglers: mean detection lead time
    ``true end - first flag time`` (s), and the same as a fraction of their duration
    (NaN where no straggler was detected). Large means the flag came early enough for a
    copy to help; near 0 means it came as the task was ending anyway."""
    hit = hb.straggler & np.isfinite(first_flag)
    lead = np.where(hit, hb.end - first_flag, 0.0)
    rel = np.where(hit, lead / (hb.end - hb.start), 0.0)
    count = np.where(hit.any(-1), hit.sum(-1), np.nan)
    return lead.sum(-1) / count, rel.sum(-1) / count


def run_config(cfg: StudyConfig, detectors: Iterable[str], reps: int,
               rng: np.random.Generator, min_reports: int = 1, leads: bool = False,
               ) -> dict[str, tuple[np.ndarray, ...]]:
    """Per detector: FP and FN rates of each repetition (with ``leads``, also the mean
    lead time and relative lead time of :func:`lead_times`)."""
    hb = simulate(cfg, reps, rng)
    times, valid = detection_times(hb)
    first = {name: np.full(hb.start.shape, np.inf) for name in detectors}
    chunk = max(1, 4_000_000 // max(1, hb.sent.size))  # bound memory per block of times
    for lo in range(0, times.shape[1], chunk):
        view = observe(hb, times[:, lo:lo + chunk], min_reports)
        block = times[:, lo:lo + chunk, None]
        ok = valid[:, lo:lo + chunk, None]
        for name in first:
            flagged = STUDY_DETECTORS[name](view) & ok
            at = np.where(flagged, block, np.inf).min(1)
            first[name] = np.minimum(first[name], at)
    out = {}
    for name, f in first.items():
        f = np.where(np.isfinite(f), f, np.nan)
        out[name] = rates(np.isfinite(f), hb.straggler)
        if leads:
            out[name] += lead_times(f, hb)
    return out


def _stat(values: np.ndarray, fn: Callable[[np.ndarray], float]) -> float | None:
    values = values[np.isfinite(values)]
    return float(fn(values)) if len(values) else None


def grid(tasks: Iterable[int] = TASKS, d_avg: Iterable[float] = D_AVG,
         spread: Iterable[float] = SPREAD, starts: Iterable[str] = STARTS,
         latency: Iterable[str] = LATENCY, progress: str = "linear",
         jvm_delay: str = "none") -> list[StudyConfig]:
    """All configurations of the published grid (with the realism switches applied)."""
    parse_progress(progress)
    parse_jvm_delay(jvm_delay)
    return [StudyConfig(n, float(d), float(f), s, lat, progress, jvm_delay)
            for n, d, f, s, lat in itertools.product(tasks, d_avg, spread, starts, latency)]


def run_study(configs: list[StudyConfig], detectors: Iterable[str] = DEFAULT_DETECTORS,
              reps: int = 50, seed: int = 0, min_reports: int = 1, leads: bool = False,
              ) -> tuple[list[dict], dict]:
    """Rows (one per configuration x detector) and the raw per-repetition rates.

    ``min_reports``: progress reports hedge's fresh estimate needs before it gives a rate
    (1: fall back to the launch rate; 2: only the JVM-excluding rate). ``leads``: rows
    also carry ``lead_mean`` (s) and ``lead_rel`` (fraction of the straggler's duration),
    the mean over repetitions of :func:`lead_times`.
    """
    detectors = list(detectors)
    unknown = [d for d in detectors if d not in STUDY_DETECTORS]
    if unknown:
        raise HedgeError(f"--detectors: unknown '{unknown[0]}', expected some of: "
                         f"{', '.join(STUDY_DETECTORS)}")
    if reps < 1:
        raise HedgeError(f"--repetitions {reps}: expected at least 1")
    seeds = np.random.SeedSequence(seed).spawn(len(configs))
    rows, raw = [], {}
    for cfg, ss in zip(configs, seeds, strict=True):
        result = run_config(cfg, detectors, reps, np.random.default_rng(ss), min_reports,
                            leads)
        for name, (fp, fn, *lead) in result.items():
            row = {"detector": name, **asdict(cfg)}
            if cfg.progress == "linear" and cfg.jvm_delay == "none":
                del row["progress"], row["jvm_delay"]
            row.update(fp_mean=_stat(fp, np.mean), fp_median=_stat(fp, np.median),
                       fn_mean=_stat(fn, np.mean), fn_median=_stat(fn, np.median))
            if lead:
                row.update(lead_mean=_stat(lead[0], np.mean), lead_rel=_stat(lead[1], np.mean))
            rows.append(row)
            raw[(cfg, name)] = (fp, fn)
    return rows, raw


CONFIG_KEYS = ("tasks", "d_avg", "f", "starts", "latency", "progress", "jvm_delay")


def check_targets(rows: list[dict], fp_limit: Callable[[float], float],
                  baseline: str, candidate: str, hot_by: str | None = None) -> list[str]:
    """Configurations where ``candidate`` misses its target against ``baseline``.

    Where the mean FP of ``hot_by`` (default: ``baseline``) exceeds 20 %, the candidate's
    mean FP must be at most ``fp_limit(that FP)``; its mean FN must never exceed the
    baseline's (1e-9 slack).
    """
    hot_by = hot_by or baseline
    by_cfg: dict[tuple, dict[str, dict]] = {}
    for row in rows:
        key = tuple(row.get(k) for k in CONFIG_KEYS)
        by_cfg.setdefault(key, {})[row["detector"]] = row
    misses = []
    for key, cell in by_cfg.items():
        if baseline not in cell or candidate not in cell or hot_by not in cell:
            continue
        base, cand, hot = cell[baseline], cell[candidate], cell[hot_by]
        label = " ".join(f"{k}={v}" for k, v in zip(CONFIG_KEYS, key, strict=True)
                         if v is not None)
        if hot["fp_mean"] is not None and hot["fp_mean"] > 0.2 \
                and cand["fp_mean"] > fp_limit(hot["fp_mean"]) + 1e-12:
            misses.append(f"{label}: {candidate} FP {cand['fp_mean']:.3f} vs {hot_by} "
                          f"{hot['fp_mean']:.3f}")
        if base["fn_mean"] is not None and cand["fn_mean"] is not None \
                and cand["fn_mean"] > base["fn_mean"] + 1e-9:
            misses.append(f"{label}: {candidate} FN {cand['fn_mean']:.3f} vs {baseline} "
                          f"{base['fn_mean']:.3f}")
    return misses
