"""`hedge plan chronos`."""

from __future__ import annotations

from hedge.analysis import chronos
from hedge.cli import main


def test_plan_chronos_table(capsys):
    args = ["plan", "chronos", "--tasks", "10", "--deadline", "3", "--tmin", "1", "--beta",
            "1.5", "--tau-est", "0.3", "--tau-kill", "0.6", "--theta", "0.001"]
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]}
    assert set(rows) == set(chronos.STRATEGIES)
    for strategy in chronos.STRATEGIES:
        r, p, cost, u = chronos.optimal_r(strategy, 10, 3, 1, 1.5, 0.3, 0.6, theta=0.001)
        assert rows[strategy][1] == str(r)
        assert rows[strategy][2] == f"{p:.6f}"
        assert float(rows[strategy][4]) == float(f"{cost:.6g}")


def test_plan_chronos_infeasible_rows_are_explained(capsys):
    args = ["plan", "chronos", "--tasks", "10000", "--deadline", "3", "--tmin", "1", "--beta",
            "1.5", "--r-min", "0.9"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "none: r_min = 0.9 is not reachable with 'none': the best PoCD is" in out


def test_plan_chronos_bad_input_is_one_line(capsys):
    args = ["plan", "chronos", "--tasks", "10", "--deadline", "1", "--tmin", "1", "--beta", "2"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err == "hedge: error: deadline = 1.0 <= t_min = 1.0: no attempt can finish by the " \
        "deadline"
    args = ["plan", "chronos", "--tasks", "10", "--deadline", "3", "--tmin", "1", "--beta", "2",
            "--tau-est", "0.5", "--tau-kill", "0.4"]
    assert main(args) == 2
    assert "tau_kill = 0.4 < tau_est = 0.5" in capsys.readouterr().err
