"""Straggler statistics on a hand-made workload with hand-computed figures, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hedge.cli import main
from hedge.traces.stats import compute, format_text, job_medians
from hedge.traces.workload import Workload


def hand_made() -> Workload:
    w = Workload.from_jobs(
        ["A", "B", "C", "D"], [0.0, 1.0, 2.0, 3.0],
        [np.array([1.0, 1, 1, 1, 6]), np.array([2.0, 4]), np.array([5.0]),
         np.array([1.0, 1, 1, 2, 2])],
        source="hand")
    w.input_bytes[:5] = [1, 1, 1, 1, 2]  # job A only
    return w


def test_per_job_figures():
    s = compute(hand_made())
    assert s.n_tasks.tolist() == [5, 2, 1, 5]
    assert s.mean.tolist() == pytest.approx([2.0, 3.0, 5.0, 1.4])
    assert s.median.tolist() == [1.0, 3.0, 5.0, 1.0]
    # A: 6 > 1.5*2 and 6 > 1.5*1; B: 4 < 4.5; D: 2 < 2.1 (mean) but 2 > 1.5 (median), twice
    assert s.stragglers_mean.tolist() == [1, 0, 0, 0]
    assert s.stragglers_median.tolist() == [1, 0, 0, 2]
    assert s.tail_mean.tolist() == pytest.approx([3.0, 4 / 3, 1.0, 2 / 1.4])
    assert s.tail_median.tolist() == pytest.approx([6.0, 4 / 3, 1.0, 2.0])


def test_trace_shares_and_slowdown_index():
    s = compute(hand_made())
    assert s.straggler_share("mean") == pytest.approx(1 / 13)
    assert s.straggler_share("median") == pytest.approx(3 / 13)
    assert s.tailing_share("mean") == pytest.approx(1 / 4)
    assert s.tailing_share("median") == pytest.approx(2 / 4)
    # job A: elapsed/input = 1,1,1,1,3; job rate = mean elapsed 2 / mean input 1.2
    assert s.slowdown[:5] == pytest.approx([0.6, 0.6, 0.6, 0.6, 1.8])
    assert np.isnan(s.slowdown[5:]).all()
    q = s.distributions()["tail_max_over_median"]
    assert q["n"] == 4 and q["max"] == pytest.approx(6.0)


def test_straggler_factor_counts_as_observed_time():
    w = Workload.from_jobs(["J"], [0.0], [np.ones(4)])
    w.straggler_factor[3] = 5.0  # observed 5 vs mean 2 -> straggler
    assert compute(w).stragglers_mean.tolist() == [1]


def test_job_medians_even_odd_and_empty():
    job = np.array([0, 0, 0, 2, 2])
    values = np.array([3.0, 1.0, 2.0, 10.0, 4.0])
    out = job_medians(job, values, 3)
    assert out[0] == 2.0 and np.isnan(out[1]) and out[2] == 7.0


def test_text_summary_mentions_shares():
    text = format_text(compute(hand_made()))
    assert "7.7% of tasks" in text and "tailing jobs 25.0%" in text


def test_cli_stats_json_and_text(tmp_path, capsys):
    path = tmp_path / "small.tr"
    path.write_text("0 5 2 1 1 1 1 6\n10 2 3 2 4\n")
    assert main(["traces", "stats", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["jobs"] == 2 and data["tasks"] == 7
    assert data["straggler_share_mean_rule"] == pytest.approx(1 / 7)
    assert data["jobs_detail"]["tail_max_over_median"] == pytest.approx([6.0, 4 / 3])
    assert main(["traces", "stats", str(path)]) == 0
    assert "tailing jobs 50.0%" in capsys.readouterr().out


def test_cli_bad_file_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.tr"
    path.write_text("0 2 1 1\n")
    assert main(["traces", "stats", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.tr:1" in err


def test_by_type_separates_maps_and_reduces():
    from hedge.model import MAP, REDUCE

    w = Workload.from_jobs(["J"], [0.0], [np.array([1.0, 1.0, 10.0, 10.0])],
                           task_types=[np.array([MAP, MAP, REDUCE, REDUCE])])
    assert compute(w).stragglers_mean.tolist() == [2]  # reduces > 1.5 x 5.5
    s = compute(w, by_type=True)
    assert s.job_ids == ["J:MAP", "J:REDUCE"]
    assert s.stragglers_mean.tolist() == [0, 0] and s.mean.tolist() == [1.0, 10.0]
    assert any("compared with each other" in note for note in compute(w).notes)
    assert s.notes == []


def test_cli_compares_like_with_like_by_default_and_says_what_swim_is(tmp_path, capsys):
    """Issue 20: SWIM gave 9.1% stragglers by default and 0.0% with --by-type, silently."""
    swim = tmp_path / "fb.tsv"
    swim.write_text("job0\t0\t0\t1000000000\t5000000000\t0\njob1\t5\t5\t100\t0\t0\n")
    assert main(["traces", "stats", str(swim), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unit"] == "job:type groups"
    assert [n for n in data["notes"] if n.startswith("SWIM has jobs, not tasks")]
    assert main(["traces", "stats", str(swim), "--mixed"]) == 0
    text = capsys.readouterr().out
    assert "note: maps and reduces of a job are compared with each other" in text
    assert "note: SWIM has jobs, not tasks" in text
