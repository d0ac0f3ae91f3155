"""The trace straggler model: re-run evidence, the fit of lam, and what the simulator does
with it (docs/trace-model.md)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.sim.engine import simulate
from hedge.sim.metrics import summarize
from hedge.traces import load
from hedge.traces.attempts import build_table
from hedge.traces.rerun import evidence
from hedge.traces.straggler_model import CALIBRATED_LAMBDA, apply, parse
from hedge.traces.workload import Workload
from tests.conftest import shared_file

MR1 = "hadoop_testdata/rumen_small-trace-test/mr1_sample-job-tracker-logs.gz"


def races(lam: float, pairs: int, seed: int = 0) -> pa.Table:
    """A job of 400 tasks with log-normal residuals; ``pairs`` of them get a copy at 1.2x
    the median, and the copy's time follows the model with ``lam``."""
    rng = np.random.default_rng(seed)
    n, m = 400, 100.0
    r = rng.normal(0, 0.5, n)
    rows = {k: [] for k in ("job", "task", "attempt", "node", "type", "start", "end", "state")}
    spec = []

    def add(task: int, k: int, start: float, end: float, state: str, copy: bool) -> None:
        for key, value in zip(rows, ("j", f"t{task}", f"a{task}_{k}", "n", "MAP", start, end,
                                     state), strict=True):
            rows[key].append(value)
        spec.append(copy)

    slow = np.argsort(-r)[:pairs]  # a speculator copies the slowest
    for i in range(n):
        d = m * np.exp(r[i])
        if i not in slow:
            add(i, 0, 0.0, d, "SUCCEEDED", False)
            continue
        at = 1.2 * m
        d_copy = m * np.exp((1 - lam) * r[i] + lam * rng.choice(r))
        end = min(d, at + d_copy)
        won = at + d_copy < d
        add(i, 0, 0.0, end, "KILLED" if won else "SUCCEEDED", False)
        add(i, 1, at, end, "SUCCEEDED" if won else "KILLED", True)
    return build_table(rows, known_speculative=np.array(spec), infer=False)


@pytest.mark.parametrize("lam", [0.2, 0.8])
def test_the_fit_finds_the_lam_the_races_were_made_with(lam: float) -> None:
    e = evidence(races(lam, pairs=60), "made")
    d = e.as_dict()
    assert e.copy_pairs == 60
    assert d["lam_low"] <= lam <= d["lam_high"], d
    assert d["lam_high"] - d["lam_low"] < 0.7  # the races tell the values apart


def test_tasks_without_races_give_no_fit() -> None:
    e = evidence(races(0.5, pairs=0), "none")
    assert e.copy_pairs == 0 and e.as_dict()["lam"] is None


def test_the_calibrated_lam_is_what_the_mr1_races_give() -> None:
    # the constant in straggler_model.py comes from this fit: the two must agree
    e = evidence(load_attempts(shared_file(MR1)), "mr1")
    assert (e.copy_pairs, e.copies_won) == (37, 7)
    assert e.lam == CALIBRATED_LAMBDA
    assert e.as_dict()["lam_low"] <= CALIBRATED_LAMBDA <= e.as_dict()["lam_high"]


def load_attempts(path) -> pa.Table:  # noqa: ANN001
    from hedge.traces.formats import read_attempt_trace

    return read_attempt_trace(path).table


def workload() -> Workload:
    wl = Workload.from_jobs(["a", "b"], [0.0, 5.0],
                            [np.array([10.0, 12, 8, 30, 11, 9]), np.array([4.0, 40])])
    wl.straggler_truth = False
    return wl


def test_originals_replay_the_trace_and_copies_draw_from_their_group() -> None:
    wl = workload()
    modelled = apply(wl, parse("calibrated"))
    assert np.allclose(modelled.duration * modelled.straggler_factor, wl.duration)
    pools = modelled.copy_pools
    # job a (6 tasks) draws from its own 6 factors; job b (2 tasks: too few) from all maps
    a = pools.values[pools.start[0]:pools.start[0] + pools.size[0]]
    assert sorted(a) == sorted(modelled.straggler_factor[:6])
    assert pools.size[6] == 8
    assert "lam = 0.5" in modelled.notes[-1] and "docs/trace-model.md" in modelled.notes[-1]


def test_inherent_keeps_every_copy_as_long_as_its_original() -> None:
    modelled = apply(workload(), parse("inherent"))
    assert np.all(modelled.straggler_factor == 1) and np.all(modelled.copy_pools.values == 1)


@pytest.mark.parametrize("text", ["bogus", "lam=1.5", "lam=nan", "lam="])
def test_a_bad_model_is_named(text: str) -> None:
    with pytest.raises(HedgeError, match="--trace-model"):
        parse(text)


def test_on_a_trace_copies_can_win_and_precision_is_not_made_up() -> None:
    trace = shared_file(MR1)
    rows = {}
    for model in ("inherent", "calibrated"):
        result = simulate(apply(load(trace), parse(model)), "hadoop", seed=0)
        rows[model] = summarize(result)
    assert rows["inherent"]["copies_won"] == 0 < rows["inherent"]["copies_launched"]
    assert rows["calibrated"]["copies_won"] > 0
    for row in rows.values():  # a trace has no ground truth of who straggled
        assert row["precision"] is None and row["recall"] is None


def test_stats_and_model_commands_report_the_evidence(capsys) -> None:  # noqa: ANN001
    trace = str(shared_file(MR1))
    assert main(["traces", "stats", trace, "--json"]) == 0
    reruns = json.loads(capsys.readouterr().out)["reruns"]
    assert (reruns["copy_pairs"], reruns["copies_won"], reruns["lam"]) == (37, 7, 0.5)
    assert main(["traces", "model", trace]) == 0
    assert "pooled over 1 trace(s): lam 0.5" in capsys.readouterr().out
    swim = shared_file("swim_facebook/FB-2009_samples_24_times_1hr_0.tsv")
    assert main(["traces", "model", str(swim)]) == 2
    assert "keeps one run per task" in capsys.readouterr().err


def test_simulate_refuses_a_bad_trace_model(capsys) -> None:  # noqa: ANN001
    trace = str(shared_file(MR1))
    assert main(["simulate", "--trace", trace, "--trace-model", "lam=2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--trace-model" in err and "lam=2" in err and len(err.strip().splitlines()) == 1


def test_more_input_is_more_work_not_a_slowdown() -> None:
    wl = Workload.from_jobs(["a"], [0.0], [np.array([10.0, 20, 40, 80, 160, 35])])
    wl.input_bytes[:] = [1e6, 2e6, 4e6, 8e6, 16e6, 2e6]  # the last: 35 s for 2 MB, slowed
    modelled = apply(wl, parse("transient"))
    assert np.allclose(modelled.straggler_factor[:5], 1.0, atol=0.15)  # the slope is fitted
    assert modelled.straggler_factor[5] > 1.5  # what input does not explain is transient
    wl.input_bytes[:] = np.nan  # without input sizes the same durations look 16x apart
    factors = apply(wl, parse("transient")).straggler_factor[:5]
    assert factors.max() / factors.min() > 15
    assert np.allclose(modelled.duration * modelled.straggler_factor, wl.duration)
