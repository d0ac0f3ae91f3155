"""Task-history table: CSV reader, validation, speculative inference, format detection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hedge.errors import HedgeError
from hedge.nodes.history import (
    HISTORY_SCHEMA,
    infer_speculative,
    make_history,
    read_csv_history,
)
from hedge.nodes.sources import from_trace_attempts, load_histories, load_history
from tests.conftest import shared_file

HEADER = "job,task,attempt,node,start,end,state\n"


def write(tmp_path: Path, body: str, name: str = "h.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


def test_csv_reads_rows_and_infers_speculative(tmp_path):
    path = write(tmp_path, "j1,t1,a1,n1,0,10,SUCCEEDED\n"
                           "j1,t1,a2,n2,5,12,KILLED\n"       # overlaps a1: a copy
                           "j1,t2,a3,n2,0,8,FAILED\n"
                           "j1,t2,a4,n3,9,15,succeeded\n"    # after a3 ended: a retry
                           "j2,t1,a1,n1, 20 ,30,SUCCEEDED\n")
    table = read_csv_history(path)
    assert table.schema == HISTORY_SCHEMA
    assert table.column("speculative").to_pylist() == [False, True, False, False, False]
    assert table.column("state").to_pylist()[3] == "SUCCEEDED"
    assert table.column("start").to_pylist()[4] == 20.0
    assert table.column("type").to_pylist() == [""] * 5


@pytest.mark.parametrize(("body", "message"), [
    ("j,t,a,n,0,x,SUCCEEDED\n", "h.csv:2: field 'end' = 'x', expected a number of seconds"),
    ("j,t,a,n,0,1,SUCCEEDED\nj,t,b,,0,2,FAILED\n",
     "h.csv:3: field 'node', expected a host name (attempt without a node)"),
    ("j,t,a,n,0,1,SUCCEEDED\nj,t,b,n,3,2,FAILED\n",
     "h.csv:3: field 'end' = 2.0, expected a time >= start (clocks out of order)"),
    ("j,t,a,n,0,1,SUCCEEDED,4\n", "h.csv:2: 8 fields, expected 7"),
    ("j,t,a,n,0,1,DONE\n", "h.csv:2: field 'state' = 'DONE', expected one of SUCCEEDED"),
    ("j,t,a,n,0,1,SUCCEEDED\nj,u,a,m,0,1,SUCCEEDED\n",
     "h.csv:3: field 'attempt' = 'a', expected an attempt id unique within its job"),
    ("j,t,a,n,0,inf,SUCCEEDED\n", "h.csv:2: field 'end' = inf, expected a finite time"),
])
def test_csv_errors_name_file_line_and_field(tmp_path, body, message):
    with pytest.raises(HedgeError) as err:
        read_csv_history(write(tmp_path, body))
    assert message in str(err.value)


def test_csv_header_is_checked(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("job,task,node,start,end,state\nj,t,n,0,1,SUCCEEDED\n")
    with pytest.raises(HedgeError, match=r"bad.csv:1: header must be"):
        read_csv_history(path)


def test_infer_speculative_is_per_task_and_order_independent():
    # rows deliberately out of order; task b's attempt must not see task a's times
    table = make_history({
        "job": ["j"] * 5, "task": ["a", "b", "a", "b", "a"],
        "attempt": ["1", "2", "3", "4", "5"], "node": ["n"] * 5,
        "start": np.array([50.0, 0.0, 0.0, 5.0, 200.0]),
        "end": np.array([60.0, 100.0, 100.0, 6.0, 300.0]),
        "state": ["KILLED", "SUCCEEDED", "SUCCEEDED", "KILLED", "FAILED"]})
    assert infer_speculative(table).tolist() == [True, False, False, True, False]


def test_load_history_detects_csv_and_missing_file(tmp_path):
    path = write(tmp_path, "j,t,a,n,0,1,SUCCEEDED\n")
    assert load_history(path).num_rows == 1
    with pytest.raises(HedgeError, match="no such file"):
        load_history(tmp_path / "nope.csv")


def test_trace_attempts_without_node_are_left_out():
    table = pa.table({
        "job": ["j", "j"], "task": ["t", "u"], "attempt": ["a", "b"], "node": ["n", ""],
        "type": ["MAP", "MAP"], "start": [0.0, 0.0], "end": [1.0, 2.0],
        "state": ["SUCCEEDED", "SUCCEEDED"], "speculative": [False, False],
        "input_bytes": [1.0, 2.0]})
    history = from_trace_attempts(table, "trace")
    assert history.column("attempt").to_pylist() == ["a"]
    assert history.schema == HISTORY_SCHEMA


def test_jhist_and_rumen_through_the_trace_readers():
    jhist = shared_file("hadoop_testdata/hadoop-mapreduce-client-hs/job_1329348432655_0001-"
                        "1329348443227-user-Sleep+job-1329348468601-10-1-SUCCEEDED-default.jhist")
    table = load_history(jhist)
    assert table.num_rows == 12
    assert set(table.column("type").to_pylist()) == {"MAP", "REDUCE"}
    rumen = load_history(shared_file("hadoop_testdata/gridmix_system_traces/trace_5m.json.gz"))
    assert len(set(rumen.column("node").to_pylist())) == 8


def test_several_sources_and_directories(tmp_path):
    a = tmp_path / "d" / "a.csv"
    a.parent.mkdir()
    a.write_text(HEADER + "j1,t,a,n1,0,1,SUCCEEDED\n")
    b = tmp_path / "d" / "b.csv"
    b.write_text(HEADER + "j2,t,a,n2,0,2,SUCCEEDED\n")
    table = load_histories([str(a.parent)])
    assert table.column("job").to_pylist() == ["j1", "j2"]  # unique ids kept
    c = tmp_path / "c.csv"
    c.write_text(HEADER + "j1,t,a,n3,0,3,SUCCEEDED\n")  # same job and attempt as a.csv
    clashing = load_histories([str(a), str(c)])
    assert clashing.column("job").to_pylist() == ["a.csv:j1", "c.csv:j1"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(HedgeError, match="directory holds no history files"):
        load_histories([str(tmp_path / "empty")])
