"""Benchmark: how close fresh-rate is to what heartbeats allow on the realism grid (issue 4).

Run: .venv/bin/python tests/bench/bench_detect_bound.py [--seed 1] [--samples 200]
[--levels "AM view"] [--d-avg 10,20] (about 4 minutes for one seed and the three levels on
this 2-core machine).

The realism grid's targets (fresh FP <= 1/5 of the classic rate detector's wherever that
exceeds 20 %, and FN no worse) are missed by fresh-rate mostly in the d = 10 s cells, where
an attempt sends two or three reports. This benchmark compares it there with a
*model-aware Bayes reference*: a detector that knows the study's generative model (speed
redrawn as U[1-X, 1+X] x the nominal speed after exponential gaps of mean
``SPEED_CHANGE_MEAN``, JVM start-ups uniform on [A, B], the latency distribution), which
hedge's detectors do not assume, and that samples each running task's future:

- at every scan, for each running task, ``K`` futures continuing from its last received
  report, kept only if consistent with what the AM knows at the scan (no end report has
  arrived); finished tasks have their exact duration;
- jointly over the job's samples, ``P_i = P(D_i >= 1.2 x mean D)`` and ``L_i`` = P(the task
  is a straggler and its end report arrives before the next scan: waiting loses it);
- flag when ``P_i >= c_conf`` or ``L_i >= c_last``.

What the reference knows of each task's state at its last report (one run each):

- ``hidden``: its true JVM delay, nominal work and the speed it was running at (more than
  any AM can know: heartbeats only carry progress);
- ``AM view``: the last report interval's rate stands for the current speed, the fresh
  rate (else the job's median) for the nominal speed, and a task without progress has its
  JVM delay drawn from the model's prior given it had not started by its last report;
- ``fresh belief`` (an ablation, not a level of knowledge): the same reference with the
  model's futures replaced by Gaussian draws from fresh-rate's own belief (its central
  estimate and sigma): what remains of the reference's advantage is then its decision
  rule (joint bar, loss probability), the rest is what knowing the model adds.

The thresholds are tuned per cell (the most favourable case for the reference). Printed per
level: the d = 10 cells where some (c_conf, c_last) meets both targets, the cells the single
best pair meets, and fresh-rate's cells met with its one shipped setting; then issue 19's
revised FP target: fresh-rate's FP at most 1/5 of rate's in the cells where rate's exceeds
20 % and the reference meets both targets, and per such cell rate's FP, fresh-rate's FP
and FN and the reference's lowest FP meeting both targets.
Then issue 19's lead time over the same cells where rate's FP exceeds 20 %: fresh-rate's
mean FP and lead ratio (median per-cell mean lead / rate's), and the reference's FP / lead
frontier over its threshold pairs (one pair for all cells): the best lead ratio the
reference reaches at fresh-rate's FP bounds what a better rule could gain.
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass

import numpy as np

from hedge.detect.fresh import _filled, duration_belief
from hedge.estimate.runtime import fresh_rate_arrays
from hedge.research import study as S

REALISM = {"progress": "noisy:0.3", "jvm_delay": "1:10"}
C_CONF = (0.5, 0.8, 0.9, 0.977, 1.01)  # 1.01: never on P alone
C_LAST = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.01)
PAIRS = tuple(itertools.product(C_CONF, C_LAST))


@dataclass
class TaskState:
    """What a knowledge level assumes about running tasks at their last report (per task)."""

    from_time: np.ndarray  # elapsed time (s since launch) the remaining work starts from
    progress: np.ndarray  # progress at that time
    speed: np.ndarray  # speed then (progress/s); NaN: not started, draw a fresh one
    nominal: np.ndarray  # nominal speed (progress/s) of later segments


def _remaining(rng: np.random.Generator, state: TaskState, noise: float, k: int,
               ) -> np.ndarray:
    """Samples (task, k) of the time the remaining work takes: the current speed holds for
    an exponential gap (memoryless), then fresh speeds U[1-X, 1+X] x nominal."""
    shape = (*state.progress.shape, k)
    left = np.broadcast_to((1 - state.progress)[:, None], shape).copy()
    nominal = state.nominal[:, None]
    speed = np.where(np.isfinite(state.speed)[:, None], state.speed[:, None],
                     rng.uniform(1 - noise, 1 + noise, shape) * nominal)
    took = np.zeros(shape)
    while (left > 0).any():
        gap = rng.exponential(S.SPEED_CHANGE_MEAN, shape)
        done = speed * gap >= left
        took += np.where(done, left / speed, np.where(left > 0, gap, 0.0))
        left = np.where(done, 0.0, left - speed * gap)
        speed = rng.uniform(1 - noise, 1 + noise, shape) * nominal
    return took


def _hidden_state(hb: S.Heartbeats, v: S.View, r: int, ti: int) -> TaskState:
    """The true state of rep r's tasks at their last report received by scan ti."""
    start = hb.start[r]
    sent = v.sent[r, ti] - start
    work_time = sent - hb.jvm[r]  # work time done at the report
    segments = hb.segments
    seg = np.clip((segments.bounds[r, :, 1:] <= work_time[:, None]).sum(-1), 0,
                  segments.speed.shape[-1] - 1)
    speed_then = np.take_along_axis(segments.speed[r], seg[:, None], -1)[:, 0]
    working = work_time > 0
    return TaskState(from_time=np.where(working, sent, hb.jvm[r]),
                     progress=np.where(working, v.progress[r, ti], 0.0),
                     speed=np.where(working, speed_then, np.nan),
                     nominal=1.0 / hb.work[r])


def _am_state(rng: np.random.Generator, v: S.View, fresh_rate: np.ndarray, r: int, ti: int,
              jvm_range: tuple[float, float]) -> TaskState:
    """The state as the AM can infer it (module docstring), for rep r at scan ti."""
    start = v.start[r, ti]
    sent = v.sent[r, ti] - start
    p, prev = v.progress[r, ti], v.prev_progress[r, ti]
    rate = fresh_rate[r, ti]
    with np.errstate(invalid="ignore", divide="ignore"):
        last_interval = (p - prev) / (v.sent[r, ti] - v.prev_sent[r, ti])
    usable = rate > 0
    nominal = np.where(usable, rate, _typical_speed(rate[usable], p, sent))
    current = np.where(prev > 0, last_interval, nominal)
    working = p > 0
    low, high = jvm_range
    jvm = rng.uniform(np.fmax(low, sent), np.fmax(high, sent))  # not started by `sent`
    return TaskState(from_time=np.where(working, sent, jvm),
                     progress=np.where(working, p, 0.0),
                     speed=np.where(working, current, np.nan), nominal=nominal)


def _typical_speed(rates: np.ndarray, progress: np.ndarray, sent: np.ndarray) -> float:
    """The job's median fresh rate; before any, the median launch rate ``p / sent`` of
    the tasks with progress; before any progress, a speed that would have finished by the
    latest report (nothing is known yet)."""
    if len(rates):
        return float(np.median(rates))
    started = progress > 0
    if started.any():
        return float(np.median(progress[started] / sent[started]))
    return 1.0 / float(np.nanmax(sent))


def _consistent(rng: np.random.Generator, duration: np.ndarray, latency: np.ndarray,
                elapsed: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per task, k of the sampled (duration, end-report latency) pairs whose end report
    would not have arrived by now (``duration + latency > elapsed``), resampled with
    replacement when fewer qualify; the latest sample when none does."""
    ok = duration + latency > elapsed[:, None]
    order = np.argsort(~ok, axis=-1, kind="stable")  # consistent samples first
    count = ok.sum(-1, keepdims=True)
    pick = np.where(count >= k, np.arange(k),
                    np.floor(rng.random((len(ok), k)) * np.maximum(count, 1)).astype(int))
    pick = np.take_along_axis(order, pick, -1)
    latest = np.argmax(duration, -1)[:, None]
    pick = np.where(count > 0, pick, latest)
    return np.take_along_axis(duration, pick, -1), np.take_along_axis(latency, pick, -1)


def _scan_probabilities(rng: np.random.Generator, hb: S.Heartbeats, v: S.View,
                        draws: np.ndarray, r: int, ti: int, pareto: bool, k: int,
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(P_i, L_i) of every task of rep r at scan ti (module docstring) from ``draws``
    (task, 4k) of each task's duration before the AM's knowledge is applied."""
    elapsed = v.now[r, ti, 0] - hb.start[r]
    latency = S._latency(rng, draws.shape) if pareto else np.zeros(draws.shape)
    duration, latency = _consistent(rng, draws, latency, elapsed, k)
    finished = ~v.candidates[r, ti]
    duration = np.where(finished[:, None], (hb.end - hb.start)[r][:, None], duration)
    straggler = duration >= S.STRAGGLER_FACTOR * duration.mean(0)
    lost = straggler & (duration + latency < elapsed[:, None] + 1.0)
    return straggler.mean(-1), lost.mean(-1)


class DurationSampler:
    """Draws (task, n) of each task's duration at a scan, for one knowledge level
    (module docstring): ``hidden``, ``AM view``, or ``fresh belief`` (the ablation:
    Gaussian draws from fresh-rate's own belief, centre and sigma, in place of the
    study's model, so the difference to ``AM view`` is what knowing the model adds)."""

    def __init__(self, level: str, cfg: S.StudyConfig, hb: S.Heartbeats, v: S.View):
        self.level, self.hb, self.v = level, hb, v
        self.noise = S.parse_progress(cfg.progress)
        self.jvm_range = S.parse_jvm_delay(cfg.jvm_delay)
        if level == "AM view":
            self.fresh_rate = fresh_rate_arrays(v.start, v.progress, v.sent,
                                                v.first_progress_time, v.first_progress)
        if level == "fresh belief":
            ect, noise, spread = S._fresh_inputs(v)
            belief = duration_belief(ect, v.start, v.sent, v.received, v.now, v.known,
                                     v.candidates, noise, spread)
            self.central = _filled(belief, v.known)
            self.sigma = np.nan_to_num(belief.sigma, nan=0.0)

    def __call__(self, rng: np.random.Generator, r: int, ti: int, n: int) -> np.ndarray:
        if self.level == "fresh belief":
            centre, sigma = self.central[r, ti][:, None], self.sigma[r, ti][:, None]
            return centre + sigma * rng.standard_normal((len(centre), n))
        state = (_hidden_state(self.hb, self.v, r, ti) if self.level == "hidden"
                 else _am_state(rng, self.v, self.fresh_rate, r, ti, self.jvm_range))
        return state.from_time[:, None] + _remaining(rng, state, self.noise, n)


def reference_cell(cfg: S.StudyConfig, ss: np.random.SeedSequence, level: str, reps: int,
                   k: int) -> tuple[dict, tuple, tuple]:
    """Per threshold pair the reference's (mean FP, mean FN, mean lead time); rate's and
    fresh-rate's."""
    hb = S.simulate(cfg, reps, np.random.default_rng(ss))
    rng = np.random.default_rng(ss.spawn(1)[0])
    times, valid = S.detection_times(hb)
    v = S.observe(hb, times)
    sample = DurationSampler(level, cfg, hb, v)
    first = np.full((len(PAIRS), *hb.start.shape), np.inf)
    c_conf = np.array([c for c, _ in PAIRS])[:, None]
    c_last = np.array([c for _, c in PAIRS])[:, None]
    for r, ti in zip(*np.nonzero(valid), strict=True):
        running = v.candidates[r, ti]
        if not running.any():
            continue
        p, lose = _scan_probabilities(rng, hb, v, sample(rng, r, ti, 4 * k), r, ti,
                                      cfg.latency == "pareto", k)
        flag = running & ((p >= c_conf) | (lose >= c_last))
        first[:, r] = np.where(flag & np.isinf(first[:, r]), times[r, ti], first[:, r])
    results = {pair: outcome(first[i], hb) for i, pair in enumerate(PAIRS)}
    rate, fresh = (outcome(first_flags(flags, times, valid), hb)
                   for flags in (S._rate(v), S._fresh_rate(v)))
    return results, rate, fresh


def first_flags(flags: np.ndarray, times: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Each task's first flag time (rep, task) over the valid scans; inf: never."""
    return np.where(flags & valid[..., None], times[..., None], np.inf).min(1)


def outcome(first: np.ndarray, hb: S.Heartbeats) -> tuple[float, float | None, float | None]:
    """Mean FP, FN and detection lead time (s) over the repetitions, from each task's first
    flag time (inf: never flagged)."""
    detected = np.isfinite(first)
    fp, fn = S.rates(detected, hb.straggler)
    lead, _ = S.lead_times(np.where(detected, first, np.nan), hb)
    return S._stat(fp, np.mean), S._stat(fn, np.mean), S._stat(lead, np.mean)


def lead_ratio(leads: list, rate_leads: list) -> float:
    """Issue 19's lead-time figure: the median over cells of the per-cell mean lead time,
    as a fraction of the classic rate detector's (as tests/bench/bench_detect.py prints)."""
    def median(values: list) -> float:
        known = [x for x in values if x is not None and np.isfinite(x)]
        return float(np.median(known)) if known else float("nan")
    return median(leads) / median(rate_leads)


def lead_frontier(measured: list) -> None:
    """Over the cells where rate's FP exceeds 20 %: the reference's (c_conf, c_last) pairs
    on the FP / lead frontier (no pair with at most its mean FP has a higher lead ratio),
    next to fresh-rate's. The best lead ratio at fresh-rate's FP or below is what knowing
    the model and deciding on the loss probability buys: a bound on what any rule reaches
    from the same heartbeats, against issue 19's aim of 0.7."""
    hot = [(results, rate, fresh) for _, results, rate, fresh in measured if rate[0] > 0.2]
    if not hot:
        return
    rate_leads = [rate[2] for _, rate, _ in hot]
    fresh_fp = float(np.mean([fresh[0] for *_, fresh in hot]))
    fresh_fn = float(np.nanmean([np.nan if f[1] is None else f[1] for *_, f in hot]))
    fresh_ratio = lead_ratio([fresh[2] for *_, fresh in hot], rate_leads)
    points = sorted((float(np.mean([r[pair][0] for r, *_ in hot])),
                     float(np.nanmean([np.nan if r[pair][1] is None else r[pair][1]
                                       for r, *_ in hot])),
                     lead_ratio([r[pair][2] for r, *_ in hot], rate_leads), pair)
                    for pair in PAIRS)
    print(f"{'':>14}lead time over the {len(hot)} cells where rate's FP > 20 % (target 0.7 "
          f"x rate's): fresh-rate FP {fresh_fp:.3f}, FN {fresh_fn:.3f}, lead ratio {fresh_ratio:.3f}; the "
          "reference's FP / lead frontier:")
    best = -np.inf
    for fp, fn, ratio, pair in points:
        if ratio > best:
            best = ratio
            mark = "  <= fresh-rate's FP" if fp <= fresh_fp else ""
            print(f"{'':>16}{pair}: FP {fp:.3f}, FN {fn:.3f}, lead ratio {ratio:.3f}{mark}")
    # lead is averaged over the detected stragglers, so missing the borderline ones (which
    # end soon after any flag) raises it: the fair bound also holds the misses
    fair = [(ratio, pair, fp, fn) for fp, fn, ratio, pair in points
            if fp <= fresh_fp and fn <= fresh_fn]
    if fair:
        ratio, pair, fp, fn = max(fair)
        print(f"{'':>16}best at fresh-rate's FP and FN or below: {pair}: FP {fp:.3f}, "
              f"FN {fn:.3f}, lead ratio {ratio:.3f}")
    else:
        print(f"{'':>16}no threshold pair has both FP and FN at fresh-rate's or below")


def meets(result: tuple, rate: tuple) -> bool:
    """Both of the issue's realism targets against the classic rate detector."""
    (fp, fn, _), (rate_fp, rate_fn, _) = result, rate
    fp_ok = rate_fp <= 0.2 or fp <= rate_fp / 5 + 1e-12
    fn_ok = rate_fn is None or fn <= rate_fn + 1e-9
    return fp_ok and fn_ok


def fp_met(result: tuple, rate: tuple) -> bool:
    """The FP half of :func:`meets`: FP <= 1/5 of rate's wherever rate's exceeds 20 %."""
    return rate[0] <= 0.2 or result[0] <= rate[0] / 5 + 1e-12


def label(cfg: S.StudyConfig) -> str:
    return f"n={cfg.tasks} d={cfg.d_avg:g} f={cfg.f:g} {cfg.starts} {cfg.latency}"


def cell_table(measured: list, good: list) -> None:
    """Per cell where rate's FP exceeds 20 %: rate's FP, fresh-rate's FP and FN, the
    reference's lowest FP among its threshold pairs meeting both targets (tuned per cell;
    '-': none does), and whether fresh-rate meets the revised FP target there."""
    print(f"{'':>14}{'cell':<34} {'rate FP':>7} {'fresh FP':>8} {'fresh FN':>8} "
          f"{'ref FP':>7} {'revised FP target':>18}")
    for (cfg, results, rate, fresh), pairs in zip(measured, good, strict=True):
        if rate[0] <= 0.2:
            continue
        ref = f"{min(results[pair][0] for pair in pairs):7.3f}" if pairs else f"{'-':>7}"
        verdict = ("met" if fp_met(fresh, rate) else "MISSED") if pairs else "not asked"
        fn = "-" if fresh[1] is None else f"{fresh[1]:.3f}"
        print(f"{'':>14}{label(cfg):<34} {rate[0]:7.3f} {fresh[0]:8.3f} {fn:>8} {ref} "
              f"{verdict:>18}")


LEVELS = ("hidden", "AM view", "fresh belief")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repetitions", type=int, default=50)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--levels", default=",".join(LEVELS),
                        help="comma-separated, from: " + ", ".join(LEVELS))
    parser.add_argument("--d-avg", default="10", help="comma-separated d values (s)")
    args = parser.parse_args()
    levels = [name.strip() for name in args.levels.split(",")]
    if not set(levels) <= set(LEVELS):
        parser.error(f"--levels '{args.levels}': expected some of {', '.join(LEVELS)}")
    d_values = {float(d) for d in args.d_avg.split(",")}
    configs = S.grid(**REALISM)
    cells = [(cfg, ss) for cfg, ss in zip(configs, np.random.SeedSequence(args.seed).spawn(
        len(configs)), strict=True) if cfg.d_avg in d_values]
    print(f"realism grid seed {args.seed}, the {len(cells)} d = {args.d_avg} s cells, "
          f"{args.repetitions} reps, {args.samples} futures per task and scan")
    for level in levels:
        measured = [(cfg, *reference_cell(cfg, ss, level, args.repetitions, args.samples))
                    for cfg, ss in cells]
        good = [{pair for pair, result in results.items() if meets(result, rate)}
                for _, results, rate, _ in measured]
        per_pair = {pair: sum(pair in g for g in good) for pair in PAIRS}
        best = max(per_pair, key=per_pair.get)
        fresh_met = sum(meets(fresh, rate) for *_, rate, fresh in measured)
        print(f"{level:>12}: cells met with thresholds tuned per cell "
              f"{sum(map(bool, good))}/{len(cells)}; by the best single pair {best} "
              f"{per_pair[best]}/{len(cells)}; fresh-rate (shipped) {fresh_met}/{len(cells)}")
        # issue 19's revised target: fresh-rate's FP <= 1/5 of rate's wherever the
        # reference meets the targets (tuned per cell: the strictest reading; one pair)
        for reading, met_by_reference in (("tuned per cell", [bool(g) for g in good]),
                                          ("best single pair", [best in g for g in good])):
            checked = [(cfg, rate, fresh) for (cfg, _, rate, fresh), ok
                       in zip(measured, met_by_reference, strict=True) if ok and rate[0] > 0.2]
            misses = [f"{label(cfg)}: fresh-rate FP {fresh[0]:.3f} vs rate {rate[0]:.3f}"
                      for cfg, rate, fresh in checked if not fp_met(fresh, rate)]
            print(f"{'':>14}revised FP target where the reference ({reading}) meets the "
                  f"targets and rate's FP > 20 %: fresh-rate {len(checked) - len(misses)} of "
                  f"{len(checked)}")
            for miss in misses:
                print(f"{'':>16}miss: {miss}")
        cell_table(measured, good)
        lead_frontier(measured)


if __name__ == "__main__":
    main()
