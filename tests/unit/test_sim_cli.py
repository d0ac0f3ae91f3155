"""``hedge simulate`` end to end: table, JSON keys, report, errors."""

from __future__ import annotations

import json

import pytest

from hedge.cli import main

KEYS = {"policy", "jobs", "mean_job_time", "p50_job_time", "p95_job_time", "p99_job_time",
        "makespan", "machine_time", "energy_J", "deadline_hit_rate", "copies_launched",
        "copies_won", "copies_killed", "precision", "recall"}

SYNTH = "jobs=6,tasks=12,straggler_ratio=0.2"


def test_simulate_prints_table_writes_json_and_report(tmp_path, capsys):
    out = tmp_path / "rep"
    js = tmp_path / "t.json"
    code = main(["simulate", "--synthetic", SYNTH, "--policy", "none,hadoop",
                 "--cluster", "nodes=8,slots=2,heterogeneity=2", "--seed", "1",
                 "--deadline-factor", "3", "--out", str(out), "--json", str(js), "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:2] == ["policy", "jobs"]
    table = [line for line in text.splitlines()[1:]
             if not line.startswith(("note:", "standings", "  "))]
    assert {line.split()[0] for line in table} == {"none", "hadoop"}
    rows = json.loads(js.read_text())
    assert [r["policy"] for r in rows] == ["none", "hadoop"]
    for row in rows:
        assert set(row) >= KEYS
        assert row["jobs"] == 6
        assert 0 <= row["deadline_hit_rate"] <= 1
    html = (out / "report.html").read_text()
    for png in ("job_time_cdf.png", "cost_vs_latency.png", "copies_over_time.png"):
        assert png in html and (out / png).stat().st_size > 1000


def test_a_policy_given_what_a_live_am_lacks_says_so_under_the_table(capsys):
    code = main(["simulate", "--synthetic", SYNTH, "--policy", "hadoop,window",
                 "--cluster", "nodes=8,slots=2", "--quiet"])
    assert code == 0
    # (8 x 2 slots keep 6 jobs of 12 tasks queued: the queue note comes too)
    notes = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("note:") and "for a first slot" not in line]
    assert len(notes) == 1 and notes[0].startswith("note: window and hete-aware plan copies")
    assert "AppContext shows no headroom" in notes[0]


def test_same_seed_same_json(tmp_path):
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for f in files:
        assert main(["simulate", "--synthetic", SYNTH, "--policy", "spark", "--seed", "4",
                     "--cluster", "nodes=5,slots=2,heterogeneity=3", "--json", str(f),
                     "--quiet"]) == 0
    strip = [{k: v for k, v in r.items() if k != "wall_seconds"}
             for f in files for r in json.loads(f.read_text())]
    assert strip[0] == strip[1]


@pytest.mark.slow
def test_parallel_sweep_matches_serial(tmp_path):
    args = ["simulate", "--synthetic", SYNTH, "--policy", "none,hadoop", "--seed", "0-1",
            "--cluster", "nodes=6,slots=2", "--quiet"]
    serial, parallel = tmp_path / "s.json", tmp_path / "p.json"
    assert main(args + ["--json", str(serial)]) == 0
    assert main(args + ["--json", str(parallel), "--workers", "2"]) == 0

    def rows(path):
        return [{k: v for k, v in r.items() if k != "wall_seconds"}
                for r in json.loads(path.read_text())]

    assert rows(serial) == rows(parallel)
    assert [(r["policy"], r["seed"]) for r in rows(serial)] == [
        ("none", 0), ("none", 1), ("hadoop", 0), ("hadoop", 1)]


@pytest.mark.parametrize("args,message", [
    (["--cluster", "nodes=zero"], "--cluster: nodes='zero', expected a number"),
    (["--cluster", "colour=red"], "--cluster: 'colour=red' is not KEY=VALUE"),
    (["--policy", "nope"], "--policy: unknown policy 'nope'"),
    (["--seed", "x"], "--seed 'x'"),
    (["--trace", "/no/such/file.csv"], "give either --trace or --synthetic, not both"),
    (["--workers", "0"], "--workers 0"),
    (["--deadline", "5", "--deadline-factor", "2"], "either --deadline or --deadline-factor"),
    (["--deadline", "-5"], "--deadline -5.0: expected seconds > 0"),
    (["--blacklist", "1@a-b"], "--blacklist: '1@a-b' is not NODE or NODE@START-END"),
    (["--cluster", "nodes=4", "--blacklist", "9"], "blacklist: node 9 does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    code = main(["simulate", "--synthetic", SYNTH, "--quiet", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_missing_trace_is_named(capsys):
    assert main(["simulate", "--trace", "/no/such/file.csv", "--quiet"]) == 2
    assert "--trace /no/such/file.csv: no such file" in capsys.readouterr().err


def test_empty_trace_path_is_refused_not_replaced_by_the_default_workload(capsys):
    assert main(["simulate", "--trace", "", "--quiet"]) == 2
    assert "--trace '': expected the path of a trace file" in capsys.readouterr().err


def test_fixed_deadline_and_blacklist_options(tmp_path):
    js = tmp_path / "d.json"
    assert main(["simulate", "--synthetic", SYNTH, "--policy", "none", "--quiet",
                 "--cluster", "nodes=8,slots=2", "--deadline", "1e9", "--blacklist", "0,1@0-50",
                 "--json", str(js)]) == 0
    assert json.loads(js.read_text())[0]["deadline_hit_rate"] == 1.0
    assert main(["simulate", "--synthetic", SYNTH, "--policy", "none", "--quiet",
                 "--cluster", "nodes=8,slots=2", "--deadline", "1e-3", "--json", str(js)]) == 0
    assert json.loads(js.read_text())[0]["deadline_hit_rate"] == 0.0


def test_default_workload_prefix_of_n_jobs() -> None:
    from hedge.sim.sweep import WorkloadSource
    from hedge.traces.synthetic import default_workload

    built = WorkloadSource(synthetic="default:jobs=7").build(seed=0)
    assert built.n_jobs == 7
    assert built.n_tasks == default_workload(0, n_jobs=7).n_tasks


def test_default_workload_prefix_rejects_a_bad_count() -> None:
    from hedge.errors import HedgeError
    from hedge.sim.sweep import WorkloadSource

    with pytest.raises(HedgeError, match="'default:jobs=N' with an integer N >= 1"):
        WorkloadSource(synthetic="default:jobs=zero").build(seed=0)


@pytest.mark.parametrize("seed", ["5-1", "-3", "1,-2", "1-2-3", "x", ""])
def test_a_bad_seed_is_one_line_naming_the_option(seed, capsys):
    """Issue 20: '5-1' and '-3' were internal errors."""
    assert main(["simulate", "--synthetic", SYNTH, "--policy", "none", f"--seed={seed}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--seed {seed!r}: expected N, N1,N2,... or LOW-HIGH" in err


def test_drop_negative_lets_simulate_replay_an_alibaba_trace(tmp_path, capsys):
    """Issue 20: the error named --drop-negative, which simulate did not have."""
    trace = tmp_path / "batch_task.csv"
    trace.write_text("10,20,1,1,1,Terminated,50,0.1\n10,40,1,2,1,Terminated,50,0.1\n"
                     "30,25,2,3,1,Terminated,50,0.1\n")
    assert main(["simulate", "--trace", str(trace), "--policy", "none", "--quiet"]) == 2
    assert "--drop-negative" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(trace), "--policy", "none", "--quiet",
                 "--drop-negative"]) == 0
    captured = capsys.readouterr()
    assert "none" in captured.out and "negative duration were skipped" in captured.err


def test_a_history_without_a_completed_task_is_refused_not_an_empty_table(tmp_path, capsys):
    """Issue 20: a FAILED job's history printed an empty table and exited 0."""
    started = {"type": "MAP_ATTEMPT_STARTED", "event": {"x.TaskAttemptStarted": {
        "attemptId": "attempt_1_0001_m_000000_0", "taskid": "task_1_0001_m_000000",
        "startTime": 1000}}}
    failed = {"type": "MAP_ATTEMPT_FAILED", "event": {"x.TaskAttemptUnsuccessfulCompletion": {
        "attemptId": "attempt_1_0001_m_000000_0", "finishTime": 5000, "hostname": "h"}}}
    history = tmp_path / "failed.jhist"
    history.write_text("Avro-Json\n{}\n" + json.dumps(started) + "\n" + json.dumps(failed) + "\n")
    for command in (["simulate", "--trace", str(history), "--policy", "none", "--quiet"],
                    ["traces", "stats", str(history)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "failed.jhist: no task completed, so nothing to" in err, err
        assert "tasks without success 1" in err


def test_an_output_that_cannot_be_written_is_refused_before_any_run(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    for args, message in (
            (["--out", str(blocker / "report")], f"--out {blocker / 'report'}: cannot create"),
            (["--out", str(blocker)], f"--out {blocker}: not a directory"),
            (["--json", str(tmp_path)], f"--json {tmp_path}: a directory, expected the path "
                                        "of a file"),
            (["--json", str(blocker / "t.json")], f"--json {blocker / 't.json'}: cannot create")):
        code = main(["simulate", "--synthetic", SYNTH, "--quiet", *args])
        err = capsys.readouterr().err
        assert code == 2 and message in err, err
        assert "workload:" not in err  # refused before the workload was built or run
    assert blocker.read_text() == "not a folder\n"


def test_json_is_written_whole(tmp_path, capsys):
    path = tmp_path / "deeper" / "t.json"
    assert main(["simulate", "--synthetic", SYNTH, "--quiet", "--json", str(path)]) == 0
    assert [row["policy"] for row in json.loads(path.read_text())] == ["none", "hadoop"]
    assert [p.name for p in path.parent.iterdir()] == ["t.json"]  # no temporary left
