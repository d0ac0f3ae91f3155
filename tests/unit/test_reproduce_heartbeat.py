"""`hedge reproduce heartbeat` (--quick): the detection study's table and box plots."""

from __future__ import annotations

import re

import pytest

from hedge.reproduce import heartbeat
from tests.reproduce_support import assert_complete


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("heartbeat")
    return out, heartbeat.reproduce(out, quick=True)


def test_rows_have_all_columns_and_figures_exist(result) -> None:
    out, rep = result
    assert len(rep.rows) == 5
    assert_complete(out, rep, "heartbeat")
    for row in rep.rows:
        assert row.difference.startswith(("agrees", "disagrees")) or "range" in row.difference
        if row.difference in ("agrees", "disagrees"):
            assert (row.why == "") == (row.difference == "agrees"), row
    assert rep.figures == ["fp_n10.png", "fn_n10.png"]


def test_held_out_cell_is_within_three_standard_errors_of_the_expected_range(result) -> None:
    row = result[1].rows[0]
    mean, se = (float(v) for v in re.findall(r"[\d.]+", row.hedge)[:2])
    assert 0.156 / 2.75 - 3 * se <= mean <= 0.156 / 2.25 + 3 * se, row
    assert row.difference.endswith("within the range") and row.why == ""


def test_claims_as_measured(result) -> None:
    fp, fn, stale, homogeneous = result[1].rows[1:]
    assert fp.difference == "agrees"  # both classic detectors flag normal tasks
    assert fn.difference.startswith("agrees")  # score misses stragglers (rate may not)
    assert stale.difference == "agrees"  # fresh-rate removes most of rate's FPs
    assert homogeneous.difference == "agrees"  # late end reports do get flagged
