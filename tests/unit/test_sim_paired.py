"""Policies compared seed by seed (``hedge.sim.paired``), alone and under ``hedge simulate``."""

from __future__ import annotations

import math

import pytest

from hedge.cli import main
from hedge.sim.paired import paired_summary


def _row(policy: str, seed: int, mean: float, p95: float = 10.0, machine: float = 100.0):
    return {"policy": policy, "seed": seed, "mean_job_time": mean, "p95_job_time": p95,
            "machine_time": machine}


def _cells(line: str) -> list[str]:
    return line.split()


def test_each_policy_is_paired_with_the_first_on_the_same_seed():
    rows = [_row("none", 0, 10.0), _row("none", 1, 20.0),
            _row("late", 0, 5.0, p95=10.0, machine=110.0), _row("late", 1, 20.0, p95=5.0),
            _row("spark", 0, 12.0), _row("spark", 1, 19.0)]
    lines = paired_summary(rows)
    assert lines[0].startswith("seeds 0-1: each policy's figures over none's on the same seed")
    a = _cells(lines[2])
    # mean ratios 0.5 and 1.0: geometric mean sqrt(0.5); p95 1.0 and 0.5; machine 1.1 and 1.0
    assert a[:7] == ["late", f"{math.sqrt(0.5):.3f}", "(0.500-1.000)", f"{math.sqrt(0.5):.3f}",
                     "(0.500-1.000)", f"{math.sqrt(1.1):.3f}", "(1.000-1.100)"]
    assert " ".join(a[7:]) == "1 of 2 seeds"  # lowest on seed 0 only (seed 1: spark's 19)
    assert " ".join(_cells(lines[3])[7:]) == "1 of 2 seeds"
    assert lines[4].startswith("(none: the lowest mean job time on 0 of 2 seeds")


def test_a_tie_counts_for_each_policy_and_a_missing_figure_prints_a_dash():
    rows = [_row("none", 3, 10.0, machine=0.0), _row("none", 7, 10.0, machine=0.0),
            _row("spark", 3, 10.0), _row("spark", 7, 11.0)]
    lines = paired_summary(rows)
    assert lines[0].startswith("seeds 3,7:")
    # machine time over none's 0: no ratio; seed 3's tie counts for both
    assert _cells(lines[2]) == ["spark", f"{math.sqrt(1.1):.3f}", "(1.000-1.100)", "1.000",
                                "(1.000-1.000)", "-", "1", "of", "2", "seeds"]
    assert lines[3].startswith("(none: the lowest mean job time on 2 of 2 seeds")


@pytest.mark.parametrize("rows", [
    [_row("none", 0, 10.0), _row("late", 0, 5.0)],  # one seed
    [_row("none", 0, 10.0), _row("none", 1, 9.0)],  # one policy
])
def test_nothing_to_pair_prints_nothing(rows):
    assert paired_summary(rows) == []


def test_simulate_with_several_seeds_prints_the_comparison_and_reports_it(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["simulate", "--synthetic", "jobs=6,tasks=12,straggler_ratio=0.2",
                 "--policy", "none,hadoop", "--seed", "0-1", "--cluster", "nodes=8,slots=2",
                 "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(text) if line.startswith("seeds 0-1:"))
    assert text[head + 1].split()[:4] == ["policy", "mean", "job", "time"]
    assert text[head + 2].split()[0] == "hadoop" and text[head + 2].endswith("of 2 seeds")
    assert text[head + 3].startswith("(none: the lowest mean job time on")
    html = (out / "report.html").read_text()
    assert text[head + 2] in html and "seeds 0-1: each policy" in html


def test_the_oracle_is_compared_but_not_counted_among_the_lowest():
    rows = [_row("none", 0, 10.0), _row("none", 1, 10.0), _row("hadoop", 0, 9.0),
            _row("hadoop", 1, 9.5), _row("oracle:after_reports=2", 0, 8.0),
            _row("oracle:after_reports=2", 1, 8.0)]
    lines = paired_summary(rows)
    assert lines[2].startswith("hadoop") and lines[2].endswith("2 of 2 seeds")
    assert lines[3].split()[1] == "0.800" and lines[3].endswith("(a reference)")

