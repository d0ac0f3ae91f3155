"""Run the shim's WordCount in Hadoop's LocalJobRunner and read its per-reducer output."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hedge import javaenv
from hedge.errors import HedgeError

# java.util.StringTokenizer's default delimiters, which Hadoop's WordCount splits on.
TOKEN_DELIMITERS = " \t\n\r\f"


def tokenize(text: str) -> list[str]:
    """Split exactly as ``new StringTokenizer(line)`` does."""
    table = str.maketrans({c: " " for c in TOKEN_DELIMITERS})
    return [token for token in text.translate(table).split(" ") if token]


def require_java_side(version: str) -> None:
    """Skip, naming what is missing, when the Hadoop jars or the shim jar are not built."""
    try:
        javaenv.hadoop_jars(version)
        javaenv.shim_jar()
    except HedgeError as exc:
        pytest.skip(f"needs the Java side: {exc}")


def local_job_conf(tmp: Path) -> list[str]:
    """-D options for an isolated LocalJobRunner job on the local file system."""
    return [
        "-D", "mapreduce.framework.name=local",
        "-D", "fs.defaultFS=file:///",
        "-D", f"hadoop.tmp.dir={tmp / 'hadoop-tmp'}",
    ]


def run_wordcount(
    version: str,
    inputs: Path,
    out: Path,
    reducers: int,
    partitioner: str | None,
    conf: list[str] = (),
) -> dict[int, Counter]:
    """Run WordCount; returns {reducer index: Counter(word -> count)} from part-r-* files."""
    args = [*local_job_conf(out.parent), *conf, str(inputs), str(out), str(reducers)]
    if partitioner:
        args.append(partitioner)
    result = javaenv.run_java("org.hedge.tools.WordCount", args, version)
    assert result.returncode == 0, f"job failed on Hadoop {version}:\n{result.stderr[-4000:]}"
    assert (out / "_SUCCESS").exists()
    return read_reducer_outputs(out, reducers)


def read_reducer_outputs(out: Path, reducers: int) -> dict[int, Counter]:
    outputs: dict[int, Counter] = {}
    for r in range(reducers):
        counts: Counter = Counter()
        for line in (out / f"part-r-{r:05d}").read_text(encoding="utf-8").splitlines():
            word, count = line.rsplit("\t", 1)
            counts[word] = int(count)
        outputs[r] = counts
    return outputs
