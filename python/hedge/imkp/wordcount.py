"""One-pass word count for ``--key words``: tokenise and count in a compiled loop.

``count_words(data, seed)`` returns the distinct ``java.util.StringTokenizer`` tokens of a
chunk (delimiters space, ``\\t``, ``\\n``, ``\\r``, ``\\f``), their exact counts and their
``murmur3_32`` hashes, the same answer as ``tokenize`` + ``pyarrow.compute.value_counts`` +
``murmur3_32_array`` but 2-3x faster on one core (on an 8 MB block of Shakespeare):

- the scan reads 8 bytes at a time and finds a token's end with a SWAR test (the first byte
  below 0x21 is flagged exactly; it ends the token if it is a delimiter);
- a token is identified by its first 8 bytes as one 64-bit ``word`` (zero-padded) and a
  32-bit ``tag``: its length when it has at most 8 bytes, else a hash of its length and
  remaining bytes with the top bit set. Two tokens are equal iff word and tag agree and, for
  tokens longer than 8 bytes, their remaining bytes agree (checked against the first
  occurrence). Murmur3 is computed only once per distinct token, at the end;
- counting uses an open-addressing table (linear probing, load <= 1/2) of 16-byte slots
  (``word``, ``count << 32 | tag``) with the first occurrence's offset kept apart, so the
  slots hot under Zipf-like word frequencies stay few cache lines. The table doubles when
  full; the counting loop stops, the table grows, and the loop resumes, so the loop itself
  works on one table (numba compiles a loop that reassigns an array several times slower).

Input must contain no NUL byte (``check_text`` rejects those before): then no token's word
has a zero byte inside its length, so an empty slot is one whose word is zero, and a word's
top byte is nonzero iff its token has 8 or more bytes. Compiled with numba (``nogil``, so
builder threads run in parallel; ``cache``, so compilation happens once per installation).
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from hedge.errors import HedgeError
from hedge.imkp.delimiters import DELIMITERS
from hedge.imkp.hashing import murmur3_32_array

INITIAL_BITS = 12  # the table starts with 2**12 slots
BELOW_0x21 = np.uint64(0x2121212121212121)
HIGH_BITS = np.uint64(0x8080808080808080)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: Fibonacci hashing
MIX = np.uint64(0xFF51AFD7ED558CCD)  # Murmur3's 64-bit finaliser constant
COUNT_ONE = np.int64(1) << 32  # a slot's count lives in the high half of its second word
LONG_TAG = np.uint64(0x80000000)  # set in the tag of every token longer than 8 bytes
# A byte <= 32 is looked up here; every byte above 32 is a token byte.
_DELIMITER = np.zeros(33, dtype=np.bool_)
_DELIMITER[list(DELIMITERS)] = True


@intrinsic
def _load8(typingctx, data, index):  # noqa: ANN001, ANN202, ARG001
    """data[index:index + 8] as one uint64 (an unaligned load), little-endian on the hosts
    Hadoop runs on (x86-64, aarch64); the caller keeps index + 8 <= len(data). Typed only
    for contiguous 1-d uint8 arrays."""
    if not (isinstance(data, types.Array) and data.dtype == types.uint8 and data.ndim == 1
            and data.layout == "C"):
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        array = context.make_array(signature.args[0])(context, builder, args[0])
        pointer = builder.gep(array.data, [args[1]])
        return builder.load(builder.bitcast(pointer, ir.IntType(64).as_pointer()), align=1)
    return types.uint64(data, index), codegen


@intrinsic
def _trailing_zeros(typingctx, x):  # noqa: ANN001, ANN202, ARG001
    """Count of trailing zero bits of a nonzero uint64 (LLVM cttz)."""
    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))
    return types.uint64(x), codegen


@numba.njit(nogil=True, cache=True, inline="always")
def _is_delimiter(b: np.uint8, delimiter: np.ndarray) -> bool:
    return b <= 32 and delimiter[b]


@numba.njit(nogil=True, cache=True, inline="always")
def _token_end(data: np.ndarray, i: int, delimiter: np.ndarray) -> int:
    """Index of the first delimiter at or after ``i``, or ``len(data)``."""
    n = len(data)
    while i + 8 <= n:
        w = _load8(data, i)
        # The high bit of the first byte < 0x21 is set exactly; later flags may be borrows.
        low = (w - BELOW_0x21) & ~w & HIGH_BITS
        while low:
            j = i + np.int64(_trailing_zeros(low) >> np.uint64(3))
            if _is_delimiter(data[j], delimiter):
                return j
            low &= low - np.uint64(1)
        i += 8
    while i < n and not _is_delimiter(data[i], delimiter):
        i += 1
    return i


@numba.njit(nogil=True, cache=True, inline="always")
def _word(data: np.ndarray, i: int, end: int) -> np.uint64:
    """data[i:min(i + 8, end)] as a little-endian uint64, zero-padded."""
    if i + 8 <= len(data):
        w = _load8(data, i)
        if end - i >= 8:
            return w
        return w & ((np.uint64(1) << np.uint64(8 * (end - i))) - np.uint64(1))
    w = np.uint64(0)
    for j in range(min(end - i, 8)):
        w |= np.uint64(data[i + j]) << np.uint64(8 * j)
    return w


@numba.njit(nogil=True, cache=True, inline="always")
def _tag(data: np.ndarray, start: int, end: int) -> np.uint64:
    """The token's length if at most 8 bytes, else a hash of its length and bytes 8..end."""
    if end - start <= 8:
        return np.uint64(end - start)
    rest = np.uint64(end - start)
    for p in range(start + 8, end, 8):
        rest = (rest ^ _word(data, p, end)) * GOLDEN
        rest ^= rest >> np.uint64(29)
    return (rest >> np.uint64(33)) | LONG_TAG


@numba.njit(nogil=True, cache=True, inline="always")
def _slot(word: np.uint64, tag: np.uint64, shift: np.uint64) -> int:
    return np.int64(((word ^ (tag * GOLDEN)) * MIX) >> shift)


@numba.njit(nogil=True, cache=True, inline="always")
def _same_tail(data: np.ndarray, first: int, start: int, length: int,
               delimiter: np.ndarray) -> bool:
    """Whether the token at ``first`` equals the one at start..start + length past byte 8."""
    for j in range(8, length):
        if data[first + j] != data[start + j]:
            return False
    return _is_delimiter(data[first + length], delimiter)  # first < start: in bounds


@numba.njit(nogil=True, cache=True)
def _count_into(data: np.ndarray, i: int, delimiter: np.ndarray, table: np.ndarray,
                offsets: np.ndarray, bits: int, used: int) -> tuple[int, int]:
    """Count tokens from ``i`` until the data ends or the table is half full: (i, used)."""
    n = len(data)
    mask = table.shape[0] - 1
    shift = np.uint64(64 - bits)
    while i < n:
        if _is_delimiter(data[i], delimiter):
            i += 1
            continue
        start = i
        i = _token_end(data, i, delimiter)
        word = _word(data, start, i)
        tag = _tag(data, start, i)
        w, t = np.int64(word), np.int64(tag)
        s = _slot(word, tag, shift)
        while True:
            if table[s, 0] == 0:  # empty slot: a new distinct token
                table[s, 0] = w
                table[s, 1] = t | COUNT_ONE
                offsets[s] = start
                used += 1
                if 2 * used > table.shape[0]:
                    return i, used
                break
            if (table[s, 0] == w and (table[s, 1] & 0xFFFFFFFF) == t
                    and (i - start <= 8 or _same_tail(data, offsets[s], start, i - start,
                                                      delimiter))):
                table[s, 1] += COUNT_ONE
                break
            s = (s + 1) & mask
    return i, used


@numba.njit(nogil=True, cache=True)
def _grow(table: np.ndarray, offsets: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The table rehashed into twice as many slots (2**(bits + 1))."""
    grown = np.zeros((2 * table.shape[0], 2), np.int64)
    grown_offsets = np.zeros(2 * table.shape[0], np.int64)
    mask = grown.shape[0] - 1
    shift = np.uint64(64 - bits - 1)
    for s in range(table.shape[0]):
        if table[s, 0] != 0:
            t = _slot(np.uint64(table[s, 0]), np.uint64(table[s, 1] & 0xFFFFFFFF), shift)
            while grown[t, 0] != 0:
                t = (t + 1) & mask
            grown[t, :] = table[s, :]
            grown_offsets[t] = offsets[s]
    return grown, grown_offsets


@numba.njit(nogil=True, cache=True)
def _count_tokens(data: np.ndarray, delimiter: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                      np.ndarray]:
    """(first offset, length, count) of every distinct token."""
    bits = INITIAL_BITS
    table = np.zeros((1 << bits, 2), np.int64)
    offsets = np.zeros(1 << bits, np.int64)
    i, used = _count_into(data, 0, delimiter, table, offsets, bits, 0)
    while i < len(data):
        table, offsets = _grow(table, offsets, bits)
        bits += 1
        i, used = _count_into(data, i, delimiter, table, offsets, bits, used)
    full = table[:, 0] != 0
    starts = offsets[full]
    lengths = table[full, 1] & 0xFFFFFFFF  # the tag: the length of tokens up to 8 bytes
    for r in range(len(starts)):
        if lengths[r] > 8:
            lengths[r] = _token_end(data, starts[r], delimiter) - starts[r]
    return starts, lengths, table[full, 1] >> 32


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
    if len(data) >= 2**32:  # counts are kept in 32 bits
        raise HedgeError(f"{source}: a piece of {len(data)} bytes; pieces must stay below "
                         "4 GiB (use a smaller --block-size)")
    raw = np.frombuffer(data, dtype=np.uint8)
    raw.flags.writeable = False  # bytes and bytearray pieces share one compiled kernel
    starts, lengths, counts = _count_tokens(raw, _DELIMITER)
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31:  # Arrow binary offsets are int32; pieces are block-sized
        raise HedgeError(f"{source}: over 2 GiB of distinct tokens in one piece (a token "
                         "with no delimiter for 2 GiB?); expected whitespace-separated text")
    body = _gather(raw, starts, lengths, offsets)
    keys = pa.Array.from_buffers(pa.binary(), len(starts),
                                 [None, pa.py_buffer(offsets.astype(np.int32)),
                                  pa.py_buffer(body)])
    return keys, counts, murmur3_32_array(keys, seed)
