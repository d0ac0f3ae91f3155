"""hedge-auto on hand-built snapshots: it copies where a copy pays, and only there."""

from __future__ import annotations

import logging
import math
import re
from types import SimpleNamespace

import numpy as np

from hedge.model import MAP, AttemptState, AttemptTable, ClusterFacts, JobFacts, Snapshot
from hedge.policy import create
from hedge.policy.auto import ESTIMATE_LOG_SD, NoCopyBound, _loser_slot

R = AttemptState.RUNNING
DONE = [10.0, 11.0, 9.0, 10.5, 9.5]  # completed maps: median 10 s


def snapshot(now: float, rows: list[tuple], free: int = 90, total: int = 100,
             done: list[float] = DONE, speed: list[float] | None = None) -> Snapshot:
    """rows: (task, progress at now, node[, speculative, input bytes]); each attempt started
    at 0, reported progress 0.01 at 1 s (JVM start) and ``progress`` at ``now``."""
    cols: dict[str, list] = {c: [] for c in AttemptTable.COLUMNS}
    for i, (task, progress, node, *rest) in enumerate(rows):
        spec = rest[0] if rest else False
        start = now - 2.0 if spec else 0.0
        values = {"task": task, "attempt": 100 + i, "task_type": MAP, "state": R, "node": node,
                  "start": start, "first_progress_time": start + 1.0, "first_progress": 0.01,
                  "progress": progress, "report_sent": now, "report_received": now,
                  "bytes_processed": 0.0, "input_bytes": rest[1] if len(rest) > 1 else np.nan,
                  "speculative": spec}
        for key, value in values.items():
            cols[key].append(value)
    job = JobFacts("job", 0.0, 20, 0, completed_map_runtimes=np.asarray(done))
    cluster = ClusterFacts(total_slots=total, free_slots=free,
                           node_speed=np.asarray(speed if speed else []))
    return Snapshot(now=now, job=job, attempts=AttemptTable(**cols), cluster=cluster)


def test_the_last_slow_task_is_copied_away_from_its_node() -> None:
    # task 7 at 20 s has 10 % done: about 180 s left where a copy takes about 10-20 s
    s = snapshot(20.0, [(7, 0.1, 3), (8, 0.95, 4)], speed=[1.0, 1.0, 1.5, 1.0, 1.0])
    a = create("hedge-auto").decide(s)
    assert a.speculate_task.tolist() == [7]
    assert a.avoid_nodes.tolist() == [3] and a.prefer_node.tolist() == [2]
    assert re.fullmatch(r"copy tasks=\[7\] finish=\d+\.\d benefit=\d+\.\d cost=\d+\.\d "
                        r"lam=0\.\d\d", a.why), a.why


def test_nothing_is_copied_while_too_few_tasks_completed() -> None:
    a = create("hedge-auto").decide(snapshot(20.0, [(7, 0.1, 3)], done=[10.0]))
    assert len(a.speculate_task) == 0 and a.next_scan_in == math.inf and a.wake_on_completion


def test_estimates_of_enough_running_peers_stand_in_for_completed_tasks() -> None:
    # nothing completed, but six originals estimate about 10 s each: task 7's ~180 s stands out
    rows = [(7, 0.1, 3)] + [(t, 0.9, 4) for t in range(8, 14)]
    a = create("hedge-auto").decide(snapshot(9.0, rows, done=[]))
    assert a.speculate_task.tolist() == [7]
    a = create("hedge-auto").decide(snapshot(9.0, rows[:5], done=[]))  # five estimates: too few
    assert len(a.speculate_task) == 0


def test_a_job_waiting_for_its_peers_estimates_rescans_rather_than_sleeps() -> None:
    """Seven originals run and none has reported twice yet: in a few seconds their estimates
    will let it judge them, so it rescans; sleeping until a completion would wake it when a
    copy of a long task could no longer pay. Five running originals could never be enough:
    that job sleeps until a completion."""
    rows = [(7, 0.1, 3)] + [(t, 0.9, 4) for t in range(8, 14)]

    def unreported(n: int) -> Snapshot:
        snap = snapshot(1.5, rows[:n], done=[])
        snap.attempts.first_progress_time[:] = np.inf  # no progress report yet
        return snap

    policy = create("hedge-auto")
    waiting = policy.decide(unreported(7))
    assert not waiting.wake_on_completion and waiting.next_scan_in is None
    assert policy.decide(snapshot(9.0, rows, done=[])).speculate_task.tolist() == [7]
    few = create("hedge-auto").decide(unreported(5))
    assert few.wake_on_completion and few.next_scan_in == math.inf


def test_every_copy_not_made_is_logged_with_its_reason(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="hedge.policy.auto")
    create("hedge-auto").decide(snapshot(20.0, [(7, 0.1, 3)], done=[10.0]))
    assert ("no copy type=map reason=unjudged completed=1 needed=3 (or 6 running estimates)"
            in caplog.text)
    caplog.clear()
    create("hedge-auto").decide(snapshot(20.0, [(7, 0.5, 3)], free=0))  # busy: not worth it
    (line,) = [r.getMessage() for r in caplog.records]
    assert re.fullmatch(r"no copy task=7 reason=cost remaining=19\.\d finish=19\.\d m=10\.\d "
                        r"benefit=\d+\.\d cost=\d+\.\d min_saving=1\.0 lam=0\.50", line), line
    benefit, cost = (float(v) for v in re.findall(r"(?:benefit|cost)=([\d.]+)", line))
    assert benefit < cost
    caplog.clear()
    rows = [(t, 0.1, t) for t in (7, 8, 9)]  # three equal stragglers, one probe copy at a time
    a = create("hedge-auto", probe_races=1).decide(snapshot(20.0, rows))
    assert len(a.speculate_task) == 1
    assert re.search(r"no copy tasks=\[\d \d\] reason=cap room=1", caplog.text), caplog.text


def test_only_the_tasks_a_copy_can_beat_are_copied() -> None:
    # task 8 has ~6 min left, task 7 a few seconds: a copy (about 10 s) only beats task 8
    a = create("hedge-auto").decide(snapshot(20.0, [(7, 0.8, 3), (8, 0.05, 4)]))
    assert a.speculate_task.tolist() == [8]


def test_copying_one_of_two_equal_stragglers_would_not_shorten_the_job() -> None:
    # two tasks equally slow: the job ends with the later one, so both or none
    a = create("hedge-auto", probe_races=4).decide(snapshot(20.0, [(7, 0.1, 3), (8, 0.1, 4)]))
    assert sorted(a.speculate_task.tolist()) == [7, 8]
    a = create("hedge-auto", probe_races=1).decide(snapshot(20.0, [(7, 0.1, 3), (8, 0.1, 4)]))
    assert len(a.speculate_task) == 1  # probing: one copy in flight until a race has ended


def test_a_busy_cluster_raises_the_bar() -> None:
    s = snapshot(20.0, [(7, 0.5, 3)], free=0)  # 20 s left, a copy ~10-15 s: little to gain
    assert len(create("hedge-auto").decide(s).speculate_task) == 0
    s = snapshot(20.0, [(7, 0.5, 3)], free=100)  # the same on an idle cluster: worth it
    assert create("hedge-auto").decide(s).speculate_task.tolist() == [7]


def test_where_the_am_restarts_what_it_kills_a_losing_copy_costs_its_whole_race() -> None:
    # 20 s left, a copy ~10-15 s, 40 % of the slots busy: worth a copy where a copy that
    # falls behind is killed at its first estimate, not behind a stock MapReduce AM, which
    # starts a new attempt for each one it kills: a lone kill is held there, so a losing
    # copy runs until its original ends (ClusterFacts.kills_restart, True by default)
    s = snapshot(20.0, [(7, 0.5, 3)], free=60)
    assert s.cluster.kills_restart and len(create("hedge-auto").decide(s).speculate_task) == 0
    s.cluster.kills_restart = False
    assert create("hedge-auto").decide(s).speculate_task.tolist() == [7]


def test_a_task_slow_because_of_its_input_is_not_copied() -> None:
    # task 7 has 5x its peers' input and runs at their pace per byte (about 50 s in all)
    rows = [(7, 0.4, 3, False, 5e9), (8, 0.9, 4, False, 1e9), (9, 0.9, 5, False, 1e9)]
    assert len(create("hedge-auto").decide(snapshot(20.0, rows)).speculate_task) == 0
    rows[0] = (7, 0.1, 3, False, 1.1e9)  # about its peers' input: slow for another reason
    assert create("hedge-auto").decide(snapshot(20.0, rows)).speculate_task.tolist() == [7]
    # 5x the input and 4x slower per byte too (about 200 s where its data takes about 50)
    rows[0] = (7, 0.1, 3, False, 5e9)
    assert create("hedge-auto").decide(snapshot(20.0, rows)).speculate_task.tolist() == [7]


def test_copies_that_lose_teach_it_to_stop() -> None:
    """Each race: the copy falls behind (no pace of its own yet), then the task completes.
    Losing is likely under any lam, so it takes a few races to stop."""
    policy = create("hedge-auto")
    races = 0
    for task in range(12):
        now = 20.0 + 10 * task
        if not policy.decide(snapshot(now, [(task, 0.1, 3)])).speculate_task.size:
            break
        races += 1
        policy.decide(snapshot(now + 1, [(task, 0.5, 3), (task, 0.01, 4, True)]))
        policy.decide(snapshot(now + 2, []))  # completed: gone from the snapshot
    assert 1 <= races <= 10 and policy.lam_estimate < 0.3  # it started at 0.5
    # a task like those (10% done after 140 s: its copy would tie, and a near tie is not
    # killed early, so it costs most of its race) is no longer copied
    assert not policy.decide(snapshot(140.0, [(99, 0.1, 3)])).speculate_task.size
    # the same task to a policy that has seen no race: copied
    assert create("hedge-auto").decide(snapshot(140.0, [(99, 0.1, 3)])).speculate_task.size == 1


def test_a_copy_as_slow_as_its_original_teaches_at_once() -> None:
    """The copy's own pace says it will take as long as its original (about 210 s, where
    40 completed tasks took about 10 s): lam is near 0 (its slowness is the task's own
    work). The belief moves at the copy's first estimate, and further than a lost race alone
    moves it (the copy's pace is evidence, not only who won)."""
    done = list(np.random.default_rng(4).uniform(9.0, 11.0, 40))
    policy = create("hedge-auto")
    assert policy.decide(snapshot(20.0, [(7, 0.1, 3)], done=done)).speculate_task.tolist() == [7]
    policy.decide(snapshot(21.0, [(7, 0.105, 3), (7, 0.0147, 4, True)], done=done))
    assert policy.lam_estimate < 0.35  # from 0.5: 1 of 41 residuals explains a slow copy
    outcome_only = create("hedge-auto")
    outcome_only.decide(snapshot(20.0, [(7, 0.1, 3)], done=done))
    outcome_only.decide(snapshot(22.0, [], done=done))  # completed, the copy never ahead
    assert policy.lam_estimate < outcome_only.lam_estimate - 0.05


def test_a_copy_clearly_slower_than_its_original_is_killed_at_once() -> None:
    """By its first estimate the copy takes about 280 s where it would need about 190 s to
    tie: behind by more than an early estimate's error, so it is killed at once."""
    done = list(np.random.default_rng(4).uniform(9.0, 11.0, 40))
    policy = create("hedge-auto")
    assert policy.decide(snapshot(20.0, [(7, 0.1, 3)], done=done)).speculate_task.tolist() == [7]
    seen = policy.decide(snapshot(21.0, [(7, 0.105, 3), (7, 0.0135, 4, True)], done=done))
    assert seen.kill_attempt.tolist() == [101]  # the copy's attempt id
    # the answer says why, for hedge serve's decision line (recopy: a new copy replaces it)
    assert seen.why.startswith("copy tasks=[7] ")
    assert seen.why.endswith("; kill attempt=101 task=7 reason=replaced (its race judged "
                             "again: a new copy pays, this attempt would end later)")


def test_a_copy_a_little_behind_is_kept_until_its_estimate_is_sure() -> None:
    """By its first estimate (two reports) the copy ends about 11 % later than it would need
    to tie: within an early estimate's error (``ESTIMATE_LOG_SD``), so it runs on; at the
    same pace, 130 s later, its sharper estimate says the same and it is killed (and
    ``kill_z=0`` kills it at once). The kill rule alone: ``recopy`` is off (with it, a new
    copy would replace this slow one: test_policy_auto_recopy.py)."""
    done = list(np.random.default_rng(4).uniform(9.0, 11.0, 40))

    def race(now: float, orig: float, copy: float) -> Snapshot:
        return snapshot(now, [(7, orig, 3), (7, copy, 4, True)], done=done)

    policy = create("hedge-auto", recopy=False)
    assert policy.decide(snapshot(20.0, [(7, 0.1, 3)], done=done)).speculate_task.tolist() == [7]
    assert not policy.decide(race(21.0, 0.105, 0.0147)).kill_attempt.size
    later = race(150.0, 0.01 + 0.00475 * 149, 0.01 + 0.0047 * 130)
    later.attempts.start[1] = 19.0  # the same copy: started at 19 s, first report at 20 s
    later.attempts.first_progress_time[1] = 20.0
    killed = policy.decide(later)
    assert killed.kill_attempt.tolist() == [101]
    assert killed.why == ("kill attempts=[101] task=7 reason=behind (the copy's estimated end "
                          "is later than its original's by more than 1 x the estimate's error)")
    eager = create("hedge-auto", kill_z=0, recopy=False)
    eager.decide(snapshot(20.0, [(7, 0.1, 3)], done=done))
    assert eager.decide(race(21.0, 0.105, 0.0147)).kill_attempt.tolist() == [101]


def test_a_losing_copy_costs_the_slot_time_until_the_kill_rule_fires() -> None:
    """The cost model charges a losing copy what ``_behind`` lets it run: far behind, until
    its first estimate (``check``); a near tie, until its estimate is sure (here
    ``1 - log(1.1) / 0.2`` of its run, about 52%); within the error's floor, the whole race;
    with ``kill_z=0``, its first estimate whatever the gap."""
    left, check = np.array([100.0]), 10.0

    def slot(copy: float, kill_z: float = 1.0) -> float:
        return float(_loser_slot(np.array([copy]), left, check, kill_z)[0])

    assert slot(200.0) == check
    assert math.isclose(slot(110.0), (1 - math.log(1.1) / ESTIMATE_LOG_SD) * 110.0)
    assert slot(100.5) == 100.0
    assert slot(110.0, kill_z=0) == slot(200.0, kill_z=0) == check


def test_a_copied_task_gets_no_second_copy() -> None:
    policy = create("hedge-auto")
    assert policy.decide(snapshot(20.0, [(7, 0.1, 3)])).speculate_task.tolist() == [7]
    again = policy.decide(snapshot(22.0, [(7, 0.11, 3), (7, 0.0, 4, True)]))
    assert len(again.speculate_task) == 0


def test_residuals_beyond_the_limit_are_summarised_by_quantiles() -> None:
    """Up to MAX_RESIDUALS residuals are used as they are; more are cut to that many
    mid-point quantiles, whose mean and spread stay those of the full set."""
    from hedge.policy.auto import MAX_RESIDUALS, _summarised
    few = np.log(np.random.default_rng(1).lognormal(0, 0.5, MAX_RESIDUALS))
    assert _summarised(few) is few
    many = np.log(np.random.default_rng(2).lognormal(0, 0.5, 10_000))
    short = _summarised(many)
    assert len(short) == MAX_RESIDUALS and np.all(np.diff(short) >= 0)
    assert abs(short.mean() - many.mean()) < 0.01
    assert abs(np.exp(short).mean() - np.exp(many).mean()) < 0.01 * np.exp(many).mean()


def progress_for(total: float, now: float) -> float:
    """The progress at ``now`` of an attempt that started at 0, reported 0.01 at 1 s and
    runs at a steady pace to finish at ``total``."""
    return 0.01 + 0.99 * (now - 1.0) / (total - 1.0)


def test_what_input_explains_is_fitted_from_the_running_peers() -> None:
    """Task 7 has 4x the median input and runs 4x the median time. Where the peers' run
    times grow like input ** 0.5 (fixed costs), its input explains only 2x: it is slow for
    another reason and copied. Where they grow in proportion to input, it is skew."""
    inputs = [0.25e9, 0.5e9, 1e9, 1e9, 2e9, 4e9]
    for beta, copied in ((0.5, [7]), (1.0, [])):
        rows = [(7, progress_for(400.0, 20.0), 3, False, 4e9)]
        rows += [(8 + i, progress_for(100.0 * (x / 1e9) ** beta, 20.0), 4, False, x)
                 for i, x in enumerate(inputs)]
        decision = create("hedge-auto").decide(snapshot(20.0, rows, done=[]))
        assert decision.speculate_task.tolist() == copied, beta


def test_a_task_left_to_its_skew_is_said_at_the_end_of_its_job_and_run() -> None:
    """The skew case above: the job's note names the task and, for a job with reduces, the
    ImKP mapping that would even their input next time; a task copied after all is not
    counted; the run's note counts tasks and jobs."""
    from hedge.policy.auto import HedgeAuto

    inputs = [0.25e9, 0.5e9, 1e9, 1e9, 2e9, 4e9]
    rows = [(7, progress_for(400.0, 20.0), 3, False, 4e9)]
    rows += [(8 + i, progress_for(100.0 * x / 1e9, 20.0), 4, False, x)
             for i, x in enumerate(inputs)]
    skewed, plain = create("hedge-auto"), create("hedge-auto")
    assert skewed.decide(snapshot(20.0, rows, done=[])).speculate_task.tolist() == []
    # task 7 and the two peers with 2x and 4x the median input, all explained by it
    assert skewed.job_note() == ("3 tasks put down to skew and not copied (3 maps, 0 reduces: "
                                 "their input >= 1.5 x their type's median)")
    assert plain.job_note() is None
    note = HedgeAuto.run_notes([skewed, plain])
    assert note == ["hedge-auto: 3 tasks in 1 of 2 jobs were put down to skew and not copied "
                    "(input >= skew_ratio x their type's median, and no slower than that input "
                    "explains: a copy would read as much again)"]
    skewed._skewed[9], skewed._n_reduces = 1, 30  # a reduce too: the ImKP suggestion
    assert "hedge imkp build INPUT -r 30 -o MAPPING" in skewed.job_note()
    assert "1 of them reduces: an ImKP mapping" in HedgeAuto.run_notes([skewed])[0]
    # the same task no longer explained by its input (beta 0.5): copied, and not counted
    rows[1:] = [(8 + i, progress_for(100.0 * (x / 1e9) ** 0.5, 20.0), 4, False, x)
                for i, x in enumerate(inputs)]
    assert skewed.decide(snapshot(21.0, rows, done=[])).speculate_task.tolist() == [7]
    assert 7 not in skewed._skewed


def test_a_task_whose_copy_is_ahead_no_longer_bounds_the_finish() -> None:
    """Tasks 7 and 8 are equally slow (about 190 s left); 7's copy will be done in about a
    second. The type now ends with task 8, so copying it pays: 7's original does not count."""
    rows = [(7, 0.1, 3), (7, 0.5, 4, True), (8, 0.1, 5)]
    assert create("hedge-auto").decide(snapshot(20.0, rows)).speculate_task.tolist() == [8]


def test_no_more_copies_are_asked_than_hadoops_cap_allows() -> None:
    """Thirty equally slow tasks of an 80-task job whose 50 others took about 10 s: Hadoop's
    default cap allows ten copies at once; a copy asked beyond it would be refused while its
    task counted as racing."""
    rows = [(t, 0.1, t) for t in range(30)]
    snap = snapshot(20.0, rows, done=DONE * 10)
    snap.job.n_maps = 80
    asked = create("hedge-auto", probe_races=100).decide(snap).speculate_task
    assert len(asked) == 10


def gate_view(now: float, free: int, received: float = 19.0) -> SimpleNamespace:
    """What the simulator's gate reads of a job of one running attempt (slot 0: started at
    0, its last report received at ``received``, its next one sent at 123 s) and five
    completed maps."""
    return SimpleNamespace(now=now, free_slots=free, completed=np.array([[5, 0]]), hw=3.0,
                           start=np.array([0.0]), k=np.array([40], np.int64),
                           r0=np.array([received]), r1=np.array([received - 3.0]))


def test_a_judged_no_copy_is_skipped_only_while_it_provably_stands() -> None:
    """A busy cluster: hedge-auto judges task 7 and copies nothing. While its table stays
    and the cluster stays busy the simulator's gate may skip the job (the answer stands);
    once slots free up the same table is worth a copy, so the gate must not skip it."""
    policy = create("hedge-auto")
    assert len(policy.decide(snapshot(20.0, [(7, 0.5, 3)], free=0)).speculate_task) == 0
    slot = np.array([0])
    assert policy._no_copy_stands(gate_view(21.0, free=0), 0, slot)
    assert not policy._no_copy_stands(gate_view(21.0, free=100), 0, slot)
    assert create("hedge-auto").decide(snapshot(20.0, [(7, 0.5, 3)], free=100)).speculate_task.tolist() == [7]
    # a report received since the judged scan: the table it judged is gone
    assert not policy._no_copy_stands(gate_view(21.0, free=0, received=20.5), 0, slot)
    assert not policy._no_copy_stands(gate_view(21.0, free=0), 0, np.array([0, 1]))


def test_the_no_copy_bound_lets_a_losing_copys_cost_shrink_with_time() -> None:
    """Each copy's slot time, min(copy, left) where the AM restarts what it kills, shrinks
    by at most the time since the judged scan: 10 s of benefit against 30 slot-seconds at
    weight 0.5 (half the slots busy) stands while 0.5 (30 - dt) > 10: for 10 s."""
    policy = create("hedge-auto", cost_weight=1.0)
    policy._no_copy = NoCopyBound(since=20.0, horizon=100.0, running=1, completed=5,
                                  evidence=None, total_slots=100, benefit=np.array([10.0]),
                                  slot=np.array([30.0]), k=np.array([1.0]))
    policy._memory = None
    slot = np.array([0])
    # free 50 of 100: busy 0.5, weight 0.5; least cost 0.5 * (30 - dt)
    assert policy._no_copy_stands(gate_view(29.0, free=50, received=10.0), 0, slot)
    assert not policy._no_copy_stands(gate_view(31.0, free=50, received=10.0), 0, slot)
    assert not policy._no_copy_stands(gate_view(100.0, free=50, received=10.0), 0, slot)
