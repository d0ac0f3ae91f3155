"""The task-history table every node analysis reads, and the plain CSV format.

One row per task attempt (pyarrow Table, schema ``HISTORY_SCHEMA``):

    job, task, attempt, node   str   (node: host name, no port, no rack)
    type                       str   MAP / REDUCE / "" when the source does not say
    start, end                 float seconds on one clock, end >= start
    state                      str   SUCCEEDED / KILLED / FAILED
    speculative                bool  launched while an earlier attempt of the task still ran

The CSV format operators export into has the header ``job,task,attempt,node,start,end,state``
(times in seconds). It has no speculative column: ``infer_speculative`` derives it from
overlapping attempts of the same task, which is also what the History Server REST API needs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from hedge.errors import HedgeError, where
from hedge.traces.attempts import ATTEMPT_SCHEMA

CSV_COLUMNS = ("job", "task", "attempt", "node", "start", "end", "state")
STATES = ("SUCCEEDED", "KILLED", "FAILED")
TYPES = ("MAP", "REDUCE", "")

# The trace readers' attempt table without its input sizes: one schema for task history.
HISTORY_SCHEMA = pa.schema([f for f in ATTEMPT_SCHEMA if f.name != "input_bytes"])


def make_history(columns: dict[str, object], source: str = "<memory>",
                 first_line: int | None = None) -> pa.Table:
    """Build and validate a history table from column arrays.

    ``type`` defaults to "" and ``speculative`` to the overlap rule of
    ``infer_speculative`` when absent.
    """
    n = len(columns["job"])  # type: ignore[arg-type]
    data = dict(columns)
    data.setdefault("type", [""] * n)
    infer = "speculative" not in data
    if infer:
        data["speculative"] = np.zeros(n, dtype=bool)
    table = pa.table({name: data[name] for name in HISTORY_SCHEMA.names}).cast(HISTORY_SCHEMA)
    validate_history(table, source, first_line)
    if infer:
        table = table.set_column(8, "speculative", pa.array(infer_speculative(table)))
    return table


def validate_history(table: pa.Table, source: str, first_line: int | None = None) -> None:
    """Reject rows no real cluster produces; the message names the source and the row.

    With ``first_line`` (the file line of row 0, e.g. 2 after a CSV header) the message
    gives ``file:line``; otherwise the 1-based row number.
    """
    def fail(mask: np.ndarray, name: str, expected: str,
             values: np.ndarray | None = None) -> None:
        _fail(source, first_line, mask, name, expected, values)

    if table.schema != HISTORY_SCHEMA:
        raise HedgeError(f"{source}: history columns are {table.schema.names} "
                         f"({table.schema.types}), expected {HISTORY_SCHEMA}")
    if table.num_rows == 0:
        return
    for name in ("job", "task", "attempt", "node", "state", "start", "end"):
        nulls = table.column(name).is_null().to_numpy(zero_copy_only=False)
        if nulls.any():
            fail(nulls, name, "a value (it is missing)")
    for name in ("job", "task", "attempt", "node"):
        empty = pc.equal(pc.utf8_length(table.column(name)), 0).to_numpy(zero_copy_only=False)
        if empty.any():
            what = "a host name (attempt without a node)" if name == "node" else "a non-empty id"
            fail(empty, name, what)
    start = table.column("start").to_numpy()
    end = table.column("end").to_numpy()
    for name, values in (("start", start), ("end", end)):
        bad = ~np.isfinite(values)
        if bad.any():
            fail(bad, name, "a finite time in seconds", values)
    backwards = end < start
    if backwards.any():
        fail(backwards, "end", "a time >= start (clocks out of order)", end)
    for name, allowed in (("state", STATES), ("type", TYPES)):
        column = table.column(name)
        bad = ~pc.is_in(column, value_set=pa.array(allowed)).to_numpy(zero_copy_only=False)
        if bad.any():
            fail(bad, name, f"one of {', '.join(a or '(empty)' for a in allowed)}",
                  column.to_numpy(zero_copy_only=False))
    keys = pc.binary_join_element_wise(table.column("job"), table.column("attempt"), "\x00")
    _, first, inverse = np.unique(keys.to_numpy(zero_copy_only=False), return_index=True,
                                  return_inverse=True)
    dup = first[inverse] != np.arange(table.num_rows)  # every occurrence after the first
    if dup.any():
        fail(dup, "attempt", "an attempt id unique within its job (duplicate)",
             table.column("attempt").to_numpy(zero_copy_only=False))


def _fail(source: str, first_line: int | None, mask: np.ndarray, name: str, expected: str,
          values: np.ndarray | None = None) -> None:
    row = int(np.flatnonzero(mask)[0])
    value = None if values is None else values[row]
    shown = "" if value is None else f" = {getattr(value, 'item', lambda: value)()!r}"
    if first_line is None:
        raise HedgeError(f"{where(source, field=name)}: row {row + 1}{shown}, expected {expected}")
    raise HedgeError(f"{where(source, first_line + row, name)}{shown}, expected {expected}")


def infer_speculative(table: pa.Table) -> np.ndarray:
    """Mark an attempt speculative when an earlier-started attempt of the same task was
    still running at its start (``start < max end of earlier attempts``).

    Vectorised: rows are sorted by (job, task, start); a running maximum of ``end`` within
    each task is computed in one ``np.maximum.accumulate`` by shifting every task's times
    into its own disjoint band (task index * (span + 1)).
    """
    n = table.num_rows
    if n == 0:
        return np.zeros(0, dtype=bool)
    keys = pc.binary_join_element_wise(table.column("job"), table.column("task"), "\x00")
    _, group = np.unique(keys.to_numpy(zero_copy_only=False), return_inverse=True)
    start = table.column("start").to_numpy()
    end = table.column("end").to_numpy()
    order = np.lexsort((start, group))
    lo = min(start.min(), end.min())
    span = max(start.max(), end.max()) - lo + 1.0
    shift = group[order] * span - lo
    shifted_end = end[order] + shift
    prior_max = np.empty(n)
    prior_max[0] = -np.inf
    prior_max[1:] = np.maximum.accumulate(shifted_end)[:-1]
    spec_sorted = (start[order] + shift) < prior_max
    out = np.empty(n, dtype=bool)
    out[order] = spec_sorted
    return out


def looks_like_csv_history(path: Path) -> bool:
    """True when the file's first line is the CSV history header."""
    try:
        with open(path, "rb") as f:
            first = f.readline(4096)
    except OSError as exc:
        raise HedgeError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    text = first.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
    return tuple(c.strip() for c in text.split(",")) == CSV_COLUMNS


def read_csv_history(path: str | Path) -> pa.Table:
    """Read and validate a CSV task history (see the module docstring for the format)."""
    path = Path(path)
    bad_rows: list[str] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        line = "?" if row.number is None else str(row.number)
        bad_rows.append(f"{path}:{line}: {row.actual_columns} fields, expected "
                        f"{row.expected_columns} ({','.join(CSV_COLUMNS)})")
        return "skip"

    if not looks_like_csv_history(path):
        raise HedgeError(f"{path}:1: header must be '{','.join(CSV_COLUMNS)}'")
    try:
        raw = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(use_threads=False),
            parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in CSV_COLUMNS},
                strings_can_be_null=False, include_columns=list(CSV_COLUMNS)),
        )
    except pa.ArrowInvalid as exc:
        raise HedgeError(f"{path}: not a valid CSV history: {exc}") from exc
    if bad_rows:
        raise HedgeError(bad_rows[0])
    raw = raw.rename_columns([c.strip() for c in raw.column_names])
    columns: dict[str, object] = {c: pc.utf8_trim_whitespace(raw.column(c))
                                  for c in ("job", "task", "attempt", "node", "state")}
    for name in ("start", "end"):
        columns[name] = _parse_seconds(path, name, raw.column(name))
    columns["state"] = pc.utf8_upper(columns["state"])  # type: ignore[arg-type]
    return make_history(columns, source=str(path), first_line=2)


def _parse_seconds(path: Path, name: str, column: pa.ChunkedArray) -> np.ndarray:
    try:
        return pc.cast(pc.utf8_trim_whitespace(column), pa.float64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        values = column.to_pylist()
        for row, text in enumerate(values):
            try:
                float(text)
            except ValueError:
                raise HedgeError(f"{where(path, row + 2, name)} = {text!r}, "
                                 "expected a number of seconds") from None
        raise

