"""The builder: exact counts, StringTokenizer semantics, extractors, streaming, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hedge.errors import HedgeError
from hedge.imkp.build import BuildSettings, build, build_to_file, count_local
from hedge.imkp.hashing import murmur3_32
from hedge.imkp.keys import tokenize
from hedge.imkp.mapfile import encode, read_mapping
from hedge.imkp.sources import expand_inputs
from tests.integration.hadoop_job import tokenize as string_tokenizer
from tests.integration.test_imkp_wordcount import zipf_text

TRICKY = ("alpha beta\tgamma\r\ndelta\fepsilon\x0bzeta \u00a0eta  θ\u2003ι\n\n"
          "Zürich 日本 🙂 a\x1cb end")


def predicted(counter: Counter, m) -> list[int]:  # noqa: ANN001
    loads = [0] * m.reducers
    for key, n in counter.items():
        loads[m.reducer_of(key)] += n
    return loads


def test_tokenizer_is_java_string_tokenizer() -> None:
    # \x0b, NBSP, EM SPACE and \x1c are NOT StringTokenizer delimiters; \f and \r are.
    got = tokenize(TRICKY.encode()).cast(pa.string()).to_pylist()
    assert got == string_tokenizer(TRICKY)
    assert "epsilon\x0bzeta" in got and "\u00a0eta" in got and "a\x1cb" in got
    assert tokenize(b"  \n ").to_pylist() == []


def test_counts_are_exact_and_loads_predict_every_key(tmp_path: Path) -> None:
    text = zipf_text(30_000, 1.0) + TRICKY
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    m = build([str(tmp_path / "a.txt")], BuildSettings(reducers=5, scale=4))
    counter = Counter(string_tokenizer(text))
    assert m.total == sum(counter.values())
    assert m.heaviest_key_count == max(counter.values())
    assert m.loads.tolist() == predicted(counter, m)
    groups = np.zeros(m.groups, dtype=np.int64)
    for key, n in counter.items():
        if key.encode() not in m.heavy_keys:
            groups[murmur3_32(key) % m.groups] += n
    assert m.group_count.tolist() == groups.tolist()
    assert m.heavy_keys and all(n * m.groups > m.total for n in m.heavy_count)


def test_block_size_threads_and_file_split_do_not_change_the_mapping(tmp_path: Path) -> None:
    text = zipf_text(20_000, 0.9)
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "all.txt").write_text(text, encoding="utf-8")
    (tmp_path / "two").mkdir()
    half = text.index(" ", len(text) // 2)
    (tmp_path / "two" / "a.txt").write_text(text[:half], encoding="utf-8")
    (tmp_path / "two" / "b.txt").write_text(text[half:], encoding="utf-8")
    (tmp_path / "two" / "_SUCCESS").write_text("ignored like Hadoop does")
    base = BuildSettings(reducers=4, scale=10)
    reference = encode(build([str(tmp_path / "one")], base))
    for settings in (BuildSettings(reducers=4, scale=10, block_size=97, threads=3),
                     BuildSettings(reducers=4, scale=10, block_size=5000, threads=1)):
        assert encode(build([str(tmp_path / "two" / "*.txt")], settings)) == reference
        assert encode(build([str(tmp_path / "two")], settings)) == reference


def test_sketch_overflow_then_exact_second_pass_gives_the_same_mapping(tmp_path: Path) -> None:
    text = zipf_text(40_000, 1.1, vocabulary=3000)
    (tmp_path / "z.txt").write_text(text, encoding="utf-8")
    exact = BuildSettings(reducers=3, scale=4, block_size=4096)
    sketched = BuildSettings(reducers=3, scale=4, block_size=4096, max_keys=30)  # 3000 keys > 30
    counted = count_local(expand_inputs([str(tmp_path / "z.txt")]), sketched)
    assert not counted.exact_all and len(counted.keys) <= 30  # the sketch really kicked in
    assert encode(build([str(tmp_path / "z.txt")], sketched)) == \
        encode(build([str(tmp_path / "z.txt")], exact))
    # its heaviest key has more than total / 31 records, so it survived: the count is exact
    m = build([str(tmp_path / "z.txt")], sketched)
    assert not m.heaviest_is_bound
    assert m.heaviest_key_count == max(Counter(string_tokenizer(text)).values())


def test_overflow_without_a_dominant_key_gives_a_bound_the_same_for_any_threads(
        tmp_path: Path) -> None:
    # 20 k words over 8,000 distinct, nearly uniform: no key has more than total / 201 (99)
    # records, so the summary may drop the heaviest key (which one survives depends on the
    # order pieces merge in); the figure must be a bound that holds, not a kept key's count
    text = zipf_text(20_000, 0.3, vocabulary=8000)
    (tmp_path / "u.txt").write_text(text, encoding="utf-8")
    truth = max(Counter(string_tokenizer(text)).values())
    files = set()
    for threads in (1, 4):
        settings = BuildSettings(reducers=2, scale=2, block_size=2048, max_keys=200,
                                 threads=threads)
        m = build([str(tmp_path / "u.txt")], settings)
        assert m.heaviest_key_count == 20_000 // 201 >= truth, threads
        assert m.heaviest_is_bound
        assert m.lower_bound == 10_000  # ceil(total / R), the bound plays no part
        files.add(encode(m))
    assert len(files) == 1


@pytest.mark.parametrize("exponent", [0.4, 1.0, 1.4])
@pytest.mark.parametrize("reducers", [5, 10])
def test_heavy_keys_reach_one_percent_of_the_lower_bound(tmp_path: Path, exponent: float,
                                                         reducers: int) -> None:
    (tmp_path / "z.txt").write_text(zipf_text(200_000, exponent, vocabulary=20_000))
    m = build([str(tmp_path / "z.txt")], BuildSettings(reducers=reducers))
    assert m.loads.max() <= 1.01 * m.lower_bound


def test_tsv_csv_parquet_and_python_extractors(tmp_path: Path) -> None:
    rows = [("u1", "click", "3"), ("u2", "view", "1"), ("u1", "view", "2"), ("ü3", "click", "1")]
    (tmp_path / "t.tsv").write_text("".join("\t".join(r) + "\r\n" for r in rows) + "\n")
    (tmp_path / "t.csv").write_text("user,action,n\n" + "".join(",".join(r) + "\n" for r in rows))
    pq.write_table(pa.table({"user": [r[0] for r in rows], "n": [int(r[2]) for r in rows]}),
                   tmp_path / "t.parquet")
    expected = Counter(r[0] for r in rows)
    for key, name in (("tsv:0", "t.tsv"), ("csv:user", "t.csv"), ("parquet:user", "t.parquet"),
                      ("py:tests.unit.test_imkp_build:first_field", "t.tsv")):
        m = build([str(tmp_path / name)], BuildSettings(reducers=2, scale=2, key=key))
        assert m.total == 4 and m.heaviest_key_count == 2, key
        assert m.loads.tolist() == predicted(expected, m), key
    numbers = build([str(tmp_path / "t.parquet")], BuildSettings(reducers=2, key="parquet:n"))
    assert numbers.heaviest_key_count == 2  # "1" twice: ints hashed by their decimal text


def first_field(line: str) -> list[str]:
    """A user extractor (``py:module:function``) used by the test above."""
    return [line.split("\t")[0]]


def bad(tmp_path: Path, inputs: list[str], settings: BuildSettings, match: str) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(HedgeError, match=match):
        build_to_file(inputs, settings, tmp_path / "out.imkp")
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "partial mapping left behind"


def test_bad_input_gives_one_clear_message_and_no_file(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("  \n\n")
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 ok".encode("latin-1"))
    (tmp_path / "short.tsv").write_text("a\tb\nc\n")
    (tmp_path / "h.csv").write_text("x,y\n1,2\n")
    (tmp_path / "emptydir").mkdir()
    ok = BuildSettings(reducers=3)
    bad(tmp_path, [str(tmp_path / "empty.txt")], ok, "no keys found")
    bad(tmp_path, [str(tmp_path / "emptydir")], ok, "no files to read")
    bad(tmp_path, [str(tmp_path / "empty.txt")], BuildSettings(reducers=0), "--reducers 0")
    bad(tmp_path, [str(tmp_path / "empty.txt")], BuildSettings(reducers=-2), "positive")
    bad(tmp_path, [str(tmp_path / "empty.txt")], BuildSettings(reducers=3, scale=0), "--scale 0")
    bad(tmp_path, [str(tmp_path / "blob.bin")], ok, "binary file given as text")
    bad(tmp_path, [str(tmp_path / "latin1.txt")], ok, "invalid UTF-8")
    bad(tmp_path, [str(tmp_path / "nope.txt")], ok, "no such file")
    bad(tmp_path, [str(tmp_path / "*.nothing")], ok, "matches no file")
    bad(tmp_path, [str(tmp_path / "short.tsv")], BuildSettings(reducers=3, key="tsv:1"),
        "needs at least 2")
    bad(tmp_path, [str(tmp_path / "h.csv")], BuildSettings(reducers=3, key="csv:user"), "user")
    bad(tmp_path, [str(tmp_path / "h.csv")], BuildSettings(reducers=3, key="parquet:x"),
        "not a Parquet file")
    bad(tmp_path, [str(tmp_path / "h.csv")], BuildSettings(reducers=3, key="json:x"), "expected words")
    bad(tmp_path, [str(tmp_path / "h.csv")], BuildSettings(reducers=3, key="py:no_such_mod:f"),
        "cannot import")
    bad(tmp_path, ["s3://bucket/x"], ok, "unsupported scheme")


def test_a_words_build_does_not_import_pyarrow_compute(tmp_path: Path) -> None:
    # 0.07 s of every build's start-up; the heavy keys are read without Array.take
    (tmp_path / "in.txt").write_text("to be or not to be " * 50 + "question\n")
    probe = ("import sys\nfrom hedge.cli import main\n"
             f"assert main(['imkp', 'build', {str(tmp_path / 'in.txt')!r}, '-r', '2', "
             f"'--no-progress', '-o', {str(tmp_path / 'm.imkp')!r}]) == 0\n"
             "print('pyarrow.compute' in sys.modules)")
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(repo / "python")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False"
    heavy = read_mapping(tmp_path / "m.imkp").heavy_keys  # the heavy keys were found
    assert set(heavy) == {b"to", b"be", b"or", b"not"}
