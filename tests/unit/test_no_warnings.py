"""The commands of README's "Using hedge" print no Python or numpy warnings (RuntimeWarning:
divide by zero, invalid value, mean of empty slice, ...), on real traces and on edge cases:
one-task jobs, all-zero durations, all-equal durations."""

from __future__ import annotations

import warnings

import pytest

from hedge.cli import main
from tests.conftest import shared_file

GOOGLE = "google_clusterdata_2011_2/task_events/part-00000-of-00500.csv.gz"
ALIBABA = "alibaba_v2017/batch_task.csv"
RUMEN = "hadoop_testdata/rumen_small-trace-test/mr2_folder-input-trace.json.gz"
JHIST = "hadoop_testdata/hadoop-mapreduce-client-jobclient/job_1329348432655_0001-10.jhist"
SWIM = "swim_facebook/FB-2009_samples_24_times_1hr_0.tsv"
TR = "hawk_eagle_tr_traces/GOOG_subtrace.tr.gz"

EDGE = {  # .tr: arrival n_tasks mean d_1 .. d_n
    "one_task.tr": "0 1 5 5\n10 1 7 7\n20 1 3 3\n",
    "zero.tr": "0 3 0 0 0 0\n10 2 0 0 0\n",
    "mixed_zero.tr": "0 4 1 0 0 0 4\n5 2 0 0 0\n",
    "equal.tr": "0 4 3 3 3 3 3\n",
}


def _quiet_run(args: list[str]) -> int:
    """``hedge ARGS`` with every warning recorded (not raised: an exception inside a policy
    could be caught and change the run); fails listing the warnings with their origin."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(args)
    assert not caught, [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})"
                        for w in caught]
    return code


@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edge")
    for name, text in EDGE.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("name", sorted(EDGE))
def test_traces_stats_and_plans_on_edge_cases(edge, capsys, name):
    trace = str(edge / name)
    assert _quiet_run(["traces", "stats", trace]) == 0
    assert _quiet_run(["traces", "stats", trace, "--json"]) == 0
    assert _quiet_run(["plan", "replicate", "--trace", trace, "--tasks", "10",
                       "--cost-weight", "0.3"]) in (0, 2)  # zero durations: a clear refusal
    assert _quiet_run(["plan", "chronos", "--trace", trace, "--tasks", "10",
                       "--deadline", "100"]) in (0, 2)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EDGE))
def test_traces_stats_page_and_simulate_on_edge_cases(edge, tmp_path, capsys, name):
    assert _quiet_run(["traces", "stats", str(edge / name), "--out", str(tmp_path / "pg")]) == 0
    assert _quiet_run(["simulate", "--trace", str(edge / name), "--policy",
                       "none,hadoop,late,adaptive,chronos-clone", "--deadline-factor", "1.5",
                       "--out", str(tmp_path / "rep"), "--quiet"]) == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["one_task.tr", "zero.tr"])
def test_simulate_every_policy_on_edge_cases(edge, tmp_path, capsys, name):
    assert _quiet_run(["simulate", "--trace", str(edge / name), "--policy", "all",
                       "--deadline", "10", "--quiet"]) == 0


@pytest.mark.slow
@pytest.mark.parametrize("relative", [GOOGLE, ALIBABA, RUMEN, JHIST, SWIM, TR])
def test_traces_stats_and_plan_replicate_on_real_traces(capsys, relative):
    trace = str(shared_file(relative))
    drop = ["--drop-negative"] if relative == ALIBABA else []
    assert _quiet_run(["traces", "stats", trace, *drop]) == 0
    assert _quiet_run(["plan", "replicate", "--trace", trace, "--tasks", "100",
                       "--cost-weight", "0.3", *drop]) == 0


@pytest.mark.slow
def test_readme_commands_on_small_inputs(tmp_path, capsys):
    small = "jobs=6,tasks=20,dist=pareto:1.5,straggler_ratio=0.1"
    assert _quiet_run(["simulate", "--synthetic", small, "--cluster",
                       "nodes=10,slots=4,heterogeneity=3.0,contention=2.5", "--policy",
                       "none,hadoop,late,mantri,adaptive", "--out", str(tmp_path), "--quiet"]) == 0
    assert _quiet_run(["simulate", "--trace", str(shared_file(RUMEN)), "--policy",
                       "hadoop,chronos-restart", "--deadline-factor", "1.5", "--json",
                       str(tmp_path / "t.json"), "--quiet"]) == 0
    assert _quiet_run(["simulate", "--synthetic", "default:jobs=5", "--policy", "hadoop",
                       "--blacklist", "3,7@600-1200", "--quiet"]) == 0
    assert _quiet_run(["simulate", "--synthetic", "jobs=20,tasks=10", "--policy",
                       "none,chronos-clone", "--deadline", "60", "--quiet"]) == 0
    assert _quiet_run(["plan", "chronos", "--tasks", "100", "--deadline", "100", "--tmin", "10",
                       "--beta", "2", "--theta", "1e-4"]) == 0


@pytest.mark.slow
def test_warnings_as_errors_in_a_fresh_interpreter(edge, tmp_path):
    # -W error turns every warning into an exception, imports included; the report's plots
    # (matplotlib) run too
    import subprocess
    import sys

    for args in (["traces", "stats", str(edge / "zero.tr")],
                 ["simulate", "--trace", str(edge / "mixed_zero.tr"), "--policy",
                  "none,hadoop,late,adaptive", "--out", str(tmp_path / "rep"), "--quiet"]):
        done = subprocess.run([sys.executable, "-W", "error", "-m", "hedge.cli", *args],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Warning" not in done.stderr
