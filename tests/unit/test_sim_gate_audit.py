"""Scan gates audited in whole runs: wherever a gate skips a due job, ``decide`` is called
anyway (on a copy of the job's policy) and must have nothing to do, and the policy must hold
no state that the skipped scan would have changed.

Two gates: the policy's own (``needs_scan``, ``AppMasters._gated``): the answer asks for
nothing (for a policy whose gate reads ``SlotView.copy_room``, as the cap gate's); the cap
gate of ``copies_only`` policies (``AppMasters._with_room``): the answer, cut by
``hedge.policy.limits`` as the simulator cuts it, asks for nothing, and asked for copies
only with the default rescan.
"""

from __future__ import annotations

import copy
import threading

import numpy as np
import pytest

from hedge.model import Actions
from hedge.policy import create
from hedge.policy.limits import SpeculationSettings, limit
from hedge.sim.am import AppMasters
from hedge.sim.copies import truth
from hedge.sim.engine import simulate
from hedge.sim.results import SimResult

from .test_sim_golden import RUNS, digest, run
from .test_sim_invariants import CLUSTER, random_workload

# state no skipped scan can matter to: what a detector policy keeps only to validate
# reports (hedge.model.validate.ReportHistory), the truth the simulator tells a
# clairvoyant policy afresh before each decide, and hedge-auto's bound of its last judged
# scan (NoCopyBound), which only its gate reads: a skipped scan would have made a newer,
# tighter one, and an older one only lets the gate skip less
NOT_STATE = {"_history", "_truth", "_no_copy"}
LOCK = type(threading.Lock())


def _acts(actions: Actions) -> bool:
    return bool(len(actions.speculate_task) or len(actions.kill_attempt)
                or len(actions.resume_task) or actions.reserve_slots > 0)


def _state(policy) -> dict:
    return {k: copy.deepcopy(v) for k, v in vars(policy).items() if k not in NOT_STATE}


def _same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)


def _same(a, b) -> bool:
    # NaN marks "not yet" in per-task times (chronos) and the fresh-* kept inputs: NaN
    # stays NaN, so equal; objects a policy keeps (fresh-*'s previous reports and kept
    # inputs) are compared field by field
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, LOCK):  # what hedge-auto's cluster memory guards itself with: no state
        return isinstance(b, LOCK)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (np.isnan(a) and np.isnan(b))
    if hasattr(a, "__dict__") and type(a) is type(b):
        return _same_state(vars(a), vars(b))
    if isinstance(a, tuple | list) and type(a) is type(b):  # hedge-auto's cached belief
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):  # hedge-auto's races, in their order
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


class Audit:
    """Wraps an AppMasters gate method; ``decide`` on every job it skips."""

    def __init__(self, cut_by_limits: bool, every: int = 1) -> None:
        self.cut_by_limits, self.every = cut_by_limits, every  # audit one skip in ``every``
        self.skipped = self.kept = 0
        self.refused = 0  # audited skips whose answer the cap would have cut to nothing

    def wrap(self, gate):
        audit = self

        def audited(am: AppMasters, t: float, due: np.ndarray) -> np.ndarray:
            before = due.copy()
            kept = gate(am, t, due)
            audit.kept += len(kept)
            for j in np.setdiff1d(before, kept).tolist():
                if am.tb.j_left[j] > 0:
                    audit.check(am, t, j)
            return kept

        return audited

    def check(self, am: AppMasters, t: float, j: int) -> None:
        self.skipped += 1
        if self.skipped % self.every:
            return
        if am.refresh is not None:  # reports are recorded lazily: bring them up to t
            am.refresh(t, am._all)
        rows = np.flatnonzero(am.slots.live.job == j)
        snapshot = am._snapshot(t, j, rows, am._reports(t, rows), am._cluster_facts(t))
        policy = am.policies.get(j) or create(am.policy_name, **am.policy_params)
        trial = copy.deepcopy(policy)
        state = _state(trial)
        if am.clairvoyant:
            trial.see(truth(am.tb, am.draws.told, am.cluster.startup,
                            am.slots.live.end[rows], t, j, snapshot))
        actions = trial.decide(snapshot)
        assert _same_state(state, _state(trial)), f"job {j} at t={t}: state changed"
        if not (self.cut_by_limits or trial.gate_reads_copy_room):
            assert not _acts(actions), f"job {j} at t={t}: gate skipped {actions}"
            return
        tb = am.tb
        off, n = int(tb.j_off[j]), int(tb.j_nmaps[j] + tb.j_nred[j])
        cut = limit(actions, snapshot, am.actuator.speculation, tb.t_done[off:off + n])
        assert not _acts(cut), f"job {j} at t={t}: cap gate skipped {cut}"
        self.refused += _acts(actions)
        if len(actions.speculate_task):
            assert actions.next_scan_in is None and not actions.wake_on_completion


# Hadoop's caps tight enough to bind in small runs (at most one speculating task per job,
# or a twentieth of its running tasks)
TIGHT = SpeculationSettings(minimum_allowed_tasks=1, cap_running_tasks=0.05)


def _tight_run(policy: str, gates: bool = True) -> SimResult:
    return simulate(random_workload(4), policy, CLUSTER, seed=1, deadline_factor=2.0,
                    speculation=TIGHT, gates=gates)


def _audited(monkeypatch, every: int = 1) -> tuple[Audit, Audit]:
    own, caps = Audit(cut_by_limits=False, every=every), Audit(cut_by_limits=True)
    monkeypatch.setattr(AppMasters, "_gated", own.wrap(AppMasters._gated))
    monkeypatch.setattr(AppMasters, "_with_room", caps.wrap(AppMasters._with_room))
    return own, caps


# fresh-*: their golden runs take about 20-60 s each, so their audits run with the slow tests
GATED = ["adaptive", "chronos-clone", "chronos-restart", "chronos-resume", "hedge-auto", "late",
         "mantri", "oracle", "rate", "replicate", "score", "spark", "spark-legacy", "static",
         *(pytest.param(p, marks=pytest.mark.slow) for p in ("fresh-score", "fresh-rate"))]


@pytest.mark.parametrize("policy", GATED)
def test_gates_skip_only_scans_that_would_do_nothing(policy, monkeypatch):
    own, caps = _audited(monkeypatch, every=4)  # every skip: the slow test below
    run(policy, 2)  # the golden runs' all-at-once arrival
    # the gate was exercised both ways (a skipped job then sleeps, so the gate sees it
    # less often: test_sim_gate_sleep audits the instants it sleeps through); replicate's
    # gate sees a job only when one of its tasks completes (29 skips in this run), a
    # chronos-clone job sleeps until its next keep-one decision or change (6), a fresh-rate
    # job until its next report or flag bound (27), a hedge-auto job that can judge nothing
    # yet until its next report, start or completion (7)
    bar = {"replicate": 20, "chronos-clone": 5, "fresh-rate": 20, "hedge-auto": 5}.get(policy, 30)
    assert own.skipped > bar and own.kept > 0
    if policy in ("late", "spark"):
        _tight_run(policy)
        assert caps.skipped > 10 and caps.kept > 0


@pytest.mark.slow
@pytest.mark.parametrize("policy", GATED)
def test_gates_skip_only_scans_that_would_do_nothing_in_every_golden_run(policy, monkeypatch):
    own, _ = _audited(monkeypatch)
    for index in range(len(RUNS)):
        run(policy, index)
    assert own.skipped > 50 and own.kept > 0


def test_mantris_gate_skips_jobs_whose_copies_the_cap_would_refuse(monkeypatch):
    """mantri kills, so it has no cap gate; its own gate reads the cap's room instead
    (``gate_reads_copy_room``) and skips a job whose answer the cap would cut to nothing."""
    own, _ = _audited(monkeypatch)
    gated = _tight_run("mantri")
    assert own.refused > 10 and own.kept > 0
    monkeypatch.undo()
    full = _tight_run("mantri", gates=False)
    assert digest(gated) == digest(full) and gated.scans < full.scans


@pytest.mark.parametrize("policy", ["late", "spark"])
def test_the_cap_gate_keeps_results_bit_identical_when_caps_bind(policy):
    gated, full = _tight_run(policy), _tight_run(policy, gates=False)
    assert digest(gated) == digest(full)
    assert gated.scans < full.scans


@pytest.mark.parametrize("policy", ["adaptive", "late", "mantri", "oracle", "rate", "score",
                                    "spark", "static"])
def test_compiled_gate_wants_the_jobs_its_numpy_form_wants(policy, monkeypatch):
    """``needs_scan_slots`` (numba; for mantri with its jobs' prune timers: what runs)
    against ``needs_scan`` over ``to_batch()`` (the reference) at every gated step of
    a run."""
    compared = []
    gate = AppMasters._gated

    def both(am: AppMasters, t: float, due: np.ndarray) -> np.ndarray:
        kept = gate(am, t, due)
        view = am._view
        view.due[due + 1] = True
        batch = view.to_batch()
        view.due[due + 1] = False
        want = np.zeros(len(view.due), dtype=bool)
        want[batch.job[np.asarray(am.gate(batch), dtype=bool)] + 1] = True
        if policy != "late":  # then decide's exact median test (spark), the prune timer
            # (mantri), the oracle's exact walk, no task asked for before (oracle, adaptive,
            # score, rate, static) or no job whose copies fill decide's cap (the last four):
            # fewer jobs, not others
            assert np.isin(kept, due[want[due + 1]]).all(), f"t={t}"
        else:
            assert np.array_equal(due[want[due + 1]], kept), f"t={t}"
        compared.append(len(due))
        return kept

    monkeypatch.setattr(AppMasters, "_gated", both)
    run(policy, 1)
    assert len(compared) > 50
