"""Power/energy model (hedge.analysis.energy) and copy model (hedge.analysis.copy_model)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.analysis.copy_model import copy_runtime, energy_saved, time_saved
from hedge.analysis.energy import (
    ENERGY_CATEGORIES,
    PowerModel,
    attempt_category,
    energy_breakdown,
    energy_efficiency,
    schedule_energy,
)
from hedge.errors import HedgeError

NO_MEM = dict(mem_access_energy=0.0, net_byte_energy=0.0)


def test_node_power_is_static_plus_capped_cpu_plus_memory_and_network():
    m = PowerModel(static=100, core=15, cores=2, mem_access_energy=1e-9,
                   mem_access_rate=1e9, net_byte_energy=1e-8)
    # 3 tasks on 2 cores: 100 + 2*15 + 3*(1e9*1e-9) + 1e8*1e-8
    assert m.node_power(3, net_rate=1e8) == pytest.approx(100 + 30 + 3 + 1)
    assert m.node_power(0) == pytest.approx(100)


def test_slot_power_is_node_power_with_minus_without_the_task():
    m = PowerModel(static=100, core=15, cores=2, mem_access_energy=1e-9, mem_access_rate=1e9)
    assert m.slot_power(0) == pytest.approx(15 + 1)  # a core and its memory traffic
    assert m.slot_power(2) == pytest.approx(1)  # all cores busy: only memory power
    # a remote task also pays its network bytes
    assert m.slot_power(0, net_rate=2e8) == pytest.approx(16 + 2e8 * m.net_byte_energy)
    np.testing.assert_allclose(m.slot_power(np.array([0, 1, 5])), [16, 16, 1])


@pytest.mark.parametrize("field", ["static", "core", "mem_access_energy",
                                   "mem_access_rate", "net_byte_energy"])
def test_negative_power_constants_are_rejected_with_the_valid_range(field):
    with pytest.raises(HedgeError, match=rf"'{field}' = -1.*>= 0"):
        PowerModel(**{field: -1.0})


def test_zero_cores_rejected():
    with pytest.raises(HedgeError, match="cores.*integer >= 1"):
        PowerModel(cores=0)


def test_energy_of_a_hand_made_schedule():
    # node 0 has 2 cores; A [0,10], B [5,15], C [5,10]: three tasks share 2 cores on [5,10)
    m = PowerModel(static=100, core=15, cores=2, **NO_MEM)
    e = schedule_energy(node=[0, 0, 0], start=[0, 5, 5], end=[10, 15, 10], model=m,
                        n_nodes=2)
    # A: 5 s alone at 15 W + 5 s at 15*2/3 = 10 W; B the mirror image; C 5 s at 10 W
    np.testing.assert_allclose(e.attempt, [125, 125, 50])
    assert e.dynamic == pytest.approx(75 + 150 + 75)  # ∫ min(n, 2) * 15 dt
    assert e.static == pytest.approx(2 * 100 * 15)  # 2 nodes on for the 15 s horizon
    assert e.total == pytest.approx(3300)
    assert energy_efficiency(e.total) == pytest.approx(1 / 3300)


def test_memory_and_network_energy_per_attempt():
    m = PowerModel(static=0, core=0, cores=1, mem_access_energy=1e-9, mem_access_rate=1e9,
                   net_byte_energy=1e-8)
    e = schedule_energy(node=[0, 1], start=[0, 0], end=[10, 4], model=m, n_nodes=2,
                        net_rate=[0.0, 1e8])
    # memory 1 W each; the remote one also reads 1e8 B/s at 1e-8 J/B = 1 W
    np.testing.assert_allclose(e.attempt, [10, 4 * 2])


def test_attempt_energies_add_up_to_the_integral_of_node_power():
    rng = np.random.default_rng(3)
    n, nodes = 40, 3
    start = rng.integers(0, 50, n).astype(float)
    end = start + rng.integers(0, 30, n)
    node = rng.integers(0, nodes, n)
    m = PowerModel(static=0, core=7, cores=2, **NO_MEM)
    e = schedule_energy(node, start, end, m, n_nodes=nodes, horizon=(0, 100))
    grid = np.arange(0, 100) + 0.5  # integer event times: n(t) is constant on each unit
    running = ((start[:, None] <= grid) & (grid < end[:, None]))
    expected = sum(m.cpu_power(running[node == k].sum(axis=0)).sum() for k in range(nodes))
    assert e.dynamic == pytest.approx(expected)


def test_schedule_rejects_bad_attempts():
    with pytest.raises(HedgeError, match="end >= start"):
        schedule_energy([0], [5], [4], PowerModel(), n_nodes=1)


def test_energy_breakdown_by_category():
    spec = np.array([False, False, False, True, True])
    ok = np.array([True, True, False, True, False])
    strag = np.array([False, True, True, False, False])
    cat = attempt_category(spec, ok, strag)
    np.testing.assert_array_equal(cat, [0, 1, 2, 3, 4])
    out = energy_breakdown(np.array([1.0, 2, 4, 8, 16]), cat)
    assert list(out) == list(ENERGY_CATEGORIES)
    assert out == {"normal-success": 1, "straggler-success": 2, "straggler-killed": 4,
                   "copy-success": 8, "copy-killed": 16}


# ---------------------------------------------------------------- copy performance model
B = 1e8


def test_copy_runtime_same_locality_equals_the_reference_task():
    assert copy_runtime(100, 2e8, True, 3e8, True, B) == pytest.approx(100)
    assert copy_runtime(100, 2e8, False, 3e8, False, B) == pytest.approx(100)


def test_local_copy_where_the_reference_task_was_remote_saves_its_transfer():
    # t_Ci = t_Th - D_Th / B = 100 - 2e8/1e8
    assert copy_runtime(100, 2e8, False, 3e8, True, B) == pytest.approx(98)


def test_remote_copy_where_the_reference_task_was_local_pays_its_transfer():
    # t_Ci = t_Th + D_Ci / B = 100 + 3e8/1e8
    assert copy_runtime(100, 2e8, True, 3e8, False, B) == pytest.approx(103)


def test_copy_runtime_vectorised_and_unknown_sizes_add_nothing():
    out = copy_runtime([100, 100, 100], [2e8, np.nan, 2e8], [False, False, True],
                       [3e8, 3e8, np.nan], [True, True, False], B)
    np.testing.assert_allclose(out, [98, 100, 100])


@pytest.mark.parametrize("bandwidth", [0, -1, float("nan")])
def test_zero_or_negative_bandwidth_is_rejected(bandwidth):
    with pytest.raises(HedgeError, match="bandwidth.*> 0"):
        copy_runtime(100, 1, True, 1, False, bandwidth)


def test_time_and_energy_saved():
    # straggler started at 10 and runs 200 s in all (ends 210); copy starts at 50, runs 98 s
    dt = time_saved(200, 10, 98, 50)
    assert dt == pytest.approx(62)
    # ΔE = P_k Δt - P_j t_C
    assert energy_saved(20, 10, dt, 98) == pytest.approx(20 * 62 - 10 * 98)
    assert energy_saved(15, 15, dt, 98) < 0  # saves time, costs energy
