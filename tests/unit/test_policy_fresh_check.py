"""The fresh-* policies skip ReportHistory.check only where it cannot fail: on the table
it last passed, at a finite scan time no earlier than then."""

from __future__ import annotations

import math

import pytest

from hedge.errors import HedgeError
from hedge.model.validate import ReportHistory
from hedge.policy.detectors import FreshRatePolicy, FreshScorePolicy
from tests.unit.test_detect_detectors import snap
from tests.unit.test_estimate_runtime import table


def _table(sent: float = 5.0):
    return table(start=[0, 0], first_progress_time=[2, 2], first_progress=[0.1, 0.1],
                 progress=[0.5, 0.4], report_sent=[sent, sent],
                 report_received=[sent + 0.5, sent + 0.5])


@pytest.mark.parametrize("cls", (FreshScorePolicy, FreshRatePolicy))
def test_fresh_policy_checks_each_table_once_and_every_doubt(cls, monkeypatch) -> None:
    calls = []
    check = ReportHistory.check
    monkeypatch.setattr(ReportHistory, "check",
                        lambda self, s: (calls.append(s.now), check(self, s))[1])
    policy = cls()
    policy.decide(snap(_table(), 6.0))
    policy.decide(snap(_table(), 7.0))  # the same table later: cannot fail, not checked
    assert calls == [6.0]
    with pytest.raises(HedgeError, match="after the scan time"):  # earlier: checked
        policy.decide(snap(_table(), 5.2))
    with pytest.raises(HedgeError, match="not a finite number"):
        policy.decide(snap(_table(), math.inf))
    policy.decide(snap(_table(6.0), 8.0))  # a new report: checked
    with pytest.raises(HedgeError, match="older than the report seen"):
        policy.decide(snap(_table(5.5), 9.0))
    assert calls == [6.0, 5.2, math.inf, 8.0, 9.0]


@pytest.mark.parametrize("repeats", (False, True))
def test_previous_reports_compiled_update_equals_the_numpy_one(repeats: bool) -> None:
    """``PreviousReports.update`` (one compiled pass) against ``update_reference`` scan
    after scan: the previous reports returned and the memory kept, with ids in key order
    or shuffled, reports without a send time, new ids and (``repeats``) a repeated id."""
    from types import SimpleNamespace

    import numpy as np

    from hedge.policy.detectors import PreviousReports

    rng = np.random.default_rng(3)
    fast, ref = PreviousReports(), PreviousReports()
    sent = np.zeros(60)
    for step in range(300):
        ids = np.sort(rng.choice(60, size=int(rng.integers(1, 15)), replace=False))
        if rng.random() < 0.5:
            rng.shuffle(ids)
        if repeats and step == 150:
            ids = np.append(ids, ids[0])
        sent[ids] += rng.choice([0.0, 2.0], len(ids))
        table = SimpleNamespace(attempt=ids.astype(np.int64), progress=rng.uniform(0, 1, len(ids)),
                                report_sent=np.where(sent[ids] > 0, sent[ids], np.nan))
        got = fast.update(SimpleNamespace(attempts=table))
        want = ref.update_reference(SimpleNamespace(attempts=table))
        assert all(np.array_equal(g, w, equal_nan=True) for g, w in zip(got, want, strict=True))
        for k in ("_ids", "_last", "_prev", "_distinct"):
            assert np.array_equal(getattr(fast, k), getattr(ref, k), equal_nan=True), k
    assert fast._distinct is not repeats
    assert np.isfinite(got[0]).any()  # previous reports were found
