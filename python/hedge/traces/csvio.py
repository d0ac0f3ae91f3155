"""Reading delimited trace files with pyarrow, and turning its errors into located messages.

pyarrow's CSV reader is fast and streams gzip, but its errors name neither the file nor the
line ("Expected 13 columns, got 12: ..."). When it fails we re-scan the file once in Python
(only on that error path) to find the first offending line and field, so the user gets
``file:line: field 'name': ...``.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from hedge.errors import HedgeError, where


def open_binary(path: Path) -> io.BufferedIOBase:
    """Open a possibly gzip-compressed file for reading bytes (gzip told by its magic)."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def open_text(path: Path) -> io.TextIOBase:
    """Open a possibly gzip-compressed text file (detected from its magic bytes)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace")


def head_bytes(path: Path, n: int = 4096) -> bytes:
    """The first ``n`` bytes of the (decompressed) file, for format detection."""
    try:
        with open_binary(path) as f:
            return f.read(n)
    except (OSError, EOFError) as exc:
        raise HedgeError(f"{path}: cannot read ({exc})") from exc


def _records(path: Path, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every non-empty line, 1-based as editors count."""
    with open_text(path) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            yield lineno, next(csv.reader([line], delimiter=delimiter))


def _parses(value: str, dtype: pa.DataType) -> bool:
    if value == "" or not (pa.types.is_integer(dtype) or pa.types.is_floating(dtype)):
        return True  # empty cells are nulls; strings always parse
    try:
        float(value) if pa.types.is_floating(dtype) else int(value)
    except ValueError:
        return False
    return True


def locate_error(
    path: Path, names: list[str], types: dict[str, pa.DataType], delimiter: str, skip: int
) -> HedgeError | None:
    """Find the first line with a wrong field count or a value that does not parse."""
    for lineno, fields in _records(path, delimiter):
        if lineno <= skip:
            continue
        if len(fields) != len(names):
            return HedgeError(
                f"{where(path, lineno)}: expected {len(names)} fields "
                f"({', '.join(names)}), found {len(fields)}"
            )
        for name, value in zip(names, fields, strict=True):
            dtype = types.get(name)
            if dtype is not None and not _parses(value, dtype):
                return HedgeError(
                    f"{where(path, lineno, name)}: expected a number ({dtype}), found {value!r}"
                )
    return None


def line_of_row(path: Path, row: int, skip: int = 0) -> int:
    """1-based line number of data row ``row`` (0-based, empty lines skipped as pyarrow does)."""
    seen = -1
    with open_text(path) as f:
        for lineno, line in enumerate(f, start=1):
            if lineno <= skip or not line.strip():
                continue
            seen += 1
            if seen == row:
                return lineno
    return -1


def read_table(
    path: Path,
    names: list[str],
    types: dict[str, pa.DataType],
    *,
    delimiter: str = ",",
    header: bool = False,
    include: list[str] | None = None,
) -> pa.Table:
    """Read a delimited file with fixed columns and types; errors name file, line and field.

    ``names`` lists every column of the file (their count is checked on every line);
    ``include`` selects the ones returned. An empty file (no data rows) is an error.
    """
    path = Path(path)
    if not path.is_file():
        raise HedgeError(f"{path}: no such file")
    skip = 1 if header else 0
    read = pacsv.ReadOptions(column_names=names, skip_rows=skip, block_size=1 << 22)
    parse = pacsv.ParseOptions(delimiter=delimiter)
    convert = pacsv.ConvertOptions(
        column_types=types, include_columns=include or names, strings_can_be_null=False
    )
    try:
        table = pacsv.read_csv(path, read_options=read, parse_options=parse,
                               convert_options=convert)
    except pa.ArrowInvalid as exc:
        located = locate_error(path, names, types, delimiter, skip)
        if located is not None:
            raise located from exc
        message = str(exc)
        if "Empty CSV file" in message:
            raise HedgeError(f"{path}: empty file, expected {', '.join(names)}") from exc
        column = re.search(r"column #(\d+)", message)
        field = names[int(column.group(1))] if column else None
        raise HedgeError(f"{where(path, None, field)}: {message}") from exc
    except (OSError, EOFError) as exc:
        raise HedgeError(f"{path}: cannot read ({exc})") from exc
    if table.num_rows == 0:
        raise HedgeError(f"{path}: empty file, expected rows of {', '.join(names)}")
    return table
