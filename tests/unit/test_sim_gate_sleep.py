"""Sleeping jobs audited in whole runs (``AppMasters.settle``): a job a gate skipped is not
checked again until its gate could want it or it changes. The loop is made to visit every
tick, and at every scan instant a job sleeps through, ``decide`` is called anyway (on a
copy of its policy, as ``test_sim_gate_audit`` does for skips) and must have nothing to do;
the run must also give the same results as the run that did not visit those ticks.
"""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.sim.am import AppMasters
from hedge.sim.engine import Simulator, simulate
from hedge.sim.grid import EPS, on_lattice
from hedge.traces.synthetic import default_workload

from .test_sim_gate_audit import TIGHT, Audit, _tight_run
from .test_sim_golden import RUNS, digest, run
from .test_sim_invariants import CLUSTER

# their jobs sleep past scan instants: by the policy's needs_scan_from (hadoop, spark,
# oracle, late, mantri) or when Hadoop's cap leaves no room (adaptive has only the latter)
# (fresh-*: until their rule could flag or a report could arrive; slow golden runs;
# hedge-auto: a job that can judge nothing yet, until a report, start or completion;
# score, rate, static and adaptive: a job not started yet, until its first attempt starts)
SLEEPERS = ["hadoop", "late", "mantri", "spark", "oracle", "replicate", "chronos-clone", "chronos-restart",
            "chronos-resume", "hedge-auto", "score", "rate", "static", "adaptive",
            *(pytest.param(p, marks=pytest.mark.slow) for p in ("fresh-score", "fresh-rate"))]


class SleepAudit:
    """Wraps ``AppMasters.scan``: ``decide`` on every job asleep at a scan instant."""

    def __init__(self, every: int = 1) -> None:  # audit one sleeping instant in ``every``
        self.own = Audit(cut_by_limits=False, every=every)
        self.caps = Audit(cut_by_limits=True, every=every)

    def wrap(self, scan):
        audit = self

        def audited(am: AppMasters, t: float, *rest) -> None:
            if am.sleeps:
                for j in audit.asleep(am, t).tolist():
                    (audit.caps if am._by_cap[j] else audit.own).check(am, t, j)
            scan(am, t, *rest)

        return audited

    @staticmethod
    def asleep(am: AppMasters, t: float) -> np.ndarray:
        """Jobs sleeping through a scan instant at ``t`` (not those a completion just woke:
        they are scanned or gated now, which ``test_sim_gate_audit`` audits)."""
        tb = am.tb
        act = tb.active[tb.j_left[tb.active] > 0]
        jobs = act[~np.isnan(am._anchor[act]) & (tb.j_next_scan[act] > t + EPS)]
        jobs = jobs[on_lattice(am._anchor[jobs], t, am._ticks, am.cluster.tick)]
        return jobs[~tb.j_changed[jobs + 1]]


def _every_tick(monkeypatch) -> None:
    """Make the loop visit every tick (results must not depend on it)."""
    plain = Simulator._next_time

    def next_time(sim: Simulator, t: float) -> float:
        tick = sim.cluster.tick
        try:
            return min(plain(sim, t), (round(t / tick) + 1) * tick)
        except HedgeError:  # every job asleep until it changes, nothing running
            return (round(t / tick) + 1) * tick

    monkeypatch.setattr(Simulator, "_next_time", next_time)


def _audited(monkeypatch, every: int = 1) -> SleepAudit:
    audit = SleepAudit(every)
    _every_tick(monkeypatch)
    monkeypatch.setattr(AppMasters, "scan", audit.wrap(AppMasters.scan))
    return audit


@pytest.mark.parametrize("policy", SLEEPERS)
def test_a_sleeping_job_would_have_done_nothing_at_every_instant_it_slept(policy,
                                                                          monkeypatch):
    plain = [digest(run(policy, i)) for i in (0, 2)]
    tight = digest(_tight_run(policy)) if policy in ("late", "spark") else None
    audit = _audited(monkeypatch, every=8)  # every instant: the slow test below
    assert [digest(run(policy, i)) for i in (0, 2)] == plain  # run 2 scans every 3 ticks
    if tight is not None:  # Hadoop's cap binds: the cap gate's sleepers
        assert digest(_tight_run(policy)) == tight
        assert audit.caps.skipped > 10, audit.caps.skipped
    assert audit.own.skipped + audit.caps.skipped > 100  # the rule was exercised
    if policy == "late":  # its own wake (needs_scan_from), not only the cap's
        assert audit.own.skipped > 50, audit.own.skipped


@pytest.mark.slow
@pytest.mark.parametrize("policy", SLEEPERS + ["spark-legacy", "oracle:after_reports=2"])
def test_sleeping_audited_in_every_golden_run(policy, monkeypatch):
    name, _, param = policy.partition(":")
    params = {"after_reports": int(param.split("=")[1])} if param else None
    plain = [digest(simulate(make(), name, cluster, seed=seed, deadline_factor=2.0,
                             policy_params=params)) for make, cluster, seed in RUNS]
    audit = _audited(monkeypatch)
    again = [digest(simulate(make(), name, cluster, seed=seed, deadline_factor=2.0,
                             policy_params=params)) for make, cluster, seed in RUNS]
    assert again == plain
    if name == "late":  # Hadoop's cap binds only on a tight run: its sleepers too
        _tight_run(name)
        assert audit.caps.skipped > 10
    assert audit.own.skipped + audit.caps.skipped > 100


@pytest.mark.parametrize("policy", ["hadoop", "spark", "oracle", "hedge-auto", "late",
                                    "mantri"])
def test_sleeping_keeps_results_bit_identical_to_the_ungated_run(policy):
    wl = default_workload(3, n_jobs=40 if policy != "oracle" else 12)
    gated = simulate(wl, policy, CLUSTER, seed=2, deadline_factor=2.0)
    full = simulate(wl, policy, CLUSTER, seed=2, deadline_factor=2.0, gates=False)
    assert digest(gated) == digest(full)
    assert gated.scans < full.scans


def _steps(monkeypatch, policy: str) -> int:
    """Instants the loop visits on a small fitted-default day."""
    visits = []
    plain = Simulator._next_time

    def counted(sim: Simulator, t: float) -> float:
        visits.append(t)
        return plain(sim, t)

    monkeypatch.setattr(Simulator, "_next_time", counted)
    simulate(default_workload(0, n_jobs=40), policy, CLUSTER, seed=0, speculation=TIGHT)
    return len(visits)


@pytest.mark.slow  # three runs of 2,771 tasks: about 5 s
def test_sleeping_jobs_cost_no_visits_where_nothing_could_change(monkeypatch):
    """A gated policy whose jobs sleep visits about the instants ``none`` visits (an
    attempt ends, a job arrives), not every tick while a job is active (2,771 tasks:
    none 2,210, hadoop 2,499, spark 2,246; 5,254 and 4,395 when every tick is visited)."""
    none = _steps(monkeypatch, "none")
    for policy in ("hadoop", "spark"):  # oracle's gate passes jobs its decide then leaves
        assert _steps(monkeypatch, policy) <= 1.3 * none, policy


@pytest.mark.parametrize("policy", ["hadoop", "late", "mantri", "score", "spark", "hedge-auto",
                                    "window"])
def test_the_jobs_due_among_the_touched_are_those_a_pass_over_every_active_job_finds(
        policy, monkeypatch):
    """The engine hands ``scan`` the jobs touched since the last scan (tasks completed,
    arrived) and whether no other job's scan instant can be due yet; the due jobs and the
    woken sleepers found from those must be the ones a pass over every active job finds
    (at every step of the golden runs, the loop visiting every tick in the second pass, so
    the shortcut is taken between scan instants)."""
    plain = AppMasters.scan
    shortcuts = []

    def checked(am: AppMasters, t: float, touched: np.ndarray, only_touched: bool) -> None:
        act = am.tb.active
        due = am._due(t, touched, only_touched)
        full = am._due(t, act, only_touched=False)  # every active job counted as touched
        assert np.array_equal(due, full), f"t={t}"
        shortcuts.append(only_touched and len(act) > len(touched))
        plain(am, t, touched, only_touched)

    monkeypatch.setattr(AppMasters, "scan", checked)
    for i in range(len(RUNS)):
        run(policy, i)
    _every_tick(monkeypatch)
    run(policy, 2)
    assert sum(shortcuts) > 100
