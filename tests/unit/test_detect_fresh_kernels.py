"""hedge.detect.fresh_kernels equals the numpy reference of hedge.detect.fresh bit for bit:
fresh-rate's and fresh-score's flags and quiet_until's bound, on random jobs (unknown,
finished and estimate-less tasks, unknown or zero noise, borrowed rates, tasks near and
past their bar, jobs of 1-300 tasks); pairwise_sum equals np.sum."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.detect import fresh_kernels as fk
from hedge.detect.fresh import (
    Z_CONFIDENT,
    Z_LAST,
    Z_RATE,
    Z_RATE_LAST,
    fresh_rate_verdict,
    fresh_score_verdict,
    quiet_until,
)


def _job(rng: np.random.Generator) -> dict:
    """A random job at scan time ``now``: tasks of similar durations, a few slow."""
    n = int(rng.choice([1, 2, 3, 5, 9, 17, 40, 129, 300]))
    start = rng.uniform(0, 50, n).round(int(rng.integers(0, 3)))
    duration = rng.uniform(10, 30, n) * np.where(rng.random(n) < 0.2, rng.uniform(1, 3, n), 1)
    now = float(start.max() + rng.uniform(0, 40))
    sent = np.minimum(start + rng.uniform(0, 1, n) * (now - start), now)
    received = sent + rng.exponential(rng.choice([1e-3, 0.5, 3.0]), n)
    ect = start + duration * rng.uniform(0.8, 1.2, n)
    known = rng.random(n) < rng.choice([0.5, 0.9, 1.0])
    cand = known & (rng.random(n) < rng.choice([0.3, 0.8, 1.0]))
    finished = known & ~cand
    ect[finished] = sent[finished]  # a finished task's ECT is its final report's send time
    ect[rng.random(n) < rng.choice([0.0, 0.1, 0.5])] = np.nan  # no estimate yet
    noise = float(rng.choice([np.nan, 0.0, 0.05, 0.3]))
    spread = np.where(rng.random(n) < 0.3, rng.uniform(0, 0.5, n), 0.0)
    return {"ect": ect, "start": start, "sent": sent, "received": received, "now": now,
            "known": known, "candidates": cand, "noise": noise, "rate_spread": spread}


def _args(j: dict) -> tuple:
    return (j["ect"], j["start"], j["sent"], j["received"], j["now"], j["known"],
            j["candidates"], j["noise"], j["rate_spread"])


@pytest.mark.parametrize("seed", range(4))
def test_rate_kernel_equals_the_numpy_verdict(seed: int) -> None:
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(500):
        j = _job(rng)
        factor = float(rng.choice([1.2, 1.05]))
        z, z_last = (Z_RATE, Z_RATE_LAST) if rng.random() < 0.8 else (0.0, np.inf)
        ref = fresh_rate_verdict(*_args(j)[:8], factor, z, z_last, 1.0, j["rate_spread"])
        flags, parts = fk.rate_flags(*_args(j), factor, z, z_last, 1.0)
        np.testing.assert_array_equal(flags, ref.flags)
        flagged += int(flags.any())
        watched = j["candidates"] & ref.judged & (rng.random(len(flags)) < 0.9)
        want = quiet_until(ref, j["ect"], j["start"], j["sent"], j["now"], watched, z, 1.0)
        got = fk.quiet(parts, j["ect"], j["start"], j["sent"], j["now"], watched, z, 1.0)
        assert np.float64(got).tobytes() == np.float64(want).tobytes()
    assert 50 < flagged < 450  # both answers were exercised


@pytest.mark.parametrize("seed", range(4))
def test_score_kernel_equals_the_numpy_verdict(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    flagged = 0
    for _ in range(500):
        j = _job(rng)
        gap, horizon = (0.2, 1.2) if rng.random() < 0.8 else (0.1, 1.0)
        z, z_last = (Z_CONFIDENT, Z_LAST) if rng.random() < 0.8 else (0.5, 3.0)
        ref = fresh_score_verdict(*_args(j)[:8], gap, horizon, z, z_last, 1.0,
                                  j["rate_spread"])
        flags, parts = fk.score_flags(*_args(j), gap, horizon, z, z_last, 1.0)
        np.testing.assert_array_equal(flags, ref.flags)
        flagged += int(flags.any())
        watched = j["candidates"] & ref.judged
        want = quiet_until(ref, j["ect"], j["start"], j["sent"], j["now"], watched, z, 1.0)
        got = fk.quiet(parts, j["ect"], j["start"], j["sent"], j["now"], watched, z, 1.0)
        assert np.float64(got).tobytes() == np.float64(want).tobytes()
    assert 50 < flagged < 450


def test_pairwise_sum_equals_np_sum() -> None:
    rng = np.random.default_rng(7)
    for n in list(range(0, 300)) + [1000, 4097, 20000]:
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 8, n)
        x[rng.random(n) < 0.2] = 0.0
        assert np.float64(fk.pairwise_sum(x)).tobytes() == np.sum(x).tobytes()


@pytest.mark.parametrize("noise", (np.nan, 0.0, 0.3))
def test_a_job_with_one_judged_task_is_quiet_for_ever(noise: float) -> None:
    """fresh-rate with one judged task (here: one known of three; a one-task job alike):
    the weight, hence every bar, is NaN, so ``quiet_until`` says inf; the rule indeed
    flags nothing at any later time, however far the task runs past its estimate."""
    ect, start = np.array([100.0, np.nan, np.nan]), np.zeros(3)
    sent, received = np.array([10.0, np.nan, np.nan]), np.array([10.5, np.nan, np.nan])
    known = cand = np.array([True, False, False])
    spread = np.zeros(3)
    v = fresh_rate_verdict(ect, start, sent, received, 11.0, known, cand, noise,
                           rate_spread=spread)
    assert np.isnan(v.weight).all()
    assert quiet_until(v, ect, start, sent, 11.0, cand, Z_RATE, 1.0) == np.inf
    _, parts = fk.rate_flags(ect, start, sent, received, 11.0, known, cand, noise, spread,
                             1.2, Z_RATE, Z_RATE_LAST, 1.0)
    assert fk.quiet(parts, ect, start, sent, 11.0, cand, Z_RATE, 1.0) == np.inf
    for t in np.linspace(11.0, 1e4, 200):
        assert not fresh_rate_verdict(ect, start, sent, received, t, known, cand, noise,
                                      rate_spread=spread).flags.any()
        assert not fk.rate_flags(ect, start, sent, received, t, known, cand, noise, spread,
                                 1.2, Z_RATE, Z_RATE_LAST, 1.0)[0].any()
