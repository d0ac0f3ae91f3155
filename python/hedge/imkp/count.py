"""Streaming key counting with bounded memory: exact group totals, exact heavy-key counts.

Every piece's keys are counted on a worker thread (``Extractor.distinct``: the one-pass
compiled word count for ``words``, ``pyarrow.compute.value_counts`` for the other rules),
and the distinct keys are hashed to their group (``murmur3_32 mod G``), so group totals are
exact whatever the input size. Per-key counts are merged into one table of at most
``capacity`` keys; when it would grow past that, it becomes a Misra-Gries summary (merged
summaries, Agarwal et al. 2012): the (capacity+1)-th largest count is subtracted from every
count and keys left at zero or below are dropped. Any key with more than
``total / (capacity + 1)`` records survives, so with ``capacity >= G`` every heavy-key
candidate (``count x G > total``) is kept; a second pass then counts the surviving keys
exactly. While the table never overflows, its counts are exact and one pass suffices.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hedge.imkp.keys import Extractor, Piece, distinct_counts


@dataclass(frozen=True)
class PieceCount:
    """Distinct keys of one piece with their counts, and the piece's per-group totals."""

    keys: pa.Array  # binary
    counts: np.ndarray  # int64
    group_totals: np.ndarray  # int64[G]


@dataclass(frozen=True)
class KeyCounts:
    """The result of counting: exact group totals and exact counts of the kept keys."""

    group_totals: np.ndarray
    keys: pa.Array
    counts: np.ndarray
    exact_all: bool  # True when ``keys`` holds every distinct key (no pruning happened)

    @property
    def total(self) -> int:
        return int(self.group_totals.sum())


def count_piece(rule: Extractor, piece: Piece, groups: int, seed: int) -> PieceCount:
    distinct, counts, hashes = rule.distinct(piece, seed)
    group = hashes.astype(np.int64) % groups
    totals = np.bincount(group, weights=counts, minlength=groups)
    return PieceCount(distinct, counts, np.rint(totals).astype(np.int64))


class KeyTable:
    """Merged per-key counts, at most ``capacity`` keys (Misra-Gries beyond that)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.keys: pa.Array = pa.array([], type=pa.binary())
        self.counts = np.zeros(0, dtype=np.int64)
        self.pending: list[tuple[pa.Array, np.ndarray]] = []
        self.pending_rows = 0
        self.pruned = False

    def add(self, keys: pa.Array, counts: np.ndarray) -> None:
        self.pending.append((keys, counts))
        self.pending_rows += len(keys)
        if self.pending_rows > self.capacity:
            self.merge()

    def merge(self) -> None:
        if not self.pending:
            return
        keys = pa.concat_arrays([self.keys, *(k for k, _ in self.pending)])
        counts = np.concatenate([self.counts, *(c for _, c in self.pending)])
        self.pending, self.pending_rows = [], 0
        # dictionary_encode + bincount: several times cheaper than an Acero group_by here
        encoded = pc.dictionary_encode(keys)
        self.keys = encoded.dictionary
        self.counts = np.bincount(encoded.indices.to_numpy(), weights=counts,
                                  minlength=len(self.keys)).astype(np.int64)
        if len(self.counts) > self.capacity:
            self.prune()

    def prune(self) -> None:
        """Misra-Gries step: subtract the (capacity+1)-th largest count, drop keys <= 0."""
        cut = np.partition(self.counts, len(self.counts) - self.capacity - 1)[
            len(self.counts) - self.capacity - 1]
        keep = self.counts > cut
        self.keys = self.keys.filter(pa.array(keep))
        self.counts = self.counts[keep] - cut
        self.pruned = True


def run_pieces(pieces: Iterable[Piece], work: Callable[[Piece], PieceCount | tuple],
               threads: int) -> Iterator:
    """Apply ``work`` to pieces on ``threads`` workers; results in input order, bounded queue."""
    if threads <= 1:
        yield from map(work, pieces)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        queue: deque[Future] = deque()
        for piece in pieces:
            queue.append(pool.submit(work, piece))
            if len(queue) >= 2 * threads:
                yield queue.popleft().result()
        while queue:
            yield queue.popleft().result()


def count_keys(pieces: Callable[[], Iterable[Piece]], rule: Extractor, groups: int, seed: int,
               capacity: int, threads: int) -> KeyCounts:
    """Count every piece; a second pass over ``pieces()`` when the key table overflowed."""
    capacity = max(capacity, 2 * groups)
    group_totals = np.zeros(groups, dtype=np.int64)
    table = KeyTable(capacity)
    for result in run_pieces(pieces(), lambda p: count_piece(rule, p, groups, seed), threads):
        group_totals += result.group_totals
        table.add(result.keys, result.counts)
    table.merge()
    if not table.pruned:
        return KeyCounts(group_totals, table.keys, table.counts, exact_all=True)
    candidates = table.keys

    def recount(piece: Piece) -> tuple[pa.Array, np.ndarray]:
        keys = rule.keys(piece).cast(pa.binary())
        return distinct_counts(keys.filter(pc.is_in(keys, value_set=candidates)))

    exact = KeyTable(capacity)
    for keys, counts in run_pieces(pieces(), recount, threads):
        exact.add(keys, counts)
    exact.merge()
    return KeyCounts(group_totals, exact.keys, exact.counts, exact_all=False)
