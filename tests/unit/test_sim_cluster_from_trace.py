"""``hedge simulate --trace``: the cluster comes from the trace (one node per machine it
names), ``--cluster`` keys win, and the output says which cluster ran and why."""

from __future__ import annotations

import json

import pytest

from hedge.cli import main
from hedge.sim.cluster import ClusterConfig, cluster_from_trace
from hedge.traces import load
from tests.conftest import shared_file

RUMEN = "hadoop_testdata/rumen_small-trace-test/mr2_folder-input-trace.json.gz"
JHIST = "hadoop_testdata/hadoop-mapreduce-client-jobclient/job_1329348432655_0001-10.jhist"
GOOGLE = "google_clusterdata_2011_2/task_events/part-00000-of-00500.csv.gz"
ALIBABA = "alibaba_v2017/batch_task.csv"
SWIM = "swim_facebook/FB-2009_samples_24_times_1hr_0.tsv"
TR = "hawk_eagle_tr_traces/GOOG_subtrace.tr.gz"
DEFAULT_SLOTS = (f"slots: hedge's default {ClusterConfig.slots}, because the trace does not "
                 "record slots per machine")
FROM_MACHINES = "nodes: the machines the trace's tasks ran on"
NO_MACHINES = f"nodes: hedge's default {ClusterConfig.nodes}, because the trace names no machines"


def _run(capsys, tmp_path, trace, *extra):
    js = tmp_path / "t.json"
    assert main(["simulate", "--trace", str(trace), "--policy", "none", "--quiet",
                 "--json", str(js), *extra]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("cluster: ")]
    assert len(lines) == 1, err
    return lines[0], json.loads(js.read_text())


@pytest.mark.parametrize("relative", [RUMEN, JHIST])
def test_small_traces_run_on_their_own_machines(capsys, tmp_path, relative):
    trace = shared_file(relative)
    machines = len(load(trace).machine_names)
    line, rows = _run(capsys, tmp_path, trace)
    assert line == f"cluster: {machines:,} nodes x 4 slots ({FROM_MACHINES}; {DEFAULT_SLOTS})"
    assert rows[0]["cluster"] == {"nodes": machines, "slots": 4,
                                  "origin": f"{FROM_MACHINES}; {DEFAULT_SLOTS}"}


def test_cluster_option_keys_win_and_the_rest_still_comes_from_the_trace(capsys, tmp_path):
    trace = shared_file(RUMEN)
    machines = len(load(trace).machine_names)
    line, rows = _run(capsys, tmp_path, trace, "--cluster", "slots=2,heterogeneity=2")
    assert line == (f"cluster: {machines:,} nodes x 2 slots (--cluster slots=2,heterogeneity=2; "
                    f"{FROM_MACHINES})")
    line, rows = _run(capsys, tmp_path, trace, "--cluster", "nodes=7,slots=3")
    assert line == "cluster: 7 nodes x 3 slots (--cluster nodes=7,slots=3)"
    assert rows[0]["cluster"]["nodes"] == 7


def test_google_sample_gets_one_node_per_machine():
    workload = load(shared_file(GOOGLE))
    choice = cluster_from_trace("", len(workload.machine_names), workload.slots_per_machine)
    # every machine the completed tasks ran on is a node, and each node is used
    assert choice.config.nodes == len(set(workload.machine_names)) > 5000
    assert set(workload.machine.tolist()) == set(range(choice.config.nodes))
    assert choice.origin == f"{FROM_MACHINES}; {DEFAULT_SLOTS}"


@pytest.mark.slow
def test_google_sample_job_times_on_its_own_cluster(capsys, tmp_path):
    # on hedge's 100-node default the sample queued for hours (mean job time ~30,000 s);
    # on its own 9,366 machines its jobs take minutes
    line, rows = _run(capsys, tmp_path, shared_file(GOOGLE))
    assert line.startswith("cluster: 9,366 nodes x 4 slots")
    assert rows[0]["mean_job_time"] < 1000


@pytest.mark.parametrize("relative,options", [(ALIBABA, {"negative": "drop"}), (SWIM, {}),
                                              (TR, {})])
def test_traces_without_machines_say_the_default_cluster_is_used(relative, options):
    workload = load(shared_file(relative), **options)
    assert workload.machine_names == []
    choice = cluster_from_trace("", 0, workload.slots_per_machine)
    assert choice.config == ClusterConfig()
    assert choice.describe() == f"100 nodes x 4 slots ({NO_MACHINES}; {DEFAULT_SLOTS})"


def test_slots_recorded_by_the_trace_are_used():
    choice = cluster_from_trace("", 12, 8)
    assert (choice.config.nodes, choice.config.slots) == (12, 8)
    assert choice.origin == f"{FROM_MACHINES}; slots: per machine, from the trace"


@pytest.mark.parametrize("args,origin", [
    (["--synthetic", "jobs=2,tasks=2"], "100 nodes x 4 slots (hedge.sim.cluster's defaults)"),
    (["--synthetic", "default:jobs=3"],
     "1,000 nodes x 4 slots (sized for the default workload's load, about 75 %)"),
    (["--synthetic", "default:jobs=3", "--cluster", "heterogeneity=2"],
     "1,000 nodes x 4 slots (--cluster heterogeneity=2)"),
])
def test_synthetic_workloads_say_where_their_cluster_came_from(capsys, args, origin):
    assert main(["simulate", *args, "--policy", "none", "--quiet"]) == 0
    assert f"cluster: {origin}" in capsys.readouterr().err.splitlines()
