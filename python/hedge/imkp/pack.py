"""From key counts to a mapping: heavy-key selection and greedy largest-first packing.

- Groups: key ``k`` belongs to group ``murmur3_32(k) mod G`` with ``G = R x scale``.
- Heavy keys (hedge's extension of ImKP): a key holding more records than a group's mean
  share (``count x G > total``) cannot be balanced inside its group, so up to ``K`` of the
  heaviest such keys (ordered by count descending, then key bytes ascending) become items of
  their own and their records leave their group.
- Packing (LPT): all items, heavy keys and groups, are taken heaviest first (ties: heavy keys
  before groups, then key order / group index) and each is given to the reducer with the
  smallest load so far (ties: lowest index). Empty groups are placed too, so every key,
  seen or not, has a reducer. A refinement then moves or swaps single items between the
  fullest and the emptiest reducer while that lowers the maximum (``refine``).
"""

from __future__ import annotations

import heapq

import numpy as np

from hedge.errors import HedgeError
from hedge.imkp.mapfile import Mapping


def check_settings(reducers: int, scale: int, heavy_keys: int) -> None:
    """HedgeError for settings that cannot give a mapping."""
    if reducers <= 0:
        raise HedgeError(f"--reducers {reducers}: must be a positive integer (the job's "
                         "number of reduce tasks)")
    if scale <= 0:
        raise HedgeError(f"--scale {scale}: must be a positive integer (groups per reducer)")
    if heavy_keys < 0:
        raise HedgeError(f"--heavy-keys {heavy_keys}: must be >= 0 (0 = groups only)")
    if reducers * scale > 2**31 - 1:  # Java indexes the group table with an int
        raise HedgeError(f"--reducers {reducers} x --scale {scale}: at most 2^31 - 1 groups")


def select_heavy(keys: list[bytes], counts: np.ndarray, total: int, groups: int,
                 limit: int) -> tuple[list[bytes], np.ndarray]:
    """Top ``limit`` keys with ``count x groups > total``, by count desc then key bytes asc."""
    counts = np.asarray(counts, dtype=np.int64)
    eligible = np.flatnonzero(counts * groups > total)
    ranked = sorted(eligible.tolist(), key=lambda i: (-int(counts[i]), keys[i]))[:limit]
    return [keys[i] for i in ranked], counts[ranked] if ranked else np.zeros(0, np.int64)


def lpt(sizes: np.ndarray, reducers: int) -> np.ndarray:
    """Greedy largest-first: items in the given order, each to the least-loaded reducer."""
    heap = [(0, r) for r in range(reducers)]
    out = np.empty(len(sizes), dtype=np.int64)
    for i, size in enumerate(sizes.tolist()):
        load, r = heap[0]
        out[i] = r
        heapq.heapreplace(heap, (load + size, r))
    return out


def refine(sizes: np.ndarray, placed: np.ndarray, reducers: int, rounds: int | None = None) -> None:
    """Lower the maximum load in place by moves and swaps between the fullest and emptiest.

    Each round takes the most loaded reducer ``hi`` and the least loaded ``lo`` (lowest
    index on ties), and among all moves of one item ``a`` from ``hi`` to ``lo`` and swaps of
    ``a`` with an item ``b`` of ``lo``, applies the one whose ``delta = a - b`` brings the
    pair closest to even (``|gap - 2 delta|`` smallest, first in item order on ties), if it
    lowers ``hi``'s load. Stops when no move or swap helps, or after ``rounds`` rounds
    (default 20 R). LPT leaves up to one small item's worth of imbalance; this removes most.
    """
    loads = np.bincount(placed, weights=sizes, minlength=reducers).astype(np.int64)
    for _ in range(rounds if rounds is not None else 20 * reducers):
        hi, lo = int(np.argmax(loads)), int(np.argmin(loads))
        gap = int(loads[hi] - loads[lo])
        if gap <= 1:
            return
        on_hi, on_lo = np.flatnonzero(placed == hi), np.flatnonzero(placed == lo)
        delta = sizes[on_hi][:, None] - np.concatenate([sizes[on_lo], [0]])[None, :]
        score = np.where((delta > 0) & (delta < gap), np.abs(gap - 2 * delta), np.iinfo(np.int64).max)
        best = int(np.argmin(score))
        if score.flat[best] == np.iinfo(np.int64).max:
            return
        a, b = divmod(best, len(on_lo) + 1)
        moved = int(delta[a, b])
        placed[on_hi[a]] = lo
        if b < len(on_lo):
            placed[on_lo[b]] = hi
        loads[hi] -= moved
        loads[lo] += moved


def build_mapping(group_totals: np.ndarray, heavy_keys: list[bytes], heavy_counts: np.ndarray,
                  heavy_groups: np.ndarray, reducers: int, scale: int, heaviest: int,
                  seed: int = 0, heaviest_is_bound: bool = False) -> Mapping:
    """Pack groups (``group_totals`` include the heavy keys' records) and heavy keys;
    ``heaviest`` is the heaviest key's count, or a bound on it with ``heaviest_is_bound``."""
    groups = reducers * scale
    heavy_counts = np.asarray(heavy_counts, dtype=np.int64)
    residual = group_totals.astype(np.int64) - np.bincount(
        np.asarray(heavy_groups, dtype=np.int64), weights=heavy_counts, minlength=groups
    ).astype(np.int64)
    sizes = np.concatenate([heavy_counts, residual])
    kind = np.concatenate([np.zeros(len(heavy_counts)), np.ones(groups)])  # heavy first on ties
    rank = np.arange(len(sizes))  # heavy keys are already in key order, groups by index
    order = np.lexsort((rank, kind, -sizes))
    placed = np.empty(len(sizes), dtype=np.int64)
    placed[order] = lpt(sizes[order], reducers)
    refine(sizes, placed, reducers)
    return Mapping(reducers=reducers, scale=scale, group_reducer=placed[len(heavy_counts):],
                   group_count=residual, heavy_keys=list(heavy_keys),
                   heavy_reducer=placed[: len(heavy_counts)], heavy_count=heavy_counts,
                   heaviest_key_count=int(heaviest), seed=seed,
                   heaviest_is_bound=heaviest_is_bound)
