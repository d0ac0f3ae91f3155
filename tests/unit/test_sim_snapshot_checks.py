"""The simulator's snapshots are marked ``validated`` and ``consistent`` (hedge.sim.am), so
the policies' input guards (``validate_snapshot``, ``ReportHistory``) skip them. That rests
on the simulator's construction; here every snapshot of varied runs is checked anyway, with
the marks cleared, against a history per job."""

from __future__ import annotations

import copy
import dataclasses
from collections import defaultdict

import pytest

from hedge.errors import HedgeError
from hedge.model.validate import ReportHistory
from hedge.sim.am import AppMasters
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import simulate
from tests.unit.test_sim_invariants import CLUSTER, random_workload

# policies that scan a job often (so its attempts are compared across scans), with copies
# and kills (mantri prunes, hedge-auto kills a losing race); hadoop and adaptive scan these
# small jobs too seldom to compare much
POLICIES = ["mantri", "fresh-score", "hedge-auto"]


def _checked_run(monkeypatch, policy: str, cluster: ClusterConfig) -> int:
    """Run ``policy``, checking each snapshot the simulator builds; how many times an
    attempt was checked again at a later scan of its job (what the history compares)."""
    histories: dict[str, ReportHistory] = defaultdict(ReportHistory)
    known: dict[str, set[int]] = defaultdict(set)
    built = AppMasters._job_snapshot
    again = [0]

    def checked(self, *args, **kwargs):
        snapshot = built(self, *args, **kwargs)
        assert snapshot.validated and snapshot.consistent
        plain = copy.copy(snapshot)
        plain.validated = plain.consistent = False
        job = snapshot.job.job_id
        histories[job].check(plain)  # raises HedgeError on a bad report
        ids = set(snapshot.attempts.attempt.tolist())
        again[0] += len(ids & known[job])
        known[job] |= ids
        return snapshot

    monkeypatch.setattr(AppMasters, "_job_snapshot", checked)
    simulate(random_workload(11, jobs=16), policy, cluster, seed=3)
    return again[0]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kills", ["restart", "free"])
def test_every_simulated_snapshot_passes_the_guards_it_skips(monkeypatch, policy, kills):
    assert _checked_run(monkeypatch, policy, dataclasses.replace(CLUSTER, kills=kills)) > 50


def test_a_marked_snapshot_skips_the_history_and_an_unmarked_one_does_not():
    """The guard the mark skips is live: the same report going back is refused unmarked."""
    from tests.unit.test_policy_baseline import R, snapshot

    history = ReportHistory()
    first = snapshot(100, [(0, R, 0, 0.5, 100)], 4)
    history.check(first)
    back = snapshot(101, [(0, R, 0, 0.4, 100)], 4)
    back.attempts.report_sent[:] = first.attempts.report_sent - 1.0
    with pytest.raises(HedgeError, match="older than the report seen"):
        history.check(back)
    marked = copy.copy(back)
    marked.validated = marked.consistent = True
    history.check(marked)  # no error: the mark says its builder keeps reports in order
