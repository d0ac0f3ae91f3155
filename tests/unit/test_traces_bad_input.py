"""Bad trace files: each gives one HedgeError naming the file, the line and the field.
Partial traces (censored tasks) load and are counted."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from hedge.errors import HedgeError
from hedge.traces import load, read_attempts

# time, missing, job, task, machine, event, user, class, priority, cpu, mem, disk, constraint
G = "{t},,{job},{task},{m},{ev},user,3,9,0.1,0.1,0.0,0"


def google(tmp_path: Path, rows: list[str], name: str = "part-00000-of-00500.csv.gz") -> Path:
    path = tmp_path / name
    with gzip.open(path, "wt") as f:
        f.write("\n".join(rows) + "\n")
    return path


def ok_rows() -> list[str]:
    return [G.format(t=1_000_000, job=7, task=0, m="", ev=0),
            G.format(t=2_000_000, job=7, task=0, m=42, ev=1),
            G.format(t=5_000_000, job=7, task=0, m=42, ev=4)]


def test_google_minimal_file_loads(tmp_path):
    w = load(google(tmp_path, ok_rows()))
    assert w.n_jobs == 1 and w.duration.tolist() == [3.0]
    assert w.machine_names == ["42"]


@pytest.mark.parametrize("line, row, message", [
    (2, G.format(t=2_000_000, job=7, task=0, m=42, ev=1).rsplit(",", 1)[0],  # 12 fields
     "expected 13 fields .* found 12"),
    (3, G.format(t="5e6x", job=7, task=0, m=42, ev=4), "field 'time': expected a number"),
    (2, G.format(t=2_000_000, job=7, task=0, m=42, ev=11),
     "field 'event_type': unknown event type 11"),
    (3, G.format(t=1_500_000, job=7, task=0, m=42, ev=4),  # FINISH before SCHEDULE
     "field 'time': negative duration"),
])
def test_google_bad_row(tmp_path, line, row, message):
    rows = ok_rows()
    rows[line - 1] = row
    path = google(tmp_path, rows)
    with pytest.raises(HedgeError, match=rf"{path.name}:{line}: {message}"):
        load(path)


def test_google_empty_file(tmp_path):
    path = google(tmp_path, [])
    with pytest.raises(HedgeError, match=rf"{path.name}: empty file"):
        load(path)
    with pytest.raises(HedgeError, match=rf"{path.name}: empty file"):
        read_attempts(path, format="google_task_events")


def test_google_censored_task_counted_not_dropped(tmp_path):
    rows = ok_rows() + [G.format(t=3_000_000, job=7, task=1, m=43, ev=1),  # never ends
                        G.format(t=4_000_000, job=8, task=0, m=44, ev=4)]  # never started
    w = load(google(tmp_path, rows))
    assert w.n_tasks == 1
    assert w.censored == 1
    assert w.counts["ends_without_schedule"] == 1


BATCH_HEADER = ("task_create_time, task_end_time, job_id, task_id,number_of_instances, status,"
                " number_of_cpus_requested_per_instance_in_the_task,"
                "normalized_memory_requested_per_instance_in_the_task")


def alibaba(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "batch_task.csv"
    path.write_text("\n".join([BATCH_HEADER, *rows]) + "\n")
    return path


def test_alibaba_negative_duration_then_drop(tmp_path):
    path = alibaba(tmp_path, ["10,20,1,1,1,Terminated,50,0.1",
                              "30,25,1,2,1,Terminated,50,0.1",
                              "40,0,2,3,1,Running,50,0.1"])
    with pytest.raises(HedgeError, match=rf"{path.name}:3: field 'task_end_time': negative "
                                         r"duration"):
        load(path)
    w = load(path, negative="drop")
    assert w.duration.tolist() == [10.0]
    assert w.counts["negative_duration"] == 1
    assert w.censored == 1  # the Running row


ALIBABA_OK = "10,20,1,1,1,Terminated,50,0.1"
RUMEN_NEGATIVE = ('{"jobID": "job_1", "mapTasks": [{"taskID": "t1", "attempts": [\n'
                  '{"attemptID": "a1", "startTime": 5000, "finishTime": 4000, '
                  '"result": "SUCCESS", "hostName": "/r/h"}]}]}\n')


@pytest.mark.parametrize("name, text, read, message", [
    ("batch_task.csv", f"{BATCH_HEADER}\n{ALIBABA_OK}\n10,20,1,2,1,Done,50,0.1\n", load,
     ":3: field 'status': unknown status"),
    ("batch_task.csv", f"{BATCH_HEADER}\n{ALIBABA_OK}\nten,20,1,2,1,Terminated,50,0.1\n", load,
     ":3: field 'create': expected a number"),
    ("x.tr", "0 2 1.5 1 2\n5 3 2 1 2\n", load, ":2: n_tasks is 3, so expected 6 fields"),
    ("x.tr", "0 2 1.5 1 2\n5 2 2 1 zz\n", load, ":2: field 'd_2': expected a number"),
    ("x.tr", "0 2 1.5 1 -2\n", load, ":1: field 'd_2': negative duration"),
    ("trace.json", '{"jobID": "job_1", "mapTasks": []}\n{"jobID": x}\n', read_attempts,
     ":2: invalid JSON"),
    ("trace.json", RUMEN_NEGATIVE, read_attempts,
     ": field 'finishTime': attempt a1: negative duration"),
    ("job.jhist", "Avro-Json\n{}\n{not json}\n", read_attempts, ":3: invalid JSON event"),
    ("fb.tsv", "job0\t0\t0\t100\t0\t0\njob1\t5\t5\tlots\t0\t0\n", load,
     ":2: field 'map_input_bytes'"),
    ("what.txt", "hello world\n", load, ":1: unrecognised trace format"),
])
def test_bad_file_names_file_line_and_field(tmp_path, name, text, read, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(HedgeError, match=rf"{path.name}{message}"):
        read(path)


def test_node_table_and_missing_file(tmp_path):
    meta = tmp_path / "machine_meta.csv"
    meta.write_text("m_1,0,219,17,96,100,USING\n")
    with pytest.raises(HedgeError, match="node table .* describes machines .* not tasks, so no hedge command replays or ranks it"):
        load(meta)
    with pytest.raises(HedgeError, match="no such file"):
        load(tmp_path / "missing.csv")


def test_alibaba_without_header_and_line_numbers(tmp_path):
    path = tmp_path / "batch_task.csv"
    path.write_text("10,20,1,1,1,Terminated,50,0.1\n10,40,1,2,1,Terminated,50,0.1\n"
                    "30,25,2,3,1,Terminated,50,0.1\n")
    w = load(path, negative="drop")
    assert w.duration.tolist() == [10.0, 30.0]
    with pytest.raises(HedgeError, match=rf"{path.name}:3: field 'task_end_time'"):
        load(path)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("fb.tsv", "job0\t0\t0\t100\t0\t0\njob1\t5\t5\t1e30\t0\t0\n",
     r"fb.tsv:2: field 'map_input_bytes': 1e\+30 bytes make 7.45e\+21 tasks"),
    ("x.tr", "0 2 1.5 1 1e308\n", r"x.tr:1: field 'd_2': duration 1e308 s, expected at most"),
])
def test_values_no_job_can_have_are_refused(tmp_path, name, text, message):
    """Issue 20: the SWIM value was an internal error, the .tr one made simulate spin."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(HedgeError, match=message):
        load(path)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("nan.json", '{"jobID": "job_1", "mapTasks": [{"taskID": "t1", "attempts": [{"attemptID": '
                 '"a1", "startTime": NaN, "finishTime": 4000, "result": "SUCCESS", '
                 '"hostName": "/r/h"}]}]}\n',
     r"nan.json: field 'startTime': attempt a1: expected a time in ms, found nan"),
    ("nan.jhist", 'Avro-Json\n{}\n{"type": "MAP_ATTEMPT_STARTED", "event": {"a.B": {'
                  '"attemptId": "a_0", "taskid": "t", "startTime": Infinity}}}\n',
     r"nan.jhist:3: field 'startTime': expected a time in ms, found inf"),
])
def test_nan_and_infinite_times_are_refused(tmp_path, name, text, message):
    """Issue 20: NaN times were accepted (0% stragglers, then 'simulation stalled')."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(HedgeError, match=message):
        read_attempts(path)
