"""ImKP on PySpark (local mode): the Spark build equals the local build byte for byte, and
``partition_func`` sends every key to the partition the mapping names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hedge.errors import HedgeError
from hedge.imkp.build import BuildSettings, build
from hedge.imkp.mapfile import encode
from hedge.imkp.spark import partition_by, partition_func
from tests.integration.test_imkp_wordcount import zipf_text

pyspark = pytest.importorskip("pyspark", reason="needs pyspark (pip install pyspark==4.0.1)")
pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    import os
    import sys

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = pyspark.SparkConf().setMaster("local[2]").setAppName("hedge-imkp-test") \
        .set("spark.ui.enabled", "false")
    context = pyspark.SparkContext.getOrCreate(conf)
    yield context
    context.stop()


def test_spark_build_is_identical_to_the_local_build(spark: object, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(zipf_text(30_000, 1.1), encoding="utf-8")
    (tmp_path / "in" / "b.txt").write_text("Zürich\tépée\r\n\fx\x0by " * 50, encoding="utf-8")
    (tmp_path / "in" / "_SUCCESS").write_text("")
    (tmp_path / "t.tsv").write_text("".join(f"u{i % 17}\tv{i % 5}\n" for i in range(3000)))
    for inputs, key in (([str(tmp_path / "in")], "words"), ([str(tmp_path / "t.tsv")], "tsv:1")):
        local = BuildSettings(reducers=4, scale=6, key=key)
        spark_settings = BuildSettings(reducers=4, scale=6, key=key, engine="spark")
        assert encode(build(inputs, spark_settings)) == encode(build(inputs, local)), key


def test_spark_csv_and_parquet_builds_are_identical_to_the_local_build(spark: object,
                                                                        tmp_path: Path) -> None:
    # Several files (one Spark task each), quoting, embedded newlines, non-ASCII, empty
    # strings, nulls in Parquet (skipped, as locally) and an integer column.
    words = zipf_text(6000, 1.2).split()
    (tmp_path / "csv").mkdir()
    for part in range(3):
        rows = "".join(f'{i},"{w}",{len(w)}\n' for i, w in enumerate(words[part::3]))
        (tmp_path / "csv" / f"part-{part}.csv").write_text(
            "id,word,n\n" + rows + '9,"multi\nline, quoted",1\n10,,0\n11,Zürich,6\n',
            encoding="utf-8")
    (tmp_path / "csv" / "_SUCCESS").write_text("")
    (tmp_path / "pq").mkdir()
    for part in range(2):
        column = words[part::2] + [None, "épée"]
        pq.write_table(pa.table({"word": column, "n": [len(w or "") for w in column]}),
                       tmp_path / "pq" / f"part-{part}.parquet", row_group_size=1000)
    for folder, key in (("csv", "csv:word"), ("pq", "parquet:word"), ("pq", "parquet:n")):
        inputs = [str(tmp_path / folder)]
        local = build(inputs, BuildSettings(reducers=3, scale=7, key=key))
        remote = build(inputs, BuildSettings(reducers=3, scale=7, key=key, engine="spark"))
        assert encode(remote) == encode(local), key
        assert local.heavy_keys, key  # heavy keys exist, so both paths picked the same ones


def test_partition_func_routes_like_the_mapping(spark: object, tmp_path: Path) -> None:
    (tmp_path / "z.txt").write_text(zipf_text(20_000, 1.0), encoding="utf-8")
    mapping = build([str(tmp_path / "z.txt")], BuildSettings(reducers=3, scale=5))
    words = sorted(set((tmp_path / "z.txt").read_text(encoding="utf-8").split())) + ["unseen"]
    pairs = spark.parallelize([(w, 1) for w in words], 4)  # type: ignore[attr-defined]
    parts = partition_by(pairs, mapping).glom().collect()
    assert len(parts) == 3
    for index, part in enumerate(parts):
        assert all(mapping.reducer_of(w) == index for w, _ in part)
    assert sum(len(p) for p in parts) == len(words)
    func = partition_func(mapping)
    assert [func(w) for w in words[:50]] == [mapping.reducer_of(w) for w in words[:50]]


def test_spark_bad_input_is_one_clear_error(spark: object, tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 10)
    with pytest.raises(HedgeError, match="binary file given as text"):
        build([str(tmp_path / "blob.bin")], BuildSettings(reducers=2, engine="spark"))
    (tmp_path / "t.csv").write_text("a\n1\n")
    with pytest.raises(HedgeError, match="t.csv: cannot read CSV column 'b'"):
        build([str(tmp_path / "t.csv")], BuildSettings(reducers=2, key="csv:b", engine="spark"))


def _hedge_cli(args: list[str], env_update: dict[str, str], cwd: Path) -> tuple[int, str]:
    """``hedge ARGS`` in a fresh process (no SparkContext of this module's fixture in it)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items()
           if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_HOME")}
    result = subprocess.run([sys.executable, "-m", "hedge.cli", *args], capture_output=True,
                            text=True, env={**env, **env_update}, cwd=cwd, timeout=120)
    return result.returncode, result.stderr


def test_yarn_without_what_it_needs_is_one_clear_error(tmp_path: Path) -> None:
    """Each missing piece is named, with how to get it, before any JVM starts (exit 2)."""
    (tmp_path / "a.txt").write_text("a b c\n")
    build = ["imkp", "build", str(tmp_path / "a.txt"), "-r", "2", "-o", str(tmp_path / "m")]
    yarn = [*build, "--engine", "spark", "--spark-master", "yarn"]
    (tmp_path / "empty").mkdir()
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "yarn-site.xml").write_text("<configuration/>")
    (tmp_path / "spark" / "jars").mkdir(parents=True)
    cases = [
        (yarn, {}, "--spark-master yarn needs the cluster's Hadoop configuration: set "
                   "HADOOP_CONF_DIR (or YARN_CONF_DIR)"),
        (yarn, {"HADOOP_CONF_DIR": str(tmp_path / "empty")},
         f"no yarn-site.xml in HADOOP_CONF_DIR={tmp_path / 'empty'}"),
        (yarn, {"YARN_CONF_DIR": str(tmp_path / "conf"), "SPARK_HOME": str(tmp_path / "spark")},
         f"Spark at {tmp_path / 'spark'} has no YARN support (no jars/spark-yarn_*.jar): "
         "pip install pyspark=="),
        ([*build, "--spark-master", "yarn"], {}, "--spark-master and --spark-conf need "
                                                 "--engine spark"),
        ([*build, "--engine", "spark", "--spark-conf", "spark.executor.memory"], {},
         "'spark.executor.memory': expected KEY=VALUE"),
    ]
    for args, env, message in cases:
        code, stderr = _hedge_cli(args, env, tmp_path)
        assert code == 2, (args, env, stderr)
        assert message in stderr, (message, stderr)
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert len(lines) == 1 or lines[0].startswith("Usage:") and len(lines) == 3, stderr
        assert not (tmp_path / "m").exists()
