"""`hedge plan chronos`."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_plan_chronos_fits_pareto_to_a_trace(tmp_path, capsys):
    # a perfect Pareto(2, 1.5) quantile sample: the MLE is close to (2, 1.5)
    u = (np.arange(4000) + 0.5) / 4000
    path = tmp_path / "d.txt"
    path.write_text("\n".join(f"{x:.6f}" for x in 2.0 * (1 - u) ** (-1 / 1.5)))
    args = ["plan", "chronos", "--trace", str(path), "--tasks", "20", "--deadline", "10"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"fitted to {path} (4000 durations): Pareto(t_min = 2")
    assert "NOT Pareto-like" not in out
    beta = float(out.split("beta = ")[1].split(")")[0])
    assert beta == pytest.approx(1.5, rel=0.02)
    clone = next(line for line in out.splitlines() if line.startswith("clone")).split()
    want = chronos.optimal_r("clone", 20, 10.0, 2.0, beta, theta=1e-3)
    assert clone[1] == str(want[0])


def test_plan_chronos_missing_model_parameters(capsys):
    assert main(["plan", "chronos", "--tasks", "5", "--deadline", "3", "--tmin", "1"]) == 2
    assert "--beta: required (or give --trace [--job] to fit it)" in capsys.readouterr().err
    assert main(["plan", "chronos", "--job", "7", "--deadline", "3", "--tmin", "1",
                 "--beta", "2", "--tasks", "5"]) == 2
    assert "--job needs --trace" in capsys.readouterr().err


@pytest.mark.parametrize("beta", ["50", "1000"])
def test_a_steep_pareto_plans_without_a_warning(beta: str, capsys) -> None:  # noqa: ANN001
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["plan", "chronos", "--tasks", "10", "--deadline", "100", "--tmin", "10",
                     "--beta", beta]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "inf" not in out


@pytest.mark.parametrize("beta", ["1e308", "0.001"])
def test_a_pareto_shape_outside_the_evaluable_range_is_named(beta: str, capsys) -> None:  # noqa: ANN001
    assert main(["plan", "chronos", "--tasks", "10", "--deadline", "100", "--tmin", "10",
                 "--beta", beta]) == 2
    assert "expected a Pareto shape in [0.01, 1000]" in capsys.readouterr().err
