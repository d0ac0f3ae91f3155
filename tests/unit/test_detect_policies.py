"""Detector-based speculation policies on hand-built snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import AttemptState
from hedge.policy import create
from hedge.policy.detectors import (
    AdaptivePolicy,
    FreshPolicy,
    FreshRatePolicy,
    FreshScorePolicy,
    RatePolicy,
    ScorePolicy,
    StaticPolicy,
    speculation_cap,
)
from hedge.policy.params import policy_params
from tests.unit.test_detect_detectors import SLOW, STALE, snap
from tests.unit.test_estimate_runtime import table

ALL = (StaticPolicy, AdaptivePolicy, ScorePolicy, RatePolicy, FreshScorePolicy, FreshRatePolicy)


def many(n: int, slow: int, speculative: int = 0):
    """n running tasks at t = 20 with fresh reports; the first ``slow`` are at 0.1."""
    progress = np.full(n, 0.8)
    progress[:slow] = np.linspace(0.05, 0.15, slow)
    spec = np.zeros(n, dtype=bool)
    spec[n - speculative:] = speculative > 0
    return table(start=np.zeros(n), first_progress_time=np.full(n, 2.0),
                 first_progress=np.full(n, 0.01), progress=progress,
                 report_sent=np.full(n, 20.0), report_received=np.full(n, 20.0),
                 speculative=spec)


def test_hadoop_cap() -> None:
    assert speculation_cap(100, 30) == 10
    assert speculation_cap(5000, 30) == 50
    assert speculation_cap(100, 400) == 40


def earlier(attempts, t: float):
    """The same attempts seen at time t < their last report, at constant speed since their
    first progress report."""
    a = attempts
    rate = (a.progress - a.first_progress) / (a.report_sent - a.first_progress_time)
    progress = a.first_progress + rate * (t - a.first_progress_time)
    return table(start=a.start, first_progress_time=a.first_progress_time,
                 first_progress=a.first_progress, progress=progress,
                 report_sent=np.full(len(a), t), report_received=np.full(len(a), t))


@pytest.mark.parametrize("cls", ALL)
def test_each_policy_copies_the_straggler_once(cls) -> None:
    policy = cls()
    if issubclass(cls, FreshPolicy):
        # the fresh-* policies first measure the speed noise (here 0) from two reports
        assert policy.decide(snap(earlier(SLOW, 14.0), 14.0)).copies_requested == 0
    s = snap(SLOW, 20.0)
    actions = policy.decide(s)
    np.testing.assert_array_equal(actions.speculate_task, [2])
    np.testing.assert_array_equal(actions.speculate_copies, [1])
    assert policy.decide(snap(SLOW, 20.0)).copies_requested == 0  # at most one copy ever


def test_task_with_a_copy_already_is_not_copied_again() -> None:
    attempts = many(12, slow=1)
    assert ScorePolicy().decide(snap(attempts, 20.0)).copies_requested == 1
    attempts.speculative[0] = True  # the slow task 0 already has a speculative attempt
    assert ScorePolicy().decide(snap(attempts, 20.0)).copies_requested == 0


def test_stale_report_copies_under_rate_not_fresh_rate() -> None:
    np.testing.assert_array_equal(RatePolicy().decide(snap(STALE, 11.9)).speculate_task, [2])
    assert FreshRatePolicy().decide(snap(STALE, 11.9)).copies_requested == 0


def test_cap_limits_copies_and_slowest_go_first() -> None:
    policy = ScorePolicy()
    actions = policy.decide(snap(many(40, slow=20), 20.0))
    assert actions.copies_requested == 10  # max(10, 0.4, 4)
    np.testing.assert_array_equal(np.sort(actions.speculate_task), np.arange(10))
    # ten speculative attempts already running: no room left
    busy = ScorePolicy().decide(snap(many(40, slow=20, speculative=10), 20.0))
    assert busy.copies_requested == 0


def test_adaptive_parameters_and_deadline() -> None:
    far = snap(SLOW, 20.0, deadline=500.0)
    assert AdaptivePolicy().decide(far).copies_requested == 0
    eager = AdaptivePolicy(progress_weight=0.0, resource_weight=0.0)
    np.testing.assert_array_equal(eager.decide(snap(SLOW, 20.0)).speculate_task, [2])
    assert "progress_standard=0.5" in repr(AdaptivePolicy())


def test_adaptive_from_mapred_site_keys() -> None:
    """A job's hedge.adaptive.* properties, as the shim forwards them (prefix dropped):
    policy_params names each bad one as the property."""
    params = policy_params("adaptive", {"progress.weight": "0.25", "cpu.standard": "0.7"})
    policy = create("adaptive", **params)
    assert policy.progress_weight == 0.25 and policy.cpu_standard == 0.7
    assert policy.progress_standard == 0.5
    with pytest.raises(HedgeError, match="hedge.adaptive.typo: policy 'adaptive' has no"):
        policy_params("adaptive", {"typo": "1"})
    with pytest.raises(HedgeError, match="'hedge.adaptive.resource.weight' = 'high'"):
        policy_params("adaptive", {"resource.weight": "high"})
    with pytest.raises(HedgeError, match=r"hedge.adaptive.cpu.standard = 1.5: expected in "
                                         r"\[0, 1\]"):
        policy_params("adaptive", {"cpu.standard": "1.5"})


def test_policy_rejects_bad_snapshots() -> None:
    bad = table(start=[0], progress=[-0.1], report_sent=[5], report_received=[5])
    with pytest.raises(HedgeError, match="'progress' = -0.1"):
        StaticPolicy().decide(snap(bad, 6.0))
    late = table(start=[0], progress=[0.5], report_sent=[5], report_received=[5],
                 state=[AttemptState.KILLED])
    policy = StaticPolicy()
    policy.decide(snap(late, 6.0))
    with pytest.raises(HedgeError, match="already ended"):
        policy.decide(snap(table(start=[0], progress=[0.6], report_sent=[7],
                                 report_received=[7]), 8.0))


def test_registry_names() -> None:
    from hedge.policy.base import _REGISTRY

    for name in ("static", "adaptive", "score", "rate", "fresh-score", "fresh-rate"):
        assert _REGISTRY[name].name == name


@pytest.mark.parametrize("cls", (FreshScorePolicy, FreshRatePolicy))
def test_fresh_policy_keeps_the_inputs_of_an_unchanged_table(cls, monkeypatch) -> None:
    """Scans that see the same attempt table as the one before reuse its speed noise,
    ECTs and masks (``_FreshInputs``); at every scan of a whole run the flags equal the
    detector's from scratch on that snapshot with the remembered noise, kept or not."""
    from hedge.detect.detectors import DETECTORS
    from hedge.sim.engine import simulate
    from tests.unit.test_sim_invariants import CLUSTER, random_workload

    seen = {"kept": 0, "new": 0, "flagged": 0}
    flags, decide = cls._flags, FreshPolicy.decide

    def counted(policy, snapshot):
        before = policy._inputs
        actions = decide(policy, snapshot)
        seen["kept" if policy._inputs is before else "new"] += 1
        return actions

    def checked(policy, snapshot):
        got = flags(policy, snapshot)
        want = DETECTORS[policy.detector](snapshot, **policy.detector_params())
        assert np.array_equal(got, want), f"t={snapshot.now}"
        seen["flagged"] += int(got.any())
        return got

    monkeypatch.setattr(FreshPolicy, "decide", counted)
    monkeypatch.setattr(cls, "_flags", checked)
    # ungated: the scan gate skips most scans of an unchanged table (test_sim_gate_audit)
    simulate(random_workload(1, jobs=2, stragglers=0.3), cls.name, CLUSTER, seed=0,
             gates=False)
    assert seen["kept"] > 50 and seen["new"] > 50 and seen["flagged"] > 0, seen
