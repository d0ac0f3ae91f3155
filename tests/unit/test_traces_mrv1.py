"""MRv1 (Hadoop 0.20 / 1.x) JobTracker history files (hedge.traces.mrv1)."""

from __future__ import annotations

import pytest

from hedge.errors import HedgeError
from hedge.traces.formats import detect, read_attempts
from tests.conftest import shared_file

RUMEN = "hadoop_testdata/rumen_small-trace-test"

HISTORY = '''Meta VERSION="1" .
Job JOBID="job_1_0001" JOBNAME="word count" USER="u" SUBMIT_TIME="1000" .
MapAttempt TASK_TYPE="SETUP" TASKID="task_1_0001_m_000009" TASK_ATTEMPT_ID="attempt_1_0001_m_000009_0" START_TIME="1500" TRACKER_NAME="tracker_h0:localhost/127\\.0\\.0\\.1:1" HTTP_PORT="50060" .
MapAttempt TASK_TYPE="MAP" TASKID="task_1_0001_m_000000" TASK_ATTEMPT_ID="attempt_1_0001_m_000000_0" START_TIME="2000" TRACKER_NAME="tracker_h1\\.example\\.com:localhost/127\\.0\\.0\\.1:1" HTTP_PORT="50060" .
MapAttempt TASK_TYPE="MAP" TASKID="task_1_0001_m_000000" TASK_ATTEMPT_ID="attempt_1_0001_m_000000_0" TASK_STATUS="FAILED" FINISH_TIME="3000" HOSTNAME="h1\\.example\\.com" ERROR="java\\.io\\.IOException: disk \\"gone\\"
	at A\\.b(A\\.java:1)
" .
MapAttempt TASK_TYPE="MAP" TASKID="task_1_0001_m_000000" TASK_ATTEMPT_ID="attempt_1_0001_m_000000_1" START_TIME="3100" TRACKER_NAME="tracker_h2:localhost/127\\.0\\.0\\.1:1" HTTP_PORT="50060" .
MapAttempt TASK_TYPE="MAP" TASKID="task_1_0001_m_000000" TASK_ATTEMPT_ID="attempt_1_0001_m_000000_1" TASK_STATUS="SUCCESS" FINISH_TIME="9100" HOSTNAME="/rack1/h2" STATE_STRING="" COUNTERS="{(FileSystemCounters)(FileSystemCounters)[(HDFS_BYTES_READ)(HDFS_BYTES_READ)(4096)]}" .
'''


def test_records_values_on_several_lines_escapes_and_setup_attempts(tmp_path):
    path = tmp_path / "job_1_0001_u_word+count"
    path.write_text(HISTORY)
    assert detect(path) == "mrv1_history"
    rows = read_attempts(path).to_pylist()
    assert [(r["attempt"][-3:], r["state"], r["node"], r["end"] - r["start"]) for r in rows] \
        == [("0_0", "FAILED", "h1.example.com", 1.0), ("0_1", "SUCCEEDED", "h2", 6.0)]
    assert rows[1]["input_bytes"] == 4096 and rows[1]["job"] == "job_1_0001"


@pytest.mark.parametrize(("text", "message"), [
    (HISTORY.replace('TASK_STATUS="FAILED"', 'TASK_STATUS="LOST"'),
     r":5: field 'TASK_STATUS': expected SUCCESS, FAILED or KILLED, found 'LOST'"),
    (HISTORY.replace('START_TIME="2000"', 'START_TIME="soon"'),
     r":4: field 'START_TIME': expected a time in ms, found 'soon'"),
    (HISTORY + 'MapAttempt TASK_TYPE="MAP" ERROR="never closed\n', r":10: the file ends inside"),
    (HISTORY + 'Task TASKID=unquoted .\n', r":10: expected a record"),
])
def test_bad_records_name_the_line_and_field(tmp_path, text, message):
    path = tmp_path / "history"
    path.write_text(text)
    with pytest.raises(HedgeError, match=rf"history{message}"):
        read_attempts(path)


def test_the_raw_history_reads_as_rumen_read_it():
    """Hadoop's own test data: the raw 0.20 JobTracker logs of four jobs and the Rumen trace
    TraceBuilder made of them. Both give the same attempts, states, times and hosts."""
    raw = shared_file(f"{RUMEN}/mr1_sample-job-tracker-logs.gz")
    rumen = shared_file(f"{RUMEN}/mr1_job-tracker-logs-trace-output.gz")

    def key(table):
        return sorted((r["attempt"], r["type"], r["state"], r["start"], r["end"], r["node"],
                       r["speculative"]) for r in table.to_pylist())

    from_raw, from_rumen = key(read_attempts(raw)), key(read_attempts(rumen))
    assert len(from_raw) == 276 and from_raw == from_rumen
    assert sum(r[6] for r in from_raw) == 69  # speculative copies, inferred in both
