"""Runtime estimators against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.estimate import (
    estimate_ect,
    fresh_ect,
    fresh_progress,
    jvm_ect,
    jvm_startup,
    legacy_ect,
    rate_ect,
)
from hedge.model import AttemptState, AttemptTable

NAN = float("nan")


def table(**columns: list) -> AttemptTable:
    """An attempt table with defaults for the columns a test does not care about."""
    n = len(next(iter(columns.values())))
    defaults = {
        "task": np.arange(n),
        "attempt": np.arange(n),
        "task_type": np.zeros(n),
        "state": np.full(n, AttemptState.RUNNING),
        "node": np.arange(n),
        "start": np.zeros(n),
        "first_progress_time": np.full(n, NAN),
        "first_progress": np.full(n, NAN),
        "progress": np.zeros(n),
        "report_sent": np.full(n, NAN),
        "report_received": np.full(n, NAN),
        "bytes_processed": np.zeros(n),
        "input_bytes": np.full(n, NAN),
        "speculative": np.zeros(n, dtype=bool),
    }
    defaults.update({k: np.asarray(v, dtype=float) for k, v in columns.items()})
    return AttemptTable(**defaults)


# Attempt 0: launched at 0, JVM up at 4 (first report p=0.1 sent at 6), last report p=0.5
# sent at 18, received at 19; true speed 0.4/12 per s after t_fp -> finishes at 33.
# Attempt 1: no report yet. Attempt 2: reported zero progress. Attempt 3: finished at 20.
ATTEMPTS = table(
    start=[0, 5, 5, 2],
    first_progress_time=[6, NAN, NAN, 8],
    first_progress=[0.1, NAN, NAN, 0.3],
    progress=[0.5, 0, 0, 1.0],
    report_sent=[18, NAN, 6, 20],
    report_received=[19, NAN, 6.5, 20.5],
)
NOW = 21.0


def test_legacy_is_elapsed_at_receipt_over_progress() -> None:
    ect = legacy_ect(ATTEMPTS, NOW)
    assert ect[0] == pytest.approx(0 + 19 / 0.5)
    assert np.isnan(ect[1]) and np.isnan(ect[2])
    assert ect[3] == 20  # finished: the send time of its last report


def test_rate_is_late_formula_at_scan_time() -> None:
    ect = rate_ect(ATTEMPTS, NOW)
    rate = 0.5 / (21 - 0)
    assert ect[0] == pytest.approx(21 + 0.5 / rate)
    assert np.isnan(ect[1]) and np.isnan(ect[2])
    assert ect[3] == 20


def test_jvm_excludes_start_up_from_the_rate() -> None:
    ect = jvm_ect(ATTEMPTS, NOW)
    # t = 19, when the AM received the report with p = 0.5
    assert ect[0] == pytest.approx(19 + 0.5 * (19 - 6) / (0.5 - 0.1))
    assert jvm_ect(ATTEMPTS, 100.0)[0] == ect[0]  # as of the report, not the scan
    assert np.isnan(ect[1]) and np.isnan(ect[2])
    single = table(start=[0], first_progress_time=[6], first_progress=[0.2], progress=[0.2],
                   report_sent=[6], report_received=[6])
    assert np.isnan(jvm_ect(single, 7.0)[0])  # one progress report: no rate yet


def test_fresh_uses_send_time_and_is_exact_at_constant_speed() -> None:
    ect = fresh_ect(ATTEMPTS, NOW)
    rate = 0.4 / 12
    assert ect[0] == pytest.approx(18 + 0.5 / rate)  # == 33, the true end
    assert ect[0] == pytest.approx(33)
    assert fresh_progress(ATTEMPTS, NOW)[0] == pytest.approx(0.5 + rate * 3)
    assert np.isnan(ect[1]) and np.isnan(ect[2])
    assert ect[3] == 20


def test_fresh_single_report_uses_peer_start_up_evidence() -> None:
    # attempt 0 has one progress report (p = 0.6 sent at 6); the others have two each.
    def job(peer_first_time: float, peers: int = 2) -> AttemptTable:
        return table(start=[0] * (1 + peers), first_progress_time=[6] + [peer_first_time] * peers,
                     first_progress=[0.6] + [0.1] * peers, progress=[0.6] + [0.5] * peers,
                     report_sent=[6] + [14] * peers, report_received=[7] + [14] * peers)

    alone = table(start=[0], first_progress_time=[6], first_progress=[0.6], progress=[0.6],
                  report_sent=[6], report_received=[7])
    assert np.isnan(fresh_ect(alone, 7.0)[0])  # start-up evidence unknown yet: no rate
    # one peer is not evidence yet (the first to get two reports had the shortest start-up)
    assert np.isnan(fresh_ect(job(6.0, peers=1), 7.0)[0])
    # peers: rate 0.4/8 = 0.05 since t_fp = 6, work began at 6 - 0.1/0.05 = 4 -> start-up
    # 4 s > 1 s, so the single-report attempt is assumed to run at the peer rate
    assert fresh_ect(job(6.0), 7.0)[0] == pytest.approx(6 + 0.4 / 0.05)
    # peers: rate 0.4/12 since t_fp = 2, work began at 2 - 0.1/(0.4/12) = -1 -> no
    # start-up: the launch rate 0.6 / 6 is trusted
    assert fresh_ect(job(2.0), 7.0)[0] == pytest.approx(6 + 0.4 / 0.1)
    # peers must share the task type: a reduce does not lend its start-up to a map
    mixed = job(6.0)
    mixed.task_type[1:] = 1
    assert np.isnan(fresh_ect(mixed, 7.0)[0])
    # overdue: extrapolated progress capped at 1; the completion estimate stays put
    assert fresh_progress(job(2.0), 30.0)[0] == 1.0
    assert fresh_ect(job(2.0), 30.0)[0] == pytest.approx(10.0)
    # progress never extrapolates below the report
    assert fresh_progress(job(2.0), 6.0)[0] == pytest.approx(0.6)


def test_ect_does_not_depend_on_heartbeat_age_for_fresh_only() -> None:
    # Two identical attempts; the second's last report is 5 s older (less progress).
    pair = table(start=[0, 0], first_progress_time=[6, 6], first_progress=[0.1, 0.1],
                 progress=[0.58, 0.48], report_sent=[30, 25], report_received=[30, 25])
    fresh = fresh_ect(pair, 31.0)
    assert fresh[0] == pytest.approx(fresh[1]) == pytest.approx(30 + 0.42 / 0.02)
    late = rate_ect(pair, 31.0)
    assert late[1] > late[0] + 5  # the stale report inflates LATE's estimate


def test_jvm_startup_and_dispatch() -> None:
    np.testing.assert_allclose(jvm_startup(ATTEMPTS), [6, NAN, NAN, 6])
    np.testing.assert_allclose(estimate_ect("jvm", ATTEMPTS, NOW), jvm_ect(ATTEMPTS, NOW))
    with pytest.raises(HedgeError, match="estimator = 'nope': unknown runtime estimator"):
        estimate_ect("nope", ATTEMPTS, NOW)


def test_borrowed_rate_spread_by_hand() -> None:
    from hedge.estimate.runtime import borrowed_rate_spread, borrowed_rate_spread_arrays

    # attempt 0: one progress report; peers 1-3 with two: rates 0.04, 0.05, 0.06 per s
    # since t_fp = 6 (work began at 6 - 0.1 / rate = 3.5, 4, 4.33: start-ups > 1 s), so
    # attempt 0 borrows the median 0.05; the peers spread by RMS(-0.2, 0, 0.2) = 0.163
    attempts = table(start=[0, 0, 0, 0], first_progress_time=[6, 6, 6, 6],
                     first_progress=[0.6, 0.1, 0.1, 0.1], progress=[0.6, 0.5, 0.6, 0.7],
                     report_sent=[6, 16, 16, 16], report_received=[6, 16, 16, 16])
    spread = borrowed_rate_spread(attempts)
    np.testing.assert_allclose(spread, [np.sqrt(0.08 / 3), 0, 0, 0])
    # peers without start-up delays: the launch rate is the attempt's own, nothing borrowed
    a = attempts
    no_startup = borrowed_rate_spread_arrays(a.start, a.progress, a.report_sent,
                                             np.array([6.0, 2.5, 2.0, 1.0 / 0.6]),
                                             np.array([0.6, 0.1, 0.1, 0.1]))
    np.testing.assert_array_equal(no_startup, 0.0)
    # two peers are the least that show how rates differ (and that borrowing needs)
    first_two = table(start=[0, 0, 0], first_progress_time=[6, 6, 6],
                      first_progress=[0.6, 0.1, 0.1], progress=[0.6, 0.5, 0.7],
                      report_sent=[6, 16, 16], report_received=[6, 16, 16])
    np.testing.assert_allclose(borrowed_rate_spread(first_two), [0.2, 0, 0])
    one_peer = table(start=[0, 0, 0], first_progress_time=[6, 6, 6],
                     first_progress=[0.6, 0.1, 0.0], progress=[0.6, 0.5, 0.0],
                     report_sent=[6, 16, 16], report_received=[6, 16, 16])
    assert borrowed_rate_spread(one_peer).tolist() == [0, 0, 0]  # nothing borrowed yet
