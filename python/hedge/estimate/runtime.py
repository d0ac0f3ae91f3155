"""Runtime estimators: when will each attempt finish, judged from what the AM observed.

Every estimator exists twice:

- an array form (``*_arrays``) over plain numpy arrays that broadcast (one value per
  attempt, or any batch shape such as repetitions x tasks in the detection study), and
- an ``AttemptTable`` form ``*_ect(attempts, now)`` that picks the table's columns.

All return *estimated completion times* (ECT): absolute seconds on the snapshot clock.
NaN means no estimate is possible (no received heartbeat, no progress yet, or not enough
reports for the estimator's rate). An attempt whose last report says progress 1 is
finished: its ECT is the send time of that report, for every estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hedge.errors import HedgeError
from hedge.model import AttemptTable

Array = np.ndarray
# attempts with two progress reports a job needs before their rates speak for its others
MIN_PEERS = 2
# the peers' median start-up delay (s) above which start-ups are taken to matter
JVM_EVIDENCE = 1.0


def _finished(ect: Array, progress: Array, sent: Array) -> Array:
    """Override the estimate of attempts whose last report said progress 1."""
    return np.where(progress >= 1.0, sent, ect)


def legacy_arrays(start: Array, progress: Array, sent: Array, received: Array) -> Array:
    """Hadoop's LegacyTaskRuntimeEstimator.

    Hadoop updates the estimate when a status arrives: run time = elapsed / progress with
    elapsed = (time the status was received - launch), so
    ``ECT = start + (received - start) / p``; NaN while p = 0 or no report arrived.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ect = start + (received - start) / np.where(progress > 0, progress, np.nan)
    return _finished(ect, progress, sent)


def rate_arrays(start: Array, progress: Array, sent: Array, now: float | Array) -> Array:
    """LATE's progress-rate estimate at scan time t = ``now``.

    ``PR = p / (t - t0)``, time left ``= (1 - p) / PR``, ``ECT = t + (1 - p) / PR``.
    It pairs the (possibly stale) reported progress with the scan time. NaN while p = 0.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(progress > 0, progress, np.nan) / (now - start)
        ect = now + (1.0 - progress) / rate
    return _finished(ect, progress, sent)


def jvm_arrays(
    progress: Array,
    sent: Array,
    received: Array,
    first_progress_time: Array,
    first_progress: Array,
) -> Array:
    """Chronos' JVM-start-aware estimate (eq. 32).

    Work starts only after the JVM is up, so the processing rate is measured from the first
    progress report (time t_fp, progress p_fp) to the latest report (progress p, at time t,
    the time the AM got it, as Hadoop timestamps status updates):
    ``rate = (p - p_fp) / (t - t_fp)`` and ``ECT = t + (1 - p) * (t - t_fp) / (p - p_fp)``.
    NaN until a report with progress above p_fp has arrived.
    """
    gained = progress - first_progress
    with np.errstate(divide="ignore", invalid="ignore"):
        ect = received + (1.0 - progress) * (received - first_progress_time) / np.where(
            gained > 0, gained, np.nan
        )
    return _finished(ect, progress, sent)


def _nanmedian_last(values: Array, zero_sign: bool = True) -> Array:
    """Median over the last axis ignoring NaN (NaN where all are NaN), kept as an axis.
    ``zero_sign`` False: a zero median may come back as 0.0 where np.nanmedian gives -0.0
    (or the reverse), for callers that only compare it."""
    if np.ndim(values) == 1:  # one job (a policy's scan): np.nanmedian's set-up is ~10x this
        x = np.sort(values[~np.isnan(values)])
        n, h = len(x), len(x) // 2
        if not n:  # np.nanmedian's NaN: negative for an empty axis (0 / 0), else positive
            return np.full(1, np.copysign(np.nan, -1.0) if not len(values) else np.nan)
        # as np.median: the middle value, or the mean of the two middle values (a zero's
        # sign depends on the sort's order of 0.0 and -0.0: np.nanmedian's then)
        with np.errstate(invalid="ignore"):  # inf + -inf: NaN, as np.median has it
            median = x[h] if n % 2 else (x[h - 1] + x[h]) / 2
        if median != 0 or not zero_sign:
            return np.full(1, median)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices are expected
        return np.nanmedian(values, axis=-1, keepdims=True)


@dataclass
class PeerRates:
    """What the attempts of one job (the last axis) show about their speeds and start-ups.

    ``own``: each attempt's Chronos rate ``(p - p_fp) / (st - t_fp)`` where it has two
    progress reports (``two_reports``), else NaN; ``median``: the median of those rates.
    ``startup``: the median start-up delay ``t_fp - p_fp / rate - t0`` of those attempts,
    NaN while fewer than ``MIN_PEERS`` have two reports: the first attempts to get there
    are the ones whose start-up was shortest, and one of them alone would often say that
    start-ups do not matter when they do.
    """

    two_reports: Array
    own: Array
    median: Array
    startup: Array


def peer_rates(start: Array, progress: Array, sent: Array, first_progress_time: Array,
               first_progress: Array, known: Array | None = None) -> PeerRates:
    """:class:`PeerRates` of the attempts along the last axis (``known``: those counted)."""
    known = np.ones(np.shape(progress), dtype=bool) if known is None else known
    gained = progress - first_progress
    since_fp = sent - first_progress_time
    with np.errstate(divide="ignore", invalid="ignore"):
        two_reports = (gained > 0) & (since_fp > 0)
        own = gained / np.where(two_reports, since_fp, np.nan)
        counted = known & two_reports
        median = _nanmedian_last(np.where(counted, own, np.nan))
        startup = np.where(counted, first_progress_time - first_progress / own - start, np.nan)
    peers = counted.sum(-1, keepdims=True)
    # the start-up median is only compared (with jvm_evidence), so a zero's sign is moot
    startup = np.where(peers >= MIN_PEERS, _nanmedian_last(startup, zero_sign=False), np.nan)
    return PeerRates(two_reports, own, median, startup)


def fresh_rate_arrays(
    start: Array,
    progress: Array,
    sent: Array,
    first_progress_time: Array,
    first_progress: Array,
    min_reports: int = 1,
    jvm_evidence: float = JVM_EVIDENCE,
    peers: PeerRates | None = None,
) -> Array:
    """hedge's progress rate, measured up to the *send* time st of the last report.

    Attempts lie along the last axis and belong to one job (they are each other's peers).

    - Two progress reports (p > p_fp): the JVM start-up is excluded, as in Chronos:
      ``rate = (p - p_fp) / (st - t_fp)``. Extrapolating back gives the attempt's work
      start ``t_fp - p_fp / rate`` and so its start-up delay.
    - One progress report: without start-up delays the launch rate ``p / (st - t0)``
      (t0 = launch) is right. When the job's median start-up delay
      (:func:`peer_rates`) exceeds ``jvm_evidence`` seconds, one report cannot separate
      start-up from speed, so the attempt is assumed to run at the peers' median rate
      (its lateness still shows through ``st``). Until ``MIN_PEERS`` peers have two
      reports, whether start-ups matter is unknown and the attempt gets no rate (NaN): it
      is judged a few seconds later. ``min_reports`` = 2 leaves such attempts without a
      rate (NaN) always.

    Either way the rate's time span ends at st, when p was true, not at the scan time.
    NaN while p = 0 or no report arrived. ``peers``: :func:`peer_rates` of these
    attempts when the caller has them already.
    """
    if peers is None:
        peers = peer_rates(start, progress, sent, first_progress_time, first_progress)
    with np.errstate(divide="ignore", invalid="ignore"):
        launch = np.where(progress > 0, progress, np.nan) / (sent - start)
    single = np.where(peers.startup > jvm_evidence, peers.median, launch)
    single = np.where(np.isfinite(peers.startup) & (progress > 0), single, np.nan)
    rate = np.where(peers.two_reports, peers.own, single if min_reports < 2 else np.nan)
    return np.where(rate > 0, rate, np.nan)


def borrowed_rate_spread_arrays(
    start: Array,
    progress: Array,
    sent: Array,
    first_progress_time: Array,
    first_progress: Array,
    jvm_evidence: float = JVM_EVIDENCE,
    peers: PeerRates | None = None,
) -> Array:
    """Relative uncertainty of each attempt's fresh rate due to borrowing it from peers.

    :func:`fresh_rate_arrays` gives an attempt with a single progress report, in a job
    whose peers show start-up delays (median above ``jvm_evidence`` s), the peers' median
    rate. Its own rate may differ from that as much as the peers' rates differ among
    themselves: the root mean square of ``rate_j / median - 1`` over the attempts with
    two progress reports (along the last axis). 0 for attempts with a rate of their own
    (or none). Nothing is borrowed while fewer than ``MIN_PEERS`` peers have two reports
    (:class:`PeerRates`), so the spread always rests on at least two rates. ``peers`` as
    in :func:`fresh_rate_arrays`.
    """
    if peers is None:
        peers = peer_rates(start, progress, sent, first_progress_time, first_progress)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices are expected
        spread = np.sqrt(np.nanmean((peers.own / peers.median - 1.0) ** 2, axis=-1,
                                    keepdims=True))
    borrowed = ~peers.two_reports & (progress > 0) & (peers.startup > jvm_evidence)
    return np.where(borrowed, spread, 0.0)


def fresh_progress_arrays(
    start: Array,
    progress: Array,
    sent: Array,
    first_progress_time: Array,
    first_progress: Array,
    now: float | Array,
    min_reports: int = 1,
) -> Array:
    """Progress extrapolated to the scan time: ``clip(p + rate * (t - st), p, 1)``.

    Falls back to the reported p where no rate is known (p = 0), so it is defined wherever
    a report arrived.
    """
    rate = fresh_rate_arrays(start, progress, sent, first_progress_time, first_progress,
                             min_reports)
    ahead = np.nan_to_num(rate * (now - sent), nan=0.0)
    return np.clip(progress + ahead, progress, 1.0)


def fresh_arrays(
    start: Array,
    progress: Array,
    sent: Array,
    first_progress_time: Array,
    first_progress: Array,
    now: float | Array,
    min_reports: int = 1,
    peers: PeerRates | None = None,
) -> Array:
    """hedge's heartbeat-freshness-aware estimate.

    ``ECT = st + (1 - p) / rate`` with the rate of :func:`fresh_rate_arrays`: the time the
    progress extrapolated from the last report (see :func:`fresh_progress_arrays`, bounded
    to [p, 1] at the scan time t) reaches 1. Heartbeat age therefore does not inflate the
    estimate. It may lie before t: by extrapolation the attempt has already finished and
    its final report is still in flight (capping it at t would inflate the job's mean
    run time by the network latency). An attempt that stops progressing but keeps
    reporting sees its rate, and so its ECT, move; one that falls silent is Hadoop's
    task timeout's business. ``peers`` as in :func:`fresh_rate_arrays`.
    """
    rate = fresh_rate_arrays(start, progress, sent, first_progress_time, first_progress,
                             min_reports, peers=peers)
    with np.errstate(invalid="ignore"):
        ect = sent + (1.0 - progress) / rate
    return _finished(ect, progress, sent)


def speed_noise_arrays(
    start: Array,
    progress: Array,
    sent: Array,
    first_progress_time: Array,
    first_progress: Array,
    prev_progress: Array,
    prev_sent: Array,
    known: Array,
    jvm_evidence: float = JVM_EVIDENCE,
    peers: PeerRates | None = None,
) -> Array:
    """How much attempts' speeds change between reports: the job's evidence of noise.

    Per attempt with the report before its last (``prev_sent``, ``prev_progress`` > 0):
    ``|recent / before - 1|`` with the recent rate over the last report interval,
    ``(p - p_prev) / (st - st_prev)``, and the rate before it, from the first progress
    report to the previous report (``(p_prev - p_fp) / (st_prev - t_fp)``) or, when that
    is one report and the job shows no start-up delay (median <= ``jvm_evidence`` s, as
    in :func:`fresh_rate_arrays`), from the launch (``p_prev / (st_prev - t0)``).
    Returns, over the ``known`` attempts along the last axis (kept as an axis), the root
    mean square of these changes: the scale of the relative error of an extrapolated rate.
    (Not their median: speeds that jump now and then leave most intervals unchanged, so
    the median is often about 0 while the rate still errs by tens of per cent.)
    0 under constant speed; NaN when no attempt has two rate intervals yet: no evidence
    either way. ``peers``: :func:`peer_rates` of the ``known`` attempts, when the caller
    has them already.
    """
    if peers is None:
        peers = peer_rates(start, progress, sent, first_progress_time, first_progress, known)
    with np.errstate(invalid="ignore", divide="ignore"):
        recent = (progress - prev_progress) / (sent - prev_sent)
        since_fp = (prev_progress - first_progress) / (prev_sent - first_progress_time)
        since_launch = prev_progress / (prev_sent - start)
        before = np.where(prev_sent > first_progress_time, since_fp,
                          np.where(peers.startup <= jvm_evidence, since_launch, np.nan))
        before = np.where((prev_progress > 0) & (before > 0), before, np.nan)
        change = np.where(known, np.abs(recent / before - 1.0), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices are expected
        return np.sqrt(np.nanmean(change ** 2, axis=-1, keepdims=True))


# --- AttemptTable forms --------------------------------------------------------------------


def legacy_ect(attempts: AttemptTable, now: float) -> Array:
    """:func:`legacy_arrays` on a table (``now`` unused: Hadoop uses the receive time)."""
    a = attempts
    return legacy_arrays(a.start, a.progress, a.report_sent, a.report_received)


def rate_ect(attempts: AttemptTable, now: float) -> Array:
    """:func:`rate_arrays` on a table."""
    a = attempts
    return rate_arrays(a.start, a.progress, a.report_sent, now)


def jvm_ect(attempts: AttemptTable, now: float) -> Array:
    """:func:`jvm_arrays` on a table (``now`` unused: the estimate is as of the report)."""
    a = attempts
    return jvm_arrays(a.progress, a.report_sent, a.report_received, a.first_progress_time,
                      a.first_progress)


def _per_task_type(attempts: AttemptTable, estimate: Callable[..., Array],
                   now: float) -> Array:
    """Apply a fresh-family estimate separately to maps and reduces (peers share a type)."""
    a = attempts
    out = np.full(len(a), np.nan)
    for task_type in np.unique(a.task_type):
        rows = a.task_type == task_type
        out[rows] = estimate(a.start[rows], a.progress[rows], a.report_sent[rows],
                             a.first_progress_time[rows], a.first_progress[rows], now)
    return out


def fresh_ect(attempts: AttemptTable, now: float) -> Array:
    """:func:`fresh_arrays` on a table; maps and reduces are each other's peers only."""
    return _per_task_type(attempts, fresh_arrays, now)


def borrowed_rate_spread(attempts: AttemptTable) -> Array:
    """:func:`borrowed_rate_spread_arrays` on a table, per task type like
    :func:`fresh_ect`."""
    return _per_task_type(attempts, lambda *columns: borrowed_rate_spread_arrays(
        *columns[:5]), 0.0)


def fresh_progress(attempts: AttemptTable, now: float) -> Array:
    """:func:`fresh_progress_arrays` on a table, per task type like :func:`fresh_ect`."""
    return _per_task_type(attempts, fresh_progress_arrays, now)


def jvm_startup(attempts: AttemptTable) -> Array:
    """JVM start-up delay ``t_fp - t_launch`` per attempt (NaN until a progress report).

    Chronos uses it as the expected start-up delay of a new copy.
    """
    return attempts.first_progress_time - attempts.start


ESTIMATORS: dict[str, Callable[[AttemptTable, float], Array]] = {
    "legacy": legacy_ect,
    "rate": rate_ect,
    "jvm": jvm_ect,
    "fresh": fresh_ect,
}


def check_estimator(kind: str, where: str = "estimator") -> str:
    """``kind`` when it names an estimator; HedgeError naming ``where`` and the choices."""
    if kind not in ESTIMATORS:
        raise HedgeError(f"{where} = {kind!r}: unknown runtime estimator, expected one of: "
                         f"{', '.join(ESTIMATORS)}")
    return kind


def estimate_ect(kind: str, attempts: AttemptTable, now: float) -> Array:
    """The ECT of every attempt by the estimator named ``kind`` (legacy|rate|jvm|fresh)."""
    return ESTIMATORS[check_estimator(kind)](attempts, now)
