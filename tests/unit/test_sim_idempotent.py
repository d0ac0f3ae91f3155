"""Policy.scan_idempotent: the simulator skips a quiet job's scans while nothing of it changed."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.policy.base import Policy, register
from hedge.policy.baseline import HadoopDefault
from hedge.policy.published import Spark
from hedge.sim.engine import simulate

from .test_sim_invariants import CLUSTER, random_workload


@register
class _IdempotentHadoop(HadoopDefault):
    """hadoop without its gate, declared scan-idempotent (time alone only switches its
    candidates off, and it keeps no state across scans)."""

    name = "test-hadoop-idempotent"
    scan_idempotent = True
    needs_scan = None


@register
class _FalselyIdempotentSpark(Spark):
    """spark wrongly declared idempotent: a task's run time grows past the limit by time alone."""

    name = "test-spark-idempotent"
    scan_idempotent = True
    needs_scan = None


def _same(a, b) -> bool:
    pairs = [(a.attempts.start, b.attempts.start), (a.attempts.end, b.attempts.end),
             (a.attempts.node, b.attempts.node), (a.finish, b.finish), (a.detected, b.detected)]
    return all(np.array_equal(x, y) for x, y in pairs)


def test_the_default_is_not_idempotent():
    assert Policy.scan_idempotent is False
    assert HadoopDefault.scan_idempotent is False


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_skipping_unchanged_quiet_jobs_keeps_results_bit_identical(seed):
    wl = random_workload(3 + seed)
    full = simulate(wl, "hadoop", CLUSTER, seed=seed, gates=False)
    quick = simulate(wl, "test-hadoop-idempotent", CLUSTER, seed=seed)
    assert _same(full, quick)
    assert quick.scans < 0.8 * full.scans
    assert full.attempts.copy.any()  # hadoop did act: the skipped scans had company
    # gates=False also turns the skipping off
    assert simulate(wl, "test-hadoop-idempotent", CLUSTER, seed=seed,
                    gates=False).scans == full.scans


def test_a_false_declaration_changes_results():
    # the comparison above can fail: spark's rule is switched on by time alone
    wl = random_workload(4)
    full = simulate(wl, "spark", CLUSTER, seed=1, gates=False)
    wrong = simulate(wl, "test-spark-idempotent", CLUSTER, seed=1)
    assert not _same(full, wrong)
