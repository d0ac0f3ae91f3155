"""load() on every real trace format in ../shared/data, with counts from PROVENANCE.md
(or verified by hand with awk/zcat when PROVENANCE does not list them)."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pytest

from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE
from hedge.traces import detect, load
from hedge.traces.alibaba import read_machines
from tests.conftest import shared_file


def test_google_task_events_workload():
    w = load(shared_file("google_clusterdata_2011_2/task_events/part-00000-of-00500.csv.gz"))
    assert w.n_jobs == 708 and w.n_tasks == 38_354
    assert w.censored == 131_396  # scheduled, still running at the end of the part
    assert w.arrival[0] == 0 and (np.diff(w.arrival) >= 0).all()
    assert (w.duration >= 0).all() and (w.machine >= 0).all()
    assert len(w.machine_names) == w.machine.max() + 1
    assert (w.task_type == MAP).all()


def test_rumen_workload_two_teragen_jobs():
    w = load(shared_file("hadoop_testdata/hadoop-sls/2jobs2min-rumen-jh.json"))
    assert w.job_ids == ["job_1369942127770_1205", "job_1369942127770_1206"]
    assert w.tasks_per_job.tolist() == [96, 96]
    assert sorted(w.machine_names) == [f"a211{i}.smile.com" for i in range(5, 9)]
    assert w.arrival[1] == pytest.approx(105.204, abs=1e-3)  # submitTime gap (ms -> s)


def test_jhist_workload_maps_and_reduces():
    w = load(shared_file("hadoop_testdata/hadoop-mapreduce-client-jobclient/"
                         "job_1329348432655_0001-10.jhist"))
    assert w.n_jobs == 1
    assert int((w.task_type == MAP).sum()) + int((w.task_type == REDUCE).sum()) == 11


def test_alibaba2017_batch_task():
    path = shared_file("alibaba_v2017/batch_task.csv")
    assert detect(path) == "alibaba2017_batch_task"
    with pytest.raises(HedgeError, match=r"batch_task.csv:54988: field 'task_end_time'"):
        load(path)  # the real table has one Terminated row ending 1 s before it was created
    w = load(path, negative="drop")
    assert w.n_tasks == 67_012  # 67,013 Terminated minus that row
    assert w.censored == 8_847 + 3_567  # Waiting + Running
    assert w.counts["failed_tasks"] == 1_126
    assert np.median(w.duration) == 28.0


def test_alibaba2018_machine_tables():
    meta = read_machines(shared_file("alibaba_v2018/machine_meta.csv"))
    assert meta.num_rows == 17_592 and pc.count_distinct(meta["machine_id"]).as_py() == 4_034
    usage = read_machines(shared_file("alibaba_v2018/machine_usage_head.csv"))
    assert usage.num_rows == 100_002 and pc.count_distinct(usage["machine_id"]).as_py() == 16


@pytest.mark.parametrize(("name", "jobs"), [
    ("FB-2009_samples_24_times_1hr_0.tsv", 5_894),
    ("FB-2010_samples_24_times_1hr_withInputPaths_0.tsv", 25_428),
])
def test_swim_jobs_and_synthesis_rule(name, jobs):
    # FB-2010 jobs read up to TBs (9.4 M tasks at 128 MiB blocks); 16 GiB keeps the test fast
    block = 128 << 20 if name.startswith("FB-2009") else 16 << 30
    w = load(shared_file("swim_facebook/" + name), block_bytes=block)
    assert w.n_jobs == jobs
    assert (w.tasks_per_job >= 1).all()
    maps = w.task_type == MAP
    assert (w.duration[maps] >= 2.0).all()  # overhead
    # the first job of FB-2009 (job0): 740,773 input bytes -> 1 map; 2,339,561 shuffle -> 1 reduce
    if name.startswith("FB-2009"):
        j = w.job_ids.index("job0")
        part = w.job_tasks(j)
        assert w.task_type[part].tolist() == [MAP, REDUCE]
        assert w.duration[part][0] == pytest.approx(2.0 + 740_773 / (20 << 20))


@pytest.mark.parametrize(("name", "jobs", "tasks"), [
    ("GOOG_subtrace.tr.gz", 10_000, 312_558), ("YH1_sub.tr.gz", 2_910, None)])
def test_tr_traces(name, jobs, tasks):
    w = load(shared_file("hawk_eagle_tr_traces/" + name))
    assert w.n_jobs == jobs
    if tasks is not None:
        assert w.n_tasks == tasks
    assert w.arrival[0] == 0 and (np.diff(w.arrival) >= 0).all()


def test_google_job_events_is_refused_clearly():
    path = shared_file("google_clusterdata_2011_2/job_events/part-00000-of-00500.csv.gz")
    with pytest.raises(HedgeError, match="job_events has no tasks"):
        load(path)


def test_google_directory_reads_parts_as_one_stream():
    directory = shared_file("google_clusterdata_2011_2/task_events")
    w = load(directory)
    assert w.n_jobs == 1_521 and w.n_tasks == 50_611
    assert "part-00001-of-00500.csv.gz" in w.source
    assert detect(directory) == "google_task_events"
