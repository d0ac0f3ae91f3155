"""hedge-auto's compiled kernels (hedge.policy.auto_kernels) give bit-identical results to
the numpy expressions they replaced, on random inputs (exact equality, not closeness)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hedge.policy.auto import (
    ERROR_FLOOR,
    ESTIMATE_LOG_SD,
    LAMBDAS,
    MAX_RESIDUALS,
    QUANTILES,
    _copies,
    _loser_slot,
    _summarised,
)
from hedge.policy.auto_kernels import (
    best_count,
    candidates,
    check_time,
    copies_behind,
    finish_bounds,
    input_ratio,
    judge_core,
    log_residuals,
    median,
    race_facts,
    race_pairs,
    typical_runtimes,
)


def _judge_numpy(typical, total, left, residual, check, kill_z, finish, rest):
    """The numpy code judge_core replaced (hedge-auto's _judge and _best_count)."""
    copy = _copies(typical, total, residual)
    race = np.minimum(copy, left[None, :, None])
    ahead = copy < left[None, :, None]
    slot = np.where(ahead, copy, _loser_slot(copy, left[None, :, None], check, kill_z))
    end = np.maximum.accumulate(race, axis=1)
    saving = np.maximum(finish - np.maximum(end, rest[None, :, None]), 0).mean(axis=2)
    return saving, slot.mean(axis=2)


def _finish_numpy(remaining, task, typed, rows, m, tail):
    """The numpy code finish_bounds replaced (hedge-auto's _finish_bounds)."""
    bound = np.where(np.isfinite(remaining), remaining, m)
    _, task_of = np.unique(task[typed], return_inverse=True)
    task_end = np.full(task_of.max(initial=-1) + 1, np.inf)
    np.minimum.at(task_end, task_of, bound[typed])
    ends = task_end[task_of]
    others = ends[~np.isin(typed, rows)]
    outside = float(others.max()) if len(others) and others.max() > 0 else 0.0
    left = remaining[rows]
    after = np.append(np.maximum.accumulate(left[::-1])[::-1][1:], 0.0)
    return float(ends.max()), np.maximum(np.maximum(after, outside), tail)


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return x.shape == y.shape and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("seed", range(40))
def test_judge_core_is_the_numpy_judge_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, r = int(rng.integers(1, 33)), int(rng.integers(1, MAX_RESIDUALS + 1))
    left = np.sort(rng.lognormal(3, 1.5, k))[::-1].copy()
    total = left + rng.lognormal(2, 1, k)
    if seed % 5 == 0:
        total[0] = 0.0  # the 1e-9 floor under the log
    typical = rng.lognormal(2.5, 0.5, k)
    residual = rng.normal(0, 0.8, r)
    # near ties and losers far behind: copies around their originals' remaining times
    residual[: r // 2] = np.log(left[0] / typical[0]) + rng.normal(0, 0.1, r // 2)
    check = math.inf if seed % 7 == 0 else float(rng.uniform(1, 30))
    kill_z = [1.0, 0.0, 2.5, -1.0][seed % 4]
    finish = float(left[0] * rng.uniform(1, 1.5))
    rest = np.maximum(np.append(left[1:], 0.0), rng.uniform(0, left[0]))
    width = kill_z * ESTIMATE_LOG_SD
    belief = rng.dirichlet(np.ones(len(LAMBDAS)))
    belief[rng.random(len(LAMBDAS)) < 0.4] = 0.0  # underflowed: those rows are skipped
    got = judge_core(LAMBDAS, belief, typical, total, left, residual, check, kill_z, width,
                     math.exp(width), math.exp(width * ERROR_FLOOR), finish, rest)
    want = _judge_numpy(typical, total, left, residual, check, kill_z, finish, rest)
    kept = belief > 0
    assert all(_same(g[kept], w[kept]) for g, w in zip(got, want, strict=True))
    # what the caller reads: the belief-weighted rows, the same bit for bit
    assert all(_same(belief @ g, belief @ w) for g, w in zip(got, want, strict=True))
    # a case that tests something: some copies win and some lose
    ahead = _copies(typical, total, residual) < left[None, :, None]
    assert 0 < ahead.mean() < 1 or k == 1


@pytest.mark.parametrize("seed", range(30))
def test_finish_bounds_is_the_numpy_bound_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 60))
    task = rng.integers(0, max(n // 2, 1), n)  # some tasks with two running attempts
    remaining = rng.lognormal(3, 1, n)
    remaining[rng.random(n) < 0.2] = np.nan  # no estimate yet: m
    remaining[rng.random(n) < 0.1] = -rng.uniform(0, 5)  # overdue
    typed = np.flatnonzero(rng.random(n) < 0.8)
    if not len(typed):
        typed = np.arange(n)
    finite = typed[np.isfinite(remaining[typed])]
    if not len(finite):  # hedge-auto judges a type only with a candidate
        finite = typed[:1]
        remaining[finite] = 10.0
    rows = rng.permutation(finite)[: int(rng.integers(1, len(finite) + 1))]
    rows = rows[np.argsort(-remaining[rows], kind="stable")]
    m, tail = float(rng.lognormal(3, 1)), [0.0, 20.0][seed % 2]
    got = finish_bounds(remaining, task, typed, rows, m, tail)
    want = _finish_numpy(remaining, task, typed, rows, m, tail)
    assert got[0] == want[0] and _same(got[1], want[1])


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 63, 64, 65, 66, 100, 127, 128, 129, 1000])
def test_median_and_residual_quantiles_are_numpys(n: int) -> None:
    rng = np.random.default_rng(n)
    runtimes = rng.lognormal(3, 1, n)
    runtimes[: n // 3] = np.ceil(runtimes[: n // 3])  # ties
    assert median(runtimes) == np.median(runtimes)
    m, residual = log_residuals(runtimes, QUANTILES)
    assert m == float(np.median(runtimes))
    assert _same(residual, _summarised(np.log(runtimes / m)))
    assert len(residual) == min(n, MAX_RESIDUALS)


def _candidates_numpy(of_type, per_task, task, speculative, remaining, total, input_ratio,
                      scale, raced, skew_ratio, m, limit):
    """The numpy code candidates replaced (hedge-auto's _candidates)."""
    rows = np.flatnonzero(of_type & (per_task[task] == 1) & ~speculative
                          & np.isfinite(remaining) & (remaining > 0))
    rows = rows[~np.isin(task[rows], raced)]
    skewed = (input_ratio[rows] >= skew_ratio) & (total[rows] / scale[rows] <= skew_ratio * m)
    kept = rows[~skewed]
    return kept[np.argsort(-remaining[kept], kind="stable")][:limit], rows[skewed]


@pytest.mark.parametrize("seed", range(30))
def test_candidates_are_the_numpy_candidates(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 120))
    n_tasks = n + 5
    task = rng.integers(0, n_tasks, n)
    per_task = np.bincount(task, minlength=n_tasks)
    of_type = rng.random(n) < 0.8
    speculative = rng.random(n) < 0.1
    remaining = np.round(rng.lognormal(3, 1, n))  # ties: the stable order matters
    remaining[rng.random(n) < 0.15] = np.nan
    remaining[rng.random(n) < 0.1] = -1.0
    total = remaining + rng.lognormal(2, 1, n)
    input_ratio = rng.lognormal(0, 0.6, n)
    scale = input_ratio ** 0.8
    raced = rng.choice(n_tasks, int(rng.integers(0, 6)), replace=False).astype(np.int64)
    args = (of_type, per_task, task, speculative, remaining, total, input_ratio, scale,
            raced, 1.5, float(np.nanmedian(total)), 32)
    got, want = candidates(*args), _candidates_numpy(*args)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


@pytest.mark.parametrize("order", ["rising", "falling", "ties"])
@pytest.mark.parametrize("limit", [0, 1, 5])
def test_candidates_keep_the_slowest_in_any_order(order: str, limit: int) -> None:
    """The slowest are picked in one pass: rows in rising, falling or tied remaining time
    give the stable sort's first ``limit``."""
    n = 40
    remaining = {"rising": np.arange(1.0, n + 1), "falling": np.arange(n, 0.0, -1),
                 "ties": np.repeat([3.0, 1.0, 2.0, 3.0], n // 4)}[order]
    task = np.arange(n)
    args = (np.ones(n, bool), np.ones(n, np.int64), task, np.zeros(n, bool), remaining,
            remaining, np.ones(n), np.ones(n), np.empty(0, np.int64), 1.5, 1.0, limit)
    got, want = candidates(*args), _candidates_numpy(*args)
    assert got[0].tolist() == want[0].tolist() and len(got[0]) == limit


@pytest.mark.parametrize("seed", range(30))
def test_typical_runtimes_and_check_time_are_the_numpy_ones(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(0, 40))
    done = rng.lognormal(3, 1, int(rng.integers(0, 6)))
    of_type = rng.random(n) < 0.7
    speculative = rng.random(n) < 0.2
    total = rng.lognormal(3, 1, n)
    total[rng.random(n) < 0.3] = np.nan
    total[rng.random(n) < 0.1] = -2.0  # an overdue estimate: not a run time
    # hedge-auto's _typical_runtimes and _check_time as they were in numpy
    peers = of_type & ~speculative & np.isfinite(total)
    runtimes = np.concatenate([done, total[peers]])
    enough = len(done) >= 3 or peers.sum() >= 6
    want = runtimes[runtimes > 0] if enough else done[:0]
    assert _same(typical_runtimes(done, of_type, speculative, total, 3, 6), want)
    start = rng.uniform(0, 100, n)
    first = start + rng.lognormal(1, 0.5, n)
    first[rng.random(n) < 0.3] = np.nan  # no report yet
    delay = (first - start)[of_type]
    delay = delay[np.isfinite(delay)]
    want_check = 2.0 * float(np.median(delay)) if len(delay) else math.inf
    assert check_time(first, start, of_type) == want_check


@pytest.mark.parametrize("seed", range(20))
def test_race_facts_are_what_the_numpy_loop_read(seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    n = int(rng.integers(1, 50))
    task = rng.integers(0, 15, n)
    running = rng.random(n) < 0.8
    speculative = rng.random(n) < 0.4
    remaining = rng.lognormal(2, 1, n)
    remaining[rng.random(n) < 0.3] = np.nan
    start, progress = rng.uniform(0, 100, n), rng.uniform(0, 1, n)
    raced = rng.choice(20, int(rng.integers(1, 8)), replace=False).astype(np.int64)
    counts, ends, copies = race_facts(task, running, speculative, remaining, start, progress,
                                      raced)
    for j, t in enumerate(raced.tolist()):  # hedge-auto's _follow_races as it was in numpy
        rows = np.flatnonzero(running & (task == t))
        copy, orig = rows[speculative[rows]], rows[~speculative[rows]]
        assert counts[j].tolist() == [len(copy), len(orig)]
        for side, which in enumerate((copy, orig)):
            finite = remaining[which][np.isfinite(remaining[which])]
            assert ends[j, side] == (finite.min() if len(finite) else math.inf)
        if len(copy):
            assert copies[j].tolist() == [start[copy].max(), progress[copy].max()]
        else:
            assert np.isnan(copies[j]).all()


def _pairs_numpy(task, running, speculative, remaining, attempt, tasks):
    """hedge-auto's _reopened as it was in numpy: per task, (original row, other row,
    the attempt that would end later)."""
    rows = np.flatnonzero(running & np.isin(task, tasks))
    rows = rows[np.argsort(task[rows], kind="stable")]
    ids, first, counts = np.unique(task[rows], return_index=True, return_counts=True)
    out = {}
    for t, i, n in zip(ids.tolist(), first.tolist(), counts.tolist(), strict=True):
        pair = rows[i:i + n]
        original = pair[~speculative[pair]]
        if n != 2 or len(original) != 1 or not np.isfinite(remaining[pair]).all():
            continue
        out[t] = (int(original[0]), int(pair[pair != original[0]][0]),
                  int(attempt[pair[int(np.argmax(remaining[pair]))]]))
    return out


def _check_race_pairs(seed: int) -> int:
    """race_pairs against the numpy loop on one random table; the pairs it found."""
    rng = np.random.default_rng(700 + seed)
    task = np.repeat(np.arange(10), rng.integers(0, 4, 10))  # 0-3 attempts a task
    first = np.r_[True, task[1:] != task[:-1]] if len(task) else np.zeros(0, bool)
    order = rng.permutation(len(task))  # rows in no task order
    task, first = task[order], first[order]
    n = len(task)
    running = rng.random(n) < 0.9
    speculative = ~first | (rng.random(n) < 0.1)  # a task's first row: mostly its original
    remaining = rng.integers(1, 6, n).astype(float)  # ties, to check which one is later
    remaining[rng.random(n) < 0.2] = np.nan
    attempt = rng.permutation(n) + 100
    tasks = rng.choice(12, int(rng.integers(0, 12)), replace=False).astype(np.int64)
    ids, original, other, later = race_pairs(task, running, speculative, remaining, attempt,
                                             tasks)
    assert list(ids) == sorted(ids.tolist())
    got = {t: (o, x, la) for t, o, x, la in zip(ids.tolist(), original.tolist(),
                                                 other.tolist(), later.tolist(), strict=True)}
    assert got == _pairs_numpy(task, running, speculative, remaining, attempt, tasks)
    return len(got)


def test_race_pairs_are_what_the_numpy_loop_found() -> None:
    assert sum(_check_race_pairs(seed) for seed in range(60)) >= 20  # pairs were there


@pytest.mark.parametrize("seed", range(20))
def test_input_ratio_is_the_numpy_ratio(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(0, 30))
    inputs = rng.lognormal(20, 1, n)
    inputs[rng.random(n) < 0.3] = np.nan
    inputs[rng.random(n) < 0.1] = 0.0
    of_type = rng.random(n) < 0.7
    k, n_known = input_ratio(inputs, of_type)
    known = of_type & np.isfinite(inputs) & (inputs > 0)  # hedge-auto's numpy code
    want = np.ones(n)
    if known.sum() >= 2:
        want[known] = inputs[known] / float(np.median(inputs[known]))
    assert n_known == known.sum() and _same(k, want)


def _behind_python(now, start, progress, copy_end, orig_end, kill_z):
    """hedge-auto's _behind as it was, in Python floats."""
    if not copy_end > orig_end:
        return False
    if kill_z <= 0:
        return True
    need = now + orig_end - start
    estimate = now + copy_end - start
    if not need > 0:
        return True
    sd = ESTIMATE_LOG_SD * max(1.0 - progress, ERROR_FLOOR)
    return math.log(estimate / need) > kill_z * sd


@pytest.mark.parametrize("kill_z", [1.0, 0.0, 2.0])
def test_copies_behind_is_the_python_rule(kill_z: float) -> None:
    rng = np.random.default_rng(600)
    n = 400
    orig_end = rng.lognormal(3, 1, n)
    copy_end = orig_end * rng.lognormal(0, 0.3, n)  # near ties both ways
    copy_end[rng.random(n) < 0.1] = np.inf
    now = 500.0
    start = now - rng.uniform(0, 100, n)
    start[:5] = now + orig_end[:5] + 1.0  # a tie no run time can reach: killed
    progress = rng.uniform(0, 1, n)
    progress[rng.random(n) < 0.1] = 0.99  # the error's floor
    ends = np.column_stack([copy_end, orig_end])
    copies = np.column_stack([start, progress])
    got = copies_behind(ends, copies, now, kill_z, ESTIMATE_LOG_SD, ERROR_FLOOR).tolist()
    want = [_behind_python(now, float(start[j]), float(progress[j]), float(copy_end[j]),
                           float(orig_end[j]), kill_z) for j in range(n)]
    assert got == want and 0 < sum(want) < n


@pytest.mark.parametrize("seed", range(40))
def test_best_count_is_the_numpy_choice(seed: int) -> None:
    rng = np.random.default_rng(700 + seed)
    k = int(rng.integers(1, 33))
    benefit = np.round(rng.uniform(-2, 30, k), 1)  # ties: the first of the largest
    slot = rng.lognormal(2, 1, k)
    if seed % 10 == 0:
        slot[rng.integers(k)] = np.nan  # a NaN net from there on: nothing is copied
    weight = float(rng.uniform(0, 3))  # some runs where no K pays
    cost = np.cumsum(weight * slot)  # hedge-auto's _best_count as it was in numpy
    net = np.where(benefit >= 1.0, benefit - cost, 0.0)
    want = (0, 0.0, 0.0)
    if net.max(initial=0.0) > 0:
        best = int(np.argmax(net))
        want = (best + 1, float(benefit[best]), float(cost[best]))
    assert best_count(benefit, slot, weight, 1.0) == want
