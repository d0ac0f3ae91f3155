"""The word counter's table (``WordCounter``) and where its compiled kernels come from.

The kernels themselves live in ``hedge.imkp.wordcount`` (numba). They are called through
``kernels()``, which takes them from an ahead-of-time compiled extension module when one
built from the current source is on disk, else from numba's jit (its cache, or a compile).

Why two ways to the same code: importing numba and loading its cached kernels costs about
0.4 s of CPU, nearly all of a small ``hedge imkp build``'s start-up beyond numpy and pyarrow
(issue 21; the in-process count of a 31 MB file is 0.15 s). The extension module is the
same kernels compiled by numba's own AOT compiler (``numba.pycc``, with a C compiler) and
imports in under a millisecond without numba. ``wordbuild.warm_cache`` (``make setup``)
builds it next to numba's cache; its name carries a digest of both modules' source, numba's,
numpy's and Python's versions, so a stale one is never loaded: the jit path is used instead,
with the same results (the unit tests run both paths).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import mmap
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from hedge.errors import HedgeError
from hedge.imkp.delimiters import DELIMITERS

INITIAL_BITS = 12  # the table starts with 2**12 slots
PIECE_LIMIT = 1 << 30  # bytes in one piece ...
BATCH_LIMIT = 1 << 30  # ... and fed to a counter before take: offsets and counts < 2**31
BATCH_TOKENS = 32  # tokens scanned (and their slots prefetched) per step of the pipeline
HUGE_PAGE_MIN = 4 << 20  # bytes: tables this large go on huge pages
# A byte <= 32 is looked up here; every byte above 32 is a token byte.
DELIMITER_TABLE = np.zeros(33, dtype=np.bool_)
DELIMITER_TABLE[list(DELIMITERS)] = True
COMPILED_PREFIX = "_hedge_wordcount_"  # + source digest: the AOT module's name


@dataclass(frozen=True)
class Kernels:
    """The three compiled kernels a ``WordCounter`` calls (see ``hedge.imkp.wordcount``)."""

    count_into: Callable
    rehash: Callable
    counts: Callable
    origin: str  # "aot" (extension module) or "jit" (numba)


def compiled_dir() -> Path:
    """Where the AOT module is kept: beside numba's cache of the same kernels."""
    custom = os.environ.get("NUMBA_CACHE_DIR")
    return Path(custom) / "hedge_imkp" if custom else Path(__file__).parent / "__pycache__"


def _host_cpu() -> bytes:
    """The machine and, on Linux, the first processor's model and feature flags: the module
    is compiled for this CPU's instructions, so a cache folder shared with another kind of
    machine must not hand it over (numba's cache keys on the CPU for the same reason)."""
    import platform

    described = [platform.machine().encode()]
    try:
        with open("/proc/cpuinfo", "rb") as info:
            for line in info:
                if not line.strip():
                    break  # the first processor is enough: all are alike
                if line.startswith((b"model name", b"flags", b"Features", b"CPU part")):
                    described.append(line.strip())
    except OSError:
        pass
    return b"\n".join(described)


def compiled_name() -> str:
    """The AOT module's name for the current source, toolchain and CPU (its digest changes
    with the kernels, the table, the build flags, numba, numpy, Python or the processor). numba's version is
    read from its files, since importing numba is what the AOT module is for avoiding."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in ("wordcount.py", "wordtable.py", "wordbuild.py"):
        digest.update((here / name).read_bytes())
    spec = importlib.util.find_spec("numba")
    if spec is not None and spec.origin:
        digest.update(Path(spec.origin).with_name("_version.py").read_bytes())
    digest.update(f"{sys.version} {np.__version__}".encode())
    digest.update(_host_cpu())
    return COMPILED_PREFIX + digest.hexdigest()[:20]


def compiled_path() -> Path:
    return compiled_dir() / (compiled_name() + importlib.machinery.EXTENSION_SUFFIXES[0])


def load_compiled(path: Path | None = None) -> Kernels | None:
    """The kernels from the AOT module at ``path`` (default ``compiled_path()``, the one
    built for the current source), or None if there is none."""
    if path is None:
        if os.environ.get("HEDGE_IMKP_JIT"):  # force numba's path (benchmarks compare)
            return None
        path = compiled_path()
    if not path.is_file():
        return None
    name = path.name.removesuffix(importlib.machinery.EXTENSION_SUFFIXES[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)  # an extension is loaded here
        spec.loader.exec_module(module)
    except ImportError as exc:  # e.g. a damaged file: numba's path still gives the answer
        import warnings

        warnings.warn(f"ImKP word count: {path} does not load ({exc}); using numba",
                      stacklevel=2)
        return None
    return Kernels(module.count_into, module.rehash, module.counts, "aot")


def jit_kernels() -> Kernels:
    """The kernels through numba's jit (imports numba; compiles unless cached)."""
    from hedge.imkp import wordcount

    return Kernels(wordcount._count_into, wordcount._rehash, wordcount._counts, "jit")


@functools.cache
def kernels() -> Kernels:
    """The AOT kernels when built for this source, else numba's (same code, same results)."""
    return load_compiled() or jit_kernels()


def zeroed(shape: int | tuple[int, ...], dtype: type) -> np.ndarray:
    """A zero-filled array; large ones on transparent huge pages where the kernel allows.

    The table (and the stored keys, for long tokens) are read at random: with 4 KiB pages
    nearly every probe of a table of a million keys also misses the TLB, and a page walk
    (two-dimensional in a virtual machine) comes on top of the cache miss. Anonymous memory
    is zero-filled.
    """
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if size < HUGE_PAGE_MIN or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros(shape, dtype)
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(memory, dtype=dtype).reshape(shape)


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` copied into a buffer of at least ``size`` elements (doubling)."""
    if len(array) >= size:
        return array
    out = zeroed(max(size, 2 * len(array)), array.dtype)  # the arena is read at random too
    out[:len(array)] = array
    return out


class WordCounter:
    """Counts the tokens of many pieces into one table: (keys, counts, murmur3) at ``take``.

    Strings are stored once per distinct token (the ``arena``), so a piece costs one table
    probe per token and nothing per distinct token beyond its first occurrence; callers
    ``take`` the counts when ``full`` (pieces of at most ``PIECE_LIMIT`` bytes each).
    ``compiled`` defaults to ``kernels()``.
    """

    def __init__(self, seed: int = 0, capacity: int = 1 << 62,
                 compiled: Kernels | None = None) -> None:
        self.seed = np.uint64(seed & 0xFFFFFFFF)
        self.capacity = capacity
        self.kernels = compiled or kernels()
        self.batches = np.empty((2, BATCH_TOKENS, 6), np.int64)  # the kernel's scratch
        self.reset()

    def reset(self) -> None:
        # slot: word, word2, count << 32 | tag, key number
        self.table = np.zeros((1 << INITIAL_BITS, 4), np.int64)
        self.arena = np.empty(1 << 16, np.uint8)
        # int32, as Arrow's binary offsets: take hands them over as they stand
        self.key_offsets = np.zeros((1 << (INITIAL_BITS - 1)) + 1, np.int32)
        self.hashes = np.empty(1 << (INITIAL_BITS - 1), np.uint32)
        self.used = 0  # distinct keys
        self.fed = 0  # bytes counted since the last reset

    @property
    def full(self) -> bool:
        """Whether more keys or bytes could overflow the 32-bit counts and offsets."""
        return self.used > self.capacity or self.fed >= BATCH_LIMIT

    def add(self, data: bytes | bytearray) -> None:
        """Count the tokens of ``data`` (no NUL byte; at most ``PIECE_LIMIT`` bytes)."""
        raw = np.frombuffer(data, dtype=np.uint8)
        raw.flags.writeable = False  # bytes and bytearray pieces share one compiled kernel
        stored = int(self.key_offsets[self.used])
        # room for every token of data, and 8 bytes for the last one's 8-byte stores
        self.arena = _grown(self.arena, stored + len(raw) + 8)
        count_into = self.kernels.count_into
        i = 0
        while True:
            if 2 * self.used >= len(self.table):
                self.grow()
            if i >= len(raw):
                break
            i, self.used = count_into(raw, i, DELIMITER_TABLE, self.table, self.arena,
                                      self.key_offsets, self.hashes, self.used, self.seed,
                                      self.batches)
        self.fed += len(raw)

    def grow(self) -> None:
        """Twice the slots, and room for as many keys as the larger table may take."""
        grown = zeroed((2 * len(self.table), 4), np.int64)
        self.kernels.rehash(self.table, grown)
        self.table = grown
        self.key_offsets = _grown(self.key_offsets, len(grown) // 2 + 1)
        self.hashes = _grown(self.hashes, len(grown) // 2)

    def take(self) -> tuple[pa.Array, np.ndarray, np.ndarray]:
        """(distinct tokens as Arrow binary, their counts int64, their murmur3_32 uint32)."""
        used = self.used
        offsets = self.key_offsets[:used + 1]
        keys = pa.Array.from_buffers(pa.binary(), used,
                                     [None, pa.py_buffer(offsets),
                                      pa.py_buffer(self.arena[:int(offsets[-1])])])
        counts, hashes = self.kernels.counts(self.table, used), self.hashes[:used]
        self.reset()
        return keys, counts, hashes


def count_words(data: bytes | bytearray, seed: int = 0, source: str = "input",
                compiled: Kernels | None = None) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(distinct tokens as Arrow binary, their counts int64, their murmur3_32 uint32).

    ``data`` must hold no NUL byte (the caller checks; see ``hedge.imkp.wordcount``).
    """
    check_piece(data, source)
    counter = WordCounter(seed, compiled=compiled)
    counter.add(data)
    return counter.take()


def check_piece(data: bytes | bytearray, source: str) -> None:
    """HedgeError for a piece too large for 32-bit counts and key offsets."""
    if len(data) > PIECE_LIMIT:
        raise HedgeError(f"{source}: a piece of {len(data)} bytes; pieces must be at most "
                         f"{PIECE_LIMIT} bytes (1 GiB; a token with no delimiter for 1 GiB? "
                         "or use a smaller --block-size)")
