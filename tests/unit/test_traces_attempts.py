"""Attempt-level readers (Rumen, .jhist, Google 2011) on the real shared traces, with the
counts listed in shared/data/PROVENANCE.md, and speculative-copy inference."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pytest

from hedge.traces import ATTEMPT_SCHEMA, detect, read_attempts
from hedge.traces.attempts import infer_speculative
from tests.conftest import shared_file

HS = "hadoop_testdata/hadoop-mapreduce-client-hs/"
SLEEP = HS + ("job_1329348432655_0001-1329348443227-user-Sleep+job-1329348468601-10-1-"
              "SUCCEEDED-default.jhist")
GOOGLE0 = "google_clusterdata_2011_2/task_events/part-00000-of-00500.csv.gz"


def _states(table) -> dict[str, int]:
    rows = table.group_by("state").aggregate([("job", "count")]).to_pylist()
    return {r["state"]: r["job_count"] for r in rows}


def test_rumen_2jobs2min_two_teragen_jobs_of_96_maps():
    t = read_attempts(shared_file("hadoop_testdata/hadoop-sls/2jobs2min-rumen-jh.json"))
    assert t.schema.remove_metadata() == ATTEMPT_SCHEMA
    per_job = t.group_by("job").aggregate([("task", "count_distinct")]).to_pylist()
    assert sorted((r["job"], r["task_count_distinct"]) for r in per_job) == [
        ("job_1369942127770_1205", 96), ("job_1369942127770_1206", 96)]
    assert set(t["node"].to_pylist()) == {f"a211{i}.smile.com" for i in range(5, 9)}
    assert _states(t) == {"SUCCEEDED": 192}
    assert set(t["type"].to_pylist()) == {"MAP"}
    assert (pc.subtract(t["end"], t["start"]).to_numpy() > 0).all()


def test_rumen_licence_comment_and_crashed_attempt_is_censored():
    t = read_attempts(shared_file("hadoop_testdata/hadoop-sls/"
                                  "1job-rumen-with-one-crashed-attempt.json"))
    assert t.num_rows == 70  # 71 attempts, one crashed (no result, no finish)
    assert t.schema.metadata[b"censored_attempts"] == b"1"
    # the crashed attempt is a second attempt of reduce r_000015, which succeeded: the file
    # has 16 reduce tasks (PROVENANCE's "17 reduces" counts the 17 reduce attempts)
    assert t.schema.metadata[b"censored_tasks"] == b"0"
    types = t.group_by("type").aggregate([("task", "count_distinct")]).to_pylist()
    assert {r["type"]: r["task_count_distinct"] for r in types} == {"MAP": 54, "REDUCE": 16}
    assert pc.count_distinct(t["node"]).as_py() == 59


def test_rumen_mr1_speculative_copies_inferred():
    t = read_attempts(shared_file("hadoop_testdata/rumen_small-trace-test/"
                                  "mr1_job-tracker-logs-trace-output.gz"))
    # 283 attempts in PROVENANCE include 7 setup/cleanup attempts (otherTasks, skipped)
    assert t.num_rows == 276
    assert t.schema.metadata[b"other_tasks"] == b"7"
    assert _states(t) == {"SUCCEEDED": 203, "KILLED": 69, "FAILED": 4}
    # 69 tasks have a KILLED plus a SUCCESS attempt: one copy each
    assert pc.sum(t["speculative"]).as_py() == 69


def test_rumen_counters_trace():
    t = read_attempts(shared_file("hadoop_testdata/rumen_small-trace-test/"
                                  "mr2_counters-test-trace.json.gz"))
    assert t.num_rows == 17  # 21 attempts minus 4 setup/cleanup
    assert pc.count_distinct(t["node"]).as_py() == 13
    assert _states(t) == {"SUCCEEDED": 14, "KILLED": 3}
    assert pc.sum(t["speculative"]).as_py() == 3
    assert np.isfinite(t["input_bytes"].to_numpy()).all()


def test_jhist_sleep_job():
    path = shared_file(SLEEP)
    assert detect(path) == "jhist"
    t = read_attempts(path)
    assert _states(t) == {"SUCCEEDED": 12}
    types = t.group_by("type").aggregate([("task", "count")]).to_pylist()
    assert {r["type"]: r["task_count"] for r in types} == {"MAP": 10, "REDUCE": 2}
    assert set(t["job"].to_pylist()) == {"job_1329348432655_0001"}
    assert set(t["node"].to_pylist()) == {"localhost"}
    assert not pc.any(t["speculative"]).as_py()


def test_jhist_failed_job_retries_are_not_speculative():
    t = read_attempts(shared_file(HS + "job_0.23.9-FAILED.jhist"))
    assert _states(t) == {"FAILED": 7, "KILLED": 1}
    assert not pc.any(t["speculative"]).as_py()


def test_google_part0_attempts_and_censoring():
    t = read_attempts(shared_file(GOOGLE0))
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    ended = t.num_rows
    # every SCHEDULE (189,994 in part-00000) is an ended attempt, a censored one, or one
    # scheduled before the trace window
    assert ended + int(meta["censored_attempts"]) + int(meta["scheduled_before_trace"]) == 189_994
    assert _states(t) == {"SUCCEEDED": 38_433, "KILLED": 10_417, "FAILED": 337}
    assert int(meta["censored_tasks"]) > 0
    assert not pc.any(t["speculative"]).as_py()
    assert (t["end"].to_numpy() >= t["start"].to_numpy()).all()


def test_infer_speculative_overlap_retry_and_late_copy():
    # task 0: retry after failure; task 1: overlapping copy; task 2: copy after success
    key = np.array([0, 0, 1, 1, 2, 2])
    start = np.array([0.0, 10.0, 0.0, 5.0, 0.0, 20.0])
    end = np.array([8.0, 20.0, 30.0, 12.0, 10.0, 25.0])
    ok = np.array([False, True, False, True, True, False])
    assert infer_speculative(key, start, end, ok).tolist() == [
        False, False, False, True, False, True]


@pytest.mark.parametrize("name", ["hadoop_testdata/hadoop-sls/2jobs2min-rumen-jh.json", GOOGLE0])
def test_attempt_formats_detected(name):
    assert detect(shared_file(name)) in ("rumen", "google_task_events")


def test_sort_based_unique_helpers():
    from hedge.traces.arrays import unique, unique_inverse

    values = np.array([5, 3, 5, 1, 3])
    assert unique(values).tolist() == [1, 3, 5]
    uniq, inverse, first = unique_inverse(values)
    assert uniq.tolist() == [1, 3, 5]
    assert uniq[inverse].tolist() == values.tolist()
    assert first.tolist() == [3, 1, 0]
    assert unique(np.zeros(0, dtype=np.int64)).tolist() == []
