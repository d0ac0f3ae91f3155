"""Synthetic workloads: spec parsing and errors, seed determinism, straggler ratio,
distribution means, and the Google-2011-fitted default."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.model import MAP, REDUCE
from hedge.traces.fit import fit_workload
from hedge.traces.stats import compute
from hedge.traces.synthetic import default_workload, generate, load_fit, parse_spec

SPEC = "jobs=50,tasks=200,dist=pareto:1.5,straggler_ratio=0.1"


def test_parse_spec_fills_defaults():
    spec = parse_spec(SPEC + ",slowdown=1.5:3,rate=0.2,reduces=4")
    assert spec["jobs"] == 50 and spec["tasks"] == 200 and spec["reduces"] == 4
    assert spec["dist"] == ("pareto", 1.5)
    assert spec["slowdown"] == (1.5, 3.0) and spec["rate"] == 0.2
    assert parse_spec("")["mean"] == 10.0


@pytest.mark.parametrize(("text", "message"), [
    ("jobs=50,colour=red", r"unknown key 'colour'; valid keys: jobs, tasks"),
    ("jobs=0", r"key 'jobs': expected an integer >= 1, found '0'"),
    ("tasks=2.5", r"key 'tasks': expected an integer >= 1"),
    ("dist=pareto:0.9", r"key 'dist': expected uniform, constant, pareto:<shape > 1>"),
    ("dist=weibull:2", r"key 'dist'"),
    ("straggler_ratio=1.5", r"key 'straggler_ratio': expected a number in \[0, 1\]"),
    ("slowdown=3:2", r"key 'slowdown': expected lo:hi with 1 <= lo <= hi"),
    ("mean=-1", r"key 'mean': expected a number > 0"),
    ("rate=nan", r"key 'rate'"),
    ("jobs", r"'jobs': expected key=value"),
])
def test_spec_errors_name_key_and_range(text, message):
    with pytest.raises(HedgeError, match=message):
        parse_spec(text)


def test_seed_determinism():
    a, b, c = generate(SPEC, seed=3), generate(SPEC, seed=3), generate(SPEC, seed=4)
    assert np.array_equal(a.duration, b.duration)
    assert np.array_equal(a.straggler_factor, b.straggler_factor)
    assert not np.array_equal(a.duration, c.duration)
    d1, d2 = default_workload(7), default_workload(7)
    assert np.array_equal(d1.duration, d2.duration) and np.array_equal(d1.arrival, d2.arrival)


def test_straggler_ratio_and_factor_range():
    w = generate(SPEC + ",slowdown=2:4", seed=1)
    slow = w.straggler_factor > 1
    assert slow.sum() == 1000  # exactly 10% of 10,000 tasks
    assert (w.straggler_factor[slow] >= 2).all() and (w.straggler_factor[slow] <= 4).all()
    assert (w.straggler_factor[~slow] == 1).all()
    # the work itself is not slowed: stragglers and others have the same distribution
    assert abs(np.median(w.duration[slow]) / np.median(w.duration[~slow]) - 1) < 0.15


@pytest.mark.parametrize("dist", ["uniform", "pareto:2.5", "lognormal:0.8", "constant"])
def test_distribution_means(dist):
    w = generate(f"jobs=20,tasks=2000,mean=30,dist={dist}", seed=0)
    assert w.duration.mean() == pytest.approx(30, rel=0.05)
    assert (w.duration > 0).all()


def test_arrivals_and_reduces():
    w = generate("jobs=400,tasks=3,reduces=2,rate=0.5", seed=2)
    assert w.arrival[0] == 0 and (np.diff(w.arrival) >= 0).all()
    assert np.diff(w.arrival).mean() == pytest.approx(2.0, rel=0.15)  # Poisson, 1/rate
    assert w.task_type[:5].tolist() == [MAP, MAP, MAP, REDUCE, REDUCE]
    assert (generate("jobs=5", seed=0).arrival == 0).all()


def test_default_workload_follows_the_fit():
    fit = load_fit()
    w = default_workload(0)
    assert w.n_jobs == fit["n_jobs"]
    sizes = w.tasks_per_job
    assert np.median(sizes) == fit["tasks_per_job"]["q"][50]
    # re-fitting the generated workload recovers the committed parameters roughly
    refit = fit_workload(w)
    for key in ("job_median_s", "tasks_per_job"):
        assert refit[key]["q"][50] == pytest.approx(fit[key]["q"][50], rel=0.25)
    s = compute(w)
    assert 0.5 * fit["sample_stats"]["straggler_share_mean_rule"] \
        < s.straggler_share("mean") < 2 * fit["sample_stats"]["straggler_share_mean_rule"]
    assert (w.straggler_factor[w.straggler_factor > 1] >= 1.5).all()
    assert default_workload(1, n_jobs=10).n_jobs == 10
    with pytest.raises(HedgeError, match="n_jobs"):
        default_workload(0, n_jobs=0)
