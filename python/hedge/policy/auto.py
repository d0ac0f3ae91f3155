"""``hedge-auto``: copy a task only where the copy is expected to pay for its slot time.

Per task type, once ``min_completed`` tasks of it have completed, or twice as many running
originals have a run-time estimate (the run times ``D``: completed ones and those estimates;
median ``m``, residuals ``e = log(D / m)``), each running task with one live attempt is judged:

- its remaining time ``R`` and total run time ``T`` from the JVM-aware rate estimate (the
  rate measured from the first progress report, so JVM start-up does not look like slowness);
- what a copy would take, under the trace straggler model (docs/trace-model.md): ``C = M *
  exp((1 - lam) * log(T / M) + lam * e)`` over the type's residuals ``e`` (an expectation
  over their empirical distribution, no random draw; ``MAX_RESIDUALS`` quantiles of them
  for a type with more), for each ``lam`` of a grid
  weighted by this job's belief about ``lam`` (below); ``M = m * k ** beta`` for a task with
  ``k`` times its type's median input (``k = 1`` where inputs are not known): more data is
  more work for any attempt, by the elasticity ``beta`` the type's running tasks show (1
  until ``MIN_FIT`` of them report an input);
- the type's finish ``F`` (the longest remaining time of its running tasks, a task ending
  with its first attempt to end: a task whose copy is ahead no longer bounds it; an attempt
  without an estimate yet counts as ``m``): copying the K slowest candidates brings it to
  ``max(the copies' ends, the longest remaining time of the tasks not copied, m while a
  task still waits for a slot)``; saving time on a task that would not be last does not
  shorten the job;
- **benefit** ``B(K) = E[F - that]``: seconds of the type's finish the K copies save;
  **cost** ``K(K) = cost_weight * busy * sum E[slot time]``: the copies' slot-seconds
  (``C`` for a copy that wins; a copy that loses runs until its own estimate shows it
  behind beyond ``kill_z`` times the estimate's error, when it is killed: about two report
  delays when far behind, most of the race on a near tie, ``_loser_slot``; its whole race
  where the AM restarts what it kills, ``ClusterFacts.kills_restart``, as a stock MapReduce
  AM does: a lone kill is then held), weighted by the share of the cluster's slots in use
  (``assumed_busy`` when unknown);
- **copy** the K slowest for the K with the largest ``B - K > 0`` (and ``B >= min_saving``);
  at most one copy per task, and no more than Hadoop's speculation cap lets the job start
  now (a copy the AM refused would leave its task counted as racing).

Three guards keep it from wasting:

- **Skew triage:** a task whose input is ``skew_ratio`` x its type's median input or more,
  and whose run time is within ``skew_ratio`` of what its input explains (``M``), is slow
  because it has more data; a copy would do the same work, so it is not copied (its slowness
  is put down to skew; ``hedge imkp`` evens reducer input for the job's next run: the tasks
  left to their skew are counted in ``job_note``, which ``hedge serve`` logs when the job
  closes with the ImKP build for its reduces, and in ``run_notes`` under ``hedge simulate``'s
  table). A task
  with more data that is also slower than its data explains is judged like any other, its
  copy expected to take ``M``-scaled time.
- **Killing a copy that falls behind:** once a copy has its own estimate (two progress
  reports) and that estimate ends later than its original's by more than ``kill_z`` times
  the estimate's error (which shrinks as the copy progresses), the copy is killed at once
  (``kill_attempt``): it can only lose, and every second it runs on is waste. Its task gets
  no second copy, unless ``recopy`` judges it again first (below) and a new copy pays: then
  the new copy replaces it. That order matters on a cluster: a stock MapReduce AM starts a
  new attempt in place of every attempt it kills, so hedge's shim sends a kill only with a
  copy of the same task (the AM's new attempt is that copy) and holds a lone kill (the
  copy runs on until its task ends; ``org.hedge.shim.KillsAsRestarts``).
- **Learning from its own races:** the belief about ``lam`` starts as a normal prior around
  ``lam`` (width ``prior_width``) and is updated by Bayes' rule with every race of this job
  (:class:`Race`): by the copy's own run time where the copy had an estimate (its likelihood
  under each ``lam``, an estimate being within ``ESTIMATE_LOG_SD`` of the truth), else by
  who won. A job whose copies run as slowly as their originals (its slowness is the tasks'
  own work: nothing to gain) comes to believe ``lam`` near 0 and stops. A race teaches as
  soon as its copy has an estimate, not when it ends (a copy of a long task may run as long
  as the job). Until ``probe_races`` races of the job have taught it, no more than that
  many copies teach at once: the model is probed before it is trusted with many slots.
  With ``pool_races`` (the default) the belief and that count are the cluster's: every race
  of every hedge-auto job of the cluster (:mod:`hedge.policy.cluster_memory`, shared
  through ``join``: one simulation run, one ``hedge serve``), so on a cluster where copies
  do not pay each new job does not probe again. Measured with the scan fix below, seed 0:
  Google 2011 part 1 under ``--trace-model inherent`` machine time 1.0205 -> 1.0075 of
  ``none``'s (146 -> 39 copies, all lost); calibrated 0.77 -> 0.79 of the oracle's gain,
  waste 1.83x -> 2.77x hadoop's; synthetic-busy seeds 0-3 mean share 0.80 -> 0.77, waste
  0.97x -> 1.19x hadoop's. Chosen for no harm (the only setting within 1% of ``none`` on
  Google under ``inherent``), on Google part 1 and synthetic-busy seeds 0-3.

**Judged as soon as it can be:** a type whose running (or waiting) originals are enough to
judge it from their estimates, but have none yet, is rescanned until they report (two
reports each), instead of sleeping until its first completion: in a job of long tasks that
came when no copy could pay any more (Google 2011 part 1, seed 0: 0.45 -> 0.77 of the
oracle's gain, waste 0.75x -> 1.83x hadoop's, under ``inherent`` machine time 1.004 ->
1.0205 of ``none``'s; the synthetic workloads, whose tasks are short, unchanged).

**A slow race is judged again** (``recopy``, on by default): once a copied task's original
and copy both have an estimate and its race has taught the belief, the task is judged again
as one task ending with the sooner of the two, and where a new copy pays it replaces the
attempt that would end later (killed); at most once per task. In a job of many tasks one
copy that drew a slow share or node bounds the job's finish, and no other copy can pay
while it does (Google 2011 part 0, a job of 228 tasks: a probe copy took 2,108 s for 1,236 s
of work; job time 2,115 s, the AM's ceiling 1,894 s). Measured, seed 0, share of the
oracle's gain off -> on (waste x hadoop's): Google part 1 0.79 -> 0.95 (2.77 -> 2.72),
part 0 0.55 -> 0.70 (0.43 -> 0.50), MRv1 0.34 -> 0.34; synthetic-busy seeds 0-3 0.73-0.81
-> 0.87-0.91 (1.11-1.19x); under ``inherent`` machine time within 1% of ``none`` on Google
part 0 and 1, MRv1 and SLS (1.0018, 1.0042, 1.0016, 1.0035). No threshold to tune; measured
on every workload of ``tests/bench/bench_policies.py``, chosen on none.

**A losing copy's kill may be held** (``ClusterFacts.kills_restart``, true behind a live
AM): a stock MapReduce AM starts a new attempt for each one it kills, so the shim carries
out a kill only paired with a new copy of its task, and a copy that loses runs until its
original ends; the cost model then charges a losing copy its whole race. Measured with the
simulator's default ``kills=restart`` (and copies queued behind their job's originals),
seed 0, share of the oracle's gain (waste x hadoop's), before -> after: Google part 1 0.95
(2.82) -> 1.14 (2.75), part 0 0.69 (0.50) -> 0.71 (0.53), MRv1 0.34 (1.96) -> 0.26 (0.44),
synthetic-busy 0.86 (1.47) -> 0.89 (1.38), synthetic-idle 0.95 (1.40) -> 0.95 (1.30);
under ``inherent`` machine time within 1% of ``none`` on Google part 0 and 1, MRv1 and SLS
(1.002, 1.004, 1.009, 1.000). MRv1 loses gain (2 copies where there were 9, 5 of them won)
for a quarter of the waste.

**Small jobs** (``pool_small``, on by default): a type of 2 to 5 tasks, too few ever to
judge itself (fewer than twice ``min_completed``), leans on the cluster's other hedge-auto
jobs (:mod:`hedge.policy.cluster_memory`, shared through ``join``): every job with
``MIN_GROUP`` completed tasks of a type pools its residuals, and every race adds its evidence
about ``lam``. Once ``probe_races`` races of the cluster have taught that pooled belief, each
running task of a small job is weighed once, at its first estimate (later, a copy could only
save less), against its job's median run time (its completed tasks' and its running
originals' estimates, its own included, scaled by its input as any task's; a task faster
than that is taken at its own pace), its copy drawn from the pooled residuals. A one-task type is left alone: no sibling can show its
task slow, so a copy could win only by its draw.
Measured, seed 0, calibrated model, mean job time x ``none``'s (share of the oracle's gain),
off -> on: Alibaba 2017 0.752 (0.89) -> 0.666, where window's is 0.686 and jobs of 2-5 tasks
are 4,139 of its 11,644 jobs (jobs of 2 tasks: 330 s -> 238 s, window 255 s); Google 2011
part 0 0.971 (0.72) -> 0.970 (0.72), part 1 0.954 (1.02) -> 0.949 (1.12); the MRv1 sample,
SLS, GridMix, SWIM FB-2009 and the synthetic workloads unchanged; under ``--trace-model inherent``
machine time unchanged on all of them but Google part 1 (1.004 -> 1.005 of ``none``'s: 35
copies where there were 34). Until 2026-11-28 it was off by default: a task was taken as
its own median, and one-task jobs were pooled too (Alibaba 0.705, Google part 0 0.972 for
0.62x hadoop's waste against 0.50x).

Defaults: ``cost_weight`` 0.25 was chosen on the synthetic-busy workload of
``tests/bench/bench_policies.py``, seeds 0-3, between 0.15 and 1.0 (0.5 before the early
kill); seeds 4-7, the real traces and the ``inherent`` runs were not used to choose it.
Checked again on the same seeds once a losing copy's slot time was counted as the kill rule
lets it run (``_loser_slot``; before, every loser was charged its first estimate's delay):
0.1 / 0.15 / 0.25 gave 0.75 / 0.79 / 0.80 of the oracle's gain on average with 1.19 / 1.10 /
0.97 x hadoop's waste (0.79 and 0.995 x before the change), so 0.25 stays.
What the weight trades, on Google 2011 part 0 (calibrated, seed 0; not used to choose it):
``cost_weight`` 0.5 / 0.25 / 0.1 / 0.05 gave mean job time 0.985 / 0.971 / 0.967 / 0.960
of ``none``'s, p95 1.000 / 0.979 / 0.979 / 0.948, waste 0.20 / 0.53 / 0.99 / 2.23 x
hadoop's, against adaptive's 0.966 and 0.967 at 7.6 x and the oracle's 0.959 and 0.957 at
2.5 x; under ``inherent`` every weight made the same 24 copies (machine time 1.002). An
operator who values job time over slot time lowers it; on this trace no one weight beats
adaptive's mean with hadoop's waste or less.

Placement: copies avoid the nodes their originals run on (``avoid_nodes``) and prefer the
fastest node the node ranking knows (``prefer_node``), where it knows one. Every decision is
logged at debug level (logger ``hedge.policy.auto``) with its numbers; the reasons for a
scan's copies and kills also travel in its answer (``Actions.why``), which ``hedge serve``
logs with the decision at INFO.

Speed (issue 21; the figures of each change are in docs/simulator-speed.md): the per-scan
numeric core is compiled (:mod:`hedge.policy.auto_kernels`: copy times, race ends, slot
times and their means, finish bounds, candidates, median and residual quantiles, the best K,
the race facts, the races judged again and the kill rule), in the floating-point order of
the numpy reference each kernel documents, so results are bit-identical to it; lam values
whose belief has underflowed to 0 are not computed, and a copy's time is the product ``M *
exp((1 - lam) * log(T / M)) * exp(lam * e)`` (one exp per lam and candidate and one per lam
and residual; equal to the single exp up to rounding). In the simulator a scan that could
judge no type (too few run times or estimates yet) and follows no race reads only the
attempt table and the count of completed tasks, so such a job sleeps until one of its
attempts starts, ends or delivers a report, or a task completes (``_quiet_until``, an
``OwnStateGate``; audited at every skipped and slept-through scan by
tests/unit/test_sim_gate_audit.py and test_sim_gate_sleep.py). A judged job's answer moves
with time (each remaining time shrinks) and with the cluster's busy share, so it is gated at
every scan instant: a judged scan that copied or killed nothing (each race in flight has
taught already; the AM restarts what it kills) leaves a bound (``NoCopyBound``): while the
job's table stays, a race's standing stays (who is ahead, whether a copy is behind: both
read the attempts' estimated ends, which do not move), no
K's benefit can grow and its cost can shrink by at most K seconds a second, so the gate
skips the job while, at the busy share of the instant, no K could pay
(``_no_copy_stands``). Measured on the 22,102-task day, seed 0: scans 36,692 -> 25,791
without races in flight, CPU about a tenth less (medians of seven interleaved runs, 17.2
-> 15.5 s), 23,037 with taught races too; results
bit-identical (the golden digests, the gate audits, the 97,059-task day's digest).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hedge.estimate.runtime import jvm_ect
from hedge.model import MAP, REDUCE, Actions, AttemptState, AttemptTable, Snapshot
from hedge.model.batch import SlotView, own_state_wake
from hedge.policy.auto_kernels import (
    best_count,
    candidates,
    check_time,
    copies_behind,
    finish_bounds,
    input_ratio,
    judge_core,
    log_residuals,
    race_facts,
    race_pairs,
    typical_runtimes,
)
from hedge.policy.base import OwnStateGate, Policy, register
from hedge.policy.cluster_memory import ClusterMemory
from hedge.policy.limits import HADOOP_DEFAULTS, snapshot_room
from hedge.policy.node_history import member
from hedge.policy.quiet import table_quiet
from hedge.policy.ranges import ABOVE_0, AT_LEAST_0, AT_LEAST_1, SHARE, Range
from hedge.traces.rerun import elasticity
from hedge.traces.straggler_model import CALIBRATED_LAMBDA

log = logging.getLogger("hedge.policy.auto")
LAMBDAS = np.linspace(0.0, 1.0, 11)  # the lam values the belief is kept over
MAX_CANDIDATES = 32  # the slowest tasks of a type judged per scan
# Residuals kept per type: beyond this many, the expectations run over this many evenly
# spaced quantiles of them (their mid-points), not over every one. Exact for a type with
# fewer; at 10 k running attempts the full set made a scan cost about 70 ms of CPU
# (11 lam values x 32 candidates x every residual), and 64 quantiles move an expectation by
# well under a percent of the median run time.
MAX_RESIDUALS = 64
QUANTILES = (np.arange(MAX_RESIDUALS) + 0.5) / MAX_RESIDUALS  # _summarised's mid-points
# how far (log sd) an attempt's own run-time estimate may be from its true run time: the
# width of the likelihood of a copy's observed run time under each lam (Race)
ESTIMATE_LOG_SD = 0.2
# the estimate's error shrinks with the work a copy has left, down to this share of
# ESTIMATE_LOG_SD (a copy near its end is still not known to the second)
ERROR_FLOOR = 0.05
MIN_FIT = 5  # running originals with an input and an estimate before beta is fitted
# completed tasks of a type before a job pools its residuals for other jobs (the trace
# model's smallest group with a spread of its own: docs/trace-model.md)
MIN_GROUP = 5
# the states as plain ints: an IntEnum member looked up on its class costs a Python call
RUNNING, WAITING = int(AttemptState.RUNNING), int(AttemptState.WAITING)


@dataclass
class Basis:
    """What one task type's copies are judged on at one scan.

    - ``m``: the type's median run time (s);
    - ``residual``: the log residuals a copy's slowness is drawn from;
    - ``belief``: the probability of each ``LAMBDAS`` value;
    - ``pooled``: the residuals and belief are the cluster's (a small job, too few peers):
      each task is taken as typical of its job (its own estimate is its median, as the
      trace model takes a task of a group too small to show a spread)."""

    m: float
    residual: np.ndarray
    belief: np.ndarray
    pooled: bool = False


@dataclass
class QuietTable:
    """An attempt table on which ``decide`` could neither judge nor act, and kept no race
    (``HedgeAuto._quiet_until``): its answer and state stay as they are while the table
    does.

    - ``key``: the bytes of the columns ``decide`` then reads (equal bytes, same table);
    - ``since``: the time of the first scan that saw it;
    - ``running``, ``completed``: its running attempts and the job's completed tasks."""

    key: bytes
    since: float
    running: int
    completed: int


@dataclass
class NoCopyBound:
    """A judged scan that copied nothing, and why it would copy nothing later (the
    simulator's gate, ``HedgeAuto._no_copy_stands``) while the job's table stays as it was:
    no report received, attempt started or ended, task completed.

    Then every estimate stays where it was, so every remaining time shrinks by ``dt`` (the
    time since): per copy drawn, the seconds it saves of the type's finish never grow (the
    finish shrinks by ``dt``, what else bounds it by at most ``dt``), and its slot time,
    ``min(copy, left)`` where the AM restarts what it kills, shrinks by at most ``dt``. So
    for the top K candidates the benefit stays at most ``benefit[K - 1]`` and the cost at
    least ``weight * max(slot[K - 1] - K dt, 0)``, with the busy share's weight at that time.

    - ``since``: the scan's time; ``horizon``: when the first running attempt's remaining
      time reaches 0 (beyond, a candidate drops out and another may enter);
    - ``running``, ``completed``: the job's running attempts and completed tasks then;
    - ``evidence``: the cluster's race evidence the belief came from (None: the job's own);
    - ``total_slots``: the cluster's slots then (the busy share's denominator);
    - ``benefit``, ``slot``, ``k``: over the types judged, each K whose expected saving of
      its type's finish reached ``min_saving`` (less a rounding margin; no other K can
      ever pay while the table stays): that saving, the cumulative expected slot time of
      the top K copies, and K."""

    since: float
    horizon: float
    running: int
    completed: int
    evidence: np.ndarray | None
    total_slots: int
    benefit: np.ndarray
    slot: np.ndarray
    k: np.ndarray


@register
class HedgeAuto(OwnStateGate, Policy):
    """Cost-aware copies with skew triage and race learning (see the module docstring).

    - ``cost_weight``: seconds of job time one slot-second of a copy must buy on a fully
      busy cluster (scaled by the share of busy slots);
    - ``assumed_busy``: the busy share used when the AM does not report slots (live AM);
    - ``lam``: the prior transient share of a task's slowness (the calibrated trace model's);
    - ``min_completed``: completed tasks of a type needed before its tasks are judged;
    - ``min_saving``: the smallest expected saving (s) worth a copy;
    - ``skew_ratio``: input at least this many times its type's median: skew, no copy;
    - ``prior_width``: the spread of the prior belief about ``lam`` (a normal's sigma);
    - ``probe_races``: copies a job may have in flight before that many races have ended;
    - ``kill_z``: how sure (in standard errors of its estimate) hedge-auto must be that a
      copy is behind its original before killing it (0: as soon as its estimate is behind);
    - ``pool_small``: judge jobs of 2-5 tasks of a type on what the cluster's other
      hedge-auto jobs pooled (module docstring; on by default);
    - ``pool_races``: believe what every race of the cluster's hedge-auto jobs taught about
      lam, and count them against ``probe_races`` (module docstring; on by default);
    - ``recopy``: judge a race again once both its attempts have an estimate, as one task
      ending with the sooner of the two, and let a new copy replace the one that would end
      later (killed); at most once per task (module docstring; on by default).
    """

    name = "hedge-auto"
    param_ranges = {
        "cost_weight": AT_LEAST_0, "assumed_busy": SHARE, "lam": SHARE,
        "min_completed": AT_LEAST_1, "min_saving": AT_LEAST_0,
        "skew_ratio": Range(1.0, high_open=False, meaning="inf: no skew triage"),
        "prior_width": ABOVE_0, "probe_races": AT_LEAST_0, "kill_z": AT_LEAST_0,
    }
    live_am_gap = ("hedge-auto weighs a copy's slot time by the cluster's busy share, from "
                   "slot counts the simulator knows; on YARN hedge serve counts them from "
                   "the ResourceManager the job's AM names (or [cluster] resourcemanager), "
                   "without one that answers it takes "
                   "assumed_busy (default 0.5)")

    def __init__(self, cost_weight: float = 0.25, assumed_busy: float = 0.5,
                 lam: float = CALIBRATED_LAMBDA,
                 min_completed: int = 3, min_saving: float = 1.0, skew_ratio: float = 1.5,
                 prior_width: float = 0.2, probe_races: int = 2, kill_z: float = 1.0,
                 pool_small: bool = True, pool_races: bool = True,
                 recopy: bool = True) -> None:
        self.cost_weight = float(cost_weight)
        self.assumed_busy = float(assumed_busy)
        self.lam = float(lam)
        self.min_completed = int(min_completed)
        self.min_saving = float(min_saving)
        self.skew_ratio = float(skew_ratio)
        self.prior_width = float(prior_width)
        self.probe_races = int(probe_races)
        self.kill_z = float(kill_z)
        self.pool_small = bool(pool_small)
        self.pool_races = bool(pool_races)
        self.recopy = bool(recopy)
        self._recopied: set[int] = set()  # tasks copied a second time (recopy): never again
        self._races: dict[int, Race] = {}  # copied task -> its race with the original
        self._log_prior = -0.5 * ((LAMBDAS - self.lam) / max(self.prior_width, 1e-3)) ** 2
        self._log_belief = self._log_prior.copy()
        self._taught = 0  # races of this job that have taught the belief (Race.learned)
        self._lost: set[int] = set()  # tasks whose copy was killed behind: never copied again
        self._memory: ClusterMemory | None = None  # shared by the cluster's jobs (join)
        self._pooled: dict[int, tuple[int, np.ndarray]] = {}  # type -> (completed, counts)
        # the cluster's belief as last normalised, with the evidence array it came from
        # (ClusterMemory replaces that array at every race, never changes it in place)
        self._cluster_belief: tuple[np.ndarray, np.ndarray] | None = None
        self._weighed: set[int] = set()  # a small job's tasks judged on the pooled basis
        # tasks put down to skew and not copied since (task -> its type), and the job's
        # reduces (for the ImKP suggestion of job_note)
        self._skewed: dict[int, int] = {}
        self._n_reduces = 0
        self._why: list[str] = []  # the last scan's copies and kills, with their numbers
        self._quiet: QuietTable | None = None  # the last scan's table, if it was quiet
        self._no_copy: NoCopyBound | None = None  # the last scan, if judged and quiet

    @classmethod
    def run_notes(cls, policies: Sequence[Policy]) -> list[str]:
        """How many tasks skew triage left uncopied, in how many jobs: their slowness is
        put down to their data, and the table alone would not say so."""
        skewed = [p._skewed for p in policies if p._skewed]  # the run's: all of this class
        if not skewed:
            return []
        tasks = sum(len(s) for s in skewed)
        reduces = sum(t == REDUCE for s in skewed for t in s.values())
        text = (f"{cls.name}: {_count(tasks, 'task')} in {len(skewed)} of "
                f"{_count(len(policies), 'job')} were put down to skew and not copied (input "
                ">= skew_ratio x their type's median, and no slower than that input explains: "
                "a copy would read as much again)")
        if reduces:
            text += (f"; {reduces} of them reduces: an ImKP mapping (hedge imkp build) evens "
                     "reducer input for those jobs' next run")
        return [text]

    def job_note(self) -> str | None:
        """The tasks skew triage left uncopied in this job, and for reduces the ImKP
        mapping that would even their input next time (``hedge serve`` logs it at close)."""
        if not self._skewed:
            return None
        reduces = sum(t == REDUCE for t in self._skewed.values())
        maps = len(self._skewed) - reduces
        text = (f"{_count(len(self._skewed), 'task')} put down to skew and not copied "
                f"({_count(maps, 'map')}, {_count(reduces, 'reduce')}: their input >= "
                f"{self.skew_ratio:g} x their type's median)")
        if reduces:
            text += (f"; even the reducers' input on the job's next run with an ImKP mapping: "
                     f"hedge imkp build INPUT -r {self._n_reduces} -o MAPPING (README, ImKP)")
        return text

    def join(self, shared: dict[str, object]) -> None:
        """Share the cluster's memory with its other hedge-auto jobs: race evidence with
        ``pool_races``, residuals for small jobs with ``pool_small`` (neither: none)."""
        if not (self.pool_small or self.pool_races):
            return
        memory = shared.setdefault(self.name, ClusterMemory(len(LAMBDAS)))
        assert isinstance(memory, ClusterMemory)
        self._memory = memory

    @property
    def belief(self) -> np.ndarray:
        """This job's belief about lam: one probability per ``LAMBDAS`` value (with
        ``pool_races``, the cluster's: every race of every job, its own included)."""
        if self.pool_races and self._memory is not None:
            evidence = self._memory.evidence
            if self._cluster_belief is None or self._cluster_belief[0] is not evidence:
                belief = _normalised(self._log_prior + evidence)
                belief.flags.writeable = False  # shared by the scans until the next race
                self._cluster_belief = (evidence, belief)
            return self._cluster_belief[1]
        return _normalised(self._log_belief)

    @property
    def _peers_needed(self) -> int:
        """Running originals with an estimate that stand in for ``min_completed`` completed
        tasks (twice as many: the first tasks to complete are the fast ones)."""
        return 2 * self.min_completed

    @property
    def lam_estimate(self) -> float:
        """The belief's mean lam (the prior's ``lam`` until a race has ended)."""
        return float(self.belief @ LAMBDAS)

    def decide(self, snapshot: Snapshot) -> Actions:
        self._why = []
        a = snapshot.attempts
        remaining = jvm_ect(a, snapshot.now) - snapshot.now
        total = snapshot.now - a.start + remaining  # each attempt's estimated run time
        running = a.state == RUNNING
        kills, behind = self._follow_races(snapshot, remaining, running)
        waiting = a.state == WAITING
        live = running | waiting
        n_tasks = snapshot.job.n_maps + snapshot.job.n_reduces
        per_task = np.bincount(a.task[live], minlength=n_tasks)
        remaining, hidden, reopened = self._reopened(a, remaining, running, per_task, kills)
        chosen: list[int] = []
        judged = rescan = pooled = False
        bounds: list[tuple[np.ndarray, np.ndarray] | None] = []  # per type judged (_judge)
        job = snapshot.job
        for task_type, n_of_type in ((MAP, job.n_maps), (REDUCE, job.n_reduces)):
            if not n_of_type:
                continue  # no task of this type: nothing to judge, pool or wait for
            typed = a.task_type == task_type
            of_type = running & typed
            completed = np.asarray(job.completed_runtimes(task_type), float)
            done = self._typical_runtimes(snapshot, completed, of_type, total)
            self._share(task_type, len(completed), done)
            small = self._small(snapshot, task_type, done)
            pooled |= small
            basis = self._basis(snapshot, task_type, completed, done, of_type, total, small)
            if basis is None and log.isEnabledFor(logging.DEBUG) and of_type.any():
                log.debug("no copy type=%s reason=unjudged completed=%d needed=%d "
                          "(or %d running estimates)", "map" if task_type == MAP else "reduce",
                          len(completed), self.min_completed,
                          self._peers_needed)
            if basis is not None and of_type.any():
                chosen += self._judge(snapshot, basis, of_type & ~hidden, waiting & typed,
                                      per_task, remaining, total, bounds)
                judged |= not basis.pooled
            # a small job's tasks are weighed once each, when first they can be (running,
            # with an estimate, the cluster taught): until then it rescans, for no
            # completion of its own need come first
            rescan |= small and bool((live & typed
                                      & ~np.isin(a.task, list(self._weighed))).any())
            rescan |= small and bool(self._races)  # a small job's copy: follow its race
            # a type its running peers will let it judge once their estimates come (two
            # reports each): rescan for them, rather than sleep until a completion, which
            # in a job of long tasks comes when a copy could no longer pay
            rescan |= basis is None and self._estimates_pending(a, live & typed, total)
        for task, (later, race) in reopened.items():
            if task in chosen:  # the new copy replaces the attempt that would end later
                kills.append(later)
                self._recopied.add(task)
                self._why.append(f"kill attempt={later} task={task} reason=replaced (its race "
                                 "judged again: a new copy pays, this attempt would end later)")
            elif task in behind:  # no new copy pays: the copy can only lose
                kills += behind[task]
                self._lost.add(task)
                self._why.append(_behind_why(task, behind[task], self.kill_z))
            else:
                self._races[task] = race
        for task in sorted(behind.keys() - reopened.keys()):  # not judged again: killed
            kills += behind[task]
            self._settle(task, won=False)
            self._lost.add(task)
            self._why.append(_behind_why(task, behind[task], self.kill_z))
        self._quiet = None if (judged or chosen or kills or self._races or reopened
                               or pooled) else self._quiet_table(snapshot, running)
        # races in flight leave the answer as it is while the table stays once each has
        # taught (a copy behind its original would have been killed here, a kill is an act)
        self._no_copy = (self._no_copy_bound(snapshot, running, remaining, bounds)
                         if judged and not (chosen or kills or pooled) and all(
                             race.learned for race in self._races.values()) else None)
        why = "; ".join(self._why)
        if not (judged or chosen):
            if kills or rescan:
                return Actions(kill_attempt=kills, why=why)
            return Actions(next_scan_in=math.inf, wake_on_completion=True)
        if not chosen:
            return Actions(speculate_task=[], prefer_node=[], avoid_nodes=[], kill_attempt=kills,
                           why=why)
        avoid = np.unique(a.node[running & np.isin(a.task, chosen) & (a.node >= 0)])
        prefer = self._fastest(snapshot, avoid)
        return Actions(speculate_task=chosen, prefer_node=[prefer] * len(chosen),
                       avoid_nodes=avoid, kill_attempt=kills, why=why)

    def _quiet_table(self, snapshot: Snapshot, running: np.ndarray) -> QuietTable:
        """The table of a quiet scan (``QuietTable``), the one kept if it is the same."""
        a, job = snapshot.attempts, snapshot.job
        key = b"".join(np.ascontiguousarray(c).tobytes() for c in (
            a.task, a.task_type, a.state, a.start, a.speculative, a.progress, a.report_sent,
            a.report_received, a.first_progress_time, a.first_progress))
        if self._quiet is not None and self._quiet.key == key:
            return self._quiet
        completed = len(job.completed_map_runtimes) + len(job.completed_reduce_runtimes)
        return QuietTable(key, snapshot.now, int(running.sum()), completed)

    def _no_copy_bound(self, snapshot: Snapshot, running: np.ndarray, remaining: np.ndarray,
                       bounds: list[tuple[np.ndarray, np.ndarray] | None]
                       ) -> NoCopyBound | None:
        """The bound of a judged scan that copied nothing (``NoCopyBound``), or None where
        it proves nothing: the AM ends what it kills alone (a losing copy's slot time then
        follows the kill rule, not ``min(copy, left)``), a type's figures were not finite or
        only the cap held a copy back, or an attempt is already past its estimate."""
        if not snapshot.cluster.kills_restart or any(b is None for b in bounds):
            return None
        left = remaining[running]
        left = left[np.isfinite(left)]
        if len(left) and not left.min() > 0:
            return None
        job = snapshot.job
        memory = self._memory if self.pool_races else None
        benefit = np.concatenate([b[0] for b in bounds if b is not None] or [np.empty(0)])
        slot = np.concatenate([b[1] for b in bounds if b is not None] or [np.empty(0)])
        k = np.concatenate([np.arange(1, len(b[0]) + 1) for b in bounds if b is not None]
                           or [np.empty(0)])
        may = benefit > self.min_saving - _margin(benefit)
        return NoCopyBound(
            since=snapshot.now,
            horizon=snapshot.now + (float(left.min()) if len(left) else math.inf),
            running=int(running.sum()),
            completed=len(job.completed_map_runtimes) + len(job.completed_reduce_runtimes),
            evidence=memory.evidence if memory is not None else None,
            total_slots=int(snapshot.cluster.total_slots),
            benefit=benefit[may], slot=slot[may], k=k[may].astype(float))

    # ----------------------------------------------------------------- simulator gate
    # A scan that could neither judge a type nor act, with no race to follow, reads only
    # the attempt table and the completed tasks' count (whether enough run times or
    # estimates exist to judge, whether more estimates are coming), so a job sleeps until
    # its table could change (issue 21; OwnStateGate). A judged job is gated at every scan
    # instant (its answer moves with time and the cluster's busy share), and skipped while
    # its last judged scan's no-copy answer provably stands (NoCopyBound).
    def _quiet_until(self, view: SlotView, j: int, slots: np.ndarray) -> float:
        """``view.now`` unless the last scan was quiet (``QuietTable``) and the job's
        table is still that one: as many running attempts, no completed task, start or
        received report since; then the earliest time one of its attempts'
        reports could arrive (``table_quiet``; inf with none running: only a start or
        completion, which wakes the job, could change it). A waiting attempt leaves the
        table only by starting, and joins it only as a copy this policy asked for or in
        place of an attempt that ended (one fewer running)."""
        q, now = self._quiet, view.now
        if q is None or len(slots) != q.running or int(view.completed[j].sum()) != q.completed:
            return now
        return table_quiet(slots, view.start, view.k, view.r0, view.r1, view.hw, now,
                           q.since)

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): ``_quiet_until`` is now, and its last judged
        scan's no-copy answer is not known to stand (``_no_copy_stands``). A job skipped so
        wakes at its next scan instant (``needs_scan_from`` reads ``_quiet_until`` alone),
        where this is asked again."""
        return own_state_wake(view, "_gate_until") <= view.now

    def _gate_until(self, view: SlotView, j: int, slots: np.ndarray) -> float:
        """``_quiet_until``, or inf (skip this instant) where that is now but the last
        judged scan's answer, no copy, provably stands."""
        when = self._quiet_until(view, j, slots)
        if when <= view.now and self._no_copy_stands(view, j, slots):
            return math.inf
        return when

    def _no_copy_stands(self, view: SlotView, j: int, slots: np.ndarray) -> bool:
        """Whether ``decide`` would copy nothing now, from the last judged scan's bound
        (``NoCopyBound``): the job's table is the one it judged, the cluster's belief too,
        the horizon is not reached, and for every K the benefit stays below ``min_saving``
        or below the least cost the busy share now allows (with a margin for rounding)."""
        b, now = self._no_copy, view.now
        if (b is None or now >= b.horizon or len(slots) != b.running
                or int(view.completed[j].sum()) != b.completed):
            return False
        if self.pool_races and self._memory is not None and (
                self._memory.evidence is not b.evidence):
            return False
        if table_quiet(slots, view.start, view.k, view.r0, view.r1, view.hw, now,
                       b.since) <= now:
            return False  # a report received or an attempt started since
        if not len(b.benefit):
            return True  # no K saves min_saving: none will while the table stays
        busy = (self.assumed_busy if b.total_slots <= 0
                else 1.0 - int(view.free_slots) / b.total_slots)
        least = self.cost_weight * busy * np.maximum(b.slot - b.k * (now - b.since), 0.0)
        return not (b.benefit - least > -_margin(b.benefit)).any()

    def _reopened(self, a: AttemptTable, remaining: np.ndarray, running: np.ndarray,
                  per_task: np.ndarray, kills: list[int],
                  ) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[int, Race]]]:
        """The races judged again (``recopy``): a task whose original and one copy both run
        with an estimate, whose race has taught the belief, and that was not copied a second
        time already. Each is judged as one task that ends with the sooner of its two
        attempts, through its original's row (the copy's row is left out of the judgement):
        in a job of many tasks one copy that drew a slow node, or a slow share, bounds the
        job's finish, and no other copy could then pay.

        Returns the remaining times to judge by (the original's row: the sooner of the
        two), the rows left out, and per task reopened the attempt that would end later
        (killed if the task is copied again) and its race (taken out of ``_races``, put
        back if it is not). ``per_task`` is updated in place: a reopened task counts one
        live attempt."""
        hidden = np.zeros(len(a), dtype=bool)
        reopened: dict[int, tuple[int, Race]] = {}
        tasks = [t for t, race in self._races.items()
                 if race.learned and t not in self._recopied] if self.recopy else []
        if not tasks:
            return remaining, hidden, reopened
        ids, original, other, later = race_pairs(a.task, running, a.speculative, remaining,
                                                 a.attempt, np.array(tasks, np.int64))
        keep = ~member(later, np.asarray(kills, np.int64))
        ids, original, other, later = ids[keep], original[keep], other[keep], later[keep]
        remaining = remaining.copy()
        remaining[original] = np.minimum(remaining[original], remaining[other])
        hidden[other] = True
        per_task[ids] = 1
        for task, end_later in zip(ids.tolist(), later.tolist(), strict=True):
            reopened[task] = (end_later, self._races.pop(task))
        return remaining, hidden, reopened

    def _estimates_pending(self, a: AttemptTable, live_of_type: np.ndarray,
                           total: np.ndarray) -> bool:
        """Whether enough of this type's originals run or wait for a slot for
        ``_typical_runtimes`` to judge the type from their estimates, but too few of them
        have one yet."""
        originals = live_of_type & ~a.speculative
        return (int(originals.sum()) >= self._peers_needed
                > int(np.isfinite(total[originals]).sum()))

    def _small(self, snapshot: Snapshot, task_type: int, done: np.ndarray) -> bool:
        """Whether this type cannot judge itself yet and never could from its running
        peers alone (fewer than twice ``min_completed`` tasks): a small job, pooled with the
        cluster when this policy has joined one. Not a type of one task: no sibling can show
        it slow, so a copy could win only by its draw (Google 2011 part 0, mostly one-task
        jobs: pooling those too made 356 copies where 297 were made without them, for a
        mean job time of 0.972 of none's against 0.970)."""
        job = snapshot.job
        tasks = job.n_maps if task_type == MAP else job.n_reduces
        return (self.pool_small and self._memory is not None and len(done) < self.min_completed
                and 2 <= tasks < self._peers_needed)

    def _basis(self, snapshot: Snapshot, task_type: int, completed: np.ndarray,
               done: np.ndarray, of_type: np.ndarray, total: np.ndarray,
               small: bool) -> Basis | None:
        """What this type's tasks are judged on: the job's own run times once it has
        enough (``_typical_runtimes``); else, for a small job (``_small``) once
        ``probe_races`` races of the cluster's jobs have taught the pooled belief, the
        cluster's pooled residuals; else None (not judged)."""
        if len(done) >= self.min_completed:
            m, residual = log_residuals(done, QUANTILES)  # as _summarised(log(done / median))
            return Basis(m, residual, self.belief)
        memory = self._memory
        if not small or memory is None or memory.races < self.probe_races:
            return None
        residual = memory.residuals(task_type, MAX_RESIDUALS)
        if residual is None:
            return None
        a = snapshot.attempts
        own = total[of_type & ~a.speculative & np.isfinite(total) & (total > 0)]
        # the job's median run time, over its completed tasks and its running originals'
        # estimates: a task slower than its siblings is expected to copy at their pace
        m = float(np.median(np.concatenate([completed, own]))) if len(own) else math.inf
        return Basis(m, residual, _normalised(self._log_prior + memory.evidence), pooled=True)

    def _share(self, task_type: int, completed: int, runtimes: np.ndarray) -> None:
        """Pool this type's residuals with the cluster (``ClusterMemory``) once
        ``MIN_GROUP`` of its tasks have completed, replacing what this job pooled before
        whenever another one completes (``completed``: how many have)."""
        before = self._pooled.get(task_type)
        if (not self.pool_small or self._memory is None or completed < MIN_GROUP
                or not len(runtimes)
                or (before is not None and before[0] == completed)):
            return
        counts = ClusterMemory.histogram(np.log(runtimes / np.median(runtimes)))
        self._memory.replace(task_type, None if before is None else before[1], counts)
        self._pooled[task_type] = (completed, counts)

    def _judge(self, snapshot: Snapshot, basis: Basis, of_type: np.ndarray,
               waiting_of_type: np.ndarray, per_task: np.ndarray, remaining: np.ndarray,
               total: np.ndarray,
               bounds: list[tuple[np.ndarray, np.ndarray] | None]) -> list[int]:
        """The tasks of one type worth a copy now: the K slowest candidates, for the K whose
        expected saving of the type's finish time exceeds their copies' cost by most.
        Appends to ``bounds`` what a later scan's no-copy answer may be bounded by
        (``NoCopyBound``: per K the benefit and cumulative slot time; None where nothing is
        proven: only the cap held copies back, or a figure was not finite)."""
        a = snapshot.attempts
        m = basis.m
        input_ratio, scale = self._input_scale(snapshot, of_type, total)
        rows = self._candidates(snapshot, of_type, per_task, remaining, total, input_ratio,
                                scale, m)
        if basis.pooled:  # weighed once, at the first scan that can (see decide)
            rows = rows[~np.isin(a.task[rows], list(self._weighed))]
            self._weighed.update(a.task[rows].tolist())
        if not len(rows):
            return []
        # a task with k x its peers' input takes k ** beta x as long at their pace, and so
        # would its copy: only the rest of its slowness is the model's to split
        # (docs/trace-model.md); a small job's median is a few tasks' (pooled): a task
        # faster than it is taken at its own pace
        typical = m * scale[rows]
        if basis.pooled:
            typical = np.minimum(typical, total[rows])
        # a losing copy runs until its estimate shows it behind (_loser_slot), or to the end
        # of its race where the AM would restart what hedge-auto kills (its kill is held)
        check = math.inf if snapshot.cluster.kills_restart else self._check_time(snapshot,
                                                                                 of_type)
        finish, rest = self._finish_bounds(snapshot, of_type, bool(waiting_of_type.any()),
                                           rows, remaining, m)
        # per lam and candidate, over the residuals: the mean saving of the finish and the
        # mean slot time (_loser_slot's for a copy that loses) of _copies' copy times
        # (compiled: auto_kernels.judge_core)
        width = self.kill_z * ESTIMATE_LOG_SD
        saving, slot = judge_core(LAMBDAS, basis.belief, typical, total[rows],
                                  remaining[rows], basis.residual, check, self.kill_z, width,
                                  math.exp(width), math.exp(width * ERROR_FLOOR), finish,
                                  rest)
        # per K, weighed by the belief once: the mean saving and the K-th copy's slot time
        saving_k, slot_k = basis.belief @ saving, basis.belief @ slot
        best_k, benefit, cost = self._best_count(snapshot, saving_k, slot_k)
        if not best_k:
            finite = np.isfinite(saving_k).all() and np.isfinite(slot_k).all()
            bounds.append((saving_k, np.cumsum(slot_k)) if finite else None)
            if log.isEnabledFor(logging.DEBUG):
                self._log_no_copy(snapshot, int(a.task[rows[0]]), remaining[rows[0]],
                                  finish, saving_k[0], slot_k[0], basis)
            return []
        room = min(self._room(), max(snapshot_room(snapshot, HADOOP_DEFAULTS), 0))
        chosen = [int(a.task[r]) for r in rows[:min(best_k, room)]]
        bounds.append(None)  # a copy pays: only the cap (or nothing) holds it back
        if len(chosen) < best_k:
            log.debug("no copy tasks=%s reason=cap room=%d", a.task[rows[len(chosen):best_k]],
                      room)
        if chosen:
            n = len(chosen)
            copy = _copies(typical[:n], total[rows[:n]], basis.residual)
            win = (copy < remaining[rows[:n]][None, :, None]).mean(axis=2)  # per lam, copy
            for k, task in enumerate(chosen):
                self._races[task] = Race(win[:, k], np.log(copy[:, k, :]))
                self._skewed.pop(task, None)  # copied after all: not left to its skew
        if chosen:
            why = (f"copy tasks={chosen} finish={finish:.1f} benefit={benefit:.1f} "
                   f"cost={cost:.1f} lam={float(basis.belief @ LAMBDAS):.2f}"
                   + (" (pooled: a small job)" if basis.pooled else ""))
            self._why.append(why)
            log.debug("%s", why)
        return chosen

    def _log_no_copy(self, snapshot: Snapshot, task: int, remaining: float, finish: float,
                     saving: float, slot: float, basis: Basis) -> None:
        """Why the slowest candidate gets no copy: its expected saving of the type's finish
        against its copy's cost (``saving``, ``slot``: its copy alone, as ``_best_count``
        weighs them)."""
        weight = self.cost_weight * self._busy(snapshot)
        log.debug("no copy task=%d reason=cost remaining=%.1f finish=%.1f m=%.1f "
                  "benefit=%.1f cost=%.1f min_saving=%.1f lam=%.2f", task, remaining, finish,
                  basis.m, float(saving), weight * float(slot), self.min_saving,
                  float(basis.belief @ LAMBDAS))

    @staticmethod
    def _finish_bounds(snapshot: Snapshot, of_type: np.ndarray, waiting: bool,
                       rows: np.ndarray, remaining: np.ndarray,
                       m: float) -> tuple[float, np.ndarray]:
        """The type's finish without a copy, and for each K what else bounds it once the
        top K candidates are copied: the candidates after them, the running tasks that are
        not candidates, and a task still waiting for a slot (about ``m`` more).

        Each running task ends with its first attempt to end (a task whose copy is ahead no
        longer bounds the finish); an attempt without an estimate yet (just started, or a
        copy just made) needs about ``m`` more."""
        return finish_bounds(remaining, snapshot.attempts.task, np.flatnonzero(of_type), rows,
                             m, m if waiting else 0.0)

    def _best_count(self, snapshot: Snapshot, saving: np.ndarray,
                    slot: np.ndarray) -> tuple[int, float, float]:
        """(K, its benefit, its cost): the number of top candidates whose copies' expected
        saving of the type's finish beats their summed cost by most (0: none pays).

        ``saving``/``slot``: per K, weighed by the belief about lam, the mean saving of the
        type's finish once the top K are copied, and the K-th copy's mean slot time
        (``judge_core``'s rows times the belief)."""
        # cost: cumsum(weight * slot); net: benefit - cost where benefit >= min_saving, else 0
        return best_count(saving, slot, self.cost_weight * self._busy(snapshot),
                          self.min_saving)

    @staticmethod
    def _check_time(snapshot: Snapshot, of_type: np.ndarray) -> float:
        """Seconds from a copy's start until its own estimate exists (two progress reports):
        twice the type's median delay to a first report (JVM start-up, then one report
        interval; inf when no attempt of the type has reported yet)."""
        a = snapshot.attempts
        return check_time(a.first_progress_time, a.start, of_type)

    def _room(self) -> int:
        """Copies this job may start now: unlimited once ``probe_races`` races have taught
        the belief (by the copy's own estimate, or by their end), else up to ``probe_races``
        still teaching (probe before trusting the model with many slots)."""
        taught = self._memory.races if self.pool_races and self._memory else self._taught
        if taught >= self.probe_races:
            return MAX_CANDIDATES
        teaching = sum(not race.learned for race in self._races.values())
        return max(self.probe_races - teaching, 0)

    def _candidates(self, snapshot: Snapshot, of_type: np.ndarray, per_task: np.ndarray,
                    remaining: np.ndarray, total: np.ndarray, input_ratio: np.ndarray,
                    scale: np.ndarray, m: float) -> np.ndarray:
        """Rows of running originals with one live attempt, an estimate, no race yet and no
        skew, slowest first (at most ``MAX_CANDIDATES``).

        Skew: input ``skew_ratio`` x its type's median or more, and a run time within
        ``skew_ratio`` of what that input explains (``m * scale``): its slowness is its data,
        which a copy would read again (a task with more data that is also slower than its
        data explains stays a candidate)."""
        a = snapshot.attempts
        raced = np.fromiter([*self._races, *self._lost], np.int64)
        rows, skewed = candidates(of_type, per_task, a.task, a.speculative, remaining, total,
                                  input_ratio, scale, raced, self.skew_ratio, m,
                                  MAX_CANDIDATES)
        for r in skewed:
            log.debug("no copy task=%d reason=skew input=%.0f", a.task[r], a.input_bytes[r])
            self._skewed.setdefault(int(a.task[r]), int(a.task_type[r]))
            self._n_reduces = snapshot.job.n_reduces  # for job_note's ImKP build
        return rows

    def _typical_runtimes(self, snapshot: Snapshot, completed: np.ndarray,
                          of_type: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Run times a copy of this type is drawn from, once ``min_completed`` tasks of the
        type completed: theirs and the estimated run times of the running originals (the
        first tasks to complete are the fast ones; alone they would promise copies too
        fast). ``completed``: the type's completed run times."""
        return typical_runtimes(completed, of_type, snapshot.attempts.speculative, total,
                                self.min_completed, self._peers_needed)

    def _busy(self, snapshot: Snapshot) -> float:
        c = snapshot.cluster
        if c.total_slots <= 0:
            return self.assumed_busy
        return 1.0 - c.free_slots / c.total_slots

    @staticmethod
    def _input_scale(snapshot: Snapshot, of_type: np.ndarray,
                     total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per attempt row: ``k``, its input over its type's median input, and ``k **
        beta``, the run time that input is expected to take relative to a median task (both 1
        where not known, or when fewer than two tasks of the type report an input).

        ``beta``, the elasticity of run time in input, is fitted from this type's running
        originals (log estimated run time on log input, as the trace model fits it:
        ``hedge.traces.rerun.Centers``) once ``MIN_FIT`` of them have both; until then 1:
        more data is proportionally more work, the assumption that copies least."""
        a = snapshot.attempts
        inputs = a.input_bytes
        k, n_known = input_ratio(inputs, of_type)
        if n_known < 2:
            return k, k
        known = of_type & np.isfinite(inputs) & (inputs > 0)
        fit = known & ~a.speculative & np.isfinite(total) & (total > 0)
        beta = 1.0
        if fit.sum() >= MIN_FIT:
            beta = elasticity(np.log(inputs[fit]), np.log(total[fit]))
        return k, k ** beta

    def _fastest(self, snapshot: Snapshot, avoid: np.ndarray) -> int:
        """The node the ranking rates fastest, not among ``avoid`` (-1: none known)."""
        speed = snapshot.cluster.node_speed
        if not len(speed):
            return -1
        speed = speed.astype(float).copy()
        speed[avoid[avoid < len(speed)]] = -np.inf
        best = int(np.argmax(speed))
        return best if np.isfinite(speed[best]) and speed[best] > 1.0 else -1

    def _follow_races(self, snapshot: Snapshot, remaining: np.ndarray,
                      running: np.ndarray) -> tuple[list[int], dict[int, list[int]]]:
        """Note which attempt of each raced task is ahead, and end the races a copy has lost.

        A task gone from the snapshot has completed, and the attempt that was ahead at its
        last scan is taken as the winner (neither the AM's nor the simulator's snapshot says
        who won). A copy whose own estimate (from its own reports: it has run long enough to
        have a rate) ends later than its original's is killed at once: it can only lose, and
        every second it runs on is waste. Returns the attempts to kill, and per task whose
        copy is behind but may still be copied again (``recopy``) that copy's attempts: such a
        task is judged again first (``decide``), and its copy is killed only where no new
        copy pays. (A stock MapReduce AM starts a new attempt in place of each one it kills,
        so on a cluster a lone kill is held by the shim; a kill with a new copy is not.)"""
        if not self._races:
            return [], {}
        a = snapshot.attempts
        kills: list[int] = []
        behind_copies: dict[int, list[int]] = {}
        tasks = list(self._races)
        # per race: (copies, originals) running, their soonest finite remaining times, and
        # the copies' latest start and highest progress (auto_kernels.race_facts); whether
        # a copy is behind its original beyond doubt (auto_kernels.copies_behind: killed)
        counts, ends, copies = race_facts(a.task, running, a.speculative, remaining, a.start,
                                          a.progress, np.array(tasks, np.int64))
        behind = copies_behind(ends, copies, snapshot.now, self.kill_z, ESTIMATE_LOG_SD,
                               ERROR_FLOOR).tolist()
        for j, (task, (n_copy, n_orig), (copy_end, orig_end), (copy_start, _)) in enumerate(
                zip(tasks, counts.tolist(), ends.tolist(), copies.tolist(), strict=True)):
            if not n_copy + n_orig:
                self._settle(task, won=self._races[task].ahead)
                continue
            if n_copy and math.isfinite(copy_end):
                self._learn(task, copy_end + snapshot.now - copy_start)
            if n_copy and n_orig and math.isfinite(copy_end):
                self._races[task].ahead = copy_end < orig_end
                if behind[j]:
                    rows = np.flatnonzero(running & (a.task == task) & a.speculative)
                    if self.recopy and task not in self._recopied:
                        behind_copies[task] = a.attempt[rows].tolist()
                        continue
                    kills += a.attempt[rows].tolist()
                    self._settle(task, won=False)
                    self._lost.add(task)
                    self._why.append(_behind_why(task, a.attempt[rows].tolist(), self.kill_z))
            elif n_copy and not n_orig:
                self._races[task].ahead = True  # the original is gone, the copy runs on
        return kills, behind_copies

    def _learn(self, task: int, copy_total: float) -> None:
        """The copy of ``task`` has its own estimate (``copy_total`` s in all): the first
        one updates the belief about lam, without waiting for the race to end (a copy of a
        long task may take as long as the job)."""
        race = self._races[task]
        if not race.learned:
            race.copy_total = copy_total
            self._teach(race.pace_log_likelihood())
            race.learned = True

    def _settle(self, task: int, won: bool) -> None:
        """A race has ended: update the belief about lam with who won, unless the copy's
        own estimate already did."""
        race = self._races.pop(task)
        if not race.learned:
            self._teach(race.outcome_log_likelihood(won))

    def _teach(self, log_likelihood: np.ndarray) -> None:
        """One race's evidence about lam, for this job's belief and the cluster's."""
        self._log_belief += log_likelihood
        self._taught += 1
        if self._memory is not None:
            self._memory.learn(log_likelihood)


@dataclass
class Race:
    """A copy racing its original, as predicted when the copy was made.

    - ``p_win``: P(the copy finishes first) under each ``LAMBDAS`` value;
    - ``log_copy``: the copy's predicted log run time per ``LAMBDAS`` value (rows) and
      residual (columns);
    - ``ahead``: whether the copy was ahead at the last scan;
    - ``copy_total``: the copy's run time by its own first estimate, the one it taught
      by (NaN: none yet);
    - ``learned``: whether the belief about lam has taken this race into account."""

    p_win: np.ndarray
    log_copy: np.ndarray
    ahead: bool = False
    copy_total: float = math.nan
    learned: bool = False

    def pace_log_likelihood(self) -> np.ndarray:
        """Per ``LAMBDAS`` value, the log likelihood (up to a constant) of the copy's own
        estimated run time: far sharper than who won (a copy as slow as its original speaks
        for lam near 0 however the race ends). An estimate at or below 0 s says nothing of
        its pace: the race counts as lost."""
        if not self.copy_total > 0:
            return self.outcome_log_likelihood(won=False)
        z = (math.log(self.copy_total) - self.log_copy) / ESTIMATE_LOG_SD
        return np.logaddexp.reduce(-0.5 * z ** 2, axis=1)

    def outcome_log_likelihood(self, won: bool) -> np.ndarray:
        """Per ``LAMBDAS`` value, the log likelihood of the race's outcome."""
        likelihood = self.p_win if won else 1 - self.p_win
        return np.log(np.clip(likelihood, 0.01, 1.0))


def _copies(typical: np.ndarray, total: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """What each candidate's copy would take (s), per lam, candidate and residual: ``C = M
    * exp((1 - lam) * log(T / M) + lam * e)`` for typical run time ``M`` and run time ``T``
    (the module docstring), as the product ``M * exp((1 - lam) * log(T / M)) * exp(lam *
    e)``: one exp per lam and candidate and one per lam and residual. ``judge_core``
    computes the same values in place, in the same order."""
    lam = LAMBDAS[:, None, None]  # axes: lam, candidate, residual
    kept = np.exp((1 - lam) * np.log(np.maximum(total, 1e-9) / typical)[None, :, None])
    return typical[None, :, None] * kept * np.exp(lam * residual)


def _loser_slot(copy: np.ndarray, left: np.ndarray, check: float,
                kill_z: float) -> np.ndarray:
    """Slot-seconds of a copy that would lose (it takes ``copy`` s, its original ``left``):
    it runs until ``_follow_races`` kills it (``copies_behind``), or until the original
    ends.

    Its estimate exists ``check`` s after it starts. It is killed once ``log(copy / left)``
    exceeds ``kill_z`` times the estimate's error, ``ESTIMATE_LOG_SD * max(1 - p,
    ERROR_FLOOR)`` at progress ``p``: at once (from ``check``) when far behind, at ``p* = 1 -
    log(copy / left) / (kill_z * ESTIMATE_LOG_SD)`` of its run when close, never when within
    the error's floor (then it runs until its original ends). A near tie thus costs nearly
    the whole race, not ``check``: the price of not killing a copy that might still win.
    (Only the near ties need a logarithm: the bounds are compared in seconds.) The numpy
    statement of the rule ``auto_kernels.judge_core`` applies per copy (tested equal)."""
    left = np.broadcast_to(left, copy.shape)
    slot = np.minimum(left, check)  # far behind: killed at its first estimate
    if kill_z <= 0:
        return slot
    width = kill_z * ESTIMATE_LOG_SD
    close = copy <= left * math.exp(width)
    slot[close] = left[close]  # within the floor: runs until its original ends
    tie = close & (copy > left * math.exp(width * ERROR_FLOOR))
    c, t = copy[tie], left[tie]
    slot[tie] = np.minimum(t, np.maximum(check, (1.0 - np.log(c / t) / width) * c))
    return slot


def _margin(benefit: np.ndarray) -> np.ndarray:
    """How far a bound's figures may sit from the same sums computed at a later scan, in
    another order or with other rounding: well above float error, far below a second."""
    return 1e-9 * (1.0 + np.abs(benefit))


def _normalised(log_weights: np.ndarray) -> np.ndarray:
    """Probabilities from unnormalised log weights."""
    w = np.exp(log_weights - log_weights.max())
    return w / w.sum()


def _summarised(residual: np.ndarray) -> np.ndarray:
    """``residual`` itself, or its ``MAX_RESIDUALS`` mid-point quantiles when longer (the
    numpy statement of ``auto_kernels.log_residuals``, tested equal)."""
    if len(residual) <= MAX_RESIDUALS:
        return residual
    return np.quantile(residual, QUANTILES)


def _count(n: int, noun: str) -> str:
    """``1 task``, ``3 tasks``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _behind_why(task: int, attempts: list[int], kill_z: float) -> str:
    """Why a copy is killed: its estimate ends behind its original's beyond doubt."""
    return (f"kill attempts={attempts} task={task} reason=behind (the copy's estimated end is "
            f"later than its original's by more than {kill_z:g} x the estimate's error)")
