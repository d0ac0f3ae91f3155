"""window_kernels.task_end_candidates against the numpy code it replaced in
hedge.policy.window (kept here as the reference): bit-identical on random attempt tables."""

from __future__ import annotations

import numpy as np

from hedge.policy.window_kernels import task_end_candidates


def reference(running, speculative, task, task_type, ect, typical, now):
    """WindowPolicy._task_end and the first test of _candidates as numpy (before 2026-11)."""
    estimated = np.isfinite(ect)
    run = running & estimated
    best = np.full(int(task.max(initial=0)) + 1, np.inf)
    np.minimum.at(best, task[run], ect[run])
    blind = np.zeros(len(best), dtype=bool)
    blind[task[running & ~estimated]] = True
    end = np.where(np.isfinite(best[task]) & ~blind[task], best[task], np.nan)
    far = running & ~speculative & (end - now > typical[task_type.astype(np.int64)])
    return end, far


def random_table(rng, n):
    task = rng.integers(0, max(1, n // 2) + 1, n).astype(np.int64)
    running = rng.random(n) < 0.7
    ect = rng.uniform(90.0, 400.0, n)
    ect[rng.random(n) < 0.15] = np.nan
    ect[rng.random(n) < 0.05] = np.inf
    return (running, rng.random(n) < 0.2, task, rng.integers(0, 2, n).astype(np.int8), ect,
            rng.uniform(5.0, 200.0, 2), 100.0 + rng.random())


def test_task_end_candidates_equals_the_numpy_code_on_random_tables():
    rng = np.random.default_rng(3)
    saw_far = saw_blind = 0
    for _ in range(2000):
        args = random_table(rng, int(rng.integers(0, 40)))
        end, far = task_end_candidates(*args)
        want_end, want_far = reference(*args)
        assert np.array_equal(end, want_end, equal_nan=True)
        assert np.array_equal(far, want_far)
        saw_far += far.any()
        saw_blind += np.isnan(end).any()
    assert saw_far > 100 and saw_blind > 100  # both branches were exercised


def test_an_unestimated_running_attempt_blinds_its_task_and_waiting_rows_count_nothing():
    running = np.array([True, True, False, True])
    spec = np.array([False, True, False, False])
    task = np.array([0, 0, 1, 1], dtype=np.int64)
    ect = np.array([150.0, 120.0, 50.0, np.nan])
    end, far = task_end_candidates(running, spec, task, np.zeros(4, np.int8), ect,
                                   np.array([10.0, 10.0]), 100.0)
    assert end[0] == end[1] == 120.0 and np.isnan(end[2:]).all()
    assert far.tolist() == [True, False, False, False]
