"""Control-plane sessions: parameters, validation, isolation, bounds (pure Python)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import AttemptTable, ClusterFacts
from hedge.policy import Policy, create
from hedge.server import session as session_module
from hedge.server import wire
from hedge.server.session import Limits, SessionRegistry, parse_params, policy_params


def cluster(nodes: list[str], total: int, free: int, container=None) -> ClusterFacts:  # noqa: ANN001
    return ClusterFacts(total_slots=max(total, 0), free_slots=max(free, 0))


def straggler_request(seq: int = 1, progress_slow: float = 0.1, node_base: int = 0,
                      nodes: tuple[str, ...] = ("h0", "h1")) -> wire.ScanRequest:
    """Four maps launched at t=0 (job start 0), scan at t=60: map 3 is far behind."""
    n = 4
    progress = np.array([0.9, 0.85, 0.95, progress_slow])
    a = AttemptTable(
        task=np.arange(n), attempt=np.arange(n) * 2, task_type=np.zeros(n), state=np.ones(n),
        node=np.array([0, 1, 0, 1]), start=np.zeros(n), first_progress_time=np.full(n, 5.0),
        first_progress=np.full(n, 0.01), progress=progress, report_sent=np.full(n, 59.0),
        report_received=np.full(n, 59.0), bytes_processed=np.zeros(n),
        input_bytes=np.full(n, np.nan), speculative=np.zeros(n, bool),
    )
    data = wire.encode_request(a, seq=seq, now=60.0, job_start=0.0, n_maps=n, n_reduces=0,
                               node_base=node_base, new_nodes=list(nodes))
    return wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])


def test_params_from_configuration_names_take_the_default_types() -> None:
    raw = parse_params("progress.standard = 0.7\nestimator=jvm\n\n")
    assert policy_params("adaptive", raw) == {"progress_standard": 0.7, "estimator": "jvm"}
    with pytest.raises(HedgeError, match=r"hedge.adaptive.nonsense: policy 'adaptive' has no"):
        policy_params("adaptive", {"nonsense": "1"})
    with pytest.raises(HedgeError, match=r"hedge.static.factor' = 'fast': expected a float"):
        policy_params("static", {"factor": "fast"})
    with pytest.raises(HedgeError, match="expected key=value"):
        parse_params("factor 1.5")


def test_straggler_is_copied_and_decision_equals_the_policy_on_the_same_snapshot() -> None:
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_1", "static", {"factor": 1.5})
    request = straggler_request()
    actions = s.decide(request)
    assert actions.speculate_task.tolist() == [3]
    twin = create("static", factor=1.5).decide(s.snapshot(straggler_request()))
    assert twin.speculate_task.tolist() == actions.speculate_task.tolist()
    assert s.nodes == ["h0", "h1"] and s.scans == 1 and s.copies == 1


def test_bad_fields_are_rejected_per_scan_and_the_session_keeps_working() -> None:
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_2", "static", {})
    with pytest.raises(HedgeError, match=r"field 'progress' = 1.5"):
        s.decide(straggler_request(progress_slow=1.5))
    bad_node = straggler_request(nodes=("only-one",))
    with pytest.raises(HedgeError, match=r"field 'node' = 1 expected -1 or a node index below 1"):
        s.decide(bad_node)
    with pytest.raises(HedgeError, match="node list starts at 5"):
        s.decide(straggler_request(node_base=5, nodes=()))
    # the same session still decides once the input is sane (node names resent from 0)
    assert s.decide(straggler_request()).speculate_task.tolist() == [3]


def test_task_type_must_match_task_index_and_attempts_must_be_unique() -> None:
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_3", "static", {})
    r = straggler_request()
    r.attempts.task_type[0] = 1
    with pytest.raises(HedgeError, match="field 'task_type'"):
        s.decide(r)
    r = straggler_request()
    r.attempts.attempt[1] = r.attempts.attempt[0]
    with pytest.raises(HedgeError, match="not unique"):
        s.decide(r)


def test_sessions_are_bounded_authenticated_and_reaped() -> None:
    registry = SessionRegistry(Limits(max_sessions=2, idle_timeout=10.0), cluster)
    a = registry.open("job_a", "static", {})
    registry.open("job_b", "static", {})
    with pytest.raises(HedgeError, match="too many sessions"):
        registry.open("job_c", "static", {})
    assert registry.authenticate(a.session_id, a.secret) is a
    assert registry.authenticate(a.session_id, bytes(16)) is None
    assert registry.authenticate(999, a.secret) is None
    reaped = registry.reap(now=a.last_seen + 11.0)
    assert len(reaped) == 2 and len(registry) == 0


def test_rows_over_the_limit_are_refused() -> None:
    registry = SessionRegistry(Limits(max_rows=3), cluster)
    s = registry.open("job_4", "static", {})
    with pytest.raises(HedgeError, match="4 attempt rows, the limit is 3"):
        s.decide(straggler_request())


def test_policy_without_live_am_support_is_refused_with_the_reason(monkeypatch) -> None:
    class ResumeOnly(Policy):  # the hooks a server reads are declared on Policy
        live_am_supported = False

        def decide(self, snapshot):
            raise AssertionError("never asked")

    monkeypatch.setattr(session_module, "create", lambda name, **params: ResumeOnly())
    registry = SessionRegistry(Limits(), cluster)
    with pytest.raises(HedgeError, match="partial output"):
        registry.open("job_5", "chronos-resume", {})


def test_window_with_the_simulators_slot_view_is_refused_on_a_live_am() -> None:
    registry = SessionRegistry(Limits(), cluster)
    with pytest.raises(HedgeError, match=r"policy 'window' cannot drive a live Application"
                                         r"Master: slots = 'cluster' plans on every slot"):
        registry.open("job_5", "window", {"slots": "cluster"})
    registry.open("job_6", "window", {"slots": "own"})  # the default: what an AM knows


def test_answers_outside_the_job_are_refused() -> None:
    class Wild:
        def decide(self, snapshot):
            from hedge.model import Actions
            return Actions(speculate_task=[99])

    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_6", "static", {})
    s.policy = Wild()
    with pytest.raises(HedgeError, match="a task index out of range"):
        s.decide(straggler_request())


def test_delta_scans_update_the_session_table() -> None:
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_7", "static", {})
    with pytest.raises(HedgeError, match="delta scan before any full snapshot"):
        s.decide(delta_request(progress=0.2, removed=[]))
    assert s.decide(straggler_request()).speculate_task.tolist() == [3]
    # attempt 6 (task 3) reports again, attempt 0 (task 0) ended: merged, not replaced
    s.decide(delta_request(progress=0.3, removed=[0]))
    snap = s.snapshot(delta_request(progress=0.3, removed=[0]))
    assert snap.attempts.attempt.tolist() == [2, 4, 6]
    assert snap.attempts.progress.tolist() == pytest.approx([0.85, 0.95, 0.3])
    assert snap.attempts.report_received.tolist() == [59.0, 59.0, 61.0]


def test_ended_attempts_count_copies_won_and_lost_and_wasted_time() -> None:
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_8", "static", {})
    s.decide(straggler_request())
    # key 6 (task 3's original) is killed at 61 s after its copy (key 9, never in a row:
    # started and won between two scans) succeeded; key 11, another copy, failed at 40 s
    s.decide(delta_request(progress=0.3, removed=[6, 9, 11], removed_state=[3, 2, 4],
                           removed_speculative=[False, True, True],
                           removed_start=[0.0, 50.0, 30.0], removed_end=[61.0, 61.0, 40.0]))
    o = s.outcomes
    assert (o.copies_won, o.copies_lost, o.originals_lost) == (1, 1, 1)
    assert o.wasted_s == pytest.approx(61.0 + 10.0)
    assert s.snapshot(straggler_request()).attempts.attempt.tolist() == [0, 2, 4]


def test_succeeded_attempts_become_the_jobs_finished_facts() -> None:
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_9", "window", {})
    s.decide(straggler_request())
    # key 2 (task 1 on node 1) succeeded at 58 s; key 4 (task 2) was killed; key 9 (task 0
    # on node 0, 128 MB) started and won between two scans: it was never in a row, and its
    # task, node and input bytes come with its end (wire version 3)
    s.decide(delta_request(progress=0.3, removed=[2, 4, 9], removed_state=[2, 3, 2],
                           removed_task=[1, 2, 0], removed_node=[1, 0, 0],
                           removed_input_bytes=[np.nan, np.nan, 128e6],
                           removed_start=[0.0, 0.0, 50.0], removed_end=[58.0, 58.0, 61.0]))
    f = s.snapshot(delta_request(progress=0.3, removed=[])).job.finished
    assert (f.task.tolist(), f.node.tolist(), f.start.tolist(), f.end.tolist()) == (
        [1, 0], [1, 0], [0.0, 50.0], [58.0, 61.0])
    np.testing.assert_array_equal(f.input_bytes, [np.nan, 128e6])
    with pytest.raises(HedgeError, match=r"ended attempt 0: end 3\.0 is before its start"):
        s.decide(delta_request(progress=0.3, removed=[0], removed_state=[2],
                               removed_start=[5.0], removed_end=[3.0]))


def test_ended_attempts_are_counted_once_when_a_full_snapshot_repeats_them() -> None:
    """A full snapshot names every attempt the job has ended: after a rejected scan (the
    session drops its table) or a server restart, the session learns them again, and those
    it had taken in already are not counted twice."""
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_10", "window", {})
    s.decide(straggler_request())
    ended = {"removed_state": [2, 3], "removed_speculative": [True, False],
             "removed_task": [3, 3], "removed_node": [0, 1], "removed_start": [40.0, 0.0],
             "removed_end": [61.0, 61.0]}
    s.decide(delta_request(progress=0.3, removed=[8, 6], **ended))
    before = (s.outcomes.copies_won, s.outcomes.originals_lost, s.outcomes.wasted_s)
    assert before == (1, 1, pytest.approx(61.0))
    # the same two again in a full snapshot, with a third (key 10: task 2's copy, lost)
    again = {name: [*values, value] for (name, values), value in zip(
        ended.items(), (3, True, 2, 1, 55.0, 61.0), strict=True)}
    s.decide(full_request(removed=[8, 6, 10], **again))
    o = s.outcomes
    assert (o.copies_won, o.copies_lost, o.originals_lost) == (1, 1, 1)
    assert o.wasted_s == pytest.approx(61.0 + 6.0)
    f = s.snapshot(full_request(removed=[])).job.finished
    assert (f.task.tolist(), f.node.tolist()) == ([3], [0])
    # a fresh session (the server restarted) learns the whole history from one full snapshot
    fresh = registry.open("job_10", "window", {})
    fresh.decide(full_request(removed=[8, 6, 10], **again))
    assert fresh.outcomes == o
    assert fresh.snapshot(full_request(removed=[])).job.finished.task.tolist() == [3]


@pytest.mark.parametrize(("ended", "message"), [
    ({"removed_task": [4]}, r"ended attempt 8: task 4, expected 0\.\.3"),
    ({"removed_node": [2]}, r"ended attempt 8: node 2, expected -1\.\.1"),
    ({"removed_node": [-2]}, r"ended attempt 8: node -2, expected -1\.\.1"),
])
def test_ended_attempts_outside_the_job_are_refused_and_leave_nothing(
        ended: dict[str, list[int]], message: str) -> None:
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_11", "window", {})
    s.decide(straggler_request())
    with pytest.raises(HedgeError, match=message):
        s.decide(delta_request(progress=0.3, removed=[8], removed_state=[2],
                               removed_start=[0.0], removed_end=[60.0], **ended))
    assert s.table is None and s.outcomes.copies_ended == 0 == len(s.ended.facts())
    with pytest.raises(HedgeError, match="an ended attempt is named twice"):
        s.decide(full_request(removed=[8, 8]))


def full_request(removed: list[int], node_of_task_1: int = 1,
                 **ended) -> wire.ScanRequest:  # noqa: ANN003
    """straggler_request's four maps at t = 61.5 s, naming the attempts ended so far."""
    a = straggler_request().attempts
    a.node[1] = node_of_task_1
    data = wire.encode_request(a, seq=3, now=61.5, job_start=0.0, n_maps=4, n_reduces=0,
                               new_nodes=["h0", "h1"], removed=removed, **ended)
    return wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])


def delta_request(progress: float, removed: list[int], **ended) -> wire.ScanRequest:  # noqa: ANN003
    a = AttemptTable(
        task=[3], attempt=[6], task_type=[0], state=[1], node=[1], start=[0.0],
        first_progress_time=[5.0], first_progress=[0.01], progress=[progress],
        report_sent=[61.0], report_received=[61.0], bytes_processed=[0.0],
        input_bytes=[np.nan], speculative=[False],
    )
    data = wire.encode_request(a, seq=2, now=61.5, job_start=0.0, n_maps=4, n_reduces=0,
                               node_base=2, delta=True, removed=removed, **ended)
    return wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])


def test_distinct_keys_check_matches_unique() -> None:
    from hedge.server.session import _distinct

    rng = np.random.default_rng(3)
    for keys in ([], [7], [0, 1, 2], [2, 0, 2], [5, 4, 3, 0, 5], list(rng.permutation(50))):
        keys = np.asarray(keys, dtype=np.int32)
        assert _distinct(keys) == (len(np.unique(keys)) == len(keys)), keys


def test_combined_row_check_rejects_exactly_what_the_checks_one_by_one_reject() -> None:
    """_rows_pass (the usual scan's one-mask check) passes a scan iff neither _check_rows nor
    validate_snapshot would raise: each trial breaks one field of one row (or none)."""
    from dataclasses import replace

    from hedge.model.validate import validate_snapshot
    from hedge.server.session import _rows_pass

    registry = SessionRegistry(Limits(max_rows=50), cluster)
    s = registry.open("job_rows", "static", {})
    s.decide(straggler_request())
    rng = np.random.default_rng(11)
    bad_values = {
        "task": [-1, 4, 9], "task_type": [1, -1], "state": [5, 2, 0], "node": [-2, 2, -1],
        "start": [np.nan, 70.0], "first_progress_time": [-1.0, 59.5, np.nan],
        "first_progress": [0.95, np.nan], "progress": [-0.1, 1.1, np.nan, 1.0],
        "report_sent": [-1.0, 60.5, np.nan, 4.0], "report_received": [58.0, 60.1, np.nan],
    }
    outcomes = set()
    for trial in range(300):
        r = straggler_request()
        a = r.attempts.take(np.arange(4))  # writeable copies
        if trial % 10:
            name = list(bad_values)[rng.integers(len(bad_values))]
            getattr(a, name)[rng.integers(4)] = rng.choice(bad_values[name])
        runtimes = np.array([[], [3.0], [-1.0], [np.inf], [np.nan]][trial % 5])
        r = replace(r, attempts=a, completed_map_runtimes=runtimes,
                    now=[60.0, np.nan, -1.0][trial % 3] if trial % 7 == 0 else r.now)
        try:
            job = s.snapshot(r).job
            job.completed_map_runtimes = r.completed_map_runtimes
            rows = replace(s.snapshot(r), attempts=a, now=r.now, job=job, validated=False)
            s._check_rows(rows)
            validate_snapshot(rows)
            passes = True
        except HedgeError:
            passes = False
        outcomes.add(passes)
        assert _rows_pass(a, r, len(s.nodes), s.limits.max_rows) == passes, (trial, a)
    assert outcomes == {True, False}


def copy_rows(task: list[int], key: list[int], node: list[int]) -> wire.ScanRequest:
    """A delta at t = 62 s: copies (speculative rows) of the given tasks on the given nodes."""
    n = len(task)
    a = AttemptTable(
        task=task, attempt=key, task_type=[0] * n, state=[1] * n, node=node,
        start=[61.0] * n, first_progress_time=[np.nan] * n, first_progress=[0.0] * n,
        progress=[0.0] * n, report_sent=[np.nan] * n, report_received=[np.nan] * n,
        bytes_processed=[0.0] * n, input_bytes=[np.nan] * n, speculative=[True] * n)
    data = wire.encode_request(a, seq=2, now=62.0, job_start=0.0, n_maps=4, n_reduces=0,
                               node_base=2, delta=True)
    return wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])


def test_copies_on_their_originals_node_are_counted_once_each() -> None:
    """straggler_request puts maps 0-3 on nodes 0, 1, 0, 1: a copy of map 3 on node 1 is on
    its original's node, a copy of map 2 on node 1 is not; a copy with no node yet is not
    counted until it has one; a copy that started and ended between scans counts from its
    ended record; repeats (later scans, a full snapshot) count nothing."""
    registry = SessionRegistry(Limits(), cluster)
    s = registry.open("job_12", "static", {})
    s.decide(straggler_request())
    s.decide(copy_rows(task=[3, 2, 1], key=[9, 11, 13], node=[1, 1, -1]))
    assert (s.placement.on_original_node, s.placement.elsewhere) == (1, 1)
    s.decide(copy_rows(task=[3, 2, 1], key=[9, 11, 13], node=[1, 1, 0]))  # 13 placed: node 0
    assert (s.placement.on_original_node, s.placement.elsewhere) == (1, 2)
    # key 15, a copy of map 0 (node 0), ran on node 0 and won between two scans; map 0's
    # original (key 0) is killed in the same scan
    s.decide(delta_request(progress=0.3, removed=[15, 0], removed_state=[2, 3],
                           removed_speculative=[True, False], removed_task=[0, 0],
                           removed_node=[0, 0], removed_start=[61.0, 0.0],
                           removed_end=[61.4, 61.4]))
    assert (s.placement.on_original_node, s.placement.elsewhere) == (2, 2)
    # a fresh session (the server restarted) learns the placement of the copy that ended
    # from the job's history in one full snapshot; a scan it rejects counts nothing
    fresh = registry.open("job_12", "static", {})
    ended = {"removed_state": [2, 3], "removed_speculative": [True, False],
             "removed_task": [0, 0], "removed_node": [0, 0], "removed_start": [61.0, 0.0],
             "removed_end": [61.4, 61.4]}
    with pytest.raises(HedgeError, match="field 'node'"):
        fresh.decide(full_request(removed=[15, 0], node_of_task_1=5, **ended))
    assert fresh.placement.placed == 0
    fresh.decide(full_request(removed=[15, 0], **ended))
    fresh.decide(full_request(removed=[15, 0], **ended))
    assert (fresh.placement.placed, fresh.placement.on_original_node) == (1, 1)
