"""Streaming key counting with bounded memory: exact group totals, exact heavy-key counts.

Pieces are counted on worker threads, each with its own ``KeyCounter`` of the key rule (the
compiled word count keeps one table across pieces for ``words``; the other rules count each
piece with ``pyarrow.compute.value_counts``). What a counter hands back (distinct keys, their
counts and ``murmur3_32``) gives the group totals (group ``murmur3_32 mod G``), exact
whatever the input size. Per-key counts are merged into one table of at most ``capacity``
keys; when it would grow past that, it becomes a Misra-Gries summary (merged summaries,
Agarwal et al. 2012): the (capacity+1)-th largest count is subtracted from every count and
keys left at zero or below are dropped. Any key with more than ``total / (capacity + 1)``
records survives, so with ``capacity >= G`` every heavy-key candidate (``count x G >
total``) is kept; a second pass then counts the surviving keys exactly. While the table
never overflows, its counts are exact and one pass suffices.

The heaviest key after an overflow: each prune takes at most its cut from any one key and
at least ``(capacity + 1) x cut`` from the table, so a key loses at most
``B = total // (capacity + 1)`` records and every key above ``B`` survives. If the largest
exact count of the survivors is above ``B``, it is the heaviest key's; otherwise the
heaviest key may have been dropped (which one depends on the order pieces merged in, so on
the threads) and all that is known is that no key has more than ``B`` records: then
``KeyCounts.heaviest_bound`` is ``B``, the same whatever the threads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from queue import SimpleQueue

import numpy as np
import pyarrow as pa

from hedge.imkp.keys import Counted, Extractor, KeyCounter, Piece, distinct_counts


@dataclass(frozen=True)
class KeyCounts:
    """The result of counting: exact group totals and exact counts of the kept keys."""

    group_totals: np.ndarray
    keys: pa.Array
    counts: np.ndarray
    exact_all: bool  # True when ``keys`` holds every distinct key (no pruning happened)
    # None: the largest of ``counts`` is the heaviest key's exact count; else the heaviest key
    # may be missing from ``keys`` and is only known to have at most this many records
    heaviest_bound: int | None = None

    @property
    def total(self) -> int:
        return int(self.group_totals.sum())


def group_totals(counted: Counted, groups: int) -> np.ndarray:
    """Records per group (``murmur3_32 mod G``) of counted keys."""
    _, counts, hashes = counted
    totals = np.bincount(hashes.astype(np.int64) % groups, weights=counts, minlength=groups)
    return np.rint(totals).astype(np.int64)


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
        if len(self.pending) == 1 and not len(self.keys):  # distinct already: no encode
            (self.keys, self.counts), = self.pending
            self.pending, self.pending_rows = [], 0
            if len(self.counts) > self.capacity:
                self.prune()
            return
        keys = pa.concat_arrays([self.keys, *(k for k, _ in self.pending)])
        counts = np.concatenate([self.counts, *(c for _, c in self.pending)])
        self.pending, self.pending_rows = [], 0
        import pyarrow.compute as pc  # 0.07 s to import: only when several counts merge

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


def run_pieces(pieces: Iterable[Piece], work: Callable[[Piece], object],
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


def count_all(pieces: Iterable[Piece], rule: Extractor, seed: int, capacity: int,
              threads: int) -> Iterator[Counted]:
    """What the counters hand back: when one is full, and at the end."""
    counters: SimpleQueue[KeyCounter] = SimpleQueue()
    every = [rule.counter(seed, capacity) for _ in range(max(1, threads))]
    for counter in every:
        counters.put(counter)

    def work(piece: Piece) -> Counted | None:
        counter = counters.get()  # a counter is used by one thread at a time
        try:
            counter.add(piece)
            return counter.take() if counter.full else None
        finally:
            counters.put(counter)

    for counted in run_pieces(pieces, work, threads):
        if counted is not None:
            yield counted
    for counter in every:
        counted = counter.take()
        if counted is not None:
            yield counted


def count_keys(pieces: Callable[[], Iterable[Piece]], rule: Extractor, groups: int, seed: int,
               capacity: int, threads: int) -> KeyCounts:
    """Count every piece; a second pass over ``pieces()`` when the key table overflowed."""
    capacity = max(capacity, 2 * groups)
    totals = np.zeros(groups, dtype=np.int64)
    table = KeyTable(capacity)
    for counted in count_all(pieces(), rule, seed, capacity, threads):
        totals += group_totals(counted, groups)
        table.add(*counted[:2])
    table.merge()
    if not table.pruned:
        return KeyCounts(totals, table.keys, table.counts, exact_all=True)
    candidates = table.keys
    import pyarrow.compute as pc  # 0.07 s to import: only for the second pass

    def recount(piece: Piece) -> tuple[pa.Array, np.ndarray]:
        keys = rule.keys(piece).cast(pa.binary())
        return distinct_counts(keys.filter(pc.is_in(keys, value_set=candidates)))

    exact = KeyTable(capacity)
    for keys, counts in run_pieces(pieces(), recount, threads):
        exact.add(keys, counts)
    exact.merge()
    bound = int(totals.sum()) // (capacity + 1)  # every key above it survived (module doc)
    top = int(exact.counts.max()) if len(exact.counts) else 0
    return KeyCounts(totals, exact.keys, exact.counts, exact_all=False,
                     heaviest_bound=None if top > bound else bound)
