"""Job histories in both of Hadoop's encodings (hedge.traces.jhist).

tests/data/straggler-job-hadoop-3.4.1.jhist is the history of hedge's straggler job
(org.hedge.cluster.StragglerJob: 4 maps, 1 reduce; map 0's attempt 0 works 6x slower) under
Hadoop's own speculator, written by a real MRAppMaster of Hadoop 3.4.1 on MiniMRYarnCluster
in Hadoop 3's default encoding, Avro-Binary (test_yarn_history made it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hedge.errors import HedgeError
from hedge.traces import jhist
from hedge.traces.formats import detect, read_attempts

BINARY = Path(__file__).parents[1] / "data" / "straggler-job-hadoop-3.4.1.jhist"
JOB = "job_1795639868845_0001"


def test_a_binary_history_of_a_real_application_master():
    assert BINARY.read_bytes().startswith(b"Avro-Binary\n") and detect(BINARY) == "jhist"
    rows = {row["attempt"].removeprefix(f"attempt_{JOB[4:]}_"): row
            for row in read_attempts(BINARY).to_pylist()}
    assert sorted(rows) == ["m_000000_0", "m_000000_1", "m_000001_0", "m_000002_0",
                            "m_000003_0", "r_000000_0"]
    assert rows["m_000000_0"]["state"] == "KILLED"
    assert rows["m_000000_1"]["state"] == "SUCCEEDED" and rows["m_000000_1"]["speculative"]
    assert sum(row["speculative"] for row in rows.values()) == 1
    assert {row["job"] for row in rows.values()} == {JOB}
    assert {row["node"] for row in rows.values()} == {"localhost"}
    straggler, copy = rows["m_000000_0"], rows["m_000000_1"]
    assert straggler["start"] < copy["start"] < copy["end"] <= straggler["end"]
    assert all(0 < row["end"] - row["start"] < 60 for row in rows.values())


def test_binary_events_come_out_plain():
    events = list(jhist.events(BINARY))
    assert events[0][1] == "AM_STARTED" and events[-1][1] == "JOB_FINISHED"
    started = {info["attemptId"]: info["avataar"] for _, kind, info in events
               if kind == "MAP_ATTEMPT_STARTED"}
    assert started[f"attempt_{JOB[4:]}_m_000000_1"] == "SPECULATIVE"
    finished = [info for _, kind, info in events if kind == "REDUCE_ATTEMPT_FINISHED"]
    counts = {c["name"]: c["value"] for g in finished[0]["counters"]["groups"]
              for c in g["counts"]}
    # 4 maps x 97 keys: the job's combiner leaves one record per distinct key (mod 97)
    assert counts["REDUCE_INPUT_RECORDS"] == 4 * 97


def _json_history(tmp_path: Path, events: list[dict]) -> Path:
    path = tmp_path / "job.jhist"
    path.write_text("Avro-Json\n{}\n" + "".join(json.dumps(e) + "\n" for e in events))
    return path


def _attempt_event(kind: str, attempt: str, **fields) -> dict:
    record = "TaskAttemptStarted" if kind.endswith("STARTED") else "TaskAttemptFinished"
    return {"type": kind, "event": {f"org.apache.hadoop.mapreduce.jobhistory.{record}": {
        "attemptId": f"attempt_1_0001_m_000000_{attempt}", "taskid": "task_1_0001_m_000000",
        **fields}}}


def test_json_union_values_are_unwrapped(tmp_path):
    """A copy that starts after its original ended is known speculative only from its
    avataar, which Avro's JSON encoding wraps as {"string": "SPECULATIVE"}."""
    path = _json_history(tmp_path, [
        _attempt_event("MAP_ATTEMPT_STARTED", "0", startTime=0, avataar={"string": "VIRGIN"}),
        _attempt_event("MAP_ATTEMPT_KILLED", "0", finishTime=5000, hostname="h1"),
        _attempt_event("MAP_ATTEMPT_STARTED", "1", startTime=6000,
                       avataar={"string": "SPECULATIVE"}),
        _attempt_event("MAP_ATTEMPT_FINISHED", "1", finishTime=9000, hostname="h2")])
    rows = read_attempts(path).to_pylist()
    assert [(r["state"], r["speculative"]) for r in rows] == [("KILLED", False),
                                                             ("SUCCEEDED", True)]


def test_a_truncated_binary_history_names_the_byte(tmp_path):
    cut = tmp_path / "cut.jhist"
    data = BINARY.read_bytes()
    cut.write_bytes(data[:-7])
    with pytest.raises(HedgeError, match=r"cut.jhist: byte \d+: the event does not decode "
                                         r"against the file's schema \(byte \d+: .*truncated"):
        read_attempts(cut)


def test_a_bad_header_or_schema_is_named(tmp_path):
    other = tmp_path / "other.jhist"
    other.write_bytes(b"Avro-Snappy\n{}\n")
    with pytest.raises(HedgeError, match=r"other.jhist:1: expected 'Avro-Json' or "
                                         r"'Avro-Binary', found 'Avro-Snappy'"):
        jhist.read(other)
    schema = tmp_path / "schema.jhist"
    schema.write_bytes(b"Avro-Binary\n{not a schema\n\x00")
    with pytest.raises(HedgeError, match=r"schema.jhist:2: expected the Avro schema"):
        read_attempts(schema)


def test_an_attempt_killed_before_it_started_is_left_out_and_counted(tmp_path):
    """Hadoop's AM logs MAP_ATTEMPT_KILLED, and no STARTED, for an attempt killed in state NEW
    (a copy added and killed before it asked for a container: CI's 3.4.1 job did this)."""
    path = _json_history(tmp_path, [
        _attempt_event("MAP_ATTEMPT_STARTED", "0", startTime=0),
        _attempt_event("MAP_ATTEMPT_KILLED", "1", finishTime=4000, hostname="UNKNOWN"),
        _attempt_event("MAP_ATTEMPT_FINISHED", "0", finishTime=5000, hostname="h1")])
    table = read_attempts(path)
    assert [r["attempt"][-1] for r in table.to_pylist()] == ["0"]
    assert table.schema.metadata[b"attempts_never_started"] == b"1"


def test_a_success_without_a_start_is_named(tmp_path):
    path = _json_history(tmp_path, [
        _attempt_event("MAP_ATTEMPT_FINISHED", "0", finishTime=5000, hostname="h1")])
    with pytest.raises(HedgeError, match=r"job.jhist:3: field 'attemptId': attempt "
                                         r"attempt_1_0001_m_000000_0 succeeded without a "
                                         r"STARTED event"):
        read_attempts(path)
