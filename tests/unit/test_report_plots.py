"""The report pages: ``hedge simulate --out`` (cost axis from zero, the job-time tail,
precision/recall and waste per policy) and ``hedge traces stats --out``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hedge.cli import main
from tests.conftest import shared_file

SYNTH = "jobs=12,tasks=20,straggler_ratio=0.1"
RUMEN = "hadoop_testdata/rumen_small-trace-test/mr2_folder-input-trace.json.gz"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    js = out / "rows.json"
    assert main(["simulate", "--synthetic", SYNTH, "--cluster", "nodes=12,slots=2",
                 "--policy", "none,hadoop,late", "--out", str(out), "--json", str(js),
                 "--quiet"]) == 0
    return out, json.loads((out / "figures.json").read_text()), json.loads(js.read_text())


def test_every_plot_is_written_and_shown(report):
    out, figures, _ = report
    html = (out / "report.html").read_text()
    for name in ("which_policy.png", "job_time_cdf.png", "job_time_tail.png",
                 "cost_vs_latency.png", "copies_over_time.png", "precision_recall.png",
                 "waste.png"):
        assert name in figures and f'src="{name}"' in html
        assert (out / name).stat().st_size > 5000


def test_cost_axes_start_at_zero(report):
    _, figures, rows = report
    cost = figures["cost_vs_latency.png"]
    assert cost["ylim"][0] == 0 and cost["xlim"][0] == 0
    top = max(r["machine_time"] for r in rows) / 3600
    assert cost["ylim"][1] >= top
    assert cost["points"]["hadoop"][1] == pytest.approx(rows[1]["machine_time"] / 3600)


def test_which_policy_plot_is_each_policys_saving_and_waste_with_the_frontier_marked(report):
    _, figures, rows = report
    choice = figures["which_policy.png"]
    by = {r["policy"]: r for r in rows}
    none = by["none"]["mean_job_time"]
    assert choice["x"] == "saved_percent_of_none" and set(choice["points"]) == set(by)
    for policy, (x, y) in choice["points"].items():
        assert x == pytest.approx(100 * (1 - by[policy]["mean_job_time"] / none))
        assert y == pytest.approx(by[policy]["wasted_s"] / 3600)
    assert choice["points"]["none"] == [0.0, 0.0] and "none" in choice["frontier"]

    def beats(a: dict, b: dict) -> bool:
        return (a["mean_job_time"] <= b["mean_job_time"] and a["wasted_s"] <= b["wasted_s"]
                and (a["mean_job_time"] < b["mean_job_time"] or a["wasted_s"] < b["wasted_s"]))

    for policy, row in by.items():  # on the frontier exactly when nothing beats it
        beaten = any(beats(other, row) for other in rows)
        assert (policy in choice["frontier"]) is not beaten, policy
    assert choice["ylim"][0] == 0 and choice["xlim"][0] <= 0 <= choice["xlim"][1]
    assert choice["oracle"] == {} and not choice["no_gain"]


def test_which_policy_plot_draws_the_oracle_as_a_line_not_a_choice(tmp_path):
    out = tmp_path / "rep"
    assert main(["simulate", "--synthetic", SYNTH, "--cluster", "nodes=12,slots=2",
                 "--policy", "hadoop,oracle", "--out", str(out), "--quiet"]) == 0
    choice = json.loads((out / "figures.json").read_text())["which_policy.png"]
    assert set(choice["points"]) == {"hadoop"} and set(choice["oracle"]) == {"oracle"}
    # without none there is no saving to draw: the x axis is the mean job time itself
    assert choice["x"] == "mean_job_time_s" and choice["frontier"] == ["hadoop"]
    assert choice["oracle"]["oracle"] <= choice["points"]["hadoop"][0]


def test_which_policy_plot_says_when_no_policy_gains_and_does_not_blow_up_noise(tmp_path):
    out = tmp_path / "rep"
    assert main(["simulate", "--synthetic", "jobs=6,tasks=10,straggler_ratio=0",
                 "--cluster", "nodes=12,slots=2", "--policy", "none,hadoop", "--out", str(out),
                 "--quiet"]) == 0
    choice = json.loads((out / "figures.json").read_text())["which_policy.png"]
    assert choice["no_gain"] and max(x for x, _ in choice["points"].values()) < 1.0
    assert choice["xlim"][1] - choice["xlim"][0] >= 2.0  # percentage points


def test_which_policy_plot_averages_each_policy_over_its_seeds(tmp_path):
    out, js = tmp_path / "rep", tmp_path / "rows.json"
    assert main(["simulate", "--synthetic", SYNTH, "--cluster", "nodes=12,slots=2",
                 "--policy", "none,hadoop,oracle", "--seed", "0-1", "--out", str(out),
                 "--json", str(js), "--quiet"]) == 0
    rows = json.loads(js.read_text())
    choice = json.loads((out / "figures.json").read_text())["which_policy.png"]

    def mean(policy: str, key: str) -> float:
        values = [r[key] for r in rows if r["policy"] == policy]
        assert len(values) == 2
        return sum(values) / 2

    none = mean("none", "mean_job_time")
    assert choice["points"]["hadoop"] == pytest.approx(
        [100 * (1 - mean("hadoop", "mean_job_time") / none), mean("hadoop", "wasted_s") / 3600])
    assert choice["oracle"]["oracle"] == pytest.approx(
        100 * (1 - mean("oracle", "mean_job_time") / none))


def test_tail_plot_shows_p95_to_p99_of_each_policy(report):
    _, figures, rows = report
    tail = figures["job_time_tail.png"]
    assert tail["percentiles"][0] == 95 and tail["percentiles"][-1] == 99
    assert tail["ylim"][0] == 0
    for row in rows:
        series = tail["series"][row["policy"]]
        assert series[0] == pytest.approx(row["p95_job_time"])
        assert series[-1] == pytest.approx(row["p99_job_time"])
        assert tail["ylim"][1] > max(series)


def test_precision_recall_and_waste_are_the_rows_figures(report):
    _, figures, rows = report
    pr, waste = figures["precision_recall.png"], figures["waste.png"]
    assert pr["labels"] == [r["policy"] for r in rows] == waste["labels"]
    assert pr["precision"] == [r["precision"] for r in rows]
    assert pr["recall"] == [r["recall"] for r in rows]
    assert pr["precision"][0] is None  # none copies nothing: n/a, not zero
    assert pr["ylim"] == [0, 1.05] and waste["ylim"][0] == 0
    assert waste["wasted_slot_hours"] == pytest.approx([r["wasted_s"] / 3600 for r in rows])


def test_traces_stats_out_writes_a_page_of_figures(tmp_path, capsys):
    trace = shared_file(RUMEN)
    js = tmp_path / "stats.json"
    assert main(["traces", "stats", str(trace), "--json"]) == 0
    js.write_text(capsys.readouterr().out)
    stats = json.loads(js.read_text())
    out = tmp_path / "page"
    assert main(["traces", "stats", str(trace), "--out", str(out)]) == 0
    text = capsys.readouterr()
    assert f"report: {out / 'report.html'}" in text.err
    html = (out / "report.html").read_text()
    assert "stragglers (task &gt; 1.5 x job mean)" in html
    figures = json.loads((out / "figures.json").read_text())
    assert set(figures) == {"task_durations.png", "tail_extent.png", "stragglers_per_job.png",
                            "slowdown_index.png"}  # this trace has input sizes
    for name in figures:
        assert f'src="{name}"' in html and (out / name).stat().st_size > 5000
    assert figures["task_durations.png"]["n"] == stats["tasks"]
    tails = [t for t in stats["jobs_detail"]["tail_max_over_median"] if t is not None]
    assert figures["tail_extent.png"]["n"] == len(tails)
    assert figures["tail_extent.png"]["p50_p90_p99_max"][-1] == pytest.approx(max(tails))
    multi = np.array(stats["jobs_detail"]["n_tasks"]) >= 2
    assert sum(figures["stragglers_per_job.png"]["counts"]) == int(multi.sum())


def test_report_is_written_after_the_first_run_and_completed_at_the_end(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["simulate", "--synthetic", "jobs=3,tasks=4", "--cluster", "nodes=4,slots=2",
                 "--policy", "none,hadoop", "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"report: {out / 'report.html'} (partial: 1 of 2 runs done; rewritten as runs " \
        "finish)" in err
    html = (out / "report.html").read_text()
    assert "partial" not in html
    table, under = html.split("<pre>")[1].split("</pre>")[0].split("\n\n")
    assert [line.split()[0] for line in table.splitlines()[1:]] == ["none", "hadoop"]
    assert under.startswith("standings (policies an AM can run): lowest mean job time: ")
    assert set(json.loads((out / "figures.json").read_text())["cost_vs_latency.png"]
               ["points"]) == {"none", "hadoop"}


def share_row(policy: str, mean: float, seed: int = 0) -> dict:
    """A table row with only what the oracle's share reads."""
    return {"policy": policy, "seed": seed, "jobs": 1, "mean_job_time": mean}


def test_the_table_gives_each_policy_its_share_of_the_oracles_gain():
    from hedge.report.table import format_table, oracle_shares

    rows = [share_row("none", 100.0), share_row("hadoop", 90.0), share_row("oracle", 80.0),
            share_row("late", 105.0)]
    assert oracle_shares(rows) == pytest.approx([0.0, 0.5, 1.0, -0.25])
    lines = format_table(rows).splitlines()
    assert "of_oracle" in lines[0] and "0.500" in lines[2] and "-0.250" in lines[4]
    assert "of_oracle" not in format_table(rows[:2])  # no oracle run: no column
    # per seed: seed 1 has no oracle, so its rows get none
    both = rows + [share_row("none", 50.0, 1), share_row("hadoop", 40.0, 1)]
    assert oracle_shares(both)[4:] == [None, None]


def test_a_share_above_the_oracles_gain_is_said_to_make_it_no_bound():
    from hedge.report.table import oracle_note

    rows = [share_row("none", 100.0), share_row("hedge-auto", 80.0), share_row("oracle", 80.0)]
    assert oracle_note(rows) is None  # at 1.0 exactly the oracle still bounds the run
    rows += [share_row("none", 100.0, 1), share_row("adaptive", 70.0, 1),
             share_row("oracle", 80.0, 1)]
    note = oracle_note(rows)
    assert note is not None and "1 run(s)" in note and "adaptive seed 1: 1.500" in note
    assert "not a bound" in note and "hedge-auto" not in note


def test_hedge_simulate_says_when_a_policy_passes_the_oracle(capsys):
    # window copies copies and many tasks at once on this idle cluster, where the oracle
    # copies each task once: 1.22 of the oracle's gain at seed 0
    spec = "jobs=20,tasks=20,straggler_ratio=0.1,slowdown=2:5"
    assert main(["simulate", "--synthetic", spec, "--cluster", "nodes=100,slots=4",
                 "--policy", "none,window,oracle", "--quiet"]) == 0
    out = capsys.readouterr().out
    window = next(line for line in out.splitlines() if line.startswith("window "))
    assert float(window.split()[3]) > 1.0  # its of_oracle cell
    assert out.count("note: of_oracle above 1.0 in 1 run(s) (window seed 0: ") == 1
    assert main(["simulate", "--synthetic", spec, "--cluster", "nodes=100,slots=4",
                 "--policy", "none,spark,oracle", "--quiet"]) == 0
    assert "of_oracle above" not in capsys.readouterr().out
