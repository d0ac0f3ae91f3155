"""One-pass word count for ``--key words``: tokenise and count in a compiled loop.

``WordCounter`` counts the ``java.util.StringTokenizer`` tokens (delimiters space, ``\\t``,
``\\n``, ``\\r``, ``\\f``) of many pieces into one table and hands back the distinct tokens,
their exact counts and their ``murmur3_32`` hashes: the same answer as ``tokenize`` +
``pyarrow.compute.value_counts`` + ``murmur3_32_array``, and ``count_words`` does it for one
chunk. Why it is fast, also with a million distinct tokens:

- the scan reads 8 bytes at a time and finds a token's end with a SWAR test (the first byte
  below 0x21 is flagged exactly; it ends the token if it is a delimiter);
- a token is identified by its first 16 bytes as two 64-bit words (``word``, ``word2``,
  zero-padded) and a 32-bit ``tag``: its length when it has at most 16 bytes, else a hash
  of its length and remaining bytes with the top bit set. Two tokens are equal iff words
  and tag agree and, for tokens longer than 16 bytes, their lengths and remaining bytes
  agree (checked against the stored copy). So a token of at most 16 bytes, nearly every
  word of natural text and every key of a typical high-cardinality input, is found in its
  slot alone, with no second random access to the stored copy;
- counting uses an open-addressing table (linear probing, load <= 1/2) of 32-byte slots
  (``word``, ``word2``, ``count << 32 | tag``, key number), two to a cache line; a slot's
  line is prefetched, and the next one too when the slot is its line's second, so a probe
  that runs on to the next slot does not stall. A new token is copied once to the key
  store (``arena``, offsets in first-seen order, which are an Arrow binary array's buffers
  as they stand; 8 bytes per store) and hashed with Murmur3 then; the table lives across
  pieces, so nothing is done per piece per distinct token (no per-piece gather, hash or
  merge of keys, which cost 5x the scan on high-cardinality input). The table doubles
  when half full; the counting loop stops, the table grows, and the loop resumes, so the
  loop itself works on one table (numba compiles a loop that reassigns an array several
  times slower).

Counts and key offsets are 32-bit: a counter is emptied (``take``) before it has been fed
``BATCH_LIMIT`` bytes, and a piece is at most ``PIECE_LIMIT`` bytes. Input must contain no NUL
byte (``check_text`` rejects those before): then no token's word has a zero byte inside its
length, so an empty slot is one whose word is zero, and a word's top byte is nonzero iff its
token has 8 or more bytes. Compiled with numba (``nogil``, so builder threads run in parallel;
``cache``, so compilation happens once per installation: ``make setup`` runs ``warm_cache``),
and ahead of time into an extension module that imports without numba (``build_compiled``,
also run by ``warm_cache``). The counter (``WordCounter``, re-exported here) and the choice
between the two live in ``hedge.imkp.wordtable``, which a build imports instead of this module.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _skip_numba_blas_probe() -> None:
    """Let numba decide that BLAS is available without importing ``scipy.linalg`` now.

    numba's first compile or cache load imports ``numba.np.arraymath``, whose import-time
    ``_check_blas`` imports ``scipy.linalg`` (0.4 s of CPU, a third of ``hedge imkp build``'s
    start-up) only to set a flag. Here that module is imported while the probe just looks
    for scipy on disk, which gives numba the same flag; numba's linear algebra still
    imports scipy itself when it is used. Skipped when arraymath is already loaded.
    """
    import importlib.util
    import sys

    if "numba.np.arraymath" in sys.modules:
        return
    import numba.np.linalg as linalg

    real = linalg.ensure_blas

    def probe() -> None:
        if importlib.util.find_spec("scipy") is None:
            raise ImportError("scipy 0.16+ is required for linear algebra")

    linalg.ensure_blas = probe
    try:
        import numba.np.arraymath as arraymath
    finally:
        linalg.ensure_blas = real
    arraymath.ensure_blas = real


_skip_numba_blas_probe()

BELOW_0x21 = np.uint64(0x2121212121212121)
HIGH_BITS = np.uint64(0x8080808080808080)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: Fibonacci hashing
MIX = np.uint64(0xFF51AFD7ED558CCD)  # Murmur3's 64-bit finaliser constant
COUNT_ONE = np.int64(1) << 32  # a slot's count lives in the high half of its second word
MASK32 = np.uint64(0xFFFFFFFF)
C1, C2 = np.uint64(0xCC9E2D51), np.uint64(0x1B873593)  # Murmur3 x86_32 constants
N1, F1, F2 = np.uint64(0xE6546B64), np.uint64(0x85EBCA6B), np.uint64(0xC2B2AE35)
LONG_TAG = np.uint64(0x80000000)  # set in the tag of every token longer than 16 bytes


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
def _store8(typingctx, data, index, value):  # noqa: ANN001, ANN202, ARG001
    """Write ``value`` to data[index:index + 8] (an unaligned store, little-endian as
    ``_load8``); the caller keeps index + 8 <= len(data). Typed as ``_load8``."""
    if not (isinstance(data, types.Array) and data.dtype == types.uint8 and data.ndim == 1
            and data.layout == "C" and value == types.uint64):
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        array = context.make_array(signature.args[0])(context, builder, args[0])
        pointer = builder.gep(array.data, [args[1]])
        builder.store(args[2], builder.bitcast(pointer, ir.IntType(64).as_pointer()), align=1)
        return context.get_dummy_value()
    return types.void(data, index, value), codegen


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
def _word2(data: np.ndarray, start: int, end: int) -> np.uint64:
    """The token's bytes 8..16 as a little-endian uint64, zero-padded (0 for short tokens)."""
    if end - start <= 8:
        return np.uint64(0)
    return _word(data, start + 8, end)


@numba.njit(nogil=True, cache=True, inline="always")
def _tag(data: np.ndarray, start: int, end: int) -> np.uint64:
    """The token's length if at most 16 bytes, else a hash of its length and bytes 16..end."""
    if end - start <= 16:
        return np.uint64(end - start)
    rest = np.uint64(end - start)
    for p in range(start + 16, end, 8):
        rest = (rest ^ _word(data, p, end)) * GOLDEN
        rest ^= rest >> np.uint64(29)
    return (rest >> np.uint64(33)) | LONG_TAG


@numba.njit(nogil=True, cache=True, inline="always")
def _slot(word: np.uint64, word2: np.uint64, tag: np.uint64, shift: np.uint64) -> int:
    return np.int64(((((word ^ (tag * GOLDEN)) * MIX) ^ word2) * GOLDEN) >> shift)


@numba.njit(nogil=True, cache=True, inline="always")
def _rotl32(x: np.uint64, r: int) -> np.uint64:
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & MASK32


@numba.njit(nogil=True, cache=True, inline="always")
def _mix_k(k: np.uint64) -> np.uint64:
    return (_rotl32((k * C1) & MASK32, 15) * C2) & MASK32


@numba.njit(nogil=True, cache=True)
def _murmur3_32(data: np.ndarray, start: int, end: int, seed: np.uint64) -> np.uint64:
    """MurmurHash3_x86_32 of data[start:end] (``hedge.imkp.hashing.murmur3_32``)."""
    h = seed
    p = start
    while p + 4 <= end:
        h = (_rotl32(h ^ _mix_k(_word(data, p, p + 4)), 13) * np.uint64(5) + N1) & MASK32
        p += 4
    if p < end:
        h ^= _mix_k(_word(data, p, end))
    h ^= np.uint64(end - start)
    h ^= h >> np.uint64(16)
    h = (h * F1) & MASK32
    h ^= h >> np.uint64(13)
    h = (h * F2) & MASK32
    return h ^ (h >> np.uint64(16))


@intrinsic
def _prefetch(typingctx, data, index):  # noqa: ANN001, ANN202, ARG001
    """Ask for the cache line of data.flat[index] (LLVM prefetch: read, keep in all caches);
    unlike a load, it never stalls the loop. Typed for contiguous arrays."""
    if not (isinstance(data, types.Array) and data.layout == "C"):
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        array = context.make_array(signature.args[0])(context, builder, args[0])
        pointer = builder.bitcast(builder.gep(array.data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        signature_ir = ir.FunctionType(ir.VoidType(), [pointer.type, i32, i32, i32])
        prefetch = cgutils.get_or_insert_function(builder.module, signature_ir, "llvm.prefetch.p0")
        builder.call(prefetch, [pointer, ir.Constant(i32, 0), ir.Constant(i32, 3),
                                ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(data, index), codegen


@numba.njit(nogil=True, cache=True, inline="always")
def _same_tail(arena: np.ndarray, stored: int, data: np.ndarray, start: int,
               length: int) -> bool:
    """Whether the stored key at ``stored`` equals data[start:start + length] past byte 16."""
    for j in range(16, length):  # noqa: SIM110 - a loop numba compiles (no generator)
        if arena[stored + j] != data[start + j]:
            return False
    return True


@numba.njit(nogil=True, cache=True, inline="always")
def _same_stored(arena: np.ndarray, key_offsets: np.ndarray, key: int, data: np.ndarray,
                 start: int, length: int) -> bool:
    """Whether stored key number ``key`` equals data[start:start + length] (whose first 16
    bytes are known to agree)."""
    stored = key_offsets[key]
    return (key_offsets[key + 1] - stored == length
            and _same_tail(arena, stored, data, start, length))


@numba.njit(nogil=True, cache=True, inline="always")
def _scan(data: np.ndarray, i: int, delimiter: np.ndarray, table: np.ndarray,
          shift: np.uint64, batch: np.ndarray) -> tuple[int, int]:
    """Find up to len(batch) tokens from ``i`` and prefetch their slots: (i, tokens)."""
    n = len(data)
    size = 0
    while size < batch.shape[0] and i < n:
        if _is_delimiter(data[i], delimiter):
            i += 1
            continue
        start = i
        i = _token_end(data, i, delimiter)
        word, word2, tag = _word(data, start, i), _word2(data, start, i), _tag(data, start, i)
        s = _slot(word, word2, tag, shift)
        _prefetch(table, 4 * s)
        # and the next line when s is its line's second slot (a probe may run on to it)
        _prefetch(table, 4 * ((s + (s & 1)) & (table.shape[0] - 1)))
        batch[size, 0], batch[size, 1] = start, i
        batch[size, 2], batch[size, 3] = np.int64(word), np.int64(tag)
        batch[size, 4], batch[size, 5] = s, np.int64(word2)
        size += 1
    return i, size


@numba.njit(nogil=True, cache=True, inline="always")
def _prefetch_stored(table: np.ndarray, key_offsets: np.ndarray, batch: np.ndarray,
                     size: int) -> None:
    """Prefetch where the stored copy of each token over 16 bytes starts, when its home slot
    holds its first 16 bytes (the probe will compare the rest)."""
    for b in range(size):
        s = batch[b, 4]
        if (batch[b, 1] - batch[b, 0] > 16 and table[s, 0] == batch[b, 2]
                and table[s, 1] == batch[b, 5]):
            _prefetch(key_offsets, table[s, 3])


@numba.njit(nogil=True, cache=True)
def _count_into(data: np.ndarray, i: int, delimiter: np.ndarray, table: np.ndarray,
                arena: np.ndarray, key_offsets: np.ndarray, hashes: np.ndarray, used: int,
                seed: np.uint64, batches: np.ndarray) -> tuple[int, int]:
    """Count tokens from ``i`` until the data ends or the table is half full: (i, used).

    A software pipeline over batches of tokens: while the slots of one batch are on their
    way (prefetched by ``_scan``), the next batch is scanned, and only then is the first
    probed; so a table far larger than the caches costs one overlapped memory access per
    token, not one full memory latency. A new token is appended to the key store: its bytes
    to ``arena`` (ending at ``key_offsets[key + 1]``), its murmur3 to ``hashes``.
    """
    mask = table.shape[0] - 1
    shift = np.uint64(64 - _bits(table.shape[0]))
    i, size = _scan(data, i, delimiter, table, shift, batches[0])
    k = 0
    while size:
        batch = batches[k]
        _prefetch_stored(table, key_offsets, batch, size)
        i, next_size = _scan(data, i, delimiter, table, shift, batches[1 - k])
        for b in range(size):
            start, end, w, t, s = batch[b, 0], batch[b, 1], batch[b, 2], batch[b, 3], batch[b, 4]
            w2, length = batch[b, 5], end - start
            while True:
                if table[s, 0] == 0:  # empty slot: a new distinct token
                    table[s, 0], table[s, 1] = w, w2
                    table[s, 2] = t | COUNT_ONE
                    table[s, 3] = used
                    stored = key_offsets[used]
                    for j in range(0, length, 8):  # up to 7 bytes past it: the next key's
                        _store8(arena, stored + j, _word(data, start + j, end))
                    key_offsets[used + 1] = stored + length
                    hashes[used] = _murmur3_32(data, start, end, seed)
                    used += 1
                    if 2 * used >= table.shape[0]:  # full: resume at the next token
                        if b + 1 < size:
                            return batch[b + 1, 0], used
                        return (batches[1 - k][0, 0] if next_size else i), used
                    break
                if (table[s, 0] == w and table[s, 1] == w2 and (table[s, 2] & 0xFFFFFFFF) == t
                        and (length <= 16 or _same_stored(arena, key_offsets, table[s, 3], data,
                                                          start, length))):
                    table[s, 2] += COUNT_ONE
                    break
                s = (s + 1) & mask
        size, k = next_size, 1 - k
    return i, used


@numba.njit(nogil=True, cache=True, inline="always")
def _bits(size: int) -> int:
    bits = 0
    while (1 << bits) < size:
        bits += 1
    return bits


@numba.njit(nogil=True, cache=True, inline="always")
def _home(table: np.ndarray, s: int, shift: np.uint64) -> int:
    """The home slot of the entry in slot ``s`` in a table of 2**(64 - shift) slots."""
    return _slot(np.uint64(table[s, 0]), np.uint64(table[s, 1]),
                 np.uint64(table[s, 2] & 0xFFFFFFFF), shift)


@numba.njit(nogil=True, cache=True)
def _rehash(table: np.ndarray, grown: np.ndarray) -> None:
    """Move every entry of ``table`` into the larger, empty ``grown``.

    A slot number is the top bits of the entry's hash, so an entry's home in ``grown`` only
    grows with its home in ``table``: scanned in slot order, the writes sweep ``grown`` from
    start to end (no random access, nothing to prefetch).
    """
    mask = grown.shape[0] - 1
    shift = np.uint64(64 - _bits(grown.shape[0]))
    for s in range(table.shape[0]):
        if table[s, 0] != 0:
            t = _home(table, s, shift)
            while grown[t, 0] != 0:
                t = (t + 1) & mask
            for c in range(4):
                grown[t, c] = table[s, c]


@numba.njit(nogil=True, cache=True)
def _counts(table: np.ndarray, used: int) -> np.ndarray:
    """Count of every stored key, by key number."""
    counts = np.empty(used, np.int64)
    for s in range(table.shape[0]):
        if table[s, 0] != 0:
            counts[table[s, 3]] = table[s, 2] >> 32
    return counts
