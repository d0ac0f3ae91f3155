"""``hedge imkp build``: count the keys of a job's input and pack them onto reducers.

Pipeline: expand the inputs (``sources``), cut them into pieces and extract keys
(``keys``), count keys and group totals on worker threads (``count``), choose heavy keys
and pack (``pack``), write the mapping atomically (``mapfile``). ``engine="spark"`` does the
counting as a PySpark job instead (``hedge.imkp.spark``); both give the same mapping.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from hedge.errors import HedgeError
from hedge.imkp.count import KeyCounts, count_keys
from hedge.imkp.hashing import binary_parts, murmur3_32_array
from hedge.imkp.keys import Piece, extractor
from hedge.imkp.mapfile import Mapping, write_mapping
from hedge.imkp.pack import build_mapping, check_settings, select_heavy
from hedge.imkp.sources import Source, expand_inputs

DEFAULT_SCALE = 50
DEFAULT_HEAVY_KEYS = 1024
DEFAULT_BLOCK = 8 << 20
DEFAULT_MAX_KEYS = 4_000_000


@dataclass(frozen=True)
class BuildSettings:
    """What to build: R, groups per reducer, key rule, heavy keys, and how to read."""

    reducers: int
    scale: int = DEFAULT_SCALE
    key: str = "words"
    heavy_keys: int = DEFAULT_HEAVY_KEYS
    threads: int = max(1, min(4, os.cpu_count() or 1))
    block_size: int = DEFAULT_BLOCK
    max_keys: int = DEFAULT_MAX_KEYS
    webhdfs_url: str | None = None
    progress: bool = False
    engine: str = "local"
    seed: int = 0
    # engine="spark" only: the Spark master URL (None: local[threads]) and SparkConf settings
    spark_master: str | None = None
    spark_conf: tuple[tuple[str, str], ...] = ()

    @property
    def groups(self) -> int:
        return self.reducers * self.scale


def mapping_from_counts(counts: KeyCounts, settings: BuildSettings) -> Mapping:
    """Select heavy keys among the counted keys and pack (the engine-independent step)."""
    total = counts.total
    eligible = np.flatnonzero(counts.counts * settings.groups > total)  # few keys: to Python
    heavy, heavy_counts = select_heavy(key_bytes(counts.keys, eligible), counts.counts[eligible],
                                       total, settings.groups, settings.heavy_keys)
    heavy_groups = murmur3_32_array(pa.array(heavy, type=pa.binary()), settings.seed).astype(
        np.int64) % settings.groups
    bound = counts.heaviest_bound  # the key table overflowed: the heaviest key may be gone
    kept_max = int(counts.counts.max()) if len(counts.counts) else 0
    heaviest = kept_max if bound is None else bound
    return build_mapping(counts.group_totals, heavy, heavy_counts, heavy_groups,
                         settings.reducers, settings.scale, heaviest, settings.seed,
                         heaviest_is_bound=bound is not None)


def key_bytes(keys: pa.Array, picked: np.ndarray) -> list[bytes]:
    """The bytes of ``keys[i]`` for each ``i`` in ``picked`` (as ``keys.take(picked)``, without
    importing ``pyarrow.compute``, 0.07 s of every build's start-up)."""
    starts, lengths, data = binary_parts(keys)
    return [data[s:s + n].tobytes() for s, n in zip(starts[picked].tolist(),
                                                    lengths[picked].tolist(), strict=True)]


def count_local(sources: list[Source], settings: BuildSettings) -> KeyCounts:
    rule = extractor(settings.key)
    bar = _progress_bar(sum(s.size for s in sources), settings.progress)

    def pieces() -> Iterator[Piece]:
        bar.reset()
        for source in sources:
            yield from rule.pieces(source, settings.block_size, bar.update)

    try:
        return count_keys(pieces, rule, settings.groups, settings.seed,
                          settings.max_keys, settings.threads)
    finally:
        bar.close()


class _NoBar:
    """What ``count_local`` calls on a progress bar, doing nothing (tqdm costs 0.1 s to import)."""

    def reset(self) -> None:
        pass

    def update(self, done: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool):  # noqa: ANN202 - a tqdm bar
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="imkp build",
                disable=not enabled, dynamic_ncols=True, smoothing=0.1)


def build(inputs: list[str], settings: BuildSettings) -> Mapping:
    """The mapping for ``inputs`` (HedgeError on bad settings, inputs or empty input)."""
    check_settings(settings.reducers, settings.scale, settings.heavy_keys)
    extractor(settings.key)  # validate the key spec before touching any input
    if settings.engine == "spark":
        from hedge.imkp.spark import count_spark

        counts = count_spark(inputs, settings)
    elif settings.engine == "local":
        if settings.spark_master or settings.spark_conf:
            raise HedgeError("--spark-master and --spark-conf need --engine spark")
        sources = expand_inputs(inputs, settings.webhdfs_url)
        if not sources:
            raise HedgeError(f"inputs {' '.join(inputs)}: no files to read (empty folder?)")
        counts = count_local(sources, settings)
    else:
        raise HedgeError(f"--engine {settings.engine!r}: expected 'local' or 'spark'")
    if counts.total == 0:
        raise HedgeError(f"inputs {' '.join(inputs)}: no keys found (empty input?); a mapping "
                         "needs at least one key")
    return mapping_from_counts(counts, settings)


def build_to_file(inputs: list[str], settings: BuildSettings, output: str | Path,
                  on_done: Callable[[Mapping], None] | None = None) -> Mapping:
    """Build and write atomically; nothing is written when any step fails."""
    output = Path(output)
    if not output.parent.is_dir():
        raise HedgeError(f"-o {output}: folder {output.parent} does not exist")
    if output.is_dir():
        raise HedgeError(f"-o {output}: a directory, expected the path of the mapping file")
    mapping = build(inputs, settings)
    write_mapping(mapping, output)
    if on_done:
        on_done(mapping)
    return mapping
