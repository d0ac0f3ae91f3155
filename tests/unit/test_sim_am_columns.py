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
