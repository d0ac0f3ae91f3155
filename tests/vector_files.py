"""Test-vector files under tests/data that Python writes and both Python and Java check (one
rule per fact across the languages): a ``#`` comment header, a line of column names, then one
tab-separated row per case (read in Java by VectorFile.java)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

Case = TypeVar("Case")


def table(header: str, columns: Sequence[str], rows: Sequence[str]) -> str:
    """The file's text: the comment ``header`` (its lines start with '#'), the column line,
    the rows."""
    return header + "\t".join(columns) + "\n" + "\n".join(rows) + "\n"


def render(header: str, columns: Sequence[str], line: Callable[[Case], str],
           cases: Sequence[Case]) -> str:
    """The file's text for these cases (``line`` writes one case as a row)."""
    return table(header, columns, [line(c) for c in cases])


def write(path: Path, text: str) -> None:
    """Write a vector file (the generators' ``python -m tests.<name>`` entry point)."""
    path.write_text(text)
    print(f"wrote {path}")
