"""Key extractors: the keys a job's map phase will emit, read from its input.

An extractor cuts a source into pieces on the reading thread (cheap, I/O) and turns a piece
into an Arrow array of keys on a worker thread (the CPU work, mostly in Arrow/numpy, which
release the GIL). Specs:

- ``words``: tokens exactly as ``java.util.StringTokenizer``'s defaults split them (on
  space, ``\\t``, ``\\n``, ``\\r``, ``\\f`` only), as Hadoop's WordCount does.
- ``tsv:N``: field ``N`` (0-based) of every non-empty line split at every tab (empty
  fields kept; a line with fewer than N + 1 fields is an error; empty lines are skipped).
- ``csv:NAME``: column ``NAME`` of a CSV file with a header row, as text.
- ``parquet:NAME``: column ``NAME`` of a Parquet file, cast to text (nulls skipped).
- ``py:module:function``: ``function(line: str) -> Iterable[str]`` called on every line.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (Hadoop's ``LineRecordReader``). Text must be
UTF-8 without NUL bytes; anything else is reported as a binary file given as text.
``pyarrow.compute`` (0.07 s to import) is imported by the functions that use it: counting
words with the compiled counter needs none of it.
"""

from __future__ import annotations

import importlib
import io
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from hedge.errors import HedgeError
from hedge.imkp.delimiters import DELIMITERS
from hedge.imkp.hashing import murmur3_32_array
from hedge.imkp.sources import Source, read_into

_IS_DELIMITER = np.zeros(256, dtype=bool)
_IS_DELIMITER[list(DELIMITERS)] = True


@dataclass(frozen=True)
class Piece:
    """A chunk of one source: raw bytes or a ready Arrow array, and where it came from."""

    source: str
    data: Any
    first_line: int = 1


class Extractor(ABC):
    """Base: pieces are byte chunks cut after the last ``cut`` byte of each block."""

    cut: bytes = b"\n"
    numbers_lines: bool = True  # track Piece.first_line (for messages naming a line)

    def pieces(self, source: Source, block_size: int, progress: Callable[[int], None]
               ) -> Iterator[Piece]:
        carry, line = b"", 1
        with source.open() as stream:
            while True:
                # One buffer per piece, filled in place and trimmed in place: a fresh
                # read, a concatenation and a slice would each allocate (and page-fault)
                # a block-sized buffer, a tenth of the whole cost of counting words.
                data = bytearray(len(carry) + block_size)
                data[:len(carry)] = carry
                got = read_into(stream, memoryview(data)[len(carry):])
                progress(got)
                if not got:
                    break
                del data[len(carry) + got:]
                end = last_boundary(data, self.cut)
                if end == 0:  # no boundary yet (a very long token or line): keep reading
                    carry = bytes(data)
                    continue
                carry = bytes(data[end:])
                del data[end:]
                yield Piece(source.name, data, line)
                if self.numbers_lines:  # a pass over the bytes: only for rules that use it
                    line += data.count(b"\n")
        if carry:
            yield Piece(source.name, carry, line)

    @abstractmethod
    def keys(self, piece: Piece) -> pa.Array:
        """The keys of one piece (runs on a worker thread)."""

    def distinct(self, piece: Piece, seed: int) -> tuple[pa.Array, np.ndarray, np.ndarray]:
        """(distinct keys as binary, their counts, their murmur3_32) of one piece."""
        keys, counts = distinct_counts(self.keys(piece))
        return keys, counts, murmur3_32_array(keys, seed)

    def counter(self, seed: int, capacity: int) -> KeyCounter:
        """A counter for pieces of this rule (one per worker thread)."""
        return PieceCounter(self, seed)


Counted = tuple[pa.Array, np.ndarray, np.ndarray]  # distinct keys (binary), counts, murmur3_32


class KeyCounter(ABC):
    """Counts the keys of the pieces given to ``add`` (one thread at a time) until ``take``."""

    @abstractmethod
    def add(self, piece: Piece) -> None:
        """Count the keys of one piece."""

    @property
    @abstractmethod
    def full(self) -> bool:
        """Whether the caller must ``take`` before the next ``add``."""

    @abstractmethod
    def take(self) -> Counted | None:
        """The distinct keys counted since the last take, their counts and murmur3_32
        (None when nothing was counted); the counter starts afresh."""


class PieceCounter(KeyCounter):
    """Each piece on its own (``Extractor.distinct``): full after every piece."""

    def __init__(self, rule: Extractor, seed: int) -> None:
        self.rule, self.seed, self.counted = rule, seed, None

    def add(self, piece: Piece) -> None:
        self.counted = self.rule.distinct(piece, self.seed)

    @property
    def full(self) -> bool:
        return self.counted is not None

    def take(self) -> Counted | None:
        counted, self.counted = self.counted, None
        return counted


def last_boundary(data: bytes, cut: bytes) -> int:
    """Index just past the last byte of ``data`` that is in ``cut`` (0 when there is none).

    Searches backwards in growing windows: an ``rfind`` of a byte that does not occur (``\f``
    in most text) would otherwise scan the whole block once per byte of ``cut``.
    """
    window = 1 << 12
    while True:
        low = max(0, len(data) - window)
        end = max(data.rfind(c, low) for c in cut) + 1
        if end or low == 0:
            return end
        window <<= 4


def distinct_counts(keys: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(distinct keys as binary, their counts)."""
    import pyarrow.compute as pc

    counted = pc.value_counts(keys)
    return counted.field(0).cast(pa.binary()), counted.field(1).to_numpy().astype(np.int64)


def _ascii(data: bytes) -> bool:
    """Pure ASCII (so valid UTF-8: the validation can be skipped)."""
    return len(data) == 0 or np.frombuffer(data, dtype=np.uint8).max() < 0x80


def check_text(data: bytes, source: str) -> None:
    """HedgeError unless ``data`` looks like UTF-8 text (NUL bytes betray binary files)."""
    if b"\x00" in data:
        raise HedgeError(f"{source}: NUL byte in the input: a binary file given as text? "
                         "(expected UTF-8 text; use --key parquet:NAME for Parquet files)")


def utf8(keys: pa.Array, source: str) -> pa.Array:
    """Keys validated as UTF-8 (zero-copy cast)."""
    try:
        return keys.cast(pa.string())
    except pa.ArrowInvalid as exc:
        raise HedgeError(f"{source}: invalid UTF-8 in the input: a binary file given as text? "
                         "(expected UTF-8 text)") from exc


def tokenize(data: bytes) -> pa.Array:
    """StringTokenizer tokens of ``data`` as an Arrow binary array (compact copy of bytes).

    Token bytes are the non-delimiter bytes; token boundaries are where "is a token byte"
    flips. Numpy choices matter here: boolean ``nonzero`` and ``np.compress`` are several
    times faster than their int8 / fancy-index equivalents.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    controls = np.count_nonzero(raw < 32)
    newlines = data.count(b"\n")
    if controls == newlines or controls == newlines + sum(data.count(c) for c in b"\t\r\f"):
        keep = raw > 32  # fast path: the only bytes <= 32 are delimiters
    else:
        keep = ~_IS_DELIMITER[raw]
    padded = np.zeros(len(raw) + 2, dtype=bool)
    padded[1:-1] = keep
    edges = np.flatnonzero(padded[1:] ^ padded[:-1])
    lengths = edges[1::2] - edges[0::2]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    compact = np.compress(keep, raw)
    return pa.Array.from_buffers(pa.binary(), len(lengths),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(compact)])


class Words(Extractor):
    cut = DELIMITERS
    numbers_lines = False

    def keys(self, piece: Piece) -> pa.Array:
        check_text(piece.data, piece.source)
        tokens = tokenize(piece.data)
        if _ascii(piece.data):
            return tokens.view(pa.string())  # pure ASCII is valid UTF-8: skip validation
        return utf8(tokens, piece.source)

    def distinct(self, piece: Piece, seed: int) -> tuple[pa.Array, np.ndarray, np.ndarray]:
        """The one-pass compiled count (``hedge.imkp.wordcount``), same answer as the default."""
        from hedge.imkp.wordtable import count_words  # numba only without the AOT module

        check_text(piece.data, piece.source)
        keys, counts, hashes = count_words(piece.data, seed, piece.source)
        if not _ascii(piece.data):
            utf8(keys, piece.source)  # valid iff every distinct token is (delimiters are ASCII)
        return keys, counts, hashes

    def counter(self, seed: int, capacity: int) -> KeyCounter:
        """One table for every piece (``hedge.imkp.wordcount.WordCounter``)."""
        return WordsCounter(seed, capacity)


class WordsCounter(KeyCounter):
    """The compiled word count over many pieces: keys are stored once, not once per piece."""

    def __init__(self, seed: int, capacity: int) -> None:
        from hedge.imkp.wordtable import WordCounter  # numba only without the AOT module

        self.counter = WordCounter(seed, capacity)

    def add(self, piece: Piece) -> None:
        from hedge.imkp.wordtable import check_piece

        check_text(piece.data, piece.source)
        check_piece(piece.data, piece.source)
        if not _ascii(piece.data):  # valid iff every token is (pieces end at a delimiter)
            utf8(pa.Array.from_buffers(pa.binary(), 1, [None, pa.py_buffer(
                np.array([0, len(piece.data)], np.int32)), pa.py_buffer(piece.data)]),
                piece.source)
        self.counter.add(piece.data)

    @property
    def full(self) -> bool:
        return self.counter.full

    def take(self) -> Counted | None:
        return self.counter.take() if self.counter.used else None


def split_lines(data: bytes, source: str) -> pa.Array:
    """Non-empty lines of a chunk (Hadoop line ends), as an Arrow string array."""
    import pyarrow.compute as pc

    check_text(data, source)
    text = utf8(pa.array([data], type=pa.binary()), source)
    lines = pc.split_pattern_regex(text, r"\r\n|\r|\n").flatten()
    return lines.filter(pc.not_equal(pc.binary_length(lines), 0))


class TsvColumn(Extractor):
    def __init__(self, column: int) -> None:
        self.column = column

    def keys(self, piece: Piece) -> pa.Array:
        import pyarrow.compute as pc

        lines = split_lines(piece.data, piece.source)
        fields = pc.split_pattern(lines, "\t")
        short = np.flatnonzero(pc.list_value_length(fields).to_numpy() <= self.column)
        if len(short):
            raise HedgeError(f"{piece.source}: a line near line {piece.first_line} has "
                             f"{len(fields[int(short[0])])} tab-separated fields, --key tsv:"
                             f"{self.column} needs at least {self.column + 1} (0-based column)")
        return pc.list_element(fields, self.column)


class PythonFunction(Extractor):
    def __init__(self, spec: str) -> None:
        module_name, _, attr = spec.rpartition(":")
        try:
            self.function = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise HedgeError(f"--key py:{spec}: cannot import {attr!r} from module "
                             f"{module_name!r} ({exc}); expected py:module:function") from exc
        self.spec = spec

    def keys(self, piece: Piece) -> pa.Array:
        lines = split_lines(piece.data, piece.source).to_pylist()
        out: list[str] = []
        for i, line in enumerate(lines):
            try:
                out.extend(str(k) for k in self.function(line))
            except Exception as exc:  # noqa: BLE001 - user code: report where it failed
                raise HedgeError(f"{piece.source}: --key py:{self.spec} failed near line "
                                 f"{piece.first_line + i}: {type(exc).__name__}: {exc}") from exc
        return pa.array(out, type=pa.string())


class _CountingReader(io.RawIOBase):
    """Wraps a stream to report bytes read (for progress over Arrow's own readers)."""

    def __init__(self, stream: Any, progress: Callable[[int], None]) -> None:
        self.stream, self.progress = stream, progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.stream.read(len(buffer))
        buffer[: len(data)] = data
        self.progress(len(data))
        return len(data)


class CsvColumn(Extractor):
    def __init__(self, column: str) -> None:
        self.column = column

    def pieces(self, source: Source, block_size: int, progress: Callable[[int], None]
               ) -> Iterator[Piece]:
        from pyarrow import csv

        with source.open() as stream:
            try:
                reader = csv.open_csv(
                    io.BufferedReader(_CountingReader(stream, progress)),
                    read_options=csv.ReadOptions(block_size=block_size, use_threads=True),
                    convert_options=csv.ConvertOptions(include_columns=[self.column],
                                                       column_types={self.column: pa.string()}))
                for batch in reader:
                    yield Piece(source.name, batch.column(0))
            except (pa.ArrowInvalid, KeyError) as exc:
                raise HedgeError(f"{source.name}: cannot read CSV column '{self.column}': "
                                 f"{exc} (expected a header row naming it)") from exc

    def keys(self, piece: Piece) -> pa.Array:
        return piece.data


class ParquetColumn(Extractor):
    def __init__(self, column: str) -> None:
        self.column = column

    def pieces(self, source: Source, block_size: int, progress: Callable[[int], None]
               ) -> Iterator[Piece]:
        import pyarrow.parquet as pq

        with source.open() as stream:
            if not stream.seekable():  # a network stream: Parquet needs random access
                stream = pa.BufferReader(stream.read())
            try:
                parquet = pq.ParquetFile(stream)
            except pa.ArrowInvalid as exc:
                raise HedgeError(f"{source.name}: not a Parquet file ({exc})") from exc
            if self.column not in parquet.schema_arrow.names:
                raise HedgeError(f"{source.name}: no column '{self.column}' in the Parquet "
                                 f"schema (columns: {', '.join(parquet.schema_arrow.names)})")
            rows = max(parquet.metadata.num_rows, 1)
            for batch in parquet.iter_batches(batch_size=1 << 20, columns=[self.column]):
                progress(source.size * batch.num_rows // rows)
                yield Piece(source.name, batch.column(0))

    def keys(self, piece: Piece) -> pa.Array:
        column = piece.data.drop_null()
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            return utf8(column, piece.source)
        return column.cast(pa.string())


def extractor(spec: str) -> Extractor:
    """The extractor for a ``--key`` spec."""
    kind, _, arg = spec.partition(":")
    if spec == "words":
        return Words()
    if kind == "tsv" and arg.isdigit():
        return TsvColumn(int(arg))
    if kind == "csv" and arg:
        return CsvColumn(arg)
    if kind == "parquet" and arg:
        return ParquetColumn(arg)
    if kind == "py" and arg.count(":") == 1 and all(arg.split(":")):
        return PythonFunction(arg)
    raise HedgeError(f"--key {spec!r}: expected words, tsv:N (0-based column), csv:NAME, "
                     "parquet:NAME or py:module:function")

