"""The build-and-run chain: our jar's partitioner drives a real MapReduce job.

WordCount runs in Hadoop's LocalJobRunner on every tested Hadoop version (2.7.3, 3.3.6 and
3.4.1, from Maven Central); every reducer's output must hold exactly the keys
FirstCharPartitioner sends there, and the counts must equal a Python count of the same input.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from hedge.javaenv import HADOOP_VERSIONS
from tests.conftest import SHARED_DATA
from tests.integration.hadoop_job import require_java_side, run_wordcount, tokenize

pytestmark = pytest.mark.integration

REDUCERS = 3


def first_char_partition(word: str, reducers: int) -> int:
    """FirstCharPartitioner in Python: first UTF-16 code unit mod R (words here are BMP)."""
    return ord(word[0]) % reducers if word else 0


def make_input(folder: Path) -> str:
    rng = random.Random(7)
    vocabulary = ["alpha", "beta", "gamma", "delta", "épée", "Zürich", "x", "ÿes", "42", "to-be"]
    lines = [" ".join(rng.choices(vocabulary, k=rng.randint(0, 12))) for _ in range(500)]
    text = "\n".join(lines) + "\n\tbeta\r\nalpha\f gamma\n"
    folder.mkdir()
    (folder / "part1.txt").write_text(text[: len(text) // 2], encoding="utf-8")
    (folder / "part2.txt").write_text(text[len(text) // 2 :], encoding="utf-8")
    shakespeare = SHARED_DATA / "text" / "tinyshakespeare.txt"
    if shakespeare.exists():  # real skewed English text as well, when the shared data is here
        extra = shakespeare.read_text(encoding="utf-8")[:300_000]
        (folder / "shakespeare.txt").write_text(extra, encoding="utf-8")
        text += "\n" + extra
    return text


@pytest.mark.parametrize("version", HADOOP_VERSIONS)
def test_partitioner_routes_every_key_to_its_reducer(version: str, tmp_path: Path) -> None:
    require_java_side(version)
    text = make_input(tmp_path / "in")
    outputs = run_wordcount(version, tmp_path / "in", tmp_path / "out", REDUCERS,
                            "org.hedge.demo.FirstCharPartitioner")

    for reducer, counts in outputs.items():
        assert counts, f"reducer {reducer} got no keys"
        wrong = [w for w in counts if first_char_partition(w, REDUCERS) != reducer]
        assert not wrong, f"reducer {reducer} holds keys routed elsewhere: {wrong[:5]}"

    merged = sum(outputs.values(), Counter())
    assert merged == Counter(tokenize(text))
