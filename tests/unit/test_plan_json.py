"""``hedge plan chronos|replicate --json``, and replicate's caveat before its best plan."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hedge.analysis import chronos, replication
from hedge.cli import main


def test_plan_chronos_json_holds_every_strategy(tmp_path, capsys):
    js = tmp_path / "sub" / "c.json"
    args = ["plan", "chronos", "--tasks", "10", "--deadline", "3", "--tmin", "1", "--beta",
            "1.5", "--tau-est", "0.3", "--tau-kill", "0.6", "--theta", "0.001", "--json", str(js)]
    assert main(args) == 0
    capsys.readouterr()
    data = json.loads(js.read_text())
    assert data["inputs"] == {"tasks": 10, "deadline": 3.0, "t_min": 1.0, "beta": 1.5,
                              "tau_est": 0.3, "tau_kill": 0.6, "theta": 0.001, "price": 1.0,
                              "r_min": 0.0}
    assert data["fit"] is None
    assert [s["strategy"] for s in data["strategies"]] == list(chronos.STRATEGIES)
    for row in data["strategies"]:
        r, pocd, machine, utility = chronos.optimal_r(row["strategy"], 10, 3, 1, 1.5, 0.3, 0.6,
                                                      theta=0.001)
        assert (row["r"], row["note"]) == (r, None)
        assert row["pocd"] == pytest.approx(pocd) and row["utility"] == pytest.approx(utility)
        assert row["machine_time"] == pytest.approx(machine)


def test_plan_chronos_json_unreachable_rows_are_null_with_the_reason(tmp_path, capsys):
    js = tmp_path / "c.json"
    assert main(["plan", "chronos", "--tasks", "10000", "--deadline", "3", "--tmin", "1",
                 "--beta", "1.5", "--r-min", "0.9", "--json", str(js)]) == 0
    capsys.readouterr()
    none = next(s for s in json.loads(js.read_text())["strategies"] if s["strategy"] == "none")
    assert none["r"] is None and none["pocd"] is None
    assert "is not reachable with 'none'" in none["note"]


def test_plan_chronos_json_has_the_fit(tmp_path, capsys):
    u = (np.arange(2000) + 0.5) / 2000
    path, js = tmp_path / "d.txt", tmp_path / "c.json"
    path.write_text("\n".join(f"{x:.6f}" for x in 2.0 * (1 - u) ** (-1 / 1.5)))
    assert main(["plan", "chronos", "--trace", str(path), "--tasks", "20", "--deadline", "10",
                 "--json", str(js)]) == 0
    capsys.readouterr()
    fit = json.loads(js.read_text())["fit"]
    assert fit["t_min"] == pytest.approx(2.0, rel=0.01) and fit["caveat"] is None
    assert fit["beta"] == pytest.approx(1.5, rel=0.05)


def _durations(tmp_path, values) -> str:
    path = tmp_path / "d.txt"
    path.write_text("\n".join(f"{v:.6f}" for v in values) + "\n")
    return str(path)


def test_plan_replicate_says_its_caveat_before_the_best_plan(tmp_path, capsys):
    # uniform durations: not Pareto-like, the closed forms do not apply
    values = np.random.default_rng(3).uniform(10, 20, 500)
    js = tmp_path / "r.json"
    assert main(["plan", "replicate", "--trace", _durations(tmp_path, values), "--tasks", "50",
                 "--cost-weight", "0.5", "--json", str(js)]) == 0
    lines = capsys.readouterr().out.splitlines()
    caveat = next(i for i, line in enumerate(lines) if "NOT Pareto-like" in line)
    best = next(i for i, line in enumerate(lines) if line.startswith("best"))
    assert caveat < best
    data = json.loads(js.read_text())
    assert data["fit"]["pareto_like"] is False
    assert data["fit"]["verdict"] == "NOT Pareto-like (closed forms unreliable)"
    p, r, keep = replication.best_policy(values, 50, 0.5)
    best_plan = data["plans"][0]
    assert (best_plan["name"], best_plan["p"], best_plan["r"], best_plan["mode"]) == (
        "best", p, r, "keep" if keep else "kill")
    names = [plan["name"] for plan in data["plans"]]
    assert names[-2:] == ["no replication", "hadoop default"]
    none = data["plans"][-2]
    assert (none["p"], none["r"], none["mode"]) == (None, 0, None)
    assert none["objective"] == pytest.approx(none["latency"] + 0.5 * none["cost_per_task"])


def test_plan_replicate_pareto_like_trace_has_no_caveat(tmp_path, capsys):
    u = (np.arange(2000) + 0.5) / 2000
    js = tmp_path / "r.json"
    assert main(["plan", "replicate", "--trace", _durations(tmp_path, 2.0 * (1 - u) ** (-1 / 1.5)),
                 "--tasks", "50", "--cost-weight", "0.5", "--json", str(js)]) == 0
    assert "NOT Pareto-like" not in capsys.readouterr().out
    assert json.loads(js.read_text())["fit"]["pareto_like"] is True


def test_plan_replicate_equal_durations_has_no_hadoop_row_and_says_why(tmp_path, capsys):
    # every duration equal: no task is longer than the 90th percentile, so Hadoop's kept copy
    # is undefined (was an internal StopIteration)
    js = tmp_path / "r.json"
    assert main(["plan", "replicate", "--trace", _durations(tmp_path, [3.0] * 8), "--tasks",
                 "10", "--cost-weight", "0.3", "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "hadoop default: not listed: it keeps a copy beside tasks longer than the 90th " \
        "percentile, and no duration exceeds it" in out
    assert [p["name"] for p in json.loads(js.read_text())["plans"]][-1] == "no replication"
