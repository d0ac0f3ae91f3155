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


def test_compiled_row_check_agrees_with_validate_snapshot() -> None:
    """``_rows_valid`` (the fresh-* policies' compiled pass over a new table's rows) says
    valid exactly where ``validate_snapshot`` raises nothing: random tables with each of
    its checks broken now and then (NaN fields, edges at ``now`` and at 1e-12)."""
    import numpy as np

    from hedge.model import AttemptState
    from hedge.model.validate import validate_snapshot
    from hedge.policy.detectors import _rows_valid

    rng = np.random.default_rng(5)
    outcomes = set()
    for _ in range(3000):
        n = int(rng.integers(1, 6))
        start = rng.uniform(0, 10, n)
        fpt = start + rng.uniform(0, 2, n)
        sent = fpt + rng.uniform(0, 5, n)
        received = sent + rng.uniform(0, 1, n)
        now = float(received.max() + rng.choice([0.0, 1.0]))
        fp = rng.uniform(0, 0.3, n)
        progress = np.clip(fp + rng.uniform(0, 0.8, n), 0, 1)
        state = rng.choice([AttemptState.RUNNING, AttemptState.SUCCEEDED], n, p=[0.8, 0.2])
        progress[state == AttemptState.SUCCEEDED] = 1.0
        col = {"progress": progress, "sent": sent, "start": start, "received": received,
               "fpt": fpt, "fp": fp}
        if rng.random() < 0.6:  # break (or blank) one field of one row
            name, i = str(rng.choice(list(col))), int(rng.integers(n))
            col[name][i] = rng.choice([np.nan, -0.1, 1.1, now + 2e-9, now + 1e-10,
                                       col[name][i] + rng.choice([-3.0, 3.0])])
        if rng.random() < 0.05:
            state[0], col["progress"][0] = AttemptState.SUCCEEDED, 0.9
        a = table(start=col["start"], first_progress_time=col["fpt"],
                  first_progress=col["fp"], progress=col["progress"],
                  report_sent=col["sent"], report_received=col["received"], state=state)
        s = snap(a, now)
        try:
            validate_snapshot(s)
            want = True
        except HedgeError:
            want = False
        got = _rows_valid(a.progress, a.report_sent, a.start, a.report_received,
                          a.first_progress_time, a.first_progress, a.state, now)
        assert got == want
        outcomes.add(want)
    assert outcomes == {True, False}


@pytest.mark.parametrize("cls", (FreshScorePolicy, FreshRatePolicy))
def test_fresh_policy_raises_on_a_bad_new_table(cls) -> None:
    policy = cls()
    policy.decide(snap(_table(), 6.0))
    bad = table(start=[0, 0], first_progress_time=[2, 2], first_progress=[0.1, 0.1],
                progress=[0.5, -0.1], report_sent=[7, 7], report_received=[7.5, 7.5])
    with pytest.raises(HedgeError, match="'progress' = -0.1"):
        policy.decide(snap(bad, 8.0))
