"""Skyline slot choice and opportunistic rescheduling (hedge.policy.allocation)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.analysis.copy_model import copy_runtime
from hedge.policy.allocation import (
    AllocationProblem,
    _BlockScorer,
    allocate,
    skyline_scores,
)


def problem(end, slot_start, base, crit=None, pen=None, last_local=None, saving=None,
            power=1.0, local=None):
    """A problem with unit powers (ΔE = Δt - t_C) unless ``power`` is given."""
    n, m = len(end), len(slot_start)
    ptr = slot = None
    if local is not None:
        ptr = np.concatenate([[0], np.cumsum([len(x) for x in local])])
        slot = np.concatenate([np.asarray(x, dtype=np.int64) for x in local])
    return AllocationProblem(
        criticalness=np.asarray(end if crit is None else crit, dtype=float),
        end=np.asarray(end, dtype=float),
        straggler_power=np.full(n, power),
        remote_penalty=np.zeros(n) if pen is None else np.asarray(pen, dtype=float),
        slot_start=np.asarray(slot_start, dtype=float),
        slot_power=np.full(m, power),
        base_runtime=np.asarray(base, dtype=float),
        last_local=np.zeros(m, bool) if last_local is None else np.asarray(last_local),
        local_saving=np.zeros(m) if saving is None else np.asarray(saving, dtype=float),
        local_ptr=ptr,
        local_slot=slot,
    )


def test_skyline_choice_needs_time_and_energy_savings_and_takes_an_undominated_slot():
    # straggler ends at 100. Slots (start, t_C) -> (Δt, ΔE = Δt - t_C):
    #  0: (0, 60)  -> (40, -20)  saves time, costs energy: never chosen
    #  1: (5, 20)  -> (75, 55)
    #  2: (10, 25) -> (65, 40)   dominated by slot 1
    #  3: (90, 5)  -> (5, 0)     ΔE = 0 does not beat (0, 0)
    p = problem(end=[100], slot_start=[0, 5, 10, 90], base=[60, 20, 25, 5])
    dt, de = p.metrics(np.array([0]))
    np.testing.assert_allclose(dt[0], [40, 75, 65, 5])
    np.testing.assert_allclose(de[0], [-20, 55, 40, 0])
    result = allocate(p)
    assert result.slot.tolist() == [1]
    assert result.dt[0] == pytest.approx(75) and result.de[0] == pytest.approx(55)


def test_no_qualifying_slot_means_no_copy():
    p = problem(end=[30], slot_start=[0, 10], base=[40, 25])
    assert allocate(p).slot.tolist() == [-1]


def test_more_critical_straggler_gets_the_best_slot_first():
    # both prefer slot 0 (t_C = 10) over slot 1 (t_C = 20); the first in order wins it
    p = problem(end=[100, 90], slot_start=[0, 0], base=[10, 20])
    r = allocate(p)
    assert r.slot.tolist() == [0, 1]
    np.testing.assert_allclose(r.dt, [90, 70])
    np.testing.assert_allclose(r.de, [80, 50])


def rescheduling_case() -> AllocationProblem:
    # V0: t_C 10 (its last task was remote), V1: t_C 20 (last task local).
    # S0 (ct 100, ends 50): V0 -> (40, 30), V1 -> (30, 10)        picks V0
    # S1 (ct 30, ends 100, remote penalty 100): V0 -> (90, 80); V1 -> t_C 120: no gain
    return problem(end=[50, 100], crit=[100, 30], slot_start=[0, 0], base=[10, 20],
                   pen=[0, 100], last_local=[False, True])


def test_opportunistic_rescheduling_moves_the_placed_straggler():
    r = allocate(rescheduling_case())
    # score_0 = (100-30)/100 + (90-40)/40 + (80-30)/30 > 0: S1 takes V0, S0 moves to V1
    assert r.slot.tolist() == [1, 0]
    assert r.rescheduled == 1
    np.testing.assert_allclose(r.dt, [30, 90])
    np.testing.assert_allclose(r.de, [10, 80])


def test_without_rescheduling_the_second_straggler_gets_nothing():
    r = allocate(rescheduling_case(), reschedule=False)
    assert r.slot.tolist() == [0, -1]


def test_rescheduling_fails_when_the_placed_straggler_has_nowhere_to_go():
    p = rescheduling_case()
    p.base_runtime[1] = 45.0  # V1 no longer helps S0 (Δt 5, ΔE -40)
    p.local_runtime[1] = 45.0
    r = allocate(p)
    assert r.slot.tolist() == [0, -1] and r.rescheduled == 0


def test_rescheduling_needs_positive_time_and_energy_terms():
    # S1 would gain less than S0 on V0: no candidate, S1 gets no copy
    p = problem(end=[100, 60], crit=[100, 30], slot_start=[0, 0], base=[10, 20],
                pen=[0, 100], last_local=[False, True])
    assert allocate(p).slot.tolist() == [0, -1]


def test_block_copy_runtime_matches_the_copy_model_in_all_locality_cases():
    rng = np.random.default_rng(0)
    n, m, bw = 5, 12, 1e8
    d_copy = rng.uniform(1e8, 5e8, n)
    d_last = rng.uniform(1e8, 5e8, m)
    last_local = rng.random(m) < 0.5
    local = [np.sort(rng.choice(m, 3, replace=False)) for _ in range(n)]
    p = problem(end=np.full(n, 100.0), slot_start=np.zeros(m), base=rng.uniform(10, 50, m),
                pen=d_copy / bw, last_local=last_local, saving=d_last / bw, local=local)
    copy_local = np.zeros((n, m), bool)
    for i, cols in enumerate(local):
        copy_local[i, cols] = True
    expected = copy_runtime(p.base_runtime[None, :], d_last[None, :], last_local[None, :],
                            d_copy[:, None], copy_local, bw)
    np.testing.assert_allclose(p.copy_runtime(np.arange(n)), expected)
    rows, cols = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    dt, de = p.pair_metrics(rows.ravel(), cols.ravel())
    full_dt, full_de = p.metrics(np.arange(n))
    np.testing.assert_allclose(dt, full_dt.ravel())
    np.testing.assert_allclose(de, full_de.ravel())


def greedy_reference(p: AllocationProblem) -> list[int]:
    """Skyline greedy without rescheduling, one float64 row at a time."""
    free = np.ones(p.n_slots, bool)
    out = []
    for i in range(p.n_stragglers):
        dt, de = p.metrics(np.array([i]))
        score = skyline_scores(dt, de, p.straggler_power[i])[0]
        score[~free] = -np.inf
        j = int(np.argmax(score))
        if score[j] == -np.inf:
            out.append(-1)
        else:
            out.append(j)
            free[j] = False
    return out


def random_problem(seed: int, n: int, m: int, local_per_straggler: int,
                   nodes: bool = False) -> AllocationProblem:
    """n stragglers, m slots, random powers and times; each straggler's input is local on
    ``local_per_straggler`` slots; with ``nodes``, stragglers and slots on 5 nodes."""
    rng = np.random.default_rng(seed)
    local = [rng.choice(m, local_per_straggler, replace=False) for _ in range(n)]
    return AllocationProblem(
        criticalness=np.sort(rng.uniform(20, 200, n))[::-1],
        end=rng.uniform(20, 200, n),
        straggler_power=rng.uniform(10, 20, n),
        remote_penalty=rng.uniform(0, 5, n),
        slot_start=np.sort(rng.uniform(0, 10, m)),
        slot_power=rng.uniform(10, 20, m),
        base_runtime=rng.uniform(10, 60, m),
        last_local=rng.random(m) < 0.5,
        local_saving=rng.uniform(0, 5, m),
        local_ptr=np.arange(0, local_per_straggler * n + 1, local_per_straggler),
        local_slot=np.concatenate(local),
        straggler_node=rng.integers(0, 5, n) if nodes else None,
        slot_node=rng.integers(0, 5, m) if nodes else None,
    )


@pytest.mark.parametrize("seed", range(5))
def test_blocked_float32_allocation_matches_the_reference_greedy(seed):
    p = random_problem(seed, n=40, m=30, local_per_straggler=2)
    r = allocate(p, reschedule=False, block=7)
    assert r.slot.tolist() == greedy_reference(p)
    placed = r.slot[r.placed]
    assert len(set(placed.tolist())) == len(placed)  # one copy per slot
    assert (r.dt[r.placed] > 0).all() and (r.de[r.placed] > 0).all()
    with_resched = allocate(p)
    ok = with_resched.placed
    assert ok.sum() >= r.placed.sum()
    assert len(set(with_resched.slot[ok].tolist())) == int(ok.sum())
    assert (with_resched.dt[ok] > 0).all() and (with_resched.de[ok] > 0).all()


def test_empty_inputs():
    p = problem(end=[], slot_start=[1.0], base=[1.0])
    assert len(allocate(p).slot) == 0
    p = problem(end=[10.0], slot_start=[], base=[])
    assert allocate(p).slot.tolist() == [-1]


def test_a_copy_never_goes_to_its_stragglers_node():
    p = problem(end=[100], slot_start=[0, 0], base=[10, 20])
    assert allocate(p).slot.tolist() == [0]
    p.straggler_node, p.slot_node = np.array([3]), np.array([3, 4])
    r = allocate(p)
    assert r.slot.tolist() == [1] and r.dt[0] == pytest.approx(80)
    assert p.metrics(np.array([0]))[0][0, 0] == -np.inf


@pytest.mark.parametrize("seed", range(4))
def test_compiled_block_scores_are_bit_identical_to_numpy(seed):
    p = random_problem(seed, n=9, m=50, local_per_straggler=3, nodes=seed % 2 == 1)
    scorer = _BlockScorer(p, 4)
    fails = []
    for rows in (np.arange(0, 4), np.arange(4, 8), np.arange(8, 9)):
        want = [a.copy() for a in scorer.scores(rows)]
        got = scorer.compiled_scores(rows)
        for w, g in zip(want, got, strict=True):
            assert w.tobytes() == g.tobytes()
        fails.append(want[3].ravel())
    assert np.concatenate(fails).any() and not np.concatenate(fails).all()  # both occur
