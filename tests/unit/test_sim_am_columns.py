"""The AMs' per-scan work in one pass: ``kernels.slot_free_at`` against its numpy
reference on random slots, and batched snapshots against whole runs' digests (the golden
tests) being unchanged."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hedge.sim import kernels
from hedge.sim.am import AppMasters


def _slots(rng: np.random.Generator, n: int) -> SimpleNamespace:
    """Random slot rows with the edge cases: empty slots, no report yet (p0 0: inf or
    NaN), progress 1, starts in the past and future."""
    k = rng.integers(0, 6, n).astype(np.int64)
    p0 = rng.choice([0.0, 1e-300, 0.3, 1.0, np.nan], n) * rng.random(n)
    p0[rng.random(n) < 0.2] = 0.0
    start = rng.uniform(-50.0, 500.0, n)
    aid = np.where(rng.random(n) < 0.3, -1, rng.integers(0, 10_000, n)).astype(np.int64)
    return SimpleNamespace(start=start, k=k, p0=p0, aid=aid)


@pytest.mark.parametrize("seed", range(20))
def test_slot_free_at_equals_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    live = _slots(rng, int(rng.integers(0, 400)))
    t, tick, hw = float(rng.uniform(0, 600)), float(rng.choice([0.1, 1.0, 3.0])), 3.0
    am = AppMasters.__new__(AppMasters)
    am.cluster = SimpleNamespace(tick=tick, hw=hw)
    am.slots = SimpleNamespace(live=live)
    want = am._slot_free_at_numpy(t)
    got = kernels.slot_free_at(t, tick, hw, live.start, live.k, live.p0, live.aid)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))  # bit for bit


def _settling_numpy(active, anchor, rated, changed, fresh, any_fresh, by_cap):
    """``AppMasters.settle``'s choice as it was written in numpy (the kernel's reference);
    returns what it did not early-return, and whether ``_any_fresh`` was reset."""
    jobs = active[~np.isnan(anchor[active])]
    was_rated = rated[jobs + 1]
    rated.fill(False)
    if not len(jobs):
        return 0, jobs, jobs.astype(bool), jobs.astype(bool), jobs.astype(bool), False
    was_changed = changed[jobs + 1]
    look = was_changed | was_rated
    was_fresh = np.zeros(len(jobs), dtype=bool)
    reset = False
    if any_fresh:
        was_fresh = fresh[jobs]
        look |= was_fresh
        fresh[jobs] = False
        reset = True
    jobs, was_changed, was_fresh = jobs[look], was_changed[look], was_fresh[look]
    changed[jobs + 1] = False
    return len(active[~np.isnan(anchor[active])]), jobs, was_changed, was_fresh, \
        by_cap[jobs], reset


@pytest.mark.parametrize("seed", range(30))
def test_settling_equals_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_jobs = int(rng.integers(1, 60))
    active = np.sort(rng.choice(n_jobs, int(rng.integers(0, n_jobs + 1)), replace=False))
    active = active.astype(np.int64)
    anchor = np.where(rng.random(n_jobs) < 0.5, np.nan, rng.uniform(0, 100, n_jobs))
    state = [rng.random(n_jobs + 1) < 0.3, rng.random(n_jobs + 1) < 0.3,
             rng.random(n_jobs) < 0.3]  # rated, changed (index job + 1), fresh
    by_cap = rng.random(n_jobs) < 0.5
    any_fresh = bool(rng.random() < 0.7)
    ref = [x.copy() for x in state]
    asleep, jobs, changed, fresh, cap, reset = _settling_numpy(
        active, anchor, *ref, any_fresh, by_cap)
    got = kernels.settling(active, anchor, *state, any_fresh, by_cap)
    assert got[0] == asleep and (reset == (any_fresh and asleep > 0))
    for a, b in zip(got[1:], (jobs, changed, fresh, cap), strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(state, ref, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("policy", ["hedge-auto", "fresh-score", "window"])
def test_running_columns_kernel_equals_numpy_in_a_run(policy: str, monkeypatch) -> None:
    """At every scan of a small run, ``kernels.running_columns`` gives the numpy path's
    columns (``_reports`` then ``_running_columns``) bit for bit, in the model's dtypes."""
    from hedge.sim.cluster import ClusterConfig
    from hedge.sim.engine import simulate
    from hedge.traces.synthetic import default_workload

    compiled = AppMasters._running_columns_at
    checked = []

    def both(am: AppMasters, t: float, rows: np.ndarray) -> dict[str, np.ndarray]:
        got = compiled(am, t, rows)
        want = am._running_columns(rows, am._reports(t, rows))
        assert got.keys() == want.keys()
        for name, column in want.items():
            assert got[name].dtype == column.dtype, name
            if column.dtype.kind == "f":
                np.testing.assert_array_equal(got[name].view(np.int64),
                                              column.view(np.int64), err_msg=name)
            else:
                np.testing.assert_array_equal(got[name], column, err_msg=name)
        checked.append(len(rows))
        return got

    monkeypatch.setattr(AppMasters, "_running_columns_at", both)
    simulate(default_workload(3, n_jobs=25), policy, ClusterConfig(nodes=20), seed=1)
    assert checked and sum(checked) > 0
