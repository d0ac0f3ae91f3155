"""`hedge plan replicate` on plain duration lists and on a trace."""

from __future__ import annotations

import numpy as np

from hedge.analysis import replication
from hedge.cli import main
from tests.conftest import shared_file


def _rows(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines()[3:]:
        if line.startswith(("best", "no replication", "hadoop default")):
            name = " ".join(line.split()[:2]) if not line.startswith("best") else "best"
            rows[name] = line.split()[1:] if name == "best" else line.split()[2:]
    return rows


def test_plan_replicate_plain_list(tmp_path, capsys):
    rng = np.random.default_rng(9)
    samples = np.round(1 + rng.pareto(1.6, 2000), 4)
    path = tmp_path / "durations.csv"
    path.write_text("duration\n" + "\n".join(map(str, samples)) + "\n")
    assert main(["plan", "replicate", "--trace", str(path), "--tasks", "200",
                 "--cost-weight", "2"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    p, r, keep = replication.best_policy(samples, 200, 2.0)
    assert rows["best"][:3] == [f"{p:g}", str(r), "keep" if keep else "kill"]
    assert {"best", "no replication", "hadoop default"} <= set(rows)
    best_j, none_j = float(rows["best"][-1]), float(rows["no replication"][-1])
    assert best_j <= none_j
    assert "Pareto fit:" in out


def test_plan_replicate_errors(tmp_path, capsys):
    path = tmp_path / "d.txt"
    path.write_text("1\n2\nthree\n")
    assert main(["plan", "replicate", "--trace", str(path), "--tasks", "5",
                 "--cost-weight", "1"]) == 2
    assert f"{path}:3: 'three' is not a list of durations" in capsys.readouterr().err
    path.write_text("1\n2\n")
    assert main(["plan", "replicate", "--trace", str(path), "--cost-weight", "1"]) == 2
    assert "--tasks" in capsys.readouterr().err
    assert main(["plan", "replicate", "--trace", str(path), "--tasks", "5", "--job", "x",
                 "--cost-weight", "1"]) == 2
    assert "has no jobs" in capsys.readouterr().err
    assert main(["plan", "replicate", "--trace", str(tmp_path / "missing"), "--tasks", "5",
                 "--cost-weight", "1"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_plan_replicate_one_job_of_a_trace(capsys):
    """Job '1' of the Yahoo hawk/eagle subtrace has 594 tasks: n defaults to that."""
    from hedge import traces
    from hedge.analysis.fitting import job_durations

    trace = shared_file("hawk_eagle_tr_traces/YH1_sub.tr.gz")
    assert main(["plan", "replicate", "--trace", str(trace), "--job", "1",
                 "--cost-weight", "1"]) == 0
    out = capsys.readouterr().out
    samples = job_durations(traces.load(trace))["1"]
    assert f"job 1 ({len(samples)} tasks); n = {len(samples)}," in out
    p, r, keep = replication.best_policy(samples, len(samples), 1.0)
    assert _rows(out)["best"][:3] == [f"{p:g}", str(r), "keep" if keep else "kill"]
    assert main(["plan", "replicate", "--trace", str(trace), "--job", "nope",
                 "--cost-weight", "1"]) == 2
    assert "no job 'nope'" in capsys.readouterr().err
