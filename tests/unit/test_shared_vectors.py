"""The test-vector files JUnit also checks, for the rules hedge writes in both Python and Java:
Hadoop's default rule (org.hedge.shim.HadoopDefaultFallbackTest) and the JVM-aware runtime
estimate (org.hedge.shim.HedgeRuntimeEstimatorTest). Regenerate with
``python -m tests.hadoop_default_vectors`` / ``python -m tests.runtime_estimate_vectors``."""

from __future__ import annotations

import math

import numpy as np

from hedge.estimate import jvm_ect
from hedge.model import AttemptState, AttemptTable

from .. import hadoop_default_vectors as hadoop
from .. import runtime_estimate_vectors as runtime
from .. import wire_vectors


def _rows(path) -> list[list[str]]:
    lines = path.read_text().splitlines()
    return [line.split("\t") for line in lines if not line.startswith("#")][1:]


def test_the_hadoop_vectors_are_what_the_policy_decides_now():
    assert hadoop.VECTORS.read_text() == hadoop.text()


def test_the_hadoop_vectors_hold_copies_and_refusals_of_both_types():
    rows = _rows(hadoop.VECTORS)
    assert len(rows) >= 300
    maps = sum(r[14] != "-1" for r in rows)
    reduces = sum(r[15] != "-1" for r in rows)
    none = sum(r[14] == r[15] == "-1" for r in rows)
    assert maps >= 100 and reduces >= 30 and none >= 50, (maps, reduces, none)


def test_the_runtime_vectors_are_what_jvm_arrays_gives_now():
    assert runtime.VECTORS.read_text() == runtime.text()


def test_the_runtime_vectors_read_back_through_the_table_form():
    rows = _rows(runtime.VECTORS)
    estimated = 0
    for start, times, progress, _now, expected in rows:
        t = [float(x) / 1000 for x in times.split(",")] if times else []
        p = [float(x) for x in progress.split(",")] if progress else []
        moved = [i for i, x in enumerate(p) if x > 0]
        fp = moved[0] if moved else None
        one = np.ones(1)
        table = AttemptTable(
            task=np.zeros(1, np.int64), attempt=np.zeros(1, np.int64), task_type=np.zeros(1),
            state=np.full(1, AttemptState.RUNNING), node=np.zeros(1), start=one * int(start) / 1000,
            first_progress_time=one * (t[fp] if fp is not None else math.nan),
            first_progress=one * (p[fp] if fp is not None else math.nan),
            progress=one * (p[-1] if p else 0.0), report_sent=one * (t[-1] if t else math.nan),
            report_received=one * (t[-1] if t else math.nan), bytes_processed=np.zeros(1),
            input_bytes=one * math.nan, speculative=np.zeros(1, bool))
        got = jvm_ect(table, 0.0)[0] * 1000 - int(start)
        if expected == "nan":
            assert math.isnan(got)
        else:
            assert abs(got - float(expected)) <= 1e-3, (start, times, progress)
            estimated += 1
    assert len(rows) >= 300 and estimated >= 150


def test_the_wire_vectors_are_what_hedge_server_wire_encodes_now():
    assert wire_vectors.VECTORS.read_text() == wire_vectors.text()


def test_the_wire_vectors_decode_back_to_their_fields():
    from hedge.server import wire

    for name, scan, frame_hex in _rows(wire_vectors.VECTORS):
        fields = dict(item.split("=", 1) for item in scan.split(" "))
        frame = bytes.fromhex(frame_hex)
        r = wire.decode_request(frame[:wire.REQUEST.size], frame[wire.REQUEST.size:])
        base = wire_vectors.JOB_START_MS / 1e3
        assert r.seq == int(fields["seq"]) and r.delta == (fields["delta"] == "1"), name
        assert r.attempts.attempt.tolist() == wire_vectors.numbers(fields["attempt"]).tolist()
        np.testing.assert_allclose(r.attempts.start - base,
                                   wire_vectors.numbers(fields["start"]) / 1e3)
        assert r.removed.tolist() == wire_vectors.numbers(fields["removed"]).tolist()
        assert r.removed_state.tolist() == wire_vectors.numbers(fields["removedState"]).tolist()
        for column, field in (("task", "removedTask"), ("node", "removedNode"),
                              ("input_bytes", "removedInputBytes")):
            np.testing.assert_array_equal(getattr(r, f"removed_{column}"),
                                          wire_vectors.numbers(fields[field]), err_msg=name)
        np.testing.assert_allclose(r.removed_end - base,
                                   wire_vectors.numbers(fields["removedEnd"]) / 1e3)
        np.testing.assert_allclose(r.removed_start - base,
                                   wire_vectors.numbers(fields["removedStart"]) / 1e3)
        assert r.new_nodes == (fields["nodes"].split("|") if fields["nodes"] else []), name
