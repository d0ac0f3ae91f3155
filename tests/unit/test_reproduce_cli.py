"""`hedge reproduce`: the command, its files (table.md, reproduction.json, index.html) and its
one-line failures."""

from __future__ import annotations

import json
import sys
import types

import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.reproduce import cli as reproduce_cli
from hedge.reproduce.render import (
    COLUMNS,
    format_table,
    from_json,
    to_json,
)
from hedge.reproduce.table import Reproduction, Row


def _record(seed: str = "good") -> Reproduction:
    return Reproduction(
        seed=seed, title="A | title", citation="Someone, 2024",
        rows=[Row("latency (s)", "10 (Fig. 1)", "9.5", "-0.5", ""),
              Row("cost", "lower (claim)", "1.9 vs 2.0", "agrees", "a reason | with a bar")],
        readings=["a reading"], figures=["plot.png"], notes=["a note"])


def test_text_table_is_aligned_with_all_five_columns() -> None:
    lines = format_table(_record().rows).splitlines()
    assert lines[0].split() == list(COLUMNS)
    assert len(lines) == 2 + 2  # header, rule, two rows
    hedge_at = lines[0].index("hedge")
    assert lines[2][hedge_at:].startswith("9.5") and lines[3][hedge_at:].startswith("1.9")


def test_json_round_trips_and_bad_json_is_one_line(tmp_path) -> None:
    rep = _record()
    assert from_json(to_json(rep)) == rep
    with pytest.raises(HedgeError, match="x.json: not a reproduction record"):
        from_json(json.dumps({"seed": "s"}), "x.json")


def test_replication_seed_writes_its_files(tmp_path, capsys) -> None:
    out = tmp_path / "rep"
    assert main(["reproduce", "replication", "--quick", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("replication: ") and "quantity" in text
    rep = from_json((out / "reproduction.json").read_text())
    assert rep.seed == "replication" and len(rep.rows) >= 3
    for row in rep.rows:
        assert all(isinstance(getattr(row, c), str) for c in COLUMNS)
        assert row.quantity and row.published and row.hedge and row.difference
    table = (out / "table.md").read_text()
    assert table.count("\n| ") == len(rep.rows) + 1  # header and one line per row
    assert all((out / f).stat().st_size > 1000 for f in rep.figures)


def test_all_reports_missing_seeds_in_one_line_each(tmp_path, capsys, monkeypatch) -> None:
    good = types.ModuleType("hedge.reproduce.fake_good")
    good.reproduce = lambda out, quick=False: _record("fake_good")
    bad = types.ModuleType("hedge.reproduce.fake_raises")

    def raises(out, quick=False):
        raise HedgeError("no trace here")

    bad.reproduce = raises
    monkeypatch.setitem(sys.modules, good.__name__, good)
    monkeypatch.setitem(sys.modules, bad.__name__, bad)
    monkeypatch.setattr(reproduce_cli, "SEEDS", ("fake_good", "fake_absent", "fake_raises"))
    assert main(["reproduce", "all", "--quick", "--out", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert len(err) == 3 and "Traceback" not in captured.err
    assert "seed 'fake_absent' could not be loaded: ModuleNotFoundError" in err[0]
    assert err[1] == "hedge: error: seed 'fake_raises': no trace here"
    assert "2 of 3 seeds not reproduced (fake_absent, fake_raises)" in err[2]
    page = (tmp_path / "index.html").read_text()
    assert "fake_absent</b>: missing" in page and "fake_raises</b>: missing" in page
    assert "A | title" in page and 'src="fake_good/plot.png"' in page
    assert from_json((tmp_path / "fake_good" / "reproduction.json").read_text()).seed == "fake_good"


def test_unknown_seed_is_a_usage_error(capsys) -> None:
    assert main(["reproduce", "nope"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
