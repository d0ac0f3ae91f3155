"""ImKP on Spark: the partition function for ``rdd.partitionBy``, and counting as a Spark job.

- ``partition_func(mapping)``: a picklable callable ``key -> reducer index`` with the same
  answer as ``hedge imkp lookup`` and the Java partitioner (key's string form, UTF-8,
  heavy-key table, then ``murmur3_32 mod G``). Use it with ``numPartitions = R``:
  ``rdd.partitionBy(mapping.reducers, partition_func(mapping))`` (or ``partition_by``).
- ``count_spark(inputs, settings)``: ``hedge imkp build --engine spark``. Lines are read by
  Spark (``textFile``: Hadoop's LineRecordReader, so inputs can be far larger than one
  machine), keys are extracted in each partition by the same extractor as the local engine,
  and only aggregates reach the driver: per-group totals (G numbers) and the keys with
  ``count x G > total`` plus the heaviest key. The mapping built from them is identical to
  the local build's. Key rules: ``words``, ``tsv:N`` and ``py:module:function`` are
  line-based (Spark splits files into line ranges); ``csv:NAME`` and ``parquet:NAME`` are
  file-based: one Spark task per input file, which reads it with the local engine's own
  pyarrow reader (a CSV header and Parquet's footer make byte ranges meaningless), so the
  keys are the same by construction; parallelism is then the number of files (Spark, Hive
  and Hadoop write a folder of ``part-*`` files).

Where Spark runs (``BuildSettings.spark_master``, ``--spark-master``): ``local[--threads]`` by
default, or any Spark master URL. ``yarn`` submits a client-mode application to the cluster
that ``HADOOP_CONF_DIR`` (or ``YARN_CONF_DIR``) describes, as ``spark-submit --master yarn``
would; the pyspark wheel already holds spark-yarn and ``python/lib/pyspark.zip``, and a
``SPARK_HOME`` the user sets (a Spark distribution) is used instead. ``--spark-conf KEY=VALUE``
settings (``spark.executor.instances``, ``spark.executor.memory``, ``spark.yarn.archive`` ...)
go to ``SparkConf`` as given and win over hedge's. Executors run ``PYSPARK_PYTHON`` (default:
this Python, right when every node sees it, as on one machine or a pseudo-distributed
cluster); on a real cluster ship an environment with hedge in it
(``--spark-conf spark.archives=hdfs:///envs/hedge.tar.gz#env`` and
``PYSPARK_PYTHON=./env/bin/python``). Local inputs are read as ``file://`` URLs, so every
executor must see them at the same path; put inputs on HDFS otherwise.
"""

from __future__ import annotations

import os
import re
import sys
from operator import add
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from hedge.errors import HedgeError
from hedge.imkp.count import KeyCounts, distinct_counts
from hedge.imkp.hashing import murmur3_32, murmur3_32_array
from hedge.imkp.keys import Extractor, Piece, PythonFunction, TsvColumn, Words, extractor
from hedge.imkp.mapfile import Mapping, read_mapping

BATCH_BYTES = 8 << 20


class PartitionFunc:
    """``key -> reducer`` for Spark's ``partitionBy`` (picklable: plain arrays and a dict)."""

    def __init__(self, mapping: Mapping) -> None:
        self.reducers = mapping.reducers
        self.groups = mapping.groups
        self.seed = mapping.seed
        self.group_reducer = mapping.group_reducer.astype(np.int64).tolist()
        self.heavy = {k: int(r) for k, r in zip(mapping.heavy_keys, mapping.heavy_reducer,
                                                 strict=True)}

    def __call__(self, key: Any) -> int:
        data = key if isinstance(key, bytes) else str(key).encode("utf-8")
        heavy = self.heavy.get(data)
        if heavy is not None:
            return heavy
        return self.group_reducer[murmur3_32(data, self.seed) % self.groups]


def partition_func(mapping: Mapping | str | Path) -> PartitionFunc:
    """The partition function of a mapping (or of a mapping file)."""
    return PartitionFunc(mapping if isinstance(mapping, Mapping) else read_mapping(mapping))


def partition_by(rdd: Any, mapping: Mapping | str | Path) -> Any:
    """``rdd.partitionBy(R, partition_func(mapping))`` with R taken from the mapping."""
    func = partition_func(mapping)
    return rdd.partitionBy(func.reducers, func)


def _line_based(rule: Extractor) -> bool:
    """True for rules whose keys come from single lines (Spark may split files anywhere)."""
    return isinstance(rule, Words | TsvColumn | PythonFunction)


def _file_counts(rule: Extractor, name: str, webhdfs_url: str | None,
                 block_size: int) -> Any:
    """Distinct keys and counts of one whole input file, read as the local engine reads it."""
    from hedge.imkp.sources import expand_inputs

    for source in expand_inputs([name], webhdfs_url):
        for piece in rule.pieces(source, block_size, lambda _: None):
            distinct, counts = distinct_counts(rule.keys(piece))
            yield from zip(distinct.to_pylist(), counts.tolist(), strict=True)


def _partition_counts(rule: Extractor, lines: Any) -> Any:
    """Distinct keys and counts of one Spark partition of raw (bytes) lines."""
    batch: list[bytes] = []
    size = 0

    def flush() -> list[tuple[bytes, int]]:
        keys = rule.keys(Piece("spark input", b"\n".join(batch) + b"\n"))
        distinct, counts = distinct_counts(keys)
        return list(zip(distinct.to_pylist(), counts.tolist(), strict=True))

    for line in lines:
        batch.append(line)
        size += len(line) + 1
        if size >= BATCH_BYTES:
            yield from flush()
            batch, size = [], 0
    if batch:
        yield from flush()


def _group_totals(pairs: Any, groups: int, seed: int) -> Any:
    pairs = list(pairs)
    if not pairs:
        return []
    keys = pa.array([k for k, _ in pairs], type=pa.binary())
    counts = np.array([c for _, c in pairs], dtype=np.int64)
    group = murmur3_32_array(keys, seed).astype(np.int64) % groups
    totals = np.bincount(group, weights=counts, minlength=groups).astype(np.int64)
    return [(int(g), int(totals[g])) for g in np.flatnonzero(totals)]


def spark_paths(inputs: list[str]) -> str:
    """Comma-joined paths for ``textFile``: local inputs expanded like the local engine, as
    ``file://`` URLs (a bare path would resolve against the cluster's ``fs.defaultFS``)."""
    from hedge.imkp.sources import expand_inputs

    paths = []
    for item in inputs:
        if item.startswith(("hdfs://", "webhdfs://")):
            paths.append(item)
        else:
            paths += [Path(s.name).resolve().as_uri() for s in expand_inputs([item])]
    if not paths:
        raise HedgeError(f"inputs {' '.join(inputs)}: no files to read (empty folder?)")
    return ",".join(paths)


def spark_files(inputs: list[str], webhdfs_url: str | None) -> list[str]:
    """Every input file, expanded on the driver (HDFS ones as full URLs), for file tasks."""
    from hedge.imkp.sources import expand_inputs

    files = [s.name if "://" in s.name else str(Path(s.name).resolve())
             for s in expand_inputs(inputs, webhdfs_url)]
    if not files:
        raise HedgeError(f"inputs {' '.join(inputs)}: no files to read (empty folder?)")
    return files


def spark_master(settings: Any) -> str:
    """The master URL: ``--spark-master``, else ``spark.master`` among ``--spark-conf``,
    else ``local[threads]``."""
    conf = dict(getattr(settings, "spark_conf", ()))
    return getattr(settings, "spark_master", None) or conf.get("spark.master") \
        or f"local[{settings.threads}]"


def check_yarn(spark_home: str | None = None) -> None:
    """HedgeError, naming what is missing and how to get it, unless Spark can reach YARN:
    ``HADOOP_CONF_DIR`` or ``YARN_CONF_DIR`` is a folder with yarn-site.xml, and Spark's
    jars hold spark-yarn (the pyspark wheel's do)."""
    names = ("HADOOP_CONF_DIR", "YARN_CONF_DIR")
    dirs = [(n, os.environ[n]) for n in names if os.environ.get(n)]
    if not dirs:
        raise HedgeError("--spark-master yarn needs the cluster's Hadoop configuration: set "
                         "HADOOP_CONF_DIR (or YARN_CONF_DIR) to the folder holding its "
                         "core-site.xml and yarn-site.xml (e.g. /etc/hadoop/conf)")
    if not any((Path(d) / "yarn-site.xml").is_file() for _, d in dirs):
        where = ", ".join(f"{n}={d}" for n, d in dirs)
        raise HedgeError(f"--spark-master yarn: no yarn-site.xml in {where}; point it at the "
                         "folder holding the cluster's core-site.xml and yarn-site.xml")
    if spark_home is None:
        from pyspark.find_spark_home import _find_spark_home

        spark_home = _find_spark_home()
    if not sorted(Path(spark_home, "jars").glob("spark-yarn_*.jar")):
        import pyspark

        raise HedgeError(
            f"--spark-master yarn: Spark at {spark_home} has no YARN support (no "
            f"jars/spark-yarn_*.jar): pip install pyspark=={pyspark.__version__} (its wheel "
            "includes it), point SPARK_HOME at a Spark distribution built with YARN, or copy "
            f"org.apache.spark:spark-yarn_2.13:{pyspark.__version__} from Maven Central into "
            f"{Path(spark_home, 'jars')}")


def count_spark(inputs: list[str], settings: Any) -> KeyCounts:
    """Count keys and group totals as a PySpark job (on ``spark_master(settings)`` unless a
    SparkContext is already running, in which case that one is used and left running)."""
    try:
        from pyspark import SparkConf, SparkContext
    except ImportError as exc:
        raise HedgeError("--engine spark needs pyspark (pip install pyspark==4.0.1, or "
                         "make setup); use --engine local otherwise") from exc
    rule = extractor(settings.key)
    context = SparkContext._active_spark_context
    owned = context is None
    master = spark_master(settings)
    asked = getattr(settings, "spark_master", None)
    if not owned and asked and asked != context.master:
        raise HedgeError(f"--spark-master {asked}: a SparkContext on {context.master} is "
                         "already running in this process (stop it first)")
    if owned and master.split(":")[0] == "yarn":
        check_yarn()
    if _line_based(rule):
        paths = spark_paths(inputs)
    else:
        files = spark_files(inputs, settings.webhdfs_url)
    if owned:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers need hedge importable
        conf = SparkConf().setAppName("hedge imkp build").setMaster(master) \
            .set("spark.ui.enabled", "false")
        for key, value in getattr(settings, "spark_conf", ()):
            conf.set(key, value)
        try:
            context = SparkContext(conf=conf)
        except Exception as exc:  # noqa: BLE001 - Py4J, a JVM that did not start, ...
            raise HedgeError(f"Spark on {master} did not start: {_start_error(str(exc))}") \
                from exc
        if not master.startswith("local"):
            print(f"hedge: Spark application {context.applicationId} on {master}",
                  file=sys.stderr, flush=True)
    try:
        if _line_based(rule):
            pairs = context.textFile(paths, use_unicode=False) \
                .mapPartitions(lambda it: _partition_counts(rule, it))
        else:
            url, block = settings.webhdfs_url, settings.block_size
            pairs = context.parallelize(files, len(files)) \
                .flatMap(lambda name: _file_counts(rule, name, url, block))
        return _count(pairs, settings.groups, settings.seed)
    except HedgeError:
        raise
    except Exception as exc:  # noqa: BLE001 - Spark wraps worker errors in Py4J/Python ones
        raise HedgeError(f"Spark counting failed: {_worker_error(str(exc))}") from exc
    finally:
        if owned:
            context.stop()


def _start_error(text: str) -> str:
    """The root cause of a SparkContext that failed to start (its last 'Caused by')."""
    causes = re.findall(r"^Caused by: (.*)$", text, re.MULTILINE)
    lines = [line for line in text.splitlines() if line.strip()]
    return (causes[-1] if causes else lines[-1] if lines else "unknown error")[:500]


def _worker_error(text: str) -> str:
    """The most telling line of a Spark failure (a worker's HedgeError when there is one)."""
    errors = re.findall(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception): .*)$", text, re.MULTILINE)
    hedge = [e for e in errors if e.startswith("HedgeError")]
    return ((hedge or errors or text.splitlines() or ["unknown error"])[-1
            if not hedge else 0]).removeprefix("HedgeError: ")[:500]


def _count(pairs: Any, groups: int, seed: int) -> KeyCounts:
    """Group totals and the heavy-key candidates from an RDD of (key bytes, count) pairs."""
    counts = pairs.reduceByKey(add).cache()
    try:
        totals = np.zeros(groups, dtype=np.int64)
        for g, n in counts.mapPartitions(lambda it: _group_totals(it, groups, seed)) \
                .reduceByKey(add).collect():
            totals[g] = n
        total = int(totals.sum())
        top = counts.takeOrdered(1, key=lambda kv: (-kv[1], kv[0]))
        picked = dict(counts.filter(lambda kv: kv[1] * groups > total).collect() + top)
    finally:
        counts.unpersist()
    keys = pa.array(list(picked), type=pa.binary())
    return KeyCounts(totals, keys, np.array(list(picked.values()), dtype=np.int64),
                     exact_all=False)
