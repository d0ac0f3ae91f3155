"""Normalised durations, per-node intervals, interval-ranking levels, weak-set policies."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.nodes.history import make_history
from hedge.nodes.normalize import NormalizedDurations, group_zscore, normalize
from hedge.nodes.ranking import interval_levels, rank_nodes, select_weak
from hedge.nodes.stability import half_stability
from hedge.nodes.synthetic import synthetic_history


def test_group_zscore_hand_values_and_edge_cases():
    values = np.array([1.0, 3.0, 5.0, 7.0, 7.0, 2.0])
    group = np.array(["a", "a", "b", "b", "b", "c"])
    z = group_zscore(values, group)
    # job a: mean 2, population std 1 -> -1, +1
    assert z[:2] == pytest.approx([-1.0, 1.0])
    # job b: mean 19/3, std sqrt(((5-19/3)^2 + 2 (7-19/3)^2) / 3)
    mean = 19 / 3
    std = np.sqrt(((5 - mean) ** 2 + 2 * (7 - mean) ** 2) / 3)
    assert z[2:5] == pytest.approx((np.array([5, 7, 7]) - mean) / std)
    assert np.isnan(z[5])  # single-task job: undefined
    assert group_zscore(np.array([4.0, 4.0]), np.array([1, 1])).tolist() == [0.0, 0.0]


def test_normalize_uses_successful_attempts_only():
    history = make_history({
        "job": ["j", "j", "j", "k"], "task": ["1", "2", "2", "1"],
        "attempt": ["a", "b", "c", "a"], "node": ["n1", "n2", "n3", "n1"],
        "start": np.zeros(4), "end": np.array([10.0, 20.0, 99.0, 5.0]),
        "state": ["SUCCEEDED", "SUCCEEDED", "KILLED", "SUCCEEDED"]})
    data = normalize(history)
    assert data.nodes.tolist() == ["n1", "n2"]
    assert sorted(data.z.tolist()) == [-1.0, 1.0]
    assert data.dropped_single == 1


def test_interval_levels_by_repeated_removal():
    # A [0,1] below C [2,3] below E [4,5]; B [0.5,2.5] overlaps A and C but is below E;
    # D [3.5,6] overlaps E. Sinks (no node entirely above): D, E -> level 0;
    # then C and B (only above them were D/E) -> 1; then A -> 2.
    lo = np.array([0.0, 0.5, 2.0, 3.5, 4.0])
    hi = np.array([1.0, 2.5, 3.0, 6.0, 5.0])
    assert interval_levels(lo, hi).tolist() == [2, 1, 1, 0, 0]
    # equal intervals never get an edge: one level
    assert interval_levels(np.zeros(3), np.ones(3)).tolist() == [0, 0, 0]


def brute_force_levels(lo, hi):
    level = np.full(len(lo), -1)
    remaining = set(range(len(lo)))
    current = 0
    while remaining:
        sinks = {m for m in remaining if not any(hi[m] < lo[n] for n in remaining)}
        for m in sinks:
            level[m] = current
        remaining -= sinks
        current += 1
    return level


def test_interval_levels_match_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        lo = rng.normal(size=30)
        hi = lo + rng.exponential(0.5, 30)
        assert interval_levels(lo, hi).tolist() == brute_force_levels(lo, hi).tolist()


def durations(groups: dict[str, list[float]]) -> NormalizedDurations:
    names = sorted(groups)
    node = np.concatenate([[i] * len(groups[n]) for i, n in enumerate(names)])
    z = np.concatenate([groups[n] for n in names]).astype(float)
    return NormalizedDurations(node=node.astype(np.int64), nodes=np.array(names), z=z,
                               end=np.arange(len(z), dtype=float), dropped_single=0)


def test_band_matches_numpy_quantiles_and_min_tasks():
    rng = np.random.default_rng(0)
    groups = {"a": rng.normal(0, 1, 40), "b": rng.normal(3, 1, 17), "c": [1.0, 2.0]}
    ranking = rank_nodes(durations(groups), method="band", min_tasks=3)
    for i, name in enumerate(["a", "b"]):
        expected = np.quantile(groups[name], [0.025, 0.975])
        assert [ranking.lo[i], ranking.hi[i]] == pytest.approx(expected)
    assert ranking.level[2] == -1 and np.isnan(ranking.lo[2])
    assert ranking.mean[2] == pytest.approx(1.5)


def test_mean_ci_hand_values():
    ranking = rank_nodes(durations({"a": [1.0, 2.0, 3.0], "b": [10.0, 11.0, 12.0]}),
                         method="mean-ci")
    half = 4.302652729911275 * 1.0 / np.sqrt(3)  # t(0.975, 2) * s / sqrt(n), s = 1
    assert ranking.lo[0] == pytest.approx(2 - half) and ranking.hi[0] == pytest.approx(2 + half)
    assert ranking.level.tolist() == [1, 0]  # a's CI lies below b's: b is the weak one
    assert ranking.std[0] == pytest.approx(np.sqrt(2 / 3))


def test_loglogistic_interval_brackets_the_data():
    rng = np.random.default_rng(1)
    sample = rng.logistic(0, 0.3, 200)
    groups = {"a": sample, "b": sample + 5.0, "few": [0.0, 1.0, 2.0]}
    ranking = rank_nodes(durations(groups), method="loglogistic", min_fit=8)
    assert ranking.lo[0] < np.median(sample) < ranking.hi[0]
    assert ranking.hi[0] < ranking.lo[1]
    assert ranking.level.tolist()[:2] == [1, 0]
    # too few tasks to fit: the empirical band is used
    assert [ranking.lo[2], ranking.hi[2]] == pytest.approx(np.quantile([0, 1, 2], [0.025, 0.975]))


def test_select_weak_policies():
    groups = {"a": [0.0, 0.1, 0.2], "w1": [5.0, 1.0, 9.0], "w2": [5.0, 4.9, 5.1],
              "w3": [5.0, 0.0, 10.0]}
    ranking = rank_nodes(durations(groups), method="band")
    assert set(select_weak(ranking, "level0")) == {"w1", "w2", "w3"}
    assert select_weak(ranking, "top-k-std", k=2).tolist() == ["w3", "w1"]
    assert select_weak(ranking, "auto", k=3).tolist() == ["w1", "w2", "w3"]
    assert select_weak(ranking, "auto", k=1).tolist() == ["w3"]
    with pytest.raises(HedgeError, match="weak policy 'worst'"):
        select_weak(ranking, "worst")
    with pytest.raises(HedgeError, match="ranking method 'x'"):
        rank_nodes(durations(groups), method="x")


def test_nodes_that_do_not_differ_give_no_weak_node():
    """All intervals overlap: every node is level 0, and none is slower than another."""
    equal = {n: [0.0, 1.0, 2.0, 0.5] for n in ("a", "b", "c", "d")}
    ranking = rank_nodes(durations(equal), method="band")
    assert set(ranking.level) == {0}
    for policy in ("level0", "top-k-std", "auto"):
        assert select_weak(ranking, policy).tolist() == []
    # a node with a wide interval overlapping the fastest node is level 0, but not weak
    groups = {"fast": [0.0, 0.1, 0.2], "slow": [5.0, 5.1, 5.2], "wide": [-1.0, 5.0, 10.0]}
    ranking = rank_nodes(durations(groups), method="band")
    assert ranking.level.tolist() == [1, 0, 0]  # fast, slow, wide (sorted by name)
    assert select_weak(ranking, "level0").tolist() == ["slow"]


def test_planted_weak_nodes_rank_weakest():
    synthetic = synthetic_history(n_nodes=30, n_periods=1, period_days=4, jobs_per_day=10,
                                  seed=4, initial_weak=0.1)
    weak_truth = set(synthetic.nodes[synthetic.weak[0]])
    ranking = rank_nodes(normalize(synthetic.history), method="mean-ci")
    assert weak_truth and set(select_weak(ranking, "level0")) == weak_truth


def test_half_stability_on_stable_nodes():
    synthetic = synthetic_history(n_nodes=20, n_periods=2, period_days=4, jobs_per_day=10,
                                  seed=5, initial_weak=0.2, p_recover=0.0,
                                  p_become_weak=0.0)
    result = half_stability(normalize(synthetic.history))
    assert result.common == 20
    assert result.spearman_level > 0.5 and result.same_level >= 0.9
    assert result.jaccard_level0 == 1.0
