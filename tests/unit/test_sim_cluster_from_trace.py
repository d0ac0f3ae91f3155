"""``hedge simulate --trace``: the cluster comes from the trace (one node per machine it
names), ``--cluster`` keys win, and the output says which cluster ran and why."""

from __future__ import annotations

import html
import json
import math

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
YH1 = "hawk_eagle_tr_traces/YH1_sub.tr.gz"
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
                                  "origin": f"{FROM_MACHINES}; {DEFAULT_SLOTS}",
                                  "trace_load_slots": round(load(trace).slot_demand(), 1)}


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


@pytest.mark.parametrize("relative,options", [(ALIBABA, {"negative": "drop"}), (SWIM, {})])
def test_traces_without_machines_that_fit_say_the_default_cluster_is_used(relative, options):
    workload = load(shared_file(relative), **options)
    assert workload.machine_names == []
    # Alibaba 2017 keeps about 210 slots busy, SWIM's FB-2009 day 46: the default's 400 fit
    choice = cluster_from_trace("", 0, workload.slots_per_machine, workload.slot_demand())
    assert choice.config == ClusterConfig()
    assert choice.describe() == f"100 nodes x 4 slots ({NO_MACHINES}; {DEFAULT_SLOTS})"
    assert choice.overload() is None


@pytest.mark.parametrize("relative,demand", [(TR, 3482), (YH1, 3149)])
def test_traces_without_machines_that_do_not_fit_get_a_cluster_sized_for_their_load(
        relative, demand):
    workload = load(shared_file(relative))
    assert workload.machine_names == []
    assert workload.slot_demand() == pytest.approx(demand, abs=1)
    choice = cluster_from_trace("", 0, workload.slots_per_machine, workload.slot_demand())
    nodes = math.ceil(workload.slot_demand() / 4 / 0.75)
    assert choice.config == ClusterConfig(nodes=nodes)
    assert choice.describe() == (
        f"{nodes:,} nodes x 4 slots (nodes: sized for the trace's load ({demand:,} slots busy "
        f"while its jobs arrive) at about 75%, because the trace names no machines; "
        f"{DEFAULT_SLOTS})")
    assert choice.overload() is None
    assert choice.as_dict()["trace_load_slots"] == pytest.approx(demand, abs=1)
    # its slots per node, given, size it too
    assert cluster_from_trace("slots=8", 0, None, workload.slot_demand()).config.nodes == \
        math.ceil(workload.slot_demand() / 8 / 0.75)


def test_a_cluster_smaller_than_the_trace_s_load_is_said_to_be(capsys, tmp_path):
    trace = shared_file(RUMEN)  # about 127 slots busy while its jobs arrive
    demand = load(trace).slot_demand()
    assert 100 < demand < 150
    js, report = tmp_path / "t.json", tmp_path / "report"
    assert main(["simulate", "--trace", str(trace), "--policy", "none", "--quiet", "--json",
                 str(js), "--out", str(report), "--cluster", "nodes=7"]) == 0
    warning = (f"the trace keeps about {demand:,.0f} slots busy while its jobs arrive, "
               f"{demand / 28:.1f}x this cluster's 28")
    assert f"warning: {warning}" in capsys.readouterr().err
    assert json.loads(js.read_text())[0]["cluster"]["trace_load_slots"] == round(demand, 1)
    assert html.escape(warning) in (report / "report.html").read_text()
    # on its own 784 machines it fits: no warning
    assert main(["simulate", "--trace", str(trace), "--policy", "none", "--quiet"]) == 0
    assert "warning:" not in capsys.readouterr().err


def test_the_overload_warning_names_the_load_and_the_cluster():
    choice = cluster_from_trace("nodes=10", 0, None, 100.0)
    assert choice.overload() == (
        "the trace keeps about 100 slots busy while its jobs arrive, 2.5x this cluster's 40: "
        "its queue grows for as long as its jobs arrive, and job times measure that queue as "
        "much as the policies (--cluster nodes=N gives more nodes)")
    assert cluster_from_trace("nodes=25", 0, None, 100.0).overload() is None


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
