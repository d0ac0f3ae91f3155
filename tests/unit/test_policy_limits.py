"""hedge.policy.limits: each rule on hand-built snapshots, the settings' parsing, and the test
vectors JUnit also checks (org.hedge.shim.ActionLimitsTest)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE, Actions, AttemptState
from hedge.policy.limits import (
    PROPERTIES,
    SpeculationSettings,
    limit,
    limit_copies,
    limit_kills,
    room,
)

from ..action_limit_vectors import VECTORS, text
from .test_policy_baseline import snapshot

R, W = AttemptState.RUNNING, AttemptState.WAITING
TIGHT = SpeculationSettings(minimum_allowed_tasks=1, cap_running_tasks=0.0, cap_total_tasks=0.0)


def running(*tasks: int, spec: tuple[int, ...] = (), n_maps: int = 4, n_reduces: int = 4):
    """A snapshot with one running attempt per task (attempt keys 100, 101, ...);
    ``spec``: rows that are speculative copies."""
    rows = [(t, R, 0, 0.5, 5, i, i in spec, MAP if t < n_maps else REDUCE)
            for i, t in enumerate(tasks)]
    return snapshot(10, rows, n_maps, n_reduces=n_reduces)


def test_per_type_switches_drop_copies_and_resumes_of_that_type():
    s = running(1, 5)
    ask = Actions(speculate_task=[1, 5], resume_task=[1, 5], resume_copies=[2, 2])
    no_maps = limit(ask, s, SpeculationSettings(map_speculative=False))
    assert no_maps.speculate_task.tolist() == [5] and no_maps.resume_task.tolist() == [5]
    no_reduces = limit(ask, s, SpeculationSettings(reduce_speculative=False))
    assert no_reduces.speculate_task.tolist() == [1] and no_reduces.resume_task.tolist() == [1]


def test_completed_tasks_get_no_copy_when_the_caller_knows():
    s = running(1, 2)
    ask = Actions(speculate_task=[1, 2])
    done = np.zeros(8, dtype=bool)
    done[1] = True
    assert limit(ask, s, SpeculationSettings(), done).speculate_task.tolist() == [2]
    assert limit(ask, s, SpeculationSettings()).speculate_task.tolist() == [1, 2]  # unknown


def test_the_cap_counts_live_speculative_attempts_and_grants_copy_by_copy():
    # running tasks 1, 2, 3; row 3 (a copy of task 3) already speculates: room 3 - 1 = 2
    s = running(1, 2, 3, 3, spec=(3,))
    settings = SpeculationSettings(minimum_allowed_tasks=3, cap_running_tasks=0.0,
                                   cap_total_tasks=0.0)
    got = limit(Actions(speculate_task=[2, 1], speculate_copies=[1, 4],
                        prefer_node=[7, 8]), s, settings)
    assert got.speculate_task.tolist() == [2, 1]
    assert got.speculate_copies.tolist() == [1, 1]
    assert got.prefer_node.tolist() == [7, 8]
    # a waiting copy (simulator) counts as speculating as well
    waiting = snapshot(10, [(1, R, 0, 0.5, 5), (1, W, 0, 0, 0, -1, True)], 4)
    assert len(limit(Actions(speculate_task=[2]), waiting, TIGHT).speculate_task) == 0


def test_hadoops_formula_rounds_down_and_takes_the_largest_term():
    s = SpeculationSettings()
    assert s.allowed(100, 50) == 10  # minimum
    assert s.allowed(2000, 50) == 20  # 1 % of the tasks
    assert s.allowed(100, 159) == 15  # 10 % of the running tasks, rounded down
    assert room(s, 100, 50, 12) == -2
    assert room(SpeculationSettings(enforce_caps=False), 100, 50, 12) == 2**31 - 1


def test_lifting_the_caps_keeps_the_other_rules():
    s = running(1, 5)
    free = SpeculationSettings(enforce_caps=False, minimum_allowed_tasks=0,
                               reduce_speculative=False)
    got = limit(Actions(speculate_task=[1, 5], speculate_copies=[9, 1]), s, free)
    assert got.speculate_task.tolist() == [1] and got.speculate_copies.tolist() == [9]


def test_a_task_keeps_its_last_live_attempt():
    # task 1: two running attempts (100, 101); task 2: one (102)
    s = running(1, 1, 2)
    got = limit(Actions(kill_attempt=[100, 101, 102]), s, SpeculationSettings())
    assert got.kill_attempt.tolist() == [100]
    # repeated and unknown keys are not carried out
    got = limit(Actions(kill_attempt=[101, 101, 999]), s, SpeculationSettings())
    assert got.kill_attempt.tolist() == [101]
    # a waiting copy is a live attempt: the running one may go
    sim = snapshot(10, [(1, R, 0, 0.5, 5), (1, W, 0, 0, 0, -1, True)], 4)
    assert limit(Actions(kill_attempt=[100]), sim, TIGHT).kill_attempt.tolist() == [100]


def test_nothing_cut_returns_the_same_object():
    s = running(1, 1, 2)
    ask = Actions(speculate_task=[2], kill_attempt=[100])
    assert limit(ask, s, SpeculationSettings()) is ask
    empty = Actions()
    assert limit(empty, s, TIGHT) is empty


def test_settings_read_hadoops_names_and_refuse_bad_values_by_name():
    s = SpeculationSettings.from_properties({
        "mapreduce.map.speculative": "false",
        "mapreduce.job.speculative.minimum-allowed-tasks": "3",
        "mapreduce.job.speculative.speculative-cap-running-tasks": "0.25"})
    assert (s.map_speculative, s.minimum_allowed_tasks, s.cap_running_tasks) == (False, 3, 0.25)
    assert s.changed() == {"mapreduce.map.speculative": "false",
                           "mapreduce.job.speculative.speculative-cap-running-tasks": "0.25",
                           "mapreduce.job.speculative.minimum-allowed-tasks": "3"}
    assert set(s.properties()) == set(PROPERTIES)
    assert SpeculationSettings.from_properties(s.properties()) == s
    bad = [("mapreduce.map.speculative", "maybe", "true or false"),
           ("mapreduce.job.speculative.minimum-allowed-tasks", "2.5", "an integer >= 0"),
           ("mapreduce.job.speculative.speculative-cap-total-tasks", "nan", "a number >= 0"),
           ("mapreduce.job.speculative.speculative-cap-total-tasks", "-0.1", "a number >= 0")]
    for key, value, expected in bad:
        with pytest.raises(HedgeError, match=f"-D {key} = '{value}': expected {expected}"):
            SpeculationSettings.from_properties({key: value}, "-D ")
    with pytest.raises(HedgeError, match="not a speculation limit"):
        SpeculationSettings.from_properties({"mapreduce.job.reduces": "3"})


def _parse(field: str) -> np.ndarray:
    return np.array([int(v) for v in field.split(",")] if field else [], dtype=np.int64)


def test_the_vector_file_is_what_the_rules_give_now():
    # Regenerate with `python -m tests.action_limit_vectors` after changing a rule; JUnit
    # reads the same file, so Java must then follow.
    assert VECTORS.read_text() == text()


def test_the_shared_vectors_read_back_through_the_rules():
    checked = 0
    for line in VECTORS.read_text().splitlines():
        if line.startswith(("#", "map_on")):
            continue
        f = line.split("\t")
        settings = SpeculationSettings(f[0] == "1", f[1] == "1", float(f[3]), float(f[4]),
                                       int(f[5]), f[2] == "1")
        space = room(settings, int(f[7]), int(f[8]), int(f[9]))
        assert space == int(f[13]), line
        granted = limit_copies(settings, int(f[6]), space, _parse(f[10]), _parse(f[11]),
                               _parse(f[12]).astype(bool))
        assert granted.tolist() == _parse(f[14]).tolist(), line
        kill_task, kill_live = _parse(f[15]), _parse(f[16])
        live = dict(zip(kill_task.tolist(), kill_live.tolist(), strict=True))
        assert limit_kills(kill_task, live).astype(int).tolist() == _parse(f[17]).tolist()
        checked += 1
    assert checked >= 300


def test_the_kills_as_restarts_vector_file_is_what_rule_5_gives_now():
    # Regenerate with `python -m tests.kills_as_restarts_vectors`; JUnit
    # (org.hedge.shim.KillsAsRestartsTest) reads the same file.
    from ..kills_as_restarts_vectors import VECTORS as KILL_VECTORS
    from ..kills_as_restarts_vectors import text as kill_text

    assert KILL_VECTORS.read_text() == kill_text()


def test_a_stock_am_carries_out_a_kill_only_with_a_copy_of_its_task():
    from hedge.policy.limits import pair_kills

    send, left = pair_kills(np.array([4, 7, -1, 4]), np.array([4, 7]), np.array([1, 3]))
    assert send.tolist() == [True, True, False, False] and left.tolist() == [0, 2]
