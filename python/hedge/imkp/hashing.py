"""Key hashes shared with the Java shim, vectorised over Arrow arrays of keys.

- ``murmur3_32``: MurmurHash3 x86 32-bit (Austin Appleby's reference ``MurmurHash3_x86_32``)
  over the UTF-8 bytes of a key, seed 0 by default. ImKP maps a key to group
  ``murmur3_32(key) mod G`` (the hash taken as an unsigned 32-bit integer). The Java twin is
  ``org.hedge.imkp.Murmur3``; both are checked against ``tests/data/imkp_hash_vectors.tsv``.
- ``text_hash``: Hadoop's ``Text.hashCode()`` = ``WritableComparator.hashBytes``:
  ``h = 1; h = 31 * h + (signed byte)`` over the UTF-8 bytes, in 32-bit two's complement.
  ``HashPartitioner`` sends a key to ``(h & Integer.MAX_VALUE) % R``.

The array versions take a pyarrow binary/string array (no nulls) and loop over 4-byte block
positions, not over keys: keys are sorted by length once so that the keys still active at
block ``j`` are a prefix, and each step is one numpy operation over that prefix.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

MURMUR3_ID = 1  # hash id stored in mapping files
C1, C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)
M5, N1 = np.uint32(5), np.uint32(0xE6546B64)
F1, F2 = np.uint32(0x85EBCA6B), np.uint32(0xC2B2AE35)
MASK = 0xFFFFFFFF


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_k(k: np.ndarray) -> np.ndarray:
    return _rotl(k * C1, 15) * C2


def _fmix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint32(16))
    h = h * F1
    h = h ^ (h >> np.uint32(13))
    h = h * F2
    return h ^ (h >> np.uint32(16))


def binary_parts(keys: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, lengths, data bytes) of a binary/string Arrow array without copying the data."""
    if keys.null_count:
        raise ValueError("keys must not contain nulls")
    if pa.types.is_large_binary(keys.type) or pa.types.is_large_string(keys.type):
        offset_type = np.int64
    elif pa.types.is_binary(keys.type) or pa.types.is_string(keys.type):
        offset_type = np.int32
    else:
        raise TypeError(f"expected a binary or string array, got {keys.type}")
    buffers = keys.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[keys.offset: keys.offset + len(keys) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64), data


def _padded(data: np.ndarray) -> np.ndarray:
    # Gathers read up to 3 bytes past a key's last full block; padding keeps them in bounds.
    return np.concatenate([data, np.zeros(4, np.uint8)])


def murmur3_32_array(keys: pa.Array, seed: int = 0) -> np.ndarray:
    """MurmurHash3_x86_32 of every key's bytes, as uint32 (vectorised over keys)."""
    starts, lengths, data = binary_parts(keys)
    data = _padded(data)
    n = len(starts)
    order = np.argsort(-lengths, kind="stable")
    starts_s, lengths_s = starts[order], lengths[order]
    blocks = lengths_s >> 2
    h = np.full(n, seed & MASK, dtype=np.uint32)
    # active[j] = how many keys (a prefix in this order) have more than j full blocks
    nblocks = int(blocks[0]) if n else 0
    active = _active_counts(blocks, nblocks)
    for j in range(nblocks):
        a = int(active[j])
        p = starts_s[:a] + 4 * j
        k = (data[p].astype(np.uint32) | (data[p + 1].astype(np.uint32) << np.uint32(8))
             | (data[p + 2].astype(np.uint32) << np.uint32(16))
             | (data[p + 3].astype(np.uint32) << np.uint32(24)))
        x = h[:a] ^ _mix_k(k)
        h[:a] = _rotl(x, 13) * M5 + N1
    tail_len = lengths_s & 3
    tail_at = starts_s + (blocks << 2)
    k = np.zeros(n, dtype=np.uint32)
    for i in (2, 1, 0):
        has = tail_len > i
        k[has] ^= data[tail_at[has] + i].astype(np.uint32) << np.uint32(8 * i)
    has_tail = tail_len > 0
    h[has_tail] ^= _mix_k(k[has_tail])
    h ^= lengths_s.astype(np.uint32)
    h = _fmix(h)
    out = np.empty(n, dtype=np.uint32)
    out[order] = h
    return out


def _active_counts(blocks: np.ndarray, nblocks: int) -> np.ndarray:
    """Number of entries of ``blocks`` greater than j, for each j < nblocks."""
    histogram = np.bincount(blocks, minlength=nblocks + 1)
    return histogram[::-1].cumsum()[::-1][1:nblocks + 1]


def text_hash_array(keys: pa.Array) -> np.ndarray:
    """Hadoop ``Text.hashCode()`` of every key, as int32 (vectorised over byte positions)."""
    starts, lengths, data = binary_parts(keys)
    n = len(starts)
    order = np.argsort(-lengths, kind="stable")
    starts_s, lengths_s = starts[order], lengths[order]
    longest = int(lengths_s[0]) if n else 0
    active = _active_counts(lengths_s, longest)
    signed = data.view(np.int8)
    h = np.ones(n, dtype=np.uint32)
    for j in range(longest):
        a = int(active[j])
        h[:a] = h[:a] * np.uint32(31) + signed[starts_s[:a] + j].astype(np.int32).astype(np.uint32)
    out = np.empty(n, dtype=np.uint32)
    out[order] = h
    return out.view(np.int32)


def hash_partition_array(keys: pa.Array, reducers: int) -> np.ndarray:
    """Hadoop ``HashPartitioner`` on ``Text`` keys: ``(hashCode & MAX_VALUE) % R``."""
    return (text_hash_array(keys).astype(np.int64) & 0x7FFFFFFF) % reducers


def murmur3_32(key: str | bytes, seed: int = 0) -> int:
    """Scalar MurmurHash3_x86_32 (for single lookups and Spark's per-record partitioner)."""
    data = key.encode("utf-8") if isinstance(key, str) else key
    h = seed & MASK
    full = len(data) & ~3
    for i in range(0, full, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = _rotl_int((k * 0xCC9E2D51) & MASK, 15) * 0x1B873593 & MASK
        h = (_rotl_int(h ^ k, 13) * 5 + 0xE6546B64) & MASK
    tail = data[full:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = _rotl_int((k * 0xCC9E2D51) & MASK, 15) * 0x1B873593 & MASK
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK
    return h ^ (h >> 16)


def _rotl_int(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & MASK


def text_hash(key: str | bytes) -> int:
    """Scalar Hadoop ``Text.hashCode()`` (signed 32-bit)."""
    data = key.encode("utf-8") if isinstance(key, str) else key
    h = 1
    for b in data:
        h = (31 * h + (b - 256 if b > 127 else b)) & MASK
    return h - (1 << 32) if h > 0x7FFFFFFF else h
