"""hedge's fresh-* rules, the speed-noise evidence and the policies' report memory, on
hand-built cases; the target check; the study cells the rules were changed for."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.detect import detect
from hedge.detect.fresh import fresh_rate_rule, fresh_score_rule
from hedge.detect.rules import ratio_rule, score_rule
from hedge.detect.study import StudyConfig, check_targets, run_study
from hedge.estimate.runtime import speed_noise_arrays
from hedge.model import AttemptState
from hedge.policy.detectors import FreshRatePolicy, FreshScorePolicy, PreviousReports
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
    # and then 0.05/s (no change); median of (0.5, 0) = 0.25
    assert noise(start=[0, 0], fpt=[6, 6], fp=[0.1, 0.1], prev_sent=[12, 12],
                 prev_p=[0.4, 0.4], sent=[18, 18], progress=[0.55, 0.7]) == pytest.approx(0.25)
    # previous report = the first progress report: the rate before it runs from the launch,
    # valid because the peers show no start-up delay (work began at 6 - 0.3/0.05 = 0)
    assert noise(start=[0], fpt=[6], fp=[0.3], prev_sent=[6], prev_p=[0.3], sent=[12],
                 progress=[0.6]) == 0.0
    # ... but not when they show a 4 s start-up (work began at 6 - 0.1/0.05 = 4): no evidence
    assert np.isnan(noise(start=[0], fpt=[6], fp=[0.1], prev_sent=[6], prev_p=[0.1],
                          sent=[12], progress=[0.4]))
    # no previous report, or one before any progress: no evidence
    assert np.isnan(noise(start=[0], fpt=[6], fp=[0.1], prev_sent=[NAN], prev_p=[NAN],
                          sent=[12], progress=[0.4]))
    assert np.isnan(noise(start=[0], fpt=[6], fp=[0.1], prev_sent=[0], prev_p=[0],
                          sent=[6], progress=[0.1]))


def test_fresh_rate_rule_is_late_under_constant_speed() -> None:
    ect = np.array([10.0, 10.0, 10.0, 13.0])
    start, sent = np.zeros(4), np.array([10.0, 10.0, 10.0, 9.0])
    exact = fresh_rate_rule(ect, start, sent, 9.5, ALL, ALL, noise=0.0)
    np.testing.assert_array_equal(exact, ratio_rule(ect, ALL, ALL, 1.2))
    np.testing.assert_array_equal(exact, [0, 0, 0, 1])  # 13 >= 1.2 x 10.75


def test_fresh_rate_rule_is_cautious_under_noise() -> None:
    # three finished in 10 s; the last reported at 8 s with 8 s of work estimated left
    ect, start = np.array([10.0, 10.0, 10.0, 16.0]), np.zeros(4)
    sent = np.array([10.0, 10.0, 10.0, 8.0])
    # constant speed: 16 >= 1.2 x mean(10, 10, 10, 16) = 13.8
    assert fresh_rate_rule(ect, start, sent, 9.0, ALL, RUNNING_LAST, noise=0.0)[3]
    # noisy (or unknown): optimistic ETD 16 - 0.5 x 8 = 12 < 1.15 x 11.5 = 13.225
    for sigma in (0.1, NAN):
        assert not fresh_rate_rule(ect, start, sent, 9.0, ALL, RUNNING_LAST, sigma).any()
    # noisy and still running at 14 although extrapolated to end at 11: ETD >= 14 elapsed;
    # mean(10, 10, 10, 14) = 11 -> bar 12.65
    ect[3] = 11.0
    assert fresh_rate_rule(ect, start, sent, 14.0, ALL, RUNNING_LAST, 0.1)[3]
    assert not fresh_rate_rule(ect, start, sent, 14.0, ALL, RUNNING_LAST, 0.0)[3]


def test_fresh_score_is_fair_to_late_starters() -> None:
    # four tasks of 10 s each; the last launched at 8: at t = 9 its raw progress is 0.1
    start = np.array([0.0, 0.0, 0.0, 8.0])
    ect, sent = start + 10.0, np.full(4, 9.0)
    progress = np.array([0.9, 0.9, 0.9, 0.1])
    assert score_rule(progress, ALL, ALL)[3]  # 0.1 <= mean 0.7 - 0.2
    # normalised: H = min(9, 1.15 x 10) = 9, NP = 9 / 10 for all
    assert not fresh_score_rule(ect, start, sent, 9.0, ALL, ALL, 0.0).any()


def test_fresh_score_separates_a_task_of_1_3_times_the_mean() -> None:
    start, sent = np.zeros(4), np.array([10.0, 10.0, 10.0, 12.0])
    # H = min(12, 1.15 x 10.75 = 12.36) = 12; NP = 1.2, 1.2, 1.2, 12/13 = 0.923;
    # mean 1.1308 - 0.2 = 0.9308 >= 0.923: flagged
    ect = np.array([10.0, 10.0, 10.0, 13.0])
    flagged = fresh_score_rule(ect, start, sent, 12.0, ALL, RUNNING_LAST, 0.0)
    np.testing.assert_array_equal(flagged, [0, 0, 0, 1])
    # 12.5: NP 0.96 > mean 1.14 - 0.2: not flagged (raw progress 12/12.5 = 0.96 neither)
    ect[3] = 12.5
    assert not fresh_score_rule(ect, start, sent, 12.0, ALL, RUNNING_LAST, 0.0).any()
    # tasks without an estimate are neither flagged nor in the mean
    ect[3] = NAN
    assert not fresh_score_rule(ect, start, sent, 12.0, ALL, ALL, 0.0).any()


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
    # running task: 0.6 at 8 s, fresh ECT 8 + 0.4/0.05 = 16 = its ETD; mean ETD 11.5
    s = done3(8.0, 0.6, 10.5)
    # constant speed: 16 >= 1.2 x 11.5 = 13.8; noise unknown: optimistic 16 - 0.5 x 8 = 12
    # < 1.15 x 11.5 = 13.225
    np.testing.assert_array_equal(detect("fresh-rate", s, speed_noise=0.0), [0, 0, 0, 1])
    assert not detect("fresh-rate", s).any()
    # score: H = min(10.5, 1.15 x 11.5) = 10.5; NP = 1.05, 1.05, 1.05, 0.65625;
    # mean 0.9516 - 0.2 = 0.7516 >= 0.65625
    np.testing.assert_array_equal(detect("fresh-score", s, speed_noise=0.0), [0, 0, 0, 1])


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
    assert by["fresh-rate"]["fn_mean"] <= by["rate"]["fn_mean"] + 0.01
