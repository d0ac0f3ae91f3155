"""A fixed sequence of scan frames replayed through the control plane gives the same answers
as before the scan path was made faster (issue 21): the digests below were recorded with the
code of commit 0524ab4, before any of that work.

The frames cover what a live AM sends: a full snapshot, deltas of a third of the rows, new
launches, attempts that end (won, lost, failed), a frame with a bad field (rejected, the
table dropped), the full snapshot the shim then resends, a node list that grows, and a
scan-time regression that forces every row to be checked again.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from hedge.model import AttemptState, AttemptTable
from hedge.server import wire
from hedge.server.service import ControlPlaneService, ServerConfig

T0 = 1_700_000_000.0
ROWS = 300
SCANS = 60


def _table(keys: np.ndarray, now: float, start: np.ndarray, speed: np.ndarray,
           phase: np.ndarray, n_maps: int) -> AttemptTable:
    sent = np.round(now - (now - phase[keys]) % 3.0, 3)
    progress = np.clip((sent - start[keys]) * speed[keys], 0.0, 0.99)
    n = len(keys)
    task = keys % (n_maps + 20)
    return AttemptTable(
        task=task, attempt=keys, task_type=(task >= n_maps).astype(int),
        state=np.ones(n), node=keys % 5, start=start[keys],
        first_progress_time=start[keys] + 2.0,
        first_progress=np.minimum(progress, 2 * speed[keys]), progress=progress,
        report_sent=sent, report_received=sent, bytes_processed=progress * 1e8,
        input_bytes=np.where(keys % 3 == 0, np.nan, 1e8), speculative=keys >= ROWS)


def frames() -> list[bytes]:
    """The replayed frames (deterministic)."""
    rng = np.random.default_rng(7)
    n_keys, n_maps = ROWS + 40, ROWS
    keys = np.arange(n_keys)
    start = T0 + 1.0 + (keys >= ROWS) * 90.0 + rng.integers(0, 20, n_keys)
    speed = np.where(keys % 37 == 0, 1 / 4000, 1 / rng.integers(500, 700, n_keys))
    phase = rng.integers(0, 3000, n_keys) / 1000.0
    live = keys[:ROWS]
    now = T0 + 100.0
    common = dict(job_start=T0, n_maps=n_maps, n_reduces=20, total_slots=-1, free_slots=-1)
    out = [wire.encode_request(_table(live, now, start, speed, phase, n_maps), seq=1, now=now,
                               new_nodes=[f"h{i}" for i in range(5)], **common)]
    node_base = 5
    for seq in range(2, SCANS + 1):
        now += 1.0
        removed: list[int] = []
        if seq % 9 == 0 and len(live) > 10:  # some attempts end
            removed = [int(k) for k in live[seq % 5::41][:3]]
            live = live[~np.isin(live, removed)]
        if seq % 13 == 0:  # launches (the copies' keys come after every original's)
            fresh = keys[ROWS + (seq // 13 - 1) * 8:ROWS + (seq // 13) * 8]
            live = np.union1d(live, fresh[start[fresh] <= now])
        due = live[_table(live, now, start, speed, phase, n_maps).report_sent > now - 1.0]
        table = _table(due, now, start, speed, phase, n_maps)
        if seq == 30:  # a bad field: rejected, the session drops its table
            table.progress[0] = 1.5
        delta = seq not in (31, 46)  # the shim resends a full snapshot after a rejection
        rows = table if delta else _table(live, now, start, speed, phase, n_maps)
        new_nodes = ["h5", "h6"] if seq == 40 else []
        ended = {}
        if removed:
            ended = dict(removed=removed,
                         removed_state=[AttemptState.SUCCEEDED, AttemptState.KILLED,
                                        AttemptState.FAILED][:len(removed)],
                         removed_speculative=[False, True, False][:len(removed)],
                         removed_start=start[removed], removed_end=[now] * len(removed))
        out.append(wire.encode_request(
            rows, seq=seq, now=now - (0.5 if seq == 45 else 0.0), delta=delta and seq > 1,
            node_base=0 if not delta else node_base, fallbacks=seq % 4,
            completed_map_runtimes=[95.0 + seq % 5] if seq % 3 == 0 else [],
            completed_reduce_runtimes=[], new_nodes=(
                [f"h{i}" for i in range(node_base)] + new_nodes if not delta else new_nodes),
            **ended, **common))
        node_base += len(new_nodes)
    return out


def replay(policy: str) -> tuple[str, int, int]:
    """(sha256 of every answer with its CPU field zeroed, copies requested, rejections)."""
    service = ControlPlaneService(ServerConfig(token="x" * 32))
    session = service.sessions.open("job_replay", policy, {})
    digest, copies, rejected = hashlib.sha256(), 0, 0
    size = wire.REQUEST.size
    for frame in frames():
        out = bytearray(service.answer(session, frame[:size], bytearray(frame[size:])))
        out[6:8] = b"\0\0"  # the server's CPU time for the decision
        response = wire.decode_response(bytes(out))
        copies += int(response.speculate_copies.sum())
        rejected += response.status != wire.STATUS_OK
        digest.update(out)
    return digest.hexdigest(), copies, rejected


RECORDED = {  # (digest, copies, rejections); rejections: the bad field and the time going back
    "none": ("388689afb86dd4a2ee2dd1884e555594fdfdeaf5050ec804715bd83b908e8bb1", 0, 2),
    "adaptive": ("5d794d839f16546aa84b97af8e39ed75dba44139fc278cb6478cde3f492e75c3", 9, 2),
    # hedge-auto re-recorded for issue 16's rule changes (see test_sim_golden), not for speed
    "hedge-auto": ("a94a735b3db5b9ad34a6f08ecc8446b256da231a5fcd0279b8305e7353e1e05b", 2, 2),
    "hadoop": ("876b1fada4a39b7919d81739a46f746fa3bfbd0391fa55c81d8c2c9313dffe74", 0, 2),
    "late": ("e1e477164f5234daa827c695e31c91515bb3a531ec3929a40d0fa30f5116793b", 51, 2),
}


@pytest.mark.parametrize("policy", sorted(RECORDED))
def test_replayed_frames_give_the_answers_recorded_before_the_fast_path(policy: str) -> None:
    assert replay(policy) == RECORDED[policy]
