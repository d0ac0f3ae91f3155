"""hedge reproduce thesis in its quick size (about 20 s CPU: the adaptive-threshold runs on
small synthetic workloads, one Google 2011 part for the ranking, a small ML-NA history),
and the held-out ImKP balance and the speculative failure rate on the real files."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.reproduce.table import Row
from hedge.reproduce.thesis import (
    _adaptive_rows,
    failure_rates,
    imkp_held_out,
    reproduce,
)
from tests.conftest import shared_file
from tests.reproduce_support import assert_complete


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("thesis")
    return out, reproduce(out, quick=True)


def _row(rep, start: str) -> Row:
    return next(r for r in rep.rows if r.quantity.startswith(start))


def test_every_row_has_the_five_columns_and_the_figures_are_written(quick):
    out, rep = quick
    assert rep.readings
    assert_complete(out, rep, "thesis")
    assert rep.figures[:2] == ["adaptive_replicas.png", "adaptive_response.png"]


def test_adaptive_threshold_rows_compare_with_the_abstract(quick):
    _, rep = quick
    replicas = _row(rep, "replicas, adaptive vs static")
    idle = _row(rep, "response time, adaptive vs static 1.5x, idle")
    assert replicas.published == "58.62% (abstract)"
    assert idle.published == "up to 17.86% (abstract)"
    for row in (replicas, idle):  # a difference beyond 10 points carries its reason
        assert bool(row.why) == (abs(float(row.difference.split()[0])) > 10)


def _result(copies: tuple[float, float], idle_time: tuple[float, float]) -> dict:
    def run(c: float, t: float, busy: float) -> dict:
        return {"copies": c, "job_time": t, "busy": busy}
    return {"high": {"static": run(copies[0], 100.0, 0.9), "adaptive": run(copies[1], 90.0, 0.9)},
            "idle": {"static": run(50.0, idle_time[0], 0.3),
                     "adaptive": run(50.0, idle_time[1], 0.3)}}


def test_adaptive_rows_put_hedges_figure_beside_the_papers():
    near = _adaptive_rows(_result((100.0, 40.0), (100.0, 83.0)))
    assert [r.hedge for r in near] == ["60.0%", "17.0%", "10.0%"]
    assert [r.difference for r in near[:2]] == ["+1.4 pp", "-0.9 pp"]
    assert near[0].why == "" and near[1].why == ""
    # more replicas than static is printed as such, with the threshold's terms
    far = _adaptive_rows(_result((100.0, 110.0), (100.0, 101.0)))
    assert far[0].hedge == "-10.0%" and far[0].difference == "-68.6 pp"
    assert "busy share is 0.90" in far[0].why and "+0.15" in far[0].why
    assert "busy share is 0.30" in far[1].why and "-0.15" in far[1].why


def test_ml_na_rows_are_rates(quick):
    _, rep = quick
    row = _row(rep, "weak-node prediction, ml-na")
    acc, prec, rec = (float(x) for x in row.hedge.split(" / "))
    assert 0.9 <= acc <= 1 and 0 < prec <= 1 and 0 < rec <= 1


def test_imkp_held_out_balance_is_at_the_bound_and_beats_hash():
    text = shared_file("text/tinyshakespeare.txt").read_bytes()
    for b in imkp_held_out(text):
        # max load can never be below the lower bound; ImKP built on other plays stays
        # within 10 % of it and well below Hadoop's hash partitioning
        assert 1.0 <= b.imkp <= 1.10 and b.imkp < b.hash
        assert b.imkp_in_sample <= 1.01


def test_failure_rate_of_speculative_copies_in_the_mrv1_sample():
    shared_file("hadoop_testdata/rumen_small-trace-test/mr1_job-tracker-logs-trace-output.gz")
    found = {name: (n, lost) for name, n, lost in failure_rates()}
    n, lost = found["mr1_job-tracker-logs-trace-output.gz"]
    # 69 tasks ran a copy; in 62 of them the copy was killed (the original won)
    assert (n, lost) == (69, 62)
    assert np.isclose(lost / n, 0.8986, atol=1e-3)
