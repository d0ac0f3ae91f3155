"""ImkpPartitioner in real MapReduce WordCount jobs (LocalJobRunner, every tested Hadoop).

Per-reducer input records (WordCount has no combiner, so a reducer's input is the sum of
the counts it writes) must equal the loads the mapping predicted, every key must sit in the
reducer ``hedge imkp lookup`` names, and the word counts must equal HashPartitioner's. A bad
mapping (wrong R, missing file) must fail the job with the partitioner's message.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hedge import javaenv
from hedge.imkp.build import BuildSettings, build_to_file
from hedge.imkp.mapfile import Mapping
from tests.conftest import SHARED_DATA
from tests.integration.hadoop_job import (
    local_job_conf,
    read_reducer_outputs,
    require_java_side,
    run_wordcount,
    tokenize,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

IMKP = "org.hedge.imkp.ImkpPartitioner"
HASH = "org.apache.hadoop.mapreduce.lib.partition.HashPartitioner"
REDUCERS = 5


def zipf_text(tokens: int, exponent: float, vocabulary: int = 5000, seed: int = 1) -> str:
    """Words drawn with P(rank k) ~ k^-exponent; lines of 12 words, some non-ASCII words."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" if k % 7 else f"wörd{k}" for k in range(vocabulary)]
    p = 1.0 / np.arange(1, vocabulary + 1) ** exponent
    drawn = rng.choice(vocabulary, size=tokens, p=p / p.sum())
    lines = [" ".join(words[k] for k in drawn[i:i + 12]) for i in range(0, tokens, 12)]
    return "\n".join(lines) + "\n"


def make_input(kind: str, folder: Path) -> str:
    folder.mkdir()
    if kind == "shakespeare":
        source = SHARED_DATA / "text" / "tinyshakespeare.txt"
        if not source.exists():
            pytest.skip(f"needs {source} (not found)")
        text = source.read_text(encoding="utf-8")
    else:
        text = zipf_text(150_000, float(kind.removeprefix("zipf")))
    (folder / "input.txt").write_text(text, encoding="utf-8")
    return text


def zipf_job(tmp_path: Path, tokens: int, exponent: float, reducers: int) -> Mapping:
    """Zipf text in ``in/z.txt`` and its mapping for ``reducers`` in ``job.imkp``."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "z.txt").write_text(zipf_text(tokens, exponent), encoding="utf-8")
    return build_to_file([str(tmp_path / "in")], BuildSettings(reducers=reducers),
                         tmp_path / "job.imkp")


def assert_follows(outputs: dict[int, Counter], mapping: Mapping) -> list[int]:
    """Each reducer's input is the load the mapping predicts, of keys the mapping sends it."""
    loads = [sum(outputs[r].values()) for r in range(len(outputs))]
    assert loads == mapping.loads.tolist()
    for r, counts in outputs.items():
        routed = mapping.reducers_of(pa.array(list(counts), type=pa.string()))
        assert np.all(routed == r), f"reducer {r} holds keys the mapping sends elsewhere"
    return loads


@pytest.mark.parametrize("kind", ["shakespeare", "zipf0.4", "zipf1.4"])
@pytest.mark.parametrize("version", javaenv.HADOOP_VERSIONS)
def test_reducer_inputs_equal_the_predicted_loads(version: str, kind: str, tmp_path: Path) -> None:
    require_java_side(version)
    text = make_input(kind, tmp_path / "in")
    mapping = build_to_file([str(tmp_path / "in")], BuildSettings(reducers=REDUCERS),
                            tmp_path / "job.imkp")
    imkp = run_wordcount(version, tmp_path / "in", tmp_path / "out-imkp", REDUCERS, IMKP,
                         ["-D", f"hedge.imkp.mapping={tmp_path / 'job.imkp'}"])

    loads = assert_follows(imkp, mapping)
    assert max(loads) <= 1.01 * mapping.lower_bound

    hashed = run_wordcount(version, tmp_path / "in", tmp_path / "out-hash", REDUCERS, HASH)
    merged = sum(imkp.values(), Counter())
    assert merged == sum(hashed.values(), Counter())
    assert merged == Counter(tokenize(text))


@pytest.mark.parametrize("version", javaenv.HADOOP_VERSIONS)
def test_old_mapred_api_job(version: str, tmp_path: Path) -> None:
    """The same partitioner class in an old-API (org.apache.hadoop.mapred) job."""
    require_java_side(version)
    mapping = zipf_job(tmp_path, 30_000, 1.0, reducers=4)
    out = tmp_path / "out"
    result = javaenv.run_java(
        "org.hedge.imkp.OldApiWordCount",
        [str(tmp_path / "in"), str(out), "4", str(tmp_path / "job.imkp"), str(tmp_path / "tmp")],
        version, extra_classpath=(javaenv.shim_test_classes(),))
    assert result.returncode == 0, result.stderr[-3000:]
    loads = []
    for r in range(4):
        lines = (out / f"part-{r:05d}").read_text(encoding="utf-8").splitlines()
        counts = {w: int(n) for w, n in (line.rsplit("\t", 1) for line in lines)}
        assert all(mapping.reducer_of(w) == r for w in counts)
        loads.append(sum(counts.values()))
    assert loads == mapping.loads.tolist()


def run_failing(version: str, tmp_path: Path, conf: list[str], reducers: int) -> str:
    """Run a job that must fail; returns its output (the task's stderr is in it)."""
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    args = [*local_job_conf(tmp_path), *conf, str(tmp_path / "in"), str(out), str(reducers), IMKP]
    result = javaenv.run_java("org.hedge.tools.WordCount", args, version)
    assert result.returncode != 0, "the job must fail, not fall back to hash partitioning"
    assert not (out / "_SUCCESS").exists()
    return result.stdout + result.stderr


@pytest.mark.parametrize("version", javaenv.HADOOP_VERSIONS)
def test_bad_mapping_fails_the_job_with_the_fix(version: str, tmp_path: Path) -> None:
    require_java_side(version)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a b c a b a\n" * 50, encoding="utf-8")
    build_to_file([str(tmp_path / "in")], BuildSettings(reducers=4), tmp_path / "four.imkp")

    log = run_failing(version, tmp_path, ["-D", f"hedge.imkp.mapping={tmp_path / 'four.imkp'}"], 3)
    assert "was built for 4 reducers but the job has 3 reduce tasks" in log
    assert "--reducers 3" in log

    log = run_failing(version, tmp_path, ["-D", f"hedge.imkp.mapping={tmp_path / 'nope.imkp'}"], 4)
    assert "mapping file not found" in log
    assert "hedge imkp build" in log


def test_distributed_cache_link_name(tmp_path: Path) -> None:
    """-files job.imkp ships the mapping; tasks open it by its link name."""
    version = javaenv.HADOOP_VERSIONS[-1]
    require_java_side(version)
    mapping = zipf_job(tmp_path, 20_000, 0.8, reducers=3)
    out = tmp_path / "out"
    args = ["-files", str(tmp_path / "job.imkp"), *local_job_conf(tmp_path),
            "-D", "hedge.imkp.mapping=job.imkp", str(tmp_path / "in"), str(out), "3", IMKP]
    work = tmp_path / "cwd"
    work.mkdir()  # the link name must not resolve in the launcher's own folder by accident
    result = javaenv.run_java("org.hedge.tools.WordCount", args, version, cwd=work)
    assert result.returncode == 0, result.stderr[-3000:]
    outputs = read_reducer_outputs(out, 3)
    assert [sum(outputs[r].values()) for r in range(3)] == mapping.loads.tolist()
