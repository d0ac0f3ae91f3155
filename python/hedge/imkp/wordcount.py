"""One-pass word count for ``--key words``: tokenise, hash and count in a compiled loop.

``count_words(data, seed)`` returns the distinct ``java.util.StringTokenizer`` tokens of a
chunk (delimiters space, ``\\t``, ``\\n``, ``\\r``, ``\\f``), their exact counts and their
``murmur3_32`` hashes, the same answer as ``tokenize`` + ``pyarrow.compute.value_counts`` +
``murmur3_32_array`` but about 2.5x faster on one core, because every byte is touched once:

- the scan computes MurmurHash3_x86_32 of each token while reading it (4-byte blocks mixed
  as they complete, tail and finalisation at the token's end), and packs its first 8 bytes
  into a 64-bit word;
- the token is then counted in an open-addressing table (linear probing, load <= 1/2,
  doubled when full) whose slots hold ``hash | length << 32``, the first-8-byte word, the
  offset of the token's first occurrence and its count. Two tokens are equal iff hash,
  length and word agree and, for tokens longer than 8 bytes, the remaining bytes agree;
- the distinct tokens' bytes are gathered into an Arrow binary array at the end.

Input must contain no NUL byte (``check_text`` rejects those before): then no token's word
has a zero byte inside its length, so slot emptiness can be told from the word alone.
Compiled with numba (``nogil``, so builder threads run in parallel; ``cache``, so the ~8 s
compilation happens once per installation, not once per run).
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

from hedge.errors import HedgeError
from hedge.imkp.keys import DELIMITERS

M32 = np.uint64(0xFFFFFFFF)
INITIAL_SLOTS = 1 << 12
# A byte <= 32 is looked up here; every byte above 32 is a token byte.
_DELIMITER = np.zeros(33, dtype=np.bool_)
_DELIMITER[list(DELIMITERS)] = True


@numba.njit(nogil=True, cache=True, inline="always")
def _rotl(x: np.uint64, r: int) -> np.uint64:
    return ((x << r) | (x >> (32 - r))) & M32


@numba.njit(nogil=True, cache=True, inline="always")
def _mix_k(k: np.uint64) -> np.uint64:
    return (_rotl((k * np.uint64(0xCC9E2D51)) & M32, 15) * np.uint64(0x1B873593)) & M32


@numba.njit(nogil=True, cache=True)
def _grow(table: np.ndarray) -> np.ndarray:
    """The table rehashed into twice as many slots (slot = low bits of the hash)."""
    slots = table.shape[0] * 2
    mask = slots - 1
    grown = np.zeros((slots, 4), np.int64)
    for s in range(table.shape[0]):
        if table[s, 1] != 0:
            t = (table[s, 0] & 0xFFFFFFFF) & mask
            while grown[t, 1] != 0:
                t = (t + 1) & mask
            grown[t, :] = table[s, :]
    return grown


@numba.njit(nogil=True, cache=True)
def _count_tokens(data: np.ndarray, seed: int, delimiter: np.ndarray) -> np.ndarray:
    """Rows (hash | length << 32, first-8-byte word, first offset, count) per distinct token."""
    n = len(data)
    table = np.zeros((INITIAL_SLOTS, 4), np.int64)
    mask = table.shape[0] - 1
    used = 0
    i = 0
    while i < n:
        b = data[i]
        if b <= 32 and delimiter[b]:
            i += 1
            continue
        start = i
        h = np.uint64(seed) & M32
        k = np.uint64(0)
        word = np.uint64(0)
        shift = 0
        while i < n:
            b = data[i]
            if b <= 32 and delimiter[b]:
                break
            k |= np.uint64(b) << np.uint64(shift)
            shift += 8
            if shift == 32:  # a full 4-byte block: Murmur3 body step
                h ^= _mix_k(k)
                h = (_rotl(h, 13) * np.uint64(5) + np.uint64(0xE6546B64)) & M32
                if i - start < 4:
                    word = k
                elif i - start < 8:
                    word |= k << np.uint64(32)
                k = np.uint64(0)
                shift = 0
            i += 1
        length = i - start
        if shift:  # tail bytes, then finalisation
            if length < 4:
                word = k
            elif length < 8:
                word |= k << np.uint64(32)
            h ^= _mix_k(k)
        h ^= np.uint64(length) & M32
        h ^= h >> np.uint64(16)
        h = (h * np.uint64(0x85EBCA6B)) & M32
        h ^= h >> np.uint64(13)
        h = (h * np.uint64(0xC2B2AE35)) & M32
        h ^= h >> np.uint64(16)
        key = np.int64(h) | (np.int64(length) << 32)
        w = np.int64(word)
        s = np.int64(h) & mask
        while True:
            if table[s, 1] == 0:  # empty slot: a new distinct token
                table[s, 0] = key
                table[s, 1] = w
                table[s, 2] = start
                table[s, 3] = 1
                used += 1
                if 2 * used > table.shape[0]:
                    table = _grow(table)
                    mask = table.shape[0] - 1
                break
            if table[s, 0] == key and table[s, 1] == w:
                same = True
                if length > 8:
                    first = table[s, 2]
                    for j in range(8, length):
                        if data[first + j] != data[start + j]:
                            same = False
                            break
                if same:
                    table[s, 3] += 1
                    break
            s = (s + 1) & mask
    return table[table[:, 1] != 0]


@numba.njit(nogil=True, cache=True)
def _gather(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
            offsets: np.ndarray) -> np.ndarray:
    out = np.empty(offsets[-1], np.uint8)
    for t in range(len(starts)):
        out[offsets[t]:offsets[t + 1]] = data[starts[t]:starts[t] + lengths[t]]
    return out


def count_words(data: bytes | bytearray, seed: int = 0, source: str = "input"
                ) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(distinct tokens as Arrow binary, their counts int64, their murmur3_32 uint32).

    ``data`` must hold no NUL byte (the caller checks; see the module docstring).
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    raw.flags.writeable = False  # bytes and bytearray pieces share one compiled kernel
    rows = _count_tokens(raw, seed, _DELIMITER)
    lengths = rows[:, 0] >> 32
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    body = _gather(raw, rows[:, 2], lengths, offsets)
    if offsets[-1] >= 2**31:  # Arrow binary offsets are int32; pieces are block-sized
        raise HedgeError(f"{source}: over 2 GiB of distinct tokens in one piece (a token "
                         "with no delimiter for 2 GiB?); expected whitespace-separated text")
    keys = pa.Array.from_buffers(pa.binary(), len(rows),
                                 [None, pa.py_buffer(offsets.astype(np.int32)),
                                  pa.py_buffer(body)])
    hashes = (rows[:, 0] & 0xFFFFFFFF).astype(np.uint32)
    return keys, rows[:, 3].copy(), hashes
