"""What every ``hedge reproduce`` seed's test checks of its quick run."""

from __future__ import annotations

from pathlib import Path

from hedge.reproduce.render import COLUMNS
from hedge.reproduce.table import Reproduction


def assert_complete(out: Path, rep: Reproduction, seed: str) -> None:
    """The record is ``seed``'s, every row is text in all five columns and names its
    quantity, published and hedge figures and difference (``why`` may be empty: within
    noise), and every figure it lists was written."""
    assert rep.seed == seed and rep.rows
    for row in rep.rows:
        assert all(isinstance(getattr(row, c), str) for c in COLUMNS), row
        assert all(getattr(row, c) for c in COLUMNS[:4]), row
    for name in rep.figures:
        assert (out / name).stat().st_size > 1000, name
