"""hedge-auto's ``recopy``: a race both of whose attempts run slow is judged again, and a new
copy replaces the attempt that would end later."""

from __future__ import annotations

import numpy as np

from hedge.policy import create

from .test_policy_auto import snapshot

DONE = list(np.random.default_rng(4).uniform(9.0, 11.0, 40))  # 40 completed maps of ~10 s


def race(now: float, policy_kwargs: dict) -> tuple:
    """Task 7 is copied at 20 s (about 190 s left where its peers took 10 s); by 21 s the
    copy's own estimate says it ends in about 150 s: ahead of its original (about 190 s),
    so it is not killed, but far slower than a fresh copy is expected to be (a prior held
    near lam = 0.5: about 45 s)."""
    policy = create("hedge-auto", prior_width=0.01, **policy_kwargs)
    first = policy.decide(snapshot(20.0, [(7, 0.1, 3)], done=DONE))
    assert first.speculate_task.tolist() == [7]
    second = policy.decide(snapshot(now, [(7, 0.105, 3), (7, 0.0167, 4, True)], done=DONE))
    return policy, second


def test_a_slow_race_is_copied_again_and_its_later_attempt_killed() -> None:
    _, again = race(21.0, {"recopy": True})
    assert again.speculate_task.tolist() == [7]
    assert again.kill_attempt.tolist() == [100]  # the original: it would end later
    assert again.why.startswith("copy tasks=[7] ") and "; kill attempt=100 task=7 " \
        "reason=replaced" in again.why
    assert sorted(again.avoid_nodes.tolist()) == [3, 4]  # neither of the race's nodes


def test_without_recopy_a_copied_task_keeps_its_race() -> None:
    _, again = race(21.0, {"recopy": False})
    assert not again.speculate_task.size and not again.kill_attempt.size


def test_a_task_is_copied_again_at_most_once() -> None:
    """The first copy runs a little behind its original (within its estimate's error: not
    killed), so it is the attempt replaced; when the second copy runs slow as well, the
    task is not copied a third time."""
    policy = create("hedge-auto", prior_width=0.01, recopy=True)
    assert policy.decide(snapshot(20.0, [(7, 0.1, 3)], done=DONE)).speculate_task.tolist() == [7]
    again = policy.decide(snapshot(21.0, [(7, 0.105, 3), (7, 0.0147, 4, True)], done=DONE))
    assert again.speculate_task.tolist() == [7] and again.kill_attempt.tolist() == [101]
    # 10 s on: the original (about 180 s left) and the second copy (started at 21 s, about
    # 190 s left: a near tie, not killed), both slow
    later = snapshot(31.0, [(7, 0.15, 3), (7, 0.0548, 5, True)], done=DONE)
    later.attempts.start[1], later.attempts.first_progress_time[1] = 21.0, 22.0
    assert not policy.decide(later).speculate_task.size
    # the same scan to a policy that never copied task 7 a second time: copied again
    fresh = create("hedge-auto", prior_width=0.01, recopy=True)
    fresh.decide(snapshot(20.0, [(7, 0.1, 3)], done=DONE))
    assert fresh.decide(later).speculate_task.tolist() == [7]


def behind(original_progress: float, recopy: bool) -> tuple:
    """Task 7 copied at 20 s; at 40 s its copy (started 21 s, 2 % done) runs far behind its
    original (``original_progress`` done): beyond its estimate's error, so it can only lose."""
    policy = create("hedge-auto", prior_width=0.01, recopy=recopy)
    assert policy.decide(snapshot(20.0, [(7, 0.1, 3)], done=DONE)).speculate_task.tolist() == [7]
    later = snapshot(40.0, [(7, original_progress, 3), (7, 0.02, 4, True)], done=DONE)
    later.attempts.start[1], later.attempts.first_progress_time[1] = 21.0, 22.0
    return policy, policy.decide(later)


def test_a_copy_behind_its_original_is_replaced_where_a_new_copy_pays() -> None:
    # original 20 % done at 40 s: about 160 s left, where a new copy takes about 10-45 s. A
    # kill alone would be a restart on a stock AM anyway (org.hedge.shim.KillsAsRestarts).
    policy, again = behind(0.2, recopy=True)
    assert again.speculate_task.tolist() == [7] and again.kill_attempt.tolist() == [101]
    assert 7 not in policy._lost


def test_a_copy_behind_its_original_is_killed_where_no_new_copy_pays() -> None:
    policy, again = behind(0.8, recopy=True)  # the original ends in about 10 s
    assert not again.speculate_task.size and again.kill_attempt.tolist() == [101]
    assert 7 in policy._lost
    _, without = behind(0.2, recopy=False)  # as before recopy: killed, never copied again
    assert not without.speculate_task.size and without.kill_attempt.tolist() == [101]
