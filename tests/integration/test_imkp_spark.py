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
