"""`hedge reproduce chronos` (--quick): Algorithm 1 against brute force, the simulator against
the closed forms at the chosen r, and the default-workload plans that explain issue 19's
copy-less chronos-clone run."""

from __future__ import annotations

import math
import re

import pytest

from hedge.analysis import chronos as model
from hedge.policy.limits import HADOOP_DEFAULTS as CAPS
from hedge.reproduce import chronos
from tests.reproduce_support import assert_complete


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("chronos")
    return out, chronos.reproduce(out, quick=True)


def test_every_row_has_its_columns_and_the_figure_exists(result) -> None:
    out, rep = result
    assert len(rep.rows) == 3 + 4 + 3 + 1
    assert_complete(out, rep, "chronos")
    assert "pocd_vs_cost.png" in rep.figures


def test_algorithm_1_matches_brute_force(result) -> None:
    assert [r.difference for r in result[1].rows[:3]] == ["agrees"] * 3


def test_simulation_agrees_with_the_closed_forms_at_the_chosen_r(result) -> None:
    """Within 3 standard errors (PoCD: binomial; machine time: per-job spread)."""
    for row in result[1].rows[3:7]:
        z = [float(v) for v in re.findall(r"\(([\d.]+) s\.e\.\)", row.difference)]
        assert len(z) == 2 and max(z) <= 3, row
        assert row.why == "", row


def test_default_workload_plans_say_why() -> None:
    plans, hit = chronos.default_workload_plans(15)
    assert 0 <= hit <= 1 and len(plans) == 15
    for plan in plans:
        if plan.tasks < 5:  # the Pareto fit needs 5 durations: never planned, no copy
            assert plan.r is None and plan.copies == 0 and "min_samples" in plan.reason
        elif plan.r is not None:
            assert plan.expected_pocd is not None
            assert f"r = {plan.r} expects PoCD {plan.expected_pocd:.4f}" in plan.reason
            # the PoCD the plan expects is the closed form at its (printed, rounded) fit
            t_min, beta, d = (float(v) for v in re.findall(
                r"t_min = ([\d.e+]+), beta = ([\d.e+]+)\), D = ([\d.e+]+)", plan.reason)[0])
            closed = model.pocd("clone", plan.tasks, d, t_min, beta, plan.r)
            assert plan.expected_pocd == pytest.approx(closed, abs=0.02), plan
    assert any(p.r for p in plans) and any(p.copies for p in plans)
    # issue 19: Hadoop's cap (10 live copies) delays a plan's copies; it used to drop all
    # but 10 per job, as chronos-clone asked once per task
    for plan in plans:
        assert plan.copies <= plan.asked <= plan.planned, plan
    assert max(p.copies for p in plans) > CAPS.minimum_allowed_tasks
    row = chronos.census_rows(plans, hit)[0][0]
    assert f"asked within Hadoop's cap {sum(p.asked for p in plans)}," in row.hedge



def test_net_utility_row_compares_the_best_strategy_with_each_baseline(result) -> None:
    setting = chronos.Setting()
    run = chronos.SimRun("none", pocd=0.5, pocd_se=0.0, cost=300.0, cost_se=0.0,
                         copies_per_task=0.0)
    assert chronos.net_utility(run, setting) == pytest.approx(math.log(0.5) - 0.3)
    assert chronos.net_utility(chronos.SimRun("none", 0.0, 0.0, 1.0, 0.0, 0.0),
                               setting) == -math.inf
    row = next(r for r in result[1].rows if r.quantity.startswith("net utility"))
    assert row.published == "50% increase (abstract)"
    assert all(name in row.hedge for name in ("Hadoop-NS", "Hadoop-S", "Mantri"))


def test_r0_plans_are_checked_against_the_run() -> None:
    """The census compares the r=0 plans' expected PoCD with the jobs that met D, and calls
    the model optimistic only beyond 3 standard errors."""
    def plans(met: int) -> list:
        return [chronos.JobPlan(200, 0, 0.99, 0, "r = 0", met=i < met) for i in range(20)]

    assert "0.990 on average and 5% of them met D" in chronos._model_vs_run(plans(1))
    assert "not for the run" in chronos._model_vs_run(plans(1))
    assert "not for the run" not in chronos._model_vs_run(plans(19))
    assert chronos._model_vs_run([]) == ""
