"""Spark event logs (hedge.traces.spark): the real logs of Spark's history-server tests in
../shared/data/spark_eventlogs (PROVENANCE.md section 6), and small logs written here."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE
from hedge.traces.formats import detect, load, read_attempts
from tests.conftest import shared_file

SPECULATIVE_LOG = "application_1628109047826_1317105"  # YARN, Spark 3.1.1
YARN_LOG = "application_1516285256255_0012"  # 2 stages on 2 hosts


def _real(name: str | None = None) -> Path:
    return shared_file(f"spark_eventlogs/{name}" if name else "spark_eventlogs")


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_real_log_reads_as_counted_independently():
    files = sorted(_real().iterdir())
    assert len(files) == 18
    for path in files:
        ends = [e for e in _events(path) if e["Event"] == "SparkListenerTaskEnd"]
        if not ends:  # three logs of applications that ran no task
            with pytest.raises(HedgeError, match="ran no task"):
                load(path)
            continue
        assert detect(path) == "spark_eventlog", path
        stages = {(e["Stage ID"], e["Stage Attempt ID"]) for e in ends}
        done = {(e["Stage ID"], e["Stage Attempt ID"], e["Task Info"]["Index"]) for e in ends
                if e["Task End Reason"]["Reason"] == "Success"}
        rows = read_attempts(path)
        assert rows.num_rows == len(ends), path
        assert len(set(rows["job"].to_pylist())) == len(stages), path
        assert sum(rows["speculative"].to_pylist()) \
            == sum(e["Task Info"]["Speculative"] for e in ends), path
        assert set(rows["node"].to_pylist()) == {e["Task Info"]["Host"] for e in ends}, path
        workload = load(path)
        assert workload.n_tasks == len(done), path
        assert workload.n_jobs == len({key[:2] for key in done}), path
        types = Counter("MAP" if e["Task Type"] == "ShuffleMapTask" else "REDUCE" for e in ends)
        assert Counter(rows["type"].to_pylist()) == types, path


def test_task_end_counts_are_those_of_the_provenance_table():
    counts = {path.name: sum(e["Event"] == "SparkListenerTaskEnd" for e in _events(path))
              for path in sorted(_real().iterdir())}
    assert {name: counts[name] for name in (SPECULATIVE_LOG, YARN_LOG, "local-1430917381534",
                                            "app-20200706201101-0003")} \
        == {SPECULATIVE_LOG: 5, YARN_LOG: 24, "local-1430917381534": 110,
            "app-20200706201101-0003": 48}
    assert sum(read_attempts(_real(n)).num_rows for n in counts if counts[n]) \
        == sum(counts.values())


def test_the_speculative_copy_of_the_spark_311_log():
    """PROVENANCE's '2 speculative tasks' are the two lines (TaskStart and TaskEnd) of the
    one speculative attempt: task 3 of stage 0 ran 64 s on host-12413 while the other three
    took 2-5 s; Spark copied it to host-12291 and killed the copy when the original won."""
    path = _real(SPECULATIVE_LOG)
    assert path.read_text().count('"Speculative":true') == 2
    rows = {r["attempt"]: r for r in read_attempts(path).to_pylist()}
    copy, original = rows["3.1 (TID 4)"], rows["3.0 (TID 3)"]
    assert [a for a, r in rows.items() if r["speculative"]] == ["3.1 (TID 4)"]
    assert (copy["state"], copy["node"], original["state"], original["node"]) \
        == ("KILLED", "host-12291", "SUCCEEDED", "host-12413")
    assert original["start"] < copy["start"] < original["end"] <= copy["end"]
    workload = load(path)
    assert workload.job_ids == [f"{SPECULATIVE_LOG}/stage_0.0"]
    assert workload.duration.max() == pytest.approx(63.773)
    assert sorted(workload.machine_names) == ["host-12291", "host-12413", "host-25261",
                                              "host-5290"]


def test_cli_stats_simulate_and_nodes_rank_on_a_real_log(capsys):
    path = str(_real(YARN_LOG))
    assert main(["traces", "stats", path]) == 0
    out = capsys.readouterr().out
    assert "groups: 2   tasks: 20" in out and "note: Spark: each stage attempt is a job" in out
    assert main(["simulate", "--trace", path, "--policy", "none,hadoop", "--quiet"]) == 0
    header, *rows = (line.split() for line in capsys.readouterr().out.splitlines()
                     if line.strip() and not line.startswith(("note:", "standings", "  ")))
    jobs = header.index("jobs")
    assert [(row[0], row[jobs]) for row in rows] == [("none", "2"), ("hadoop", "2")]
    assert main(["nodes", "rank", path, "--json"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    assert {n["node"]: n["count"] for n in ranked["nodes"]} \
        == {"apiros-2.gce.test.com": 8, "apiros-3.gce.test.com": 12}


# --- small logs written here -------------------------------------------------------------

def _task(event: str, tid: int, index: int, *, stage: int = 0, attempt: int = 0,
          launch: int = 1_000_000, finish: int = 1_001_000, host: str = "h1",
          reason: str = "Success", speculative: bool = False, kind: str = "ResultTask",
          read: int = 100) -> dict:
    info = {"Task ID": tid, "Index": index, "Attempt": attempt, "Launch Time": launch,
            "Executor ID": "1", "Host": host, "Speculative": speculative,
            "Finish Time": finish if event == "End" else 0, "Failed": reason
            not in ("Success", "TaskKilled"), "Killed": reason == "TaskKilled"}
    if event == "Start":
        return {"Event": "SparkListenerTaskStart", "Stage ID": stage, "Stage Attempt ID": 0,
                "Task Info": info}
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage, "Stage Attempt ID": 0,
            "Task Type": kind, "Task End Reason": {"Reason": reason}, "Task Info": info,
            "Task Metrics": {"Input Metrics": {"Bytes Read": read},
                             "Shuffle Read Metrics": {"Remote Bytes Read": 7,
                                                      "Local Bytes Read": 3}}}


def _pair(tid: int, index: int, **kw) -> list[dict]:
    return [_task("Start", tid, index, **kw), _task("End", tid, index, **kw)]


LOG = [
    {"Event": "SparkListenerLogStart", "Spark Version": "3.5.0"},
    {"Event": "SparkListenerApplicationStart", "App ID": "app-1", "Timestamp": 999_000},
    {"Event": "SparkListenerStageSubmitted",
     "Stage Info": {"Stage ID": 0, "Stage Attempt ID": 0, "Submission Time": 999_500}},
    *_pair(0, 0, kind="ShuffleMapTask", reason="ExceptionFailure", finish=1_000_500),
    *_pair(1, 0, attempt=1, kind="ShuffleMapTask", launch=1_000_600, finish=1_001_600),
    *_pair(2, 1, kind="ShuffleMapTask", host="h2", finish=1_002_000),
    {"Event": "SparkListenerStageSubmitted",
     "Stage Info": {"Stage ID": 1, "Stage Attempt ID": 0, "Submission Time": 1_003_000}},
    _task("Start", 3, 0, stage=1, launch=1_003_000),
    _task("Start", 4, 1, stage=1, launch=1_003_000),
    _task("Start", 5, 2, stage=1, launch=1_003_000),
    *_pair(6, 0, stage=1, attempt=1, speculative=True, host="h2", launch=1_005_000,
           finish=1_006_000),
    _task("End", 3, 0, stage=1, launch=1_003_000, finish=1_006_100, reason="TaskKilled"),
    _task("End", 4, 1, stage=1, launch=1_003_000, finish=1_004_000),
]


def _write(path: Path, events: list[dict | str]) -> Path:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n"
                            for e in events))
    return path


def test_a_written_log_maps_stages_tasks_and_attempts(tmp_path):
    path = _write(tmp_path / "app-1", LOG)
    rows = {r["attempt"]: r for r in read_attempts(path).to_pylist()}
    assert {a: (r["job"], r["task"], r["type"], r["state"], r["speculative"])
            for a, r in rows.items()} == {
        "0.0 (TID 0)": ("app-1/stage_0.0", "0", "MAP", "FAILED", False),
        "0.1 (TID 1)": ("app-1/stage_0.0", "0", "MAP", "SUCCEEDED", False),
        "1.0 (TID 2)": ("app-1/stage_0.0", "1", "MAP", "SUCCEEDED", False),
        "0.1 (TID 6)": ("app-1/stage_1.0", "0", "REDUCE", "SUCCEEDED", True),
        "0.0 (TID 3)": ("app-1/stage_1.0", "0", "REDUCE", "KILLED", False),
        "1.0 (TID 4)": ("app-1/stage_1.0", "1", "REDUCE", "SUCCEEDED", False)}
    assert rows["1.0 (TID 2)"]["input_bytes"] == 110  # input plus shuffle bytes read
    workload = load(path)
    assert workload.job_ids == ["app-1/stage_0.0", "app-1/stage_1.0"]
    assert workload.arrival.tolist() == [0.0, 3.5]  # the stages' submission times
    assert workload.task_type.tolist() == [MAP, MAP, REDUCE, REDUCE]
    assert workload.duration.tolist() == [1.0, 2.0, 1.0, 1.0]
    assert workload.censored == 1  # task 2 of stage 1: started, never ended
    assert any("1 task attempt(s) started without a SparkListenerTaskEnd" in note
               and "1 task(s) with no finished attempt are left out" in note
               for note in workload.notes)


def test_gzip_and_rolling_directories_read_as_the_plain_log(tmp_path):
    plain = read_attempts(_write(tmp_path / "app-1", LOG)).to_pylist()
    packed = tmp_path / "app-1.gz"
    packed.write_bytes(gzip.compress((tmp_path / "app-1").read_bytes()))
    rolling = tmp_path / "eventlog_v2_app-1"
    rolling.mkdir()
    for k, chunk in ((1, LOG[:5]), (2, LOG[5:9]), (10, LOG[9:])):  # 10 after 2, as numbers
        _write(rolling / f"events_{k}_app-1", chunk)
    (rolling / "appstatus_app-1").write_text("")
    assert detect(rolling) == "spark_eventlog"
    assert read_attempts(packed).to_pylist() == plain
    assert read_attempts(rolling).to_pylist() == plain


def test_nodes_rank_takes_a_rolling_directory_as_one_log(tmp_path, capsys):
    rolling = tmp_path / "eventlog_v2_app-1"
    rolling.mkdir()
    _write(rolling / "events_1_app-1", LOG[:9])
    _write(rolling / "events_2_app-1", LOG[9:])
    assert main(["nodes", "rank", str(rolling), "--min-tasks", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attempts"] > 0


RESUBMITTED = {**_task("End", 2, 1, kind="ShuffleMapTask", host="h2"),
               "Task End Reason": {"Reason": "Resubmitted"}}


def test_a_resubmitted_end_is_counted_not_a_second_attempt(tmp_path):
    workload = load(_write(tmp_path / "log", [*LOG, RESUBMITTED]))
    assert workload.n_tasks == 4 and workload.counts["resubmitted_ends"] == 1
    assert any("Resubmitted" in note for note in workload.notes)


END = json.dumps(LOG[4])  # TaskEnd of TID 0


@pytest.mark.parametrize(("lines", "message"), [
    ([], r"empty file, expected a trace"),
    (LOG[:3], r"without SparkListenerTaskStart or TaskEnd events: the application ran no task"),
    ([*LOG[:3], _task("Start", 0, 0)], r"no task completed, so nothing to compute statistics"),
    ([*LOG[:3], END[:-30]], r"log:4: invalid JSON \(Unterminated string"),
    ([*LOG[:3], "[1, 2]"], r"log:4: field 'Event': expected a JSON object"),
    ([*LOG[:3], END.replace('"Finish Time": 1000500, ', "")],
     r"log:4: field 'Finish Time': missing, expected a time in ms$"),
    ([*LOG[:3], END.replace('"Finish Time": 1000500', '"Finish Time": "soon"')],
     r"log:4: field 'Finish Time': expected a time in ms since the epoch, 0 to 1e\+14, found 'soon'"),
    ([*LOG[:3], END.replace('"Launch Time": 1000000', '"Launch Time": NaN')],
     r"log:4: field 'Launch Time': expected a time in ms since the epoch, 0 to 1e\+14, found nan"),
    ([*LOG[:3], END.replace('"Launch Time": 1000000', '"Launch Time": -1')],
     r"log:4: field 'Launch Time': expected a time in ms since the epoch, 0 to 1e\+14, found -1"),
    ([*LOG[:3], END.replace('"Finish Time": 1000500', '"Finish Time": 1' + '0' * 400)],
     r"log:4: field 'Finish Time': expected a time in ms since the epoch, 0 to 1e\+14, found 1000"),
    ([*LOG[:3], "[" * 100_000 + "]" * 100_000], r"log:4: invalid JSON \(nested too deeply\)"),
    ([*LOG[:3], END.replace('"Finish Time": 1000500', '"Finish Time": 999000')],
     r"log:4: field 'Finish Time': task 0 ran -1.000 s from its Launch Time"),
    ([*LOG[:3], END.replace('"Host": "h1"', '"Host": 7')],
     r"log:4: field 'Host': expected a host name, found 7"),
    ([*LOG[:3], END.replace('"Task ID": 0', '"Task ID": "zero"')],
     r"log:4: field 'Task ID': expected an integer >= 0, found 'zero'"),
    ([*LOG[:3], END.replace('"ShuffleMapTask"', '"MapTask"')],
     r"log:4: field 'Task Type': expected ShuffleMapTask or ResultTask, found 'MapTask'"),
    ([*LOG[:3], END.replace('"ShuffleMapTask"', '["ShuffleMapTask"]')],
     r"log:4: field 'Task Type': expected ShuffleMapTask or ResultTask, found \['Shuff"),
    ([*LOG[:3], END.replace('"Bytes Read": 100', '"Bytes Read": "many"')],
     r"log:4: field 'Bytes Read': expected a byte count >= 0, found 'many'"),
    ([*LOG[:3], END, END], r"log:5: field 'Task ID': task 0 already ended at .*log:4"),
])
def test_bad_logs_are_one_line_and_exit_2(tmp_path, capsys, lines, message):
    path = _write(tmp_path / "log", lines)
    assert main(["traces", "stats", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hedge: error: "), err
    assert re.search(message, err[0]), err[0]


@pytest.mark.parametrize(("name", "head", "codec"), [
    ("app-1.lz4", b"LZ4Block\x10\x00", "lz4"),
    ("app-1.zstd", b"\x28\xb5\x2f\xfd\x00", "zstd"),
    ("app-1.snappy.inprogress", b"\x82SNAPPY\x00\x00", "snappy"),
    ("app-1.lzf", b"ZV\x00\x01", "lzf"),
])
def test_a_log_in_a_spark_codec_is_refused_naming_it(tmp_path, capsys, name, head, codec):
    path = tmp_path / name
    path.write_bytes(head + b"\x00" * 64)
    assert main(["simulate", "--trace", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{name}: compressed with {codec}" in err[0], err
    rolling = tmp_path / "eventlog_v2_app-1"
    rolling.mkdir()
    (rolling / f"events_1_{name}").write_bytes(path.read_bytes())
    with pytest.raises(HedgeError, match=f"events_1_{name}: compressed with {codec}"):
        read_attempts(rolling)


def test_a_codec_suffix_on_plain_json_is_read(tmp_path):
    assert read_attempts(_write(tmp_path / "app-1.zstd", LOG)).num_rows == 6
