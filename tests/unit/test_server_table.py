"""The server's in-place attempt table and O(changed) scan checks (issue 9, latency)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import AttemptTable, ClusterFacts
from hedge.model.validate import ReportHistory
from hedge.policy.detectors import _member
from hedge.server import wire
from hedge.server.session import Limits, SessionRegistry
from hedge.server.table import GrowingArray, LiveAttempts


def rows(keys, progress=0.5, sent=10.0, task=None) -> AttemptTable:
    keys = np.asarray(keys, dtype=np.int64)
    n = len(keys)
    return AttemptTable(
        task=keys if task is None else task, attempt=keys, task_type=np.zeros(n),
        state=np.ones(n), node=np.zeros(n), start=np.zeros(n),
        first_progress_time=np.full(n, 1.0), first_progress=np.full(n, 0.01),
        progress=np.full(n, progress), report_sent=np.full(n, sent),
        report_received=np.full(n, sent), bytes_processed=np.zeros(n),
        input_bytes=np.full(n, np.nan), speculative=np.zeros(n, bool),
    )


def test_live_attempts_match_a_dictionary_model_over_random_scans() -> None:
    rng = np.random.default_rng(9)
    table, model = LiveAttempts(), {}
    next_key = 0
    for scan in range(300):
        if scan % 50 == 0:  # a full snapshot now and then
            keys = np.array(sorted(model) + list(range(next_key, next_key + 5)))
            next_key += 5
            progress = rng.random(len(keys))
            table.replace(rows(keys, progress))
            model = dict(zip(keys.tolist(), progress.tolist(), strict=True))
        else:
            live = np.array(sorted(model), dtype=np.int64)
            changed = rng.choice(live, size=min(len(live), rng.integers(0, 8)), replace=False) \
                if len(live) else np.empty(0, np.int64)
            fresh = np.arange(next_key, next_key + rng.integers(0, 4))
            next_key += len(fresh)
            if scan % 37 == 0 and len(live):  # a key below the newest: order must still hold
                fresh = np.array([next_key + 3, next_key + 1])
                next_key += 4
            keys = np.concatenate([changed, fresh]).astype(np.int64)
            progress = rng.random(len(keys))
            table.upsert(rows(keys, progress))
            model.update(zip(keys.tolist(), progress.tolist(), strict=True))
            ended = rng.choice(keys, size=min(len(keys), rng.integers(0, 3)), replace=False) \
                if len(keys) else np.empty(0, np.int64)
            table.remove(ended.astype(np.int64))
            for key in ended.tolist():
                model.pop(key, None)
        got = table.table()
        assert got.attempt.tolist() == sorted(model)
        assert got.progress.tolist() == pytest.approx([model[k] for k in sorted(model)])
        live_keys = np.flatnonzero(table.row_of >= 0)
        assert live_keys.tolist() == sorted(model)
        assert (got.attempt[table.row_of[live_keys]] == live_keys).all()


def test_snapshot_views_are_read_only_and_the_growing_array_appends() -> None:
    table = LiveAttempts()
    table.replace(rows([0, 1, 2]))
    view = table.table()
    with pytest.raises(ValueError):
        view.progress[0] = 0.9
    grow = GrowingArray()
    for chunk in ([1.0], [], list(range(40))):
        grow.extend(np.asarray(chunk, dtype=float))
    assert grow.view().tolist() == [1.0, *map(float, range(40))]
    grow.clear()
    assert len(grow.view()) == 0


def cluster(nodes, total, free, container=None) -> ClusterFacts:
    return ClusterFacts(total_slots=max(total, 0), free_slots=max(free, 0))


def request(keys, *, delta, now=60.0, n_maps=8, sent=59.0, progress=0.5, removed=(),
            task=None, completed=()) -> wire.ScanRequest:
    data = wire.encode_request(
        rows(keys, progress, sent, task), seq=1, now=now, job_start=0.0, n_maps=n_maps,
        n_reduces=0, new_nodes=[] if delta else ["h0"], node_base=1 if delta else 0,
        delta=delta, removed=list(removed), completed_map_runtimes=list(completed))
    return wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])


def session(policy="none"):
    return SessionRegistry(Limits(), cluster).open("job_t", policy, {})


def test_a_bad_delta_row_is_rejected_and_forces_a_full_snapshot() -> None:
    s = session()
    s.decide(request(range(6), delta=False))
    with pytest.raises(HedgeError, match="field 'progress' = 1.5"):
        s.decide(request([2], delta=True, now=61.0, sent=60.5, progress=1.5))
    # nothing of the bad scan was kept: a delta is refused until a full snapshot comes
    with pytest.raises(HedgeError, match="delta scan before any full snapshot"):
        s.decide(request([3], delta=True, now=62.0, sent=61.5))
    s.decide(request(range(6), delta=False, now=63.0, sent=62.0))
    snap = s.snapshot(request([], delta=True, now=63.0))
    assert snap.attempts.attempt.tolist() == list(range(6))


def test_rows_kept_from_earlier_scans_are_rechecked_when_the_scan_context_changes() -> None:
    s = session()
    s.decide(request(range(6), delta=False))
    # fewer maps than before: stored row 5 (task 5) is now out of range although the
    # delta's own row is fine
    with pytest.raises(HedgeError, match=r"row 5: field 'task' = 5 expected a task index"):
        s.decide(request([0], delta=True, now=61.0, sent=60.5, n_maps=5))
    s.decide(request(range(6), delta=False))
    # the scan time goes back before stored reports: every row is checked again
    with pytest.raises(HedgeError, match="is after the scan time"):
        s.decide(request([0], delta=True, now=58.5, sent=58.0))


def test_delta_checks_cover_new_run_times_and_full_snapshots_drop_ended_rows() -> None:
    s = session()
    s.decide(request(range(4), delta=False, completed=[3.0]))
    with pytest.raises(HedgeError, match="completed_map_runtimes holds a negative"):
        s.decide(request([1], delta=True, now=61.0, sent=60.5, completed=[-1.0]))
    s.decide(request(range(4), delta=False, completed=[3.0]))
    s.decide(request([1], delta=True, now=61.0, sent=60.5, completed=[4.0], removed=[0]))
    snap = s.snapshot(request([], delta=True, now=61.0))
    assert snap.job.completed_map_runtimes.tolist() == [3.0, 4.0]
    assert snap.attempts.attempt.tolist() == [1, 2, 3]
    # a full snapshot names every ended attempt; a row it also carries is ended
    s.decide(request(range(4), delta=False, removed=[0]))
    assert s.snapshot(request([], delta=True, now=61.0)).attempts.attempt.tolist() == [1, 2, 3]


def test_delta_sessions_decide_like_the_policy_on_rebuilt_full_snapshots() -> None:
    """Many delta scans through the session give the same decisions as a fresh policy fed
    the full snapshot of every scan (rebuilt here from a plain dictionary of rows)."""
    from hedge.policy import create

    rng = np.random.default_rng(4)
    n = 300
    s = session("adaptive")
    reference = create("adaptive")
    speed = np.where(np.arange(n) % 17 == 0, 0.1, 1.0) * rng.uniform(0.8, 1.2, n)
    state: dict[int, tuple[float, float]] = {}
    copied = []
    for scan in range(40):
        now = 10.0 + scan
        due = np.flatnonzero((np.arange(n) + scan) % 3 == 0) if scan else np.arange(n)
        for k in due.tolist():
            state[k] = (min(0.99, 0.02 + speed[k] * (now - 0.5) / 200), now - 0.5)
        keys = np.array(sorted(state)) if scan == 0 else due
        got = s.decide(req_for(keys, state, now, delta=scan > 0, n=n))
        full = req_for(np.array(sorted(state)), state, now, delta=False, n=n)
        want = reference.decide(rebuild(full))
        assert got.speculate_task.tolist() == want.speculate_task.tolist(), scan
        copied += got.speculate_task.tolist()
    assert copied and all(k % 17 == 0 for k in copied)  # the slow tasks, both ways


def req_for(keys, state, now, *, delta, n) -> wire.ScanRequest:
    progress = np.array([state[k][0] for k in keys.tolist()])
    sent = np.array([state[k][1] for k in keys.tolist()])
    a = rows(keys, progress, sent)
    data = wire.encode_request(a, seq=1, now=now, job_start=0.0, n_maps=n, n_reduces=0,
                               new_nodes=[] if delta else ["h0"], node_base=1 if delta else 0,
                               delta=delta)
    return wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])


def rebuild(full: wire.ScanRequest):
    from hedge.model import JobFacts, Snapshot

    job = JobFacts(job_id="r", start=full.job_start, n_maps=full.n_maps,
                   n_reduces=full.n_reduces, deadline=full.deadline)
    return Snapshot(now=full.now, job=job, attempts=full.attempts,
                    cluster=cluster([], full.total_slots, full.free_slots))


def test_member_equals_isin() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        values = rng.integers(-2 if rng.random() < 0.1 else 0, 30, rng.integers(0, 6))
        pool = rng.integers(0, 30, rng.integers(0, 6))
        assert _member(values, pool).tolist() == np.isin(values, pool).tolist()


class OriginalHistory:
    """ReportHistory's lookup and merge as first written (search and sort every scan)."""

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int64)
        self._sent = np.empty(0)
        self._ended = np.empty(0, dtype=bool)

    def _lookup(self, ids):
        if len(self._ids) == 0:
            none = np.zeros(len(ids), dtype=bool)
            return none, np.full(len(ids), np.nan), none
        pos = np.minimum(np.searchsorted(self._ids, ids), len(self._ids) - 1)
        seen = self._ids[pos] == ids
        return seen, np.where(seen, self._sent[pos], np.nan), seen & self._ended[pos]

    def _remember(self, ids, sent, ended) -> None:
        keep = ~np.isin(self._ids, ids)
        all_ids = np.concatenate([self._ids[keep], ids])
        order = np.argsort(all_ids, kind="stable")
        self._ids = all_ids[order]
        self._sent = np.concatenate([self._sent[keep], sent])[order]
        done = np.asarray(ended) & ~np.isnan(sent)
        self._ended = np.concatenate([self._ended[keep], done])[order]


def test_report_history_fast_paths_match_the_original_search_and_sort() -> None:
    """Same attempts, attempts added after the last key, in between, unsorted, repeated,
    sparse or negative: lookups and remembered arrays equal the original algorithm's."""
    rng = np.random.default_rng(2)
    for case in range(40):
        fast, slow = ReportHistory(), OriginalHistory()
        ids = np.arange(20) * (1 if case % 4 else 7)  # every 4th case: sparse ids
        for scan in range(40):
            step = rng.integers(0, 7)
            if step == 1:  # new attempts after the last key (a live AM's launches)
                ids = np.concatenate([ids, ids.max(initial=0) + 1 + np.arange(3)])
            elif step == 2:  # some attempts ended
                ids = ids[rng.random(len(ids)) > 0.2]
            elif step == 3:  # an id inside the range comes back / appears
                ids = np.unique(np.concatenate([ids, rng.integers(0, 30, 2)]))
            elif step == 4 and case % 5 == 0:  # unsorted, possibly repeated
                ids = rng.permutation(np.concatenate([ids, ids[:1]]))
            elif step == 5 and case % 7 == 0:  # negative ids
                ids = np.unique(np.concatenate([ids, [-3]]))
            elif step == 6 and case % 3 == 0:  # huge ids (no dense index)
                ids = np.unique(np.concatenate([ids, [10**9]]))
            sent = rng.uniform(0, 100, len(ids))
            sent[rng.random(len(ids)) < 0.1] = np.nan
            ended = rng.random(len(ids)) < 0.1
            got = fast._lookup(ids)
            want = slow._lookup(ids)
            for g, w in zip(got, want, strict=True):
                assert np.array_equal(g, w, equal_nan=True), (case, scan)
            fast._remember(ids, sent, ended)
            slow._remember(ids, sent, ended)
            assert np.array_equal(fast._ids, slow._ids), (case, scan)
            assert np.array_equal(fast._sent, slow._sent, equal_nan=True), (case, scan)
            assert np.array_equal(fast._ended, slow._ended), (case, scan)
    # a repeated id takes the general path (leftmost match), as before
    dup = np.array([1, 1, 2])
    fast, slow = ReportHistory(), OriginalHistory()
    for history in (fast, slow):
        history._remember(dup, np.array([1.0, 2.0, 3.0]), np.zeros(3, bool))
    assert np.array_equal(fast._lookup(dup)[1], slow._lookup(dup)[1])


def test_validate_snapshot_reports_the_first_failing_check() -> None:
    """Random corruptions: a snapshot is rejected exactly when some check fails, with the
    message of the first failing check in order."""
    from hedge.model import JobFacts, Snapshot, validate

    rng = np.random.default_rng(5)
    corruptions = {
        "progress": [1.5, -0.1, np.nan], "report_sent": [-1.0, 70.0, 0.5],
        "report_received": [30.0, 61.0], "first_progress_time": [-1.0, 50.0],
        "first_progress": [0.9], "state": [2],
    }
    outcomes = set()
    for trial in range(300):
        a = rows(np.arange(6), progress=rng.uniform(0.1, 0.8, 6), sent=rng.uniform(20, 40, 6))
        a.start[:] = rng.uniform(0, 2, 6)
        a.first_progress_time[:] = a.start + 5
        for _ in range(rng.integers(0, 3) if trial else 0):
            field = rng.choice(list(corruptions))
            getattr(a, field)[rng.integers(0, 6)] = rng.choice(corruptions[field])
        snap = Snapshot(now=60.0, job=JobFacts("j", 0.0, 6, 0), attempts=a,
                        cluster=cluster([], 0, 0))
        with np.errstate(invalid="ignore"):
            failing = [(f, what) for f, mask, what in validate._checks(a, 60.0) if mask.any()]
        if failing:
            field, what = failing[0]
            with pytest.raises(HedgeError, match=f"field '{field}' = .* {re.escape(what)}"):
                validate.validate_snapshot(snap)
        else:
            validate.validate_snapshot(snap)
        outcomes.add(bool(failing))
    assert outcomes == {True, False}

