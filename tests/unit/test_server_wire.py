"""The scan wire format: round trips, hand-packed bytes, rejection of malformed frames."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import Actions, AttemptTable
from hedge.server import wire


def table(n: int = 3) -> AttemptTable:
    start = 1000.0 + np.arange(n)
    return AttemptTable(
        task=np.arange(n), attempt=np.arange(n) + 100, task_type=np.zeros(n),
        state=np.ones(n), node=np.arange(n) % 2, start=start,
        first_progress_time=np.where(np.arange(n) == 0, np.nan, start + 2.5),
        first_progress=np.full(n, 0.125), progress=np.linspace(0.25, 0.75, n),
        report_sent=start + 5.0, report_received=start + 5.0,
        bytes_processed=np.full(n, 1e9), input_bytes=np.full(n, np.nan),
        speculative=np.arange(n) == 2,
    )


def test_round_trip_keeps_every_column_at_millisecond_resolution() -> None:
    a = table(5)
    data = wire.encode_request(a, seq=7, now=1010.0, job_start=999.5, n_maps=5, n_reduces=1,
                               deadline=2000.0, completed_map_runtimes=[12.5],
                               new_nodes=["h1", "h2"], fallbacks=3)
    r = wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])
    assert (r.seq, r.now, r.job_start, r.deadline, r.fallbacks) == (7, 1010.0, 999.5, 2000.0, 3)
    assert r.new_nodes == ["h1", "h2"] and r.node_base == 0
    assert r.completed_map_runtimes.tolist() == [12.5] and len(r.completed_reduce_runtimes) == 0
    for name in ("task", "attempt", "node", "state", "task_type", "speculative", "progress",
                 "first_progress", "bytes_processed"):
        np.testing.assert_allclose(getattr(r.attempts, name), getattr(a, name), rtol=1e-7)
    np.testing.assert_allclose(r.attempts.start, a.start, atol=1e-6)
    np.testing.assert_allclose(r.attempts.report_received, a.report_received, atol=1e-6)
    assert np.isnan(r.attempts.first_progress_time[0]) and np.isnan(r.attempts.input_bytes).all()
    np.testing.assert_allclose(r.attempts.first_progress_time[1:], a.first_progress_time[1:],
                               atol=1e-6)


def test_a_report_received_in_the_scan_times_millisecond_is_not_after_it() -> None:
    """The shim sends the scan time as the latest time it has seen, often a report's own
    (whole ms). Converted as the job's start in seconds plus the report's, it came out
    0.2 us after the scan time, and the server refused the scan (CI, a real MRAppMaster:
    report_received = 1795837065.6030002 after the scan time)."""
    job_start, now = 1795830661.202, 1795830689.287  # 28,085 ms apart
    assert now < 1795830661202 * 1e-3 + 28085 * 1e-3  # the sum the decoder used to make
    a = table(1)
    a.start[:] = job_start + 1.0
    a.report_sent[:] = a.report_received[:] = now
    data = wire.encode_request(a, seq=1, now=now, job_start=job_start, n_maps=1, n_reduces=0)
    r = wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])
    assert r.attempts.report_received.tolist() == [r.now] == [now]


def test_hand_packed_single_row_decodes_as_documented() -> None:
    # one map attempt: start +1.5 s, report +4 s, progress 0.5, node 0, no first progress
    body = struct.pack("<dd", 64.0, 128.0) + struct.pack("<iiiiii", 0, 9, 0, 1500,
                                                         wire.MISSING, 4000)
    body += struct.pack("<ff", 0.0, 0.5) + bytes([0, 1, 0]) + b"n1"
    header = wire.REQUEST.pack(b"HDGS", 3, 0, 1, len(body), 10_000, 5_000, -1, 1, 0, 1, 0, 0,
                               0, 2, 0, -1, -1, 0, 0)
    r = wire.decode_request(header, body)
    a = r.attempts
    assert len(body) == wire.ROW_BYTES + 2 == 53
    assert (r.now, r.job_start, r.deadline) == (10.0, 5.0, None)
    assert a.start.tolist() == [6.5] and a.report_sent.tolist() == [9.0]
    assert np.isnan(a.first_progress_time[0]) and a.progress.tolist() == [0.5]
    assert a.bytes_processed.tolist() == [64.0] and r.new_nodes == ["n1"]


def test_hand_packed_ended_attempts_decode_as_documented() -> None:
    # a delta with no rows and two ended attempts: key 3, a copy of reduce 1 (task 5) on node
    # 2 with 1 MB of input, succeeded (start +2 s, end +7.5 s); key 0, the original, killed at
    # the same moment, node and start unknown
    body = struct.pack("<dd", 1048576.0, math.nan)
    body += struct.pack("<ii", 3, 0) + struct.pack("<ii", 5, 5) + struct.pack("<ii", 2, -1)
    body += struct.pack("<ii", 2000, wire.MISSING) + struct.pack("<ii", 7500, 7500)
    body += bytes([2, 3]) + bytes([1, 0])
    header = wire.REQUEST.pack(b"HDGS", 3, 1, 4, len(body), 13_000, 5_000, -1, 4, 2, 0, 0, 0,
                               0, 0, 0, -1, -1, 2, 0)
    r = wire.decode_request(header, body)
    assert len(body) == 2 * wire.ENDED_BYTES == 60
    assert r.delta and r.removed.tolist() == [3, 0]
    assert r.removed_task.tolist() == [5, 5] and r.removed_node.tolist() == [2, -1]
    assert r.removed_input_bytes[0] == 1048576.0 and np.isnan(r.removed_input_bytes[1])
    assert r.removed_state.tolist() == [2, 3] and r.removed_speculative.tolist() == [True, False]
    assert r.removed_start[0] == 7.0 and np.isnan(r.removed_start[1])
    assert r.removed_end.tolist() == [12.5, 12.5]
    with pytest.raises(HedgeError, match="ended attempt 3 has final state 1"):
        wire.decode_request(header, body[:56] + bytes([1, 3]) + body[58:])


def test_malformed_requests_are_rejected_with_a_reason() -> None:
    good = wire.encode_request(table(2), seq=1, now=1010.0, job_start=999.0, n_maps=2,
                               n_reduces=0)
    head, body = good[:wire.REQUEST.size], good[wire.REQUEST.size:]
    with pytest.raises(HedgeError, match="body of"):
        wire.decode_request(head, body[:-1])
    with pytest.raises(HedgeError, match="magic"):
        wire.decode_request(b"XXXX" + head[4:], body)
    with pytest.raises(HedgeError, match="wire version 9"):
        wire.decode_request(head[:4] + struct.pack("<H", 9) + head[6:], body)
    bad_names = wire.encode_request(table(1), seq=1, now=1010.0, job_start=999.0, n_maps=1,
                                    n_reduces=0, new_nodes=["a", ""])
    with pytest.raises(HedgeError, match="empty node name"):
        wire.decode_request(bad_names[:wire.REQUEST.size], bad_names[wire.REQUEST.size:])


def test_response_round_trip_and_scan_delay_encoding() -> None:
    actions = Actions(speculate_task=[4, 2], speculate_copies=[1, 3], prefer_node=[-1, 5],
                      kill_attempt=[77], next_scan_in=15.0, wake_on_completion=True)
    r = wire.decode_response(wire.encode_response(9, actions))
    assert (r.status, r.seq, r.next_scan_ms, r.wake_on_completion) == (0, 9, 15000, True)
    assert r.speculate_task.tolist() == [4, 2] and r.speculate_copies.tolist() == [1, 3]
    assert r.prefer_node.tolist() == [-1, 5] and r.kill_attempt.tolist() == [77]
    assert wire.next_scan_ms(None) == -1 and wire.next_scan_ms(math.inf) == wire.NEVER_MS
    rejected = wire.decode_response(wire.encode_rejection(3, "progress out of range"))
    assert (rejected.status, rejected.seq, rejected.message) == (1, 3, "progress out of range")


def test_response_carries_the_server_cpu_time_saturating_at_the_u16_limit() -> None:
    actions = Actions(speculate_task=[1])
    for seconds, micros in ((0.0, 0), (0.0012344, 1234), (0.065535, 65535), (3.0, 65535),
                            (-1.0, 0)):
        data = wire.encode_response(9, actions, cpu_seconds=seconds)
        assert data[6:8] == micros.to_bytes(2, "little")  # the documented offset
        assert wire.decode_response(data).server_cpu_us == micros
    assert wire.decode_response(wire.encode_rejection(9, "no")).server_cpu_us == 0
