"""Bad-input suite, trace readers (issue 20): mutated real traces and generated ones, read
by `hedge traces stats --json` (and every few inputs replayed by `hedge simulate --policy
none --json OUT`), must end in exit 0 with sane output or exit 2 with one line naming the
file; a failed simulate leaves no JSON behind. See tests/fuzz_support.py."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_support import (
    BAD_JSON,
    BAD_TEXT,
    FUZZ,
    SHARED_SEEDS,
    check_trace,
    mutate,
    mutations,
    ops_for,
    shared_seeds,
    test_seeds,
)

SEEDS = {s.name: s for s in shared_seeds() + test_seeds() if s.reader != "imkp"}
SHARED_NAMES = [Path(relative).name for _, relative, _, _ in SHARED_SEEDS]
TEST_NAMES = [s.name for s in test_seeds() if s.reader != "imkp"]


def _folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="hedge-fuzz-"))


@pytest.mark.parametrize("name", SHARED_NAMES + TEST_NAMES)
def test_mutated_real_trace(name: str) -> None:
    if name not in SEEDS:
        pytest.skip(f"corpus seed {name} is under ../shared/data, which is absent")
    seed, folder = SEEDS[name], _folder()
    assert check_trace(folder, seed, seed.data, simulate=True) is None or "FAILED" in name

    @settings(FUZZ, max_examples=24)
    @given(muts=mutations(ops_for(seed.kind)), replay=st.integers(0, 3))
    def run(muts, replay):
        problem = check_trace(folder, seed, mutate(seed.data, seed.kind, muts),
                              simulate=replay == 0)
        assert problem is None, f"{seed.name} {muts}: {problem}"

    run()


# ------------------------------------------------------------ generated from scratch

def mostly(good: st.SearchStrategy, bad: st.SearchStrategy, one_in: int = 20
           ) -> st.SearchStrategy:
    """``good``, and ``bad`` one time in ``one_in`` (so that most files have one bad field
    or none, and the readers' good paths are fuzzed too)."""
    return st.integers(1, one_in).flatmap(lambda r: bad if r == 1 else good)


def number_text(good: st.SearchStrategy | None = None) -> st.SearchStrategy[str]:
    """Plausible numbers (``good``), sometimes anything a broken export writes."""
    bad = st.one_of(st.integers(-(10**20), 10**20).map(str), st.floats().map(repr),
                    st.sampled_from(BAD_TEXT))
    return mostly(st.integers(0, 10**7).map(str) if good is None else good, bad)


def json_value(good: st.SearchStrategy) -> st.SearchStrategy:
    return mostly(good, st.one_of(st.sampled_from(BAD_JSON), st.floats(),
                                  st.integers(-(2**70), 2**70), st.text(max_size=5)))


T0 = 1_300_000_000_000  # ms since the epoch, as Hadoop logs


def ms(after: int = T0) -> st.SearchStrategy:
    """A time in ms, later than ``after`` when it is plausible."""
    return json_value(st.integers(after, after + 100_000))


@st.composite
def rumen_file(draw) -> bytes:
    starts = [draw(ms()) for _ in range(draw(st.integers(1, 4)))]
    attempts = [{"attemptID": f"attempt_1_0001_m_{i:06d}_0",
                 "hostName": draw(json_value(st.sampled_from(["/r/h1", "/r/h2", "h3"]))),
                 "startTime": start, "finishTime": draw(ms(start if isinstance(start, int)
                                                           else T0)),
                 "result": draw(json_value(st.sampled_from(["SUCCESS", "KILLED", "FAILED"]))),
                 "hdfsBytesRead": draw(json_value(st.integers(0, 10**9)))}
                for i, start in enumerate(starts)]
    tasks = [{"taskID": f"task_1_0001_m_{i:06d}", "attempts": [a]}
             for i, a in enumerate(attempts)]
    job = {"jobID": "job_1_0001", "submitTime": draw(ms()),
           draw(st.sampled_from(["mapTasks", "reduceTasks"])): tasks,
           "otherTasks": draw(json_value(st.just([])))}
    return json.dumps(job).encode()


@st.composite
def jhist_file(draw) -> bytes:
    lines = ["Avro-Json", '{"type": "record", "name": "Event", "fields": []}']

    def event(kind: str, record: str, **fields) -> None:
        lines.append(json.dumps({"type": kind, "event": {
            f"org.apache.hadoop.mapreduce.jobhistory.{record}": fields}}))

    event("JOB_SUBMITTED", "JobSubmitted", jobid="job_1_0001", submitTime=draw(ms()))
    for i in range(draw(st.integers(1, 3))):
        attempt = f"attempt_1_0001_m_{i:06d}_0"
        start = draw(ms())
        event("MAP_ATTEMPT_STARTED", "TaskAttemptStarted", attemptId=attempt,
              taskid=f"task_1_0001_m_{i:06d}", startTime=start, trackerName="h1")
        counters = {"groups": [{"counts": [{"name": "HDFS_BYTES_READ",
                                            "value": draw(json_value(st.integers(0, 10**9)))}]}]}
        event(draw(mostly(st.sampled_from(["MAP_ATTEMPT_FINISHED", "MAP_ATTEMPT_FINISHED",
                                           "MAP_ATTEMPT_FAILED", "MAP_ATTEMPT_KILLED"]),
                          st.just("MAP_ATTEMPT_STRANGE"))),
              "MapAttemptFinished", attemptId=attempt,
              finishTime=draw(ms(start if isinstance(start, int) else T0)),
              hostname=draw(json_value(st.just("h1"))),
              counters=draw(json_value(st.just(counters))))
    return ("\n".join(lines) + "\n").encode()


@st.composite
def mrv1_file(draw) -> bytes:
    def t(after: str = "1240000000000") -> str:
        low = int(after) if after.isdigit() else 1_240_000_000_000
        return draw(number_text(st.integers(low, low + 100_000).map(str)))

    lines = ['Meta VERSION="1" .', f'Job JOBID="job_1_0001" SUBMIT_TIME="{t()}" .']
    for i in range(draw(st.integers(1, 3))):
        ids = f'TASK_TYPE="MAP" TASKID="task_1_0001_m_{i:06d}" ' \
              f'TASK_ATTEMPT_ID="attempt_1_0001_m_{i:06d}_0"'
        start = t()
        lines.append(f'MapAttempt {ids} START_TIME="{start}" TRACKER_NAME="tracker_h1:x" .')
        status = draw(mostly(st.sampled_from(["SUCCESS", "FAILED", "KILLED"]),
                             st.sampled_from(["", "OK", "success"])))
        counters = f"{{(g)(G)[(HDFS_BYTES_READ)(read)({draw(number_text())})]}}"
        lines.append(f'MapAttempt {ids} TASK_STATUS="{status}" FINISH_TIME="{t(start)}" '
                     f'HOSTNAME="/r/h1" COUNTERS="{counters}" .')
    return ("\n".join(lines) + "\n").encode()


def _rows(draw, make_row, n_max: int = 6) -> bytes:
    return ("\n".join(make_row() for _ in range(draw(st.integers(1, n_max)))) + "\n").encode()


@st.composite
def google_file(draw) -> bytes:
    """SCHEDULE then an ending event per task, times rising (µs)."""
    rows, clock = [], 600_000_000
    for task in range(draw(st.integers(1, 3))):
        for event in ("1", draw(st.sampled_from(["4", "4", "3", "5"]))):
            clock += draw(st.integers(0, 10**8))
            rows.append(",".join([draw(number_text(st.just(str(clock)))), "",
                                  draw(mostly(st.just("7"), st.sampled_from(["-7", "2e12"]))),
                                  str(task), draw(st.sampled_from(["42", "", "43"])),
                                  draw(number_text(st.just(event))),
                                  "u", "3", "9", draw(number_text()), "0.1", "0.0", "0"]))
    return ("\n".join(rows) + "\n").encode()


@st.composite
def alibaba_file(draw) -> bytes:
    def row() -> str:
        return ",".join([draw(number_text(st.integers(0, 1000).map(str))),
                         draw(number_text(st.integers(1000, 2000).map(str))),
                         draw(st.sampled_from(["1", "2"])), "1", "1",
                         draw(mostly(st.sampled_from(["Terminated", "Waiting", "Failed"]),
                                     st.sampled_from(["x", "", "terminated"]))),
                         "100", draw(number_text())])
    return _rows(draw, row)


@st.composite
def swim_file(draw) -> bytes:
    def row() -> str:
        return "\t".join([f"job{draw(st.integers(0, 9))}",
                          *(draw(number_text(st.integers(0, 10**9).map(str)))
                            for _ in range(5))])
    return _rows(draw, row)


@st.composite
def tr_file(draw) -> bytes:
    def row() -> str:
        n = draw(st.integers(1, 3))
        seconds = st.floats(0, 100).map(repr)
        durations = [draw(number_text(seconds))
                     for _ in range(n + draw(mostly(st.just(0), st.just(1))))]
        return " ".join([draw(number_text(seconds)),
                         draw(mostly(st.just(str(n)),
                                     st.sampled_from(["0", "1.5", "-1", "1e308", "inf"]))),
                         "5.0", *durations])
    return _rows(draw, row)


GENERATED = {"rumen": rumen_file, "jhist": jhist_file, "mrv1": mrv1_file,
             "google": google_file, "alibaba2017": alibaba_file, "swim": swim_file,
             "tr": tr_file}


@pytest.mark.parametrize("reader", sorted(GENERATED))
def test_generated_trace(reader: str) -> None:
    folder = _folder()
    seed = type("Seed", (), {"reader": reader})()

    @settings(FUZZ, max_examples=30)
    @given(data=GENERATED[reader](), replay=st.integers(0, 3))
    def run(data, replay):
        problem = check_trace(folder, seed, data, simulate=replay == 0)
        assert problem is None, f"{reader} {data[:2000]!r}: {problem}"

    run()
