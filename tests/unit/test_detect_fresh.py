"""hedge's fresh-* rules, the speed-noise evidence and the policies' report memory, on
hand-built cases; the target check; the study cells the rules were changed for."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from hedge.detect import detect
from hedge.detect.detectors import fresh_rate
from hedge.detect.fresh import (
    Z_CONFIDENT,
    Z_LAST,
    Z_RATE,
    Z_RATE_LAST,
    duration_belief,
    fresh_rate_rule,
    fresh_rate_verdict,
    fresh_score_rule,
    fresh_score_verdict,
    quiet_until,
    sequential_flags,
)
from hedge.detect.rules import ratio_rule, score_rule
from hedge.errors import HedgeError
from hedge.estimate.runtime import speed_noise_arrays
from hedge.model import AttemptState
from hedge.policy.detectors import FreshRatePolicy, FreshScorePolicy, PreviousReports
from hedge.research.study import StudyConfig, check_targets, run_study
from tests.unit.test_detect_detectors import snap
from tests.unit.test_estimate_runtime import NAN, table

ALL = np.ones(4, dtype=bool)
RUNNING_LAST = np.array([False, False, False, True])


def noise(**kw: list) -> float:
    """speed_noise_arrays of one job given as lists (every attempt known)."""
    a = {k: np.asarray(v, dtype=float) for k, v in kw.items()}
    return float(speed_noise_arrays(a["start"], a["progress"], a["sent"], a["fpt"], a["fp"],
                                    a["prev_p"], a["prev_sent"],
                                    np.ones(len(a["start"]), dtype=bool))[0])


def test_speed_noise_by_hand() -> None:
    # two progress intervals each: 0.05/s from t_fp = 6 to 12, then 0.025/s (0.5 change)
    # and then 0.05/s (no change); RMS of (0.5, 0) = sqrt(0.125)
    two = {"start": [0, 0], "fpt": [6, 6], "fp": [0.1, 0.1], "prev_sent": [12, 12],
           "prev_p": [0.4, 0.4], "sent": [18, 18], "progress": [0.55, 0.7]}
    assert noise(**two) == pytest.approx(np.sqrt(0.125))
    # previous report = the first progress report: the rate before it runs from the launch,
    # valid because the peers show no start-up delay (work began at 6 - 0.3/0.05 = 0)
    assert noise(start=[0, 0], fpt=[6, 6], fp=[0.3, 0.3], prev_sent=[6, 6],
                 prev_p=[0.3, 0.3], sent=[12, 12], progress=[0.6, 0.6]) == 0.0
    # ... but not when they show a 4 s start-up (work began at 6 - 0.1/0.05 = 4): no evidence
    assert np.isnan(noise(start=[0, 0], fpt=[6, 6], fp=[0.1, 0.1], prev_sent=[6, 6],
                          prev_p=[0.1, 0.1], sent=[12, 12], progress=[0.4, 0.4]))
    # ... nor while a single attempt speaks for the job's start-ups (MIN_PEERS = 2)
    assert np.isnan(noise(start=[0], fpt=[6], fp=[0.3], prev_sent=[6], prev_p=[0.3],
                          sent=[12], progress=[0.6]))
    # no previous report, or one before any progress: no evidence
    assert np.isnan(noise(start=[0], fpt=[6], fp=[0.1], prev_sent=[NAN], prev_p=[NAN],
                          sent=[12], progress=[0.4]))
    assert np.isnan(noise(start=[0], fpt=[6], fp=[0.1], prev_sent=[0], prev_p=[0],
                          sent=[6], progress=[0.1]))


# Three tasks finished at 10 s (final reports received 0.2 s late); task 3 launched at 0
# is running, its last report sent at 8 s and received at 8.5 s (the job's longest delay).
START = np.zeros(4)
SENT = np.array([10.0, 10.0, 10.0, 8.0])
RECEIVED = np.array([10.2, 10.2, 10.2, 8.5])
BAR = 1.2 * 30.0 / (4 - 1.2)  # 1.2 x the sum of the other durations / (n - 1.2) = 12.857


def ects(last: float) -> np.ndarray:
    return np.array([10.0, 10.0, 10.0, last])


def rate_flags(last: float, now: float, noise: float, **kw) -> bool:
    return bool(fresh_rate_rule(ects(last), START, SENT, RECEIVED, now, ALL, RUNNING_LAST,
                                noise, **kw)[3])


def test_duration_belief_by_hand() -> None:
    b = duration_belief(ects(16.0), START, SENT, RECEIVED, 12.0, ALL, RUNNING_LAST, 0.1)
    # certain: max(sent 8, now 12 - longest delay 0.5) = 11.5; finished tasks are exact
    np.testing.assert_allclose(b.certain, [10, 10, 10, 11.5])
    np.testing.assert_allclose(b.central, [10, 10, 10, 16])
    # noise 0.1 x max(remaining at the report 16 - 8, since the report 12 - 8)
    np.testing.assert_allclose(b.sigma, [0, 0, 0, 0.8])
    np.testing.assert_allclose(b.elapsed, 12.0)
    # a rate borrowed from peers spreading by 0.2 adds 0.2 x remaining 8 in quadrature
    b = duration_belief(ects(16.0), START, SENT, RECEIVED, 12.0, ALL, RUNNING_LAST, 0.1,
                        rate_spread=np.array([0, 0, 0, 0.2]))
    assert b.sigma[3] == pytest.approx(np.hypot(0.8, 1.6))
    # an attempt estimated to have ended at 11 but still running: central = certain bound
    b = duration_belief(ects(11.0), START, SENT, RECEIVED, 12.0, ALL, RUNNING_LAST, 0.1)
    assert b.central[3] == 11.5 and b.sigma[3] == pytest.approx(0.4)


def test_fresh_rate_is_the_exact_rule_under_constant_speed() -> None:
    # bar 12.857 <=> D >= 1.2 x mean with D in the mean: 12.9 >= 1.2 x 10.725 = 12.87
    assert rate_flags(12.9, 12.0, 0.0)
    assert not rate_flags(12.8, 12.0, 0.0)  # 12.8 < 1.2 x 10.7 = 12.84
    np.testing.assert_array_equal(  # same as LATE's rule on exact durations
        fresh_rate_rule(ects(12.9), START, SENT, RECEIVED, 12.0, ALL, RUNNING_LAST, 0.0),
        ratio_rule(ects(12.9), ALL, RUNNING_LAST, 1.2))


def test_fresh_rate_sequential_test_under_noise() -> None:
    # ECT 16, noise 0.1 at t = 12: tau = 0.8, lower bound 16 - 0.8 tau = 15.36 >= 12.857
    assert rate_flags(16.0, 12.0, 0.1)
    # ECT 13.2 at t = 10.5: tau = 0.1 x 5.2 = 0.52, lower bound 12.78 < bar, and the next
    # scan (elapsed 11.5) still comes before the bar: wait
    assert not rate_flags(13.2, 10.5, 0.1)
    # at t = 12 the next scan (13) is past the bar: last chance, and a straggler ending
    # before it (12.857 <= D < 13) has probability 0.350 - 0.255 = 0.095 >= 0.067: flag
    assert rate_flags(13.2, 12.0, 0.1)
    assert not rate_flags(13.2, 12.0, 0.1, z_last=-2.0)  # 0.095 < P(z >= -2)
    # last chance, but clearly normal under low noise: central max(11, 11.5), tau 0.04
    assert not rate_flags(11.0, 12.0, 0.01)


def test_fresh_rate_last_chance_weighs_the_loss_of_waiting() -> None:
    """Wide uncertainty (noise 0.5: tau 2.6 at t = 12, ECT 13.2): probably a straggler
    (P = 0.55), but one ending before the next scan only with P = 0.022 < 0.067: fresh-rate
    waits where fresh-score's last chance (on P(straggler)) flags. At t = 13 (no report
    since) that chance is 0.17 (certain bound 12.5): flag."""
    assert not rate_flags(13.2, 12.0, 0.5)
    assert rate_flags(13.2, 13.0, 0.5)
    b = duration_belief(ects(13.2), START, SENT, RECEIVED, 12.0, ALL, RUNNING_LAST, 0.5)
    bar = np.full(4, BAR)
    assert sequential_flags(b, bar, 0.0, RUNNING_LAST, z=Z_RATE, z_last=Z_RATE_LAST)[3]
    assert not sequential_flags(b, bar, 0.0, RUNNING_LAST, z=Z_RATE, z_last=Z_RATE_LAST,
                                on_loss=True)[3]


def test_fresh_rate_flags_earlier_than_fresh_scores_level() -> None:
    """fresh-rate's confident level Z_RATE (issue 19: lead time) sits below fresh-score's 2
    and below its own old 1.5: ECT 13.6 at t = 10.5, tau = 0.56: 13.6 - 0.8 x 0.56 = 13.15
    >= bar 12.857 flags now, where at z = 1.5 (12.76 < bar) it waited for a later scan.
    Every entry point ships both of its levels."""
    assert Z_RATE == 0.8 < Z_RATE_LAST == 1.5 < Z_CONFIDENT == Z_LAST
    assert rate_flags(13.6, 10.5, 0.1)
    assert not rate_flags(13.6, 10.5, 0.1, z=1.5)
    assert not rate_flags(13.6, 10.5, 0.1, z=Z_CONFIDENT, z_last=Z_LAST)
    policy = FreshRatePolicy()
    assert (policy.z, policy.z_last) == (Z_RATE, Z_RATE_LAST)
    defaults = inspect.signature(fresh_rate).parameters
    assert (defaults["z"].default, defaults["z_last"].default) == (Z_RATE, Z_RATE_LAST)
    defaults = inspect.signature(fresh_rate_rule).parameters
    assert (defaults["z"].default, defaults["z_last"].default) == (Z_RATE, Z_RATE_LAST)


def test_fresh_rate_trusts_only_certain_bounds_while_noise_is_unknown() -> None:
    assert not rate_flags(30.0, 10.5, NAN)  # certain bound 10, next scan before the bar
    assert rate_flags(30.0, 12.0, NAN)  # last chance on the central estimate
    assert not rate_flags(12.5, 12.0, NAN)
    # running past the bar (certain 13.5 - 0.5 = 13 >= 12.857) whatever the estimate says
    assert rate_flags(11.0, 13.5, NAN)


def test_fresh_score_is_the_score_rule_at_its_own_bar() -> None:
    def flags(last: float, **kw) -> bool:
        return bool(fresh_score_rule(ects(last), START, SENT, RECEIVED, 12.0, ALL,
                                     RUNNING_LAST, 0.0, **kw)[3])

    # NP = H / D <= H / M - 0.2 with H = 1.2 M  <=>  D >= 1.2 M (M: plain mean)
    assert flags(13.0)  # 13 >= 1.2 x 10.75 = 12.9
    assert not flags(12.8)  # 12.8 < 1.2 x 10.7 = 12.84
    assert not flags(13.0, horizon=1.15)  # bar 1.15 / 0.95 x 10.75 = 13.01


def test_fresh_score_is_fair_to_late_starters() -> None:
    # four tasks of 10 s each; the last launched at 8: at t = 9 its raw progress is 0.1
    start = np.array([0.0, 0.0, 0.0, 8.0])
    progress = np.array([0.9, 0.9, 0.9, 0.1])
    assert score_rule(progress, ALL, ALL)[3]  # 0.1 <= mean 0.7 - 0.2
    flagged = fresh_score_rule(start + 10.0, start, np.full(4, 9.0), np.full(4, 9.0), 9.0,
                               ALL, ALL, 0.0)
    assert not flagged.any()


def done3(sent_last: float, progress_last: float, now: float):
    """Three tasks done in 10 s; one running at 0.05/s (progress 0.3 at 2 s), whose last
    report at ``sent_last`` says ``progress_last``."""
    attempts = table(start=[0, 0, 0, 0], first_progress_time=[2, 2, 2, 2],
                     first_progress=[0.2, 0.2, 0.2, 0.3],
                     progress=[1.0, 1.0, 1.0, progress_last],
                     report_sent=[10, 10, 10, sent_last],
                     report_received=[10, 10, 10, sent_last],
                     state=[AttemptState.SUCCEEDED] * 3 + [AttemptState.RUNNING])
    return snap(attempts, now)


def test_snapshot_detectors_take_the_speed_noise() -> None:
    # running task: 0.6 at 8 s, fresh ECT 8 + 0.4/0.05 = 16 = its duration; bar
    # 1.2 x 30 / 2.8 = 12.857
    s = done3(8.0, 0.6, 10.5)
    # constant speed: 16 >= 12.857; noise unknown: certain bound 10.5 < bar, and the next
    # scan (elapsed 11.5) comes before the bar: wait
    np.testing.assert_array_equal(detect("fresh-rate", s, speed_noise=0.0), [0, 0, 0, 1])
    assert not detect("fresh-rate", s).any()
    # score: bar 1.2 / 1.0 x mean(10, 10, 10, 16) = 13.8 <= 16
    np.testing.assert_array_equal(detect("fresh-score", s, speed_noise=0.0), [0, 0, 0, 1])
    # the session-1 rules' parameters are gone: naming one is a clear error
    with pytest.raises(HedgeError, match="bad parameters"):
        detect("fresh-rate", s, margin=0.05)


def test_previous_reports_are_remembered_per_attempt() -> None:
    reports = PreviousReports()

    def scan(sent: list, progress: list, ids: list) -> tuple:
        return reports.update(snap(table(start=np.zeros(len(ids)), attempt=ids,
                                          progress=progress, report_sent=sent,
                                          report_received=sent), max(sent)))

    prev_sent, prev_p = scan([6, 6], [0.1, 0.2], [7, 3])
    assert np.isnan(prev_sent).all() and np.isnan(prev_p).all()
    prev_sent, prev_p = scan([12, 6], [0.4, 0.2], [7, 3])  # only attempt 7 reported anew
    np.testing.assert_array_equal(prev_sent, [6, NAN])
    np.testing.assert_array_equal(prev_p, [0.1, NAN])
    prev_sent, prev_p = scan([6, 12, 3], [0.2, 0.4, 0.1], [3, 7, 9])  # no new report of 7
    np.testing.assert_array_equal(prev_sent, [NAN, 6, NAN])


def test_fresh_policies_measure_the_noise_across_scans() -> None:
    """Constant speed seen over three reports: the policy knows it and acts like LATE."""
    policy = FreshRatePolicy()
    assert FreshScorePolicy().detector_params()["speed_noise"] != 0.0  # NaN before a scan
    assert policy.decide(done3(8.0, 0.6, 10.5)).copies_requested == 0  # noise unknown
    assert np.isnan(policy._speed_noise)
    # next report at 14 s, still 0.05/s since 8 s as before: the ETD of 16 is trusted
    assert policy.decide(done3(14.0, 0.9, 14.5)).copies_requested == 1
    assert policy._speed_noise == pytest.approx(0.0, abs=1e-12)


def test_target_check_uses_the_rate_detector_for_the_published_fp_cells() -> None:
    def row(det: str, fp: float, fn: float) -> dict:
        return {"detector": det, "tasks": 10, "d_avg": 10.0, "f": 0.25, "starts": "uniform",
                "latency": "none", "fp_mean": fp, "fn_mean": fn}

    rows = [row("rate", 0.3, 0.0), row("score", 0.1, 0.2), row("fresh-score", 0.06, 0.1)]
    assert check_targets(rows, lambda b: 0.05, "score", "fresh-score") == []
    misses = check_targets(rows, lambda b: 0.05, "score", "fresh-score", hot_by="rate")
    assert misses == ["tasks=10 d_avg=10.0 f=0.25 starts=uniform latency=none: fresh-score "
                      "FP 0.060 vs rate 0.300"]


def test_study_cells_the_fresh_rules_were_changed_for() -> None:
    """Skewed starts (fresh-score used to flag late starters and miss stragglers) and
    noisy progress with JVM start-ups (fresh-rate used to miss stragglers)."""
    skewed = StudyConfig(10, 20.0, 0.25, "skewed", "none")
    rows, _ = run_study([skewed], ["score", "rate", "fresh-score", "fresh-rate"], 20, 0)
    by = {r["detector"]: r for r in rows}
    assert by["rate"]["fp_mean"] > 0.2
    assert by["fresh-score"]["fn_mean"] <= by["score"]["fn_mean"]
    assert by["fresh-score"]["fn_mean"] == 0.0 and by["fresh-rate"]["fn_mean"] == 0.0
    assert by["fresh-rate"]["fp_mean"] <= 0.05
    noisy = StudyConfig(50, 20.0, 0.1, "skewed", "none", "noisy:0.3", "1:10")
    rows, _ = run_study([noisy], ["rate", "fresh-rate"], 30, 0)
    by = {r["detector"]: r for r in rows}
    assert by["fresh-rate"]["fp_mean"] <= by["rate"]["fp_mean"] / 5
    # level 1.5 gives up a few borderline stragglers for lead time (issue 19; whether a
    # cell's excess is more than chance is the sign test of tests/bench/bench_detect.py)
    assert by["fresh-rate"]["fn_mean"] <= by["rate"]["fn_mean"] + 0.02


@pytest.mark.parametrize("verdict", (fresh_score_verdict, fresh_rate_verdict))
def test_no_watched_task_flags_before_quiet_until(verdict) -> None:
    """``quiet_until`` (the fresh-* scan gate's bound): on random jobs whose inputs stay,
    the rule flags no watched task at any time from ``now`` to the bound (a fine grid),
    and the bound is not trivially ``now``: in some jobs it lies ahead, and the rule then
    flags within 100 s after it (the bound is not far below the truth)."""
    rng = np.random.default_rng(0)
    waited = flagged_later = 0
    for _ in range(60):
        n = int(rng.integers(2, 10))
        start = rng.uniform(0, 20, n)
        sent = start + rng.uniform(1, 30, n)
        received = sent + rng.uniform(0, 2, n)
        now = float(received.max() + rng.uniform(0, 3))
        ect = sent + rng.uniform(0, 40, n) * rng.choice([1.0, 3.0], n, p=[0.8, 0.2])
        ect[rng.random(n) < 0.1] = np.nan
        known = rng.random(n) < 0.9
        cand = known & (rng.random(n) < 0.8)
        ect[known & ~cand] = sent[known & ~cand]
        noise = float(rng.choice([np.nan, 0.0, 0.2]))
        spread = rng.uniform(0, 0.3, n)
        args = (ect, start, sent, received)
        rest = (known, cand, noise)

        def flags(t, args=args, rest=rest, spread=spread):
            return verdict(*args, t, *rest, rate_spread=spread).flags

        v = verdict(*args, now, *rest, rate_spread=spread)
        watched = cand & v.judged & (rng.random(n) < 0.8)
        z = Z_CONFIDENT if verdict is fresh_score_verdict else Z_RATE
        quiet = quiet_until(v, ect, start, sent, now, watched, z, 1.0)
        assert quiet >= now
        if quiet > now:
            waited += 1
            grid = np.linspace(now, min(quiet, now + 300), 150, endpoint=False)
            assert not any((flags(t) & watched).any() for t in grid)
        if now < quiet < math.inf:
            later = np.linspace(quiet, quiet + 100, 50)
            flagged_later += any((flags(t) & watched).any() for t in later)
    assert waited >= 10 and flagged_later >= 3, (waited, flagged_later)


def test_previous_reports_in_place_equals_the_merge() -> None:
    """``PreviousReports``: tables of distinct attempt ids are recorded in place (new ids
    sorted in), which must give what the general merge gives, scan after scan."""
    from types import SimpleNamespace

    rng = np.random.default_rng(1)
    fast, merged = PreviousReports(), PreviousReports()
    merged._distinct = False  # always the merge
    sent = np.zeros(40)
    for _ in range(200):
        ids = np.sort(rng.choice(40, size=int(rng.integers(1, 12)), replace=False))
        rng.shuffle(ids)
        sent[ids] += rng.choice([0.0, 3.0], len(ids))
        table = SimpleNamespace(attempt=ids.astype(np.int64), report_sent=np.where(
            sent[ids] > 0, sent[ids], np.nan), progress=rng.uniform(0, 1, len(ids)))
        got, want = fast.update(SimpleNamespace(attempts=table)), \
            merged.update(SimpleNamespace(attempts=table))
        assert all(np.array_equal(g, w, equal_nan=True) for g, w in zip(got, want, strict=True))
    assert fast._distinct
    for k in ("_ids", "_last", "_prev"):
        assert np.array_equal(getattr(fast, k), getattr(merged, k), equal_nan=True)


def test_fresh_inputs_share_one_peer_measure_per_task_type() -> None:
    """``fresh_inputs``' ECT and borrowed-rate spread (one ``peer_rates`` per task type)
    equal the estimator's and ``borrowed_rate_spread``'s, each measuring the peers itself:
    maps and reduces apart, start-ups long enough that single-report attempts borrow."""
    from hedge.detect.detectors import fresh_inputs
    from hedge.estimate import estimate_ect
    from hedge.estimate.runtime import borrowed_rate_spread

    rng = np.random.default_rng(2)
    n = 40
    start = rng.uniform(0, 10, n)
    fpt = start + rng.uniform(3, 8, n)
    sent = fpt + rng.choice([0.0, 3.0, 6.0, 9.0], n)
    fp = rng.uniform(0.01, 0.1, n)
    progress = np.minimum(fp + (sent - fpt) * rng.uniform(0.005, 0.05, n), 1.0)
    a = table(start=start, first_progress_time=fpt, first_progress=fp, progress=progress,
              report_sent=sent, report_received=sent + 0.5, task_type=rng.integers(0, 2, n))
    s = snap(a, float(sent.max() + 1))
    ect, _, _, spread = fresh_inputs(s)
    assert np.array_equal(ect, estimate_ect("fresh", a, s.now), equal_nan=True)
    assert np.array_equal(spread, borrowed_rate_spread(a), equal_nan=True)
    assert (spread > 0).any() and np.isfinite(ect).sum() > n // 2
