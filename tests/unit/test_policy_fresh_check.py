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
