"""The ImKP mapping: which reducer each key group and each heavy key goes to, and its file.

File layout (big-endian; documented with rationale in ``docs/imkp-format.md``)::

    header, 64 bytes
      0  magic        8s   b"HEDGEIMK"
      8  version      u16  1
     10  hash id      u16  1 = MurmurHash3_x86_32 on the key's UTF-8 bytes
     12  seed         u32  hash seed
     16  reducers R   u32
     20  groups G     u32  G = R x scale
     24  scale        u32
     28  heavy keys K u32
     32  total        u64  records counted
     40  heaviest     u64  records of the single heaviest key (flag bit 0: at most this many)
     48  body length  u64
     56  checksum     u32  CRC-32 (zlib/java.util.zip) of header bytes 0..55, then the body
     60  flags        u32  bit 0 = HEAVIEST_IS_BOUND; other bits 0 (readers reject them)
    body
      G x u32  reducer of each group
      G x u64  records of each group, heavy keys excluded
      K x (u32 reducer, u64 records, u32 byte length, bytes)   heavy keys, heaviest first

A key goes to its heavy-key entry's reducer if it is a heavy key, else to the reducer of
group ``murmur3_32(utf8(key), seed) mod G`` (hash as unsigned 32-bit).

HEAVIEST_IS_BOUND: the key table overflowed (``--max-keys``) and the heaviest key's exact
count was not kept; ``heaviest`` is then a bound no key exceeds (``hedge.imkp.count``). The
flags word was the reserved word (0) of earlier files, so they read as before: outside the
checksum, which is unchanged, and ignored by earlier readers (only the figure's meaning
depends on it, never a key's reducer).
"""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from hedge.errors import HedgeError
from hedge.imkp.hashing import MURMUR3_ID, murmur3_32, murmur3_32_array

MAGIC = b"HEDGEIMK"
VERSION = 1
HEADER = struct.Struct(">8sHHIIIIIQQQII")
CHECKSUM_AT = 56
HEAVIEST_IS_BOUND = 1  # flags bit 0
KNOWN_FLAGS = HEAVIEST_IS_BOUND
assert HEADER.size == 64


@dataclass(frozen=True)
class Mapping:
    """Group -> reducer table, heavy keys placed individually, and the counts behind them."""

    reducers: int
    scale: int
    group_reducer: np.ndarray  # int64[G]
    group_count: np.ndarray  # int64[G], heavy keys excluded
    heavy_keys: list[bytes]
    heavy_reducer: np.ndarray  # int64[K]
    heavy_count: np.ndarray  # int64[K]
    heaviest_key_count: int  # exact, or when ``heaviest_is_bound`` a bound no key exceeds
    seed: int = 0
    heaviest_is_bound: bool = False  # True: the exact count was not kept (key table overflowed)
    _heavy_index: dict[bytes, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_heavy_index",
                           {k: int(r) for k, r in zip(self.heavy_keys, self.heavy_reducer, strict=True)})

    @property
    def groups(self) -> int:
        return len(self.group_reducer)

    @property
    def total(self) -> int:
        return int(self.group_count.sum() + self.heavy_count.sum())

    @property
    def loads(self) -> np.ndarray:
        """Predicted input records per reducer."""
        loads = np.bincount(self.group_reducer, weights=self.group_count, minlength=self.reducers)
        loads += np.bincount(self.heavy_reducer, weights=self.heavy_count, minlength=self.reducers)
        return np.rint(loads).astype(np.int64)

    @property
    def lower_bound(self) -> int:
        """LB = max(ceil(total / R), heaviest single key): no partitioner can do better.

        A bound on the heaviest key is no lower bound on any reducer's load, so then LB is
        ceil(total / R) alone (the bound is always below it: capacity >= 2G > R)."""
        heaviest = 0 if self.heaviest_is_bound else self.heaviest_key_count
        return max(-(-self.total // self.reducers), heaviest)

    def reducer_of(self, key: str | bytes) -> int:
        """The reducer of one key (what the Java partitioner answers)."""
        data = key.encode("utf-8") if isinstance(key, str) else key
        heavy = self._heavy_index.get(data)
        if heavy is not None:
            return heavy
        return int(self.group_reducer[murmur3_32(data, self.seed) % self.groups])

    def reducers_of(self, keys: pa.Array) -> np.ndarray:
        """Reducer of every key of a string/binary array (vectorised)."""
        groups = murmur3_32_array(keys, self.seed).astype(np.int64) % self.groups
        out = self.group_reducer[groups]
        if self.heavy_keys:
            import pyarrow.compute as pc  # 0.07 s to import: not at every build's start-up

            heavy = pa.array(self.heavy_keys, type=pa.binary())
            index = pc.index_in(keys.cast(pa.binary()), value_set=heavy).to_numpy(zero_copy_only=False)
            hit = ~np.isnan(index.astype(np.float64))
            out[hit] = self.heavy_reducer[index[hit].astype(np.int64)]
        return out


def encode(mapping: Mapping) -> bytes:
    """The mapping file's bytes."""
    body = [mapping.group_reducer.astype(">u4").tobytes(), mapping.group_count.astype(">u8").tobytes()]
    for key, reducer, count in zip(mapping.heavy_keys, mapping.heavy_reducer,
                                   mapping.heavy_count, strict=True):
        body.append(struct.pack(">IQI", int(reducer), int(count), len(key)) + key)
    payload = b"".join(body)
    header = HEADER.pack(MAGIC, VERSION, MURMUR3_ID, mapping.seed, mapping.reducers,
                         mapping.groups, mapping.scale, len(mapping.heavy_keys), mapping.total,
                         mapping.heaviest_key_count, len(payload), 0, 0)
    checksum = zlib.crc32(payload, zlib.crc32(header[:CHECKSUM_AT]))
    flags = HEAVIEST_IS_BOUND if mapping.heaviest_is_bound else 0
    return header[:CHECKSUM_AT] + struct.pack(">II", checksum, flags) + payload


def write_mapping(mapping: Mapping, path: str | Path) -> None:
    """Write atomically: a temporary file in the same folder, fsync, then rename over ``path``."""
    path = Path(path)
    data = encode(mapping)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; tasks and others must read it
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_mapping(path: str | Path) -> Mapping:
    """Read and validate a mapping file; any defect is a HedgeError naming the file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise HedgeError(f"{path}: cannot read mapping file: {exc.strerror or exc}") from exc
    return decode(data, str(path))


def decode(data: bytes, source: str = "mapping") -> Mapping:
    """Parse and validate mapping-file bytes (see the module docstring for the layout)."""
    rebuild = "rebuild it with 'hedge imkp build'"
    if len(data) < HEADER.size:
        if not data.startswith(MAGIC[: len(data)]) or not data:
            raise HedgeError(f"{source}: not an ImKP mapping file ({len(data)} bytes, no "
                             f"'HEDGEIMK' header); {rebuild}")
        raise HedgeError(f"{source}: truncated ImKP mapping file ({len(data)} bytes, header "
                         f"needs {HEADER.size}); {rebuild}")
    (magic, version, hash_id, seed, reducers, groups, scale, heavy, total, heaviest,
     body_length, checksum, flags) = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise HedgeError(f"{source}: not an ImKP mapping file (magic {magic!r}, expected "
                         f"{MAGIC!r}); {rebuild}")
    if version != VERSION:
        raise HedgeError(f"{source}: ImKP mapping file version {version}, this hedge reads "
                         f"version {VERSION}; {rebuild} of this hedge version")
    if hash_id != MURMUR3_ID:
        raise HedgeError(f"{source}: unknown key hash id {hash_id} (expected {MURMUR3_ID} = "
                         f"murmur3_32); {rebuild}")
    if len(data) - HEADER.size != body_length:
        what = "truncated" if len(data) - HEADER.size < body_length else "has trailing bytes"
        raise HedgeError(f"{source}: ImKP mapping file {what}: header says {body_length} body "
                         f"bytes, file has {len(data) - HEADER.size}; {rebuild}")
    if zlib.crc32(data[HEADER.size:], zlib.crc32(data[:CHECKSUM_AT])) != checksum:
        raise HedgeError(f"{source}: ImKP mapping file corrupted (checksum mismatch); {rebuild}")
    if flags & ~KNOWN_FLAGS:
        raise HedgeError(f"{source}: unknown header flags 0x{flags:x} (this hedge knows "
                         f"{KNOWN_FLAGS:#x} = heaviest-key count is a bound); {rebuild} of "
                         "this hedge version")
    if reducers <= 0 or groups < reducers or scale <= 0:
        raise HedgeError(f"{source}: invalid header: reducers={reducers}, groups={groups}, "
                         f"scale={scale} (need reducers >= 1, groups >= reducers); {rebuild}")
    body = memoryview(data)[HEADER.size:]
    table_bytes = 12 * groups
    if body_length < table_bytes:
        raise HedgeError(f"{source}: group table needs {table_bytes} bytes, body has "
                         f"{body_length}; {rebuild}")
    group_reducer = np.frombuffer(body[: 4 * groups], dtype=">u4").astype(np.int64)
    raw_counts = np.frombuffer(body[4 * groups: table_bytes], dtype=">u8")
    if groups and raw_counts.max() >= 2**63:  # int64 arithmetic below; no real count is
        raise HedgeError(f"{source}: a group count is {int(raw_counts.max())}, expected "
                         f"< 2^63 records; {rebuild}")
    group_count = raw_counts.astype(np.int64)
    keys, key_reducers, key_counts = _decode_heavy(body, table_bytes, heavy, source, rebuild)
    mapping = Mapping(reducers, scale, group_reducer, group_count, keys,
                      np.array(key_reducers, dtype=np.int64), np.array(key_counts, dtype=np.int64),
                      heaviest, seed, heaviest_is_bound=bool(flags & HEAVIEST_IS_BOUND))
    if np.any(group_reducer >= reducers) or np.any(mapping.heavy_reducer >= reducers):
        raise HedgeError(f"{source}: a reducer index is >= reducers={reducers}; {rebuild}")
    if mapping.total != total:
        raise HedgeError(f"{source}: counts sum to {mapping.total}, header total is {total}; "
                         f"{rebuild}")
    return mapping


def _decode_heavy(body: memoryview, at: int, heavy: int, source: str, rebuild: str
                  ) -> tuple[list[bytes], list[int], list[int]]:
    keys, reducers, counts = [], [], []
    entry = struct.Struct(">IQI")
    for i in range(heavy):
        if at + entry.size > len(body):
            raise HedgeError(f"{source}: heavy-key table ends early at entry {i} of {heavy}; "
                             f"{rebuild}")
        reducer, count, length = entry.unpack_from(body, at)
        if count >= 2**63:
            raise HedgeError(f"{source}: heavy key {i} has a count of {count}, expected < 2^63 "
                             f"records; {rebuild}")
        at += entry.size
        if at + length > len(body):
            raise HedgeError(f"{source}: heavy key {i} ({length} bytes) runs past the end of "
                             f"the file; {rebuild}")
        keys.append(bytes(body[at: at + length]))
        reducers.append(reducer)
        counts.append(count)
        at += length
    if at != len(body):
        raise HedgeError(f"{source}: {len(body) - at} unexpected bytes after the heavy-key "
                         f"table; {rebuild}")
    return keys, reducers, counts
