"""Evidence from tasks a trace ran more than once: how much of a task's slowness a copy keeps.

The trace straggler model (``hedge.traces.straggler_model``) writes a task's observed duration
``d`` in its job and phase (maps or reduces of one job: a *group*) as

    log d = log m + r,        m = the group's median duration,  r = the task's residual,

and a copy of the task as ``log d' = log m + (1 - lam) r + lam e``, ``e`` a residual drawn
from the task's group. ``lam`` is the transient share of a task's slowness: 0 means a copy
takes exactly as long as the original (all slowness is the task's own work), 1 means a copy
is a fresh draw from its group (all slowness is the node or the moment). This module
measures ``lam`` where a trace shows the same task run twice:

- **Complete re-runs** (a task that succeeded twice, e.g. Google 2011 tasks resubmitted after
  finishing): under the model the slope of ``r2`` on ``r1`` is ``1 - lam``.
- **Speculative pairs** (an original and one copy, e.g. the copies Hadoop job histories keep):
  which of the two finished first. Under ``lam`` the copy wins with probability
  ``P(copy start + d' < original start + d)``, computed by drawing ``e`` from the group (and,
  for an original killed because the copy won, its unknown ``d`` from the group's residuals
  above what it had already run). The outcomes give a likelihood over ``lam``: its mean under
  a uniform prior is the estimate, and the values within 1.92 log-units of its maximum (a
  95% likelihood-ratio interval) are reported with it.

A task's expected duration in its group is the group's median, scaled by its input size
where every task of the group has one (``Centers``): more input is more work, never a
transient slowdown. Groups are taken from the tasks' first successful, non-speculative
attempts. Residuals of
groups with fewer than ``MIN_GROUP`` such tasks are too coarse to use and their pairs are
left out (counted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hedge.traces.arrays import unique_inverse

MIN_GROUP = 5  # tasks of a job and phase needed before a residual means anything
GRID = np.round(np.linspace(0.0, 1.0, 21), 2)  # the lam values the likelihood is evaluated on
DRAWS = 4000  # Monte Carlo draws per speculative pair
MIN_RERUNS = 10  # complete re-runs needed before their slope is reported


@dataclass
class RerunEvidence:
    """What one trace says about re-runs. ``loglik``: log-likelihood of the speculative
    pairs' outcomes at each ``GRID`` value (empty without pairs)."""

    source: str
    reruns: int = 0  # tasks with two successful attempts (first two used)
    rerun_slope: float = math.nan  # slope of r2 on r1 (NaN below MIN_RERUNS)
    rerun_ratio_median: float = math.nan  # median d2 / d1
    copy_pairs: int = 0
    copies_won: int = 0
    pairs_in_small_groups: int = 0
    loglik: list[float] = field(default_factory=list)

    @property
    def lam(self) -> float:
        """The ``lam`` the speculative pairs give (``fitted``; NaN without pairs)."""
        return fitted(np.asarray(self.loglik))[0] if self.loglik else math.nan

    def as_dict(self) -> dict:
        low, high = fitted(np.asarray(self.loglik))[1:] if self.loglik else (math.nan,) * 2
        return {"source": self.source, "reruns": self.reruns,
                "rerun_slope": _none(self.rerun_slope),
                "rerun_ratio_median": _none(self.rerun_ratio_median),
                "copy_pairs": self.copy_pairs, "copies_won": self.copies_won,
                "pairs_in_small_groups": self.pairs_in_small_groups,
                "lam": _none(self.lam), "lam_low": _none(low), "lam_high": _none(high)}


@dataclass
class Centers:
    """A task's expected log duration in its group: ``median[g] + beta * log input`` where
    every task of group g has a known input size (``with_input[g]``), else ``median[g]``.

    A task with more input has more work: ``beta`` (one slope for all groups with known
    inputs, fitted within groups, clipped to [0, 1]) takes the part of a task's duration its
    input explains out of its residual, so only the rest can be transient."""

    median: np.ndarray
    with_input: np.ndarray
    beta: float

    def of(self, group: np.ndarray, log_input: np.ndarray) -> np.ndarray:
        x = np.where(self.with_input[group], np.nan_to_num(log_input), 0.0)
        return self.median[group] + self.beta * x

    @classmethod
    def fit(cls, log_d: np.ndarray, log_input: np.ndarray, group: np.ndarray,
            n_groups: int) -> Centers:
        """From the tasks' log durations, log inputs (NaN unknown) and group codes."""
        known = np.isfinite(log_input)
        with_input = np.bincount(group[~known], minlength=n_groups) == 0
        use = with_input[group]
        beta = _within_group_slope(log_input[use], log_d[use], group[use], n_groups)
        y = log_d - beta * np.where(use, log_input, 0.0)
        median = np.full(n_groups, np.nan)
        order = np.lexsort((y, group))
        bounds = np.searchsorted(group[order], np.arange(n_groups + 1))
        for g in np.flatnonzero(np.diff(bounds)):
            median[g] = np.median(y[order[bounds[g]:bounds[g + 1]]])
        return cls(median, with_input, beta)


def log_input(values: np.ndarray) -> np.ndarray:
    """log of input bytes; NaN where unknown or not positive."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(values) & (values > 0), np.log(values), np.nan)


def _within_group_slope(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int) -> float:
    """Least-squares slope of y on x after removing each group's mean, in [0, 1]."""
    if len(x) < 3:
        return 0.0
    counts = np.maximum(np.bincount(group, minlength=n_groups), 1)
    dx = x - (np.bincount(group, x, n_groups) / counts)[group]
    dy = y - (np.bincount(group, y, n_groups) / counts)[group]
    spread = float(dx @ dx)
    return float(np.clip(dx @ dy / spread, 0.0, 1.0)) if spread > 0 else 0.0


def elasticity(log_input: np.ndarray, log_d: np.ndarray) -> float:
    """The slope of log duration on log input of one group's tasks, in [0, 1] (0: fewer
    than 3 tasks or no spread of input)."""
    return _within_group_slope(log_input, log_d, np.zeros(len(log_d), dtype=np.int64), 1)


def _none(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 4)


def fitted(loglik: np.ndarray) -> tuple[float, float, float]:
    """(lam estimate, lowest and highest lam within 1.92 of the maximum likelihood).

    The estimate is the mean of lam under a uniform prior (rounded to the grid's 0.05): the
    likelihood of a few races is often flat over a range, where its maximum would be an
    arbitrary edge of the plateau."""
    weight = np.exp(loglik - loglik.max())
    mean = float(weight @ GRID / weight.sum())
    inside = GRID[loglik >= loglik.max() - 1.92]
    return round(round(mean / 0.05) * 0.05, 2), float(inside.min()), float(inside.max())


@dataclass
class _Tasks:
    """Attempts sorted by task then start, with each task's group and the group's residuals."""

    task: np.ndarray  # task code per attempt
    start: np.ndarray
    end: np.ndarray
    ok: np.ndarray
    spec: np.ndarray
    group: np.ndarray  # group (job and phase) of each attempt
    center: np.ndarray  # per attempt: its task's expected log duration (Centers)
    size: np.ndarray  # per group: how many first successes (0: no residuals)
    residuals: list[np.ndarray]  # per group, sorted


def _codes(*columns: pa.ChunkedArray) -> np.ndarray:
    key = pc.binary_join_element_wise(*columns, "\x00")
    return np.asarray(pc.dictionary_encode(key).combine_chunks().indices, dtype=np.int64)


def _tasks(table: pa.Table) -> _Tasks:
    task = _codes(table["job"], table["task"])
    start, end = table["start"].to_numpy(), table["end"].to_numpy()
    order = np.lexsort((start, task))
    task, start, end = task[order], start[order], end[order]
    ok = (np.asarray(table["state"].to_numpy(zero_copy_only=False)) == "SUCCEEDED")[order]
    spec = table["speculative"].to_numpy(zero_copy_only=False)[order]
    group = _codes(table["job"], table["type"])[order]
    log_in = log_input(table["input_bytes"].to_numpy()[order])
    first = ok & ~spec & ((end - start) > 0)
    _, _, pos = unique_inverse(np.where(first, task, -1))
    pos = pos[first[pos]]  # the first successful original of each task that has one
    n_groups = int(group.max()) + 1
    centers = Centers.fit(np.log(end[pos] - start[pos]), log_in[pos], group[pos], n_groups)
    center = centers.of(group, log_in)
    r, of = np.log(end[pos] - start[pos]) - center[pos], group[pos]
    order_g = np.argsort(of, kind="stable")
    bounds = np.searchsorted(of[order_g], np.arange(n_groups + 1))
    residuals = [np.sort(r[order_g[bounds[g]:bounds[g + 1]]]) for g in range(n_groups)]
    return _Tasks(task, start, end, ok, spec, group, center, np.diff(bounds), residuals)


def evidence(table: pa.Table, source: str = "", seed: int = 0) -> RerunEvidence:
    """Re-run evidence of an attempt table (``hedge.traces.attempts.ATTEMPT_SCHEMA``)."""
    result = RerunEvidence(source)
    if table.num_rows == 0:
        return result
    t = _tasks(table)
    _complete_reruns(t, result)
    _copy_pairs(t, result, np.random.default_rng(seed))
    return result


def _task_bounds(t: _Tasks) -> np.ndarray:
    new = np.r_[True, t.task[1:] != t.task[:-1]]
    return np.r_[np.flatnonzero(new), len(t.task)]


def _complete_reruns(t: _Tasks, result: RerunEvidence) -> None:
    r1, r2, ratio = [], [], []
    bounds = _task_bounds(t)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        g = t.group[a]
        runs = np.flatnonzero(t.ok[a:b]) + a
        if len(runs) < 2 or not t.size[g]:
            continue
        d1, d2 = t.end[runs[0]] - t.start[runs[0]], t.end[runs[1]] - t.start[runs[1]]
        if d1 > 0 and d2 > 0:
            r1.append(math.log(d1) - t.center[runs[0]])
            r2.append(math.log(d2) - t.center[runs[1]])
            ratio.append(d2 / d1)
    result.reruns = len(r1)
    if len(r1) >= MIN_RERUNS and np.ptp(r1) > 0:
        result.rerun_slope = float(np.polyfit(r1, r2, 1)[0])
    if ratio:
        result.rerun_ratio_median = float(np.median(ratio))


def _copy_pairs(t: _Tasks, result: RerunEvidence, rng: np.random.Generator) -> None:
    loglik = np.zeros(len(GRID))
    bounds = _task_bounds(t)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        copies = np.flatnonzero(t.spec[a:b]) + a
        originals = np.flatnonzero(~t.spec[a:b]) + a
        if len(copies) != 1 or not len(originals):
            continue
        c = copies[0]
        before = originals[t.start[originals] <= t.start[c]]
        if not len(before):
            continue
        o, g = before[-1], t.group[a]
        if t.start[c] >= t.end[o]:
            continue  # started after the original had ended: a re-run, not a race
        result.copy_pairs += 1
        result.copies_won += bool(t.ok[c])
        if t.size[g] < MIN_GROUP:
            result.pairs_in_small_groups += 1
            continue
        loglik += _pair_loglik(t, o, c, g, rng)
    if result.copy_pairs - result.pairs_in_small_groups:
        result.loglik = loglik.tolist()


def _pair_loglik(t: _Tasks, o: int, c: int, g: int, rng: np.random.Generator) -> np.ndarray:
    """log P(the observed outcome of this pair) at each GRID value."""
    res, m = t.residuals[g], t.center[o]
    if t.ok[o]:  # the original finished: its residual is known
        r_o = np.full(DRAWS, math.log(max(t.end[o] - t.start[o], 1e-9)) - m)
    else:  # killed (the copy won, or both were lost): it ran at least this long
        ran = math.log(max(t.end[o] - t.start[o], 1e-9)) - m
        above = res[res >= ran]
        r_o = rng.choice(above, DRAWS) if len(above) else np.full(DRAWS, ran)
    e = rng.choice(res, DRAWS)
    lam = GRID[:, None]
    d_copy = np.exp(m + (1 - lam) * r_o + lam * e)
    d_orig = np.exp(m + r_o)
    p = ((t.start[c] + d_copy) < (t.start[o] + d_orig)).mean(axis=1)
    p = np.clip(p, 1.0 / DRAWS, 1 - 1.0 / DRAWS)  # a finite sample never proves 0 or 1
    return np.log(p if t.ok[c] else 1 - p)


def pooled(evidences: list[RerunEvidence]) -> tuple[float, float, float]:
    """The lam estimate over several traces' speculative pairs, with its interval."""
    total = sum((np.asarray(e.loglik) for e in evidences if e.loglik), np.zeros(len(GRID)))
    return fitted(total)
