"""The one-pass compiled word count equals tokenize + value_counts + murmur3 exactly, both
through numba's jit and through the ahead-of-time compiled module (every test runs twice)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.imkp import wordbuild, wordcount, wordtable
from hedge.imkp.hashing import murmur3_32
from hedge.imkp.keys import Piece, Words, distinct_counts, tokenize
from hedge.imkp.wordtable import WordCounter, count_words
from tests.integration.hadoop_job import tokenize as string_tokenizer

TRICKY = ("alpha beta\tgamma\r\ndelta\fepsilon\x0bzeta \u00a0eta  θ\u2003ι\n\n"
          "Zürich 日本 🙂 a\x1cb end")


@pytest.fixture(scope="session")
def aot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A NUMBA_CACHE_DIR whose hedge_imkp folder holds the AOT module of the current source:
    a link to the one ``make setup`` built if there is one (a build takes ~15 s of CPU)."""
    root = tmp_path_factory.mktemp("numba-cache")
    ready = wordtable.compiled_path()
    if ready.is_file():
        (root / "hedge_imkp").mkdir()
        (root / "hedge_imkp" / ready.name).symlink_to(ready)
    built = wordbuild.build_compiled(root / "hedge_imkp")
    assert built is not None and built.is_file(), "numba.pycc could not build the module"
    return root


@pytest.fixture(scope="session")
def aot(aot_dir: Path) -> wordtable.Kernels:
    loaded = wordtable.load_compiled(aot_dir / "hedge_imkp" / wordtable.compiled_path().name)
    assert loaded is not None and loaded.origin == "aot"
    return loaded


@pytest.fixture(autouse=True, params=["jit", "aot"])
def kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
            ) -> wordtable.Kernels:
    """Every counter of the test uses this path's kernels."""
    chosen = wordtable.jit_kernels() if request.param == "jit" else request.getfixturevalue("aot")
    monkeypatch.setattr(wordtable, "kernels", lambda: chosen)
    return chosen


def as_counter(data: bytes, seed: int = 0) -> Counter:
    keys, counts, hashes = count_words(data, seed)
    got = keys.to_pylist()
    assert len(set(got)) == len(got), "a token counted in two slots"
    assert hashes.tolist() == [murmur3_32(k, seed) for k in got]
    return Counter(dict(zip(got, counts.tolist(), strict=True)))


def reference(data: bytes) -> Counter:
    keys, counts = distinct_counts(tokenize(data))
    return Counter(dict(zip(keys.to_pylist(), counts.tolist(), strict=True)))


def test_string_tokenizer_semantics_and_hashes() -> None:
    data = TRICKY.encode()
    assert as_counter(data) == Counter(t.encode() for t in string_tokenizer(TRICKY))
    assert as_counter(data, seed=12345) == reference(data)
    assert b"epsilon\x0bzeta" in as_counter(data)  # \x0b is not a delimiter


@pytest.mark.parametrize("data", [b"", b" \t\r\n\f  \n", b"x", b"  abcdefgh", b"abcdefghi\n"])
def test_edges(data: bytes) -> None:
    assert as_counter(data) == reference(data)


def test_tokens_sharing_prefixes_hash_blocks_and_lengths() -> None:
    # Lengths 1..40 around the 4-byte Murmur3 blocks and the two 8-byte words; tokens equal
    # in their first 8 or 16 bytes but not after, and prefixes of each other.
    stems = [b"a" * n for n in range(1, 41)] + [b"abcdefgh" + bytes([c]) * 3 for c in b"xyz"]
    stems += [b"abcdefgh" + b"x" * n for n in range(0, 12)] + ["ü日🙂".encode() * 3]
    stems += [b"abcdefghijklmnop" + bytes([c]) * 3 for c in b"xyz"]
    stems += [b"abcdefghijklmnop" + b"x" * n for n in range(1, 20)]
    rng = np.random.default_rng(3)
    data = b" ".join(stems[i] for i in rng.integers(0, len(stems), 5000))
    got = as_counter(data)
    assert got == reference(data) and len(got) == len(set(stems))


def test_many_distinct_keys_grow_the_table_and_random_bytes() -> None:
    rng = np.random.default_rng(5)
    words = [f"w{i:x}".encode() * (1 + i % 5) for i in range(20_000)]  # > initial table
    data = b"\n".join(words[i] for i in rng.zipf(1.2, 60_000) % len(words))
    assert as_counter(data) == reference(data)
    # Arbitrary non-NUL bytes: every control byte, space, and bytes >= 0x80.
    noise = rng.choice(np.r_[1:40, 97:100, 200:203].astype(np.uint8), 50_000).tobytes()
    assert as_counter(noise, seed=7) == reference(noise)


def test_words_rule_counts_like_the_default_path_and_rejects_binary() -> None:
    piece = Piece("t.txt", (TRICKY * 3).encode())
    keys, counts, hashes = Words().distinct(piece, 0)
    expected, expected_counts = distinct_counts(Words().keys(piece))
    assert dict(zip(keys.to_pylist(), counts.tolist(), strict=True)) == \
        dict(zip(expected.to_pylist(), expected_counts.tolist(), strict=True))
    with pytest.raises(HedgeError, match="t.txt: invalid UTF-8.*binary file given as text"):
        Words().distinct(Piece("t.txt", b"ok \xff\xfe bad"), 0)
    with pytest.raises(HedgeError, match="t.txt: NUL byte"):
        Words().distinct(Piece("t.txt", b"ok \x00 bad"), 0)


def test_every_alignment_and_control_bytes_next_to_delimiters() -> None:
    # The scan reads 8 bytes at a time: tokens ending at every offset of an 8-byte load and
    # of the buffer's end, with control bytes (< 0x21, not delimiters) right before, after
    # and between delimiters, where the SWAR test flags more than one byte.
    rng = np.random.default_rng(11)
    alphabet = np.r_[1:34, 0x41:0x44, 0xC3, 0xA9].astype(np.uint8)
    for size in range(0, 40):
        for _ in range(20):
            data = rng.choice(alphabet, size).tobytes()
            assert as_counter(data) == reference(data), data


def test_one_counter_over_many_pieces_and_take_when_full() -> None:
    # Pieces share one table: keys seen in several pieces are counted once, long keys
    # (compared against their stored copy) included; take empties the counter.
    rng = np.random.default_rng(13)
    words = [f"k{i}".encode() * (1 + i % 4) for i in range(3000)]  # 2..20 bytes
    pieces = [b" ".join(words[i] for i in rng.integers(0, len(words), 4000)) + b"\n"
              for _ in range(5)]
    counter = WordCounter(seed=9, capacity=10**9)
    for piece in pieces:
        counter.add(piece)
    keys, counts, hashes = counter.take()
    assert dict(zip(keys.to_pylist(), counts.tolist(), strict=True)) == reference(b"".join(pieces))
    assert hashes.tolist() == [murmur3_32(k, 9) for k in keys.to_pylist()]
    assert counter.used == 0 and not counter.full
    small = WordCounter(capacity=100)
    small.add(pieces[0])
    assert small.full  # more distinct keys than the capacity: the caller must take


def test_words_counter_names_the_piece_with_bad_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = Words().counter(0, 1000)
    counter.add(Piece("good.txt", "ok ü".encode()))
    with pytest.raises(HedgeError, match="bad.txt: invalid UTF-8"):
        counter.add(Piece("bad.txt", b"ok \xff\xfe bad"))
    monkeypatch.setattr(wordtable, "PIECE_LIMIT", 8)
    with pytest.raises(HedgeError, match="big.txt: a piece of 9 bytes; pieces must be at most 8"):
        counter.add(Piece("big.txt", b"123456789"))
    keys, counts, _ = counter.take()
    assert dict(zip(keys.to_pylist(), counts.tolist(), strict=True)) == {b"ok": 1, "ü".encode(): 1}


def test_warm_cache_compiles_every_kernel_a_build_calls() -> None:
    wordbuild.warm_cache(compile_ahead=False)
    signatures = {f: set(getattr(wordcount, f).signatures)
                  for f in ("_count_into", "_rehash", "_counts")}
    assert all(signatures.values())
    # grows: nothing new to compile
    count_words(b" ".join(b"%d" % i for i in range(5000)), compiled=wordtable.jit_kernels())
    assert {f: set(getattr(wordcount, f).signatures) for f in signatures} == signatures


def test_aot_module_is_named_for_its_source_and_missing_means_jit(tmp_path: Path) -> None:
    name = wordtable.compiled_name()
    assert name.startswith(wordtable.COMPILED_PREFIX) and name == wordtable.compiled_name()
    assert wordtable.load_compiled(tmp_path / (name + ".so")) is None
    os.environ["HEDGE_IMKP_JIT"] = "1"
    try:
        assert wordtable.load_compiled() is None  # forced: the numba path
    finally:
        del os.environ["HEDGE_IMKP_JIT"]


def test_aot_module_name_follows_the_cpu_and_a_bad_file_or_folder_means_jit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = wordtable.compiled_name()
    monkeypatch.setattr(wordtable, "_host_cpu", lambda: b"another machine")
    assert wordtable.compiled_name() != name  # built for one CPU, never loaded on another
    damaged = tmp_path / (name + ".cpython-311-x86_64-linux-gnu.so")
    damaged.write_bytes(b"not a shared object")
    with pytest.warns(UserWarning, match="does not load"):
        assert wordtable.load_compiled(damaged) is None
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with pytest.warns(UserWarning, match="no ahead-of-time module"):
        assert wordbuild.build_compiled(blocked / "cache") is None


def test_aot_kernels_release_the_gil(aot: wordtable.Kernels) -> None:
    # Builder threads count pieces in parallel only if a kernel call lets other threads run:
    # while one thread counts ~40 MB, the main thread must keep running (with the GIL held
    # it would stall for the whole call).
    rng = np.random.default_rng(17)
    letters = rng.integers(97, 101, (10 << 20, 4), dtype=np.uint8)
    letters[:, 3] = 32  # 64 distinct three-letter words: one kernel call, no table growth
    data = letters.tobytes()
    counter = WordCounter(compiled=aot)
    started, stamps = threading.Event(), []
    took: list[float] = []

    def count() -> None:
        started.set()
        t = time.perf_counter()
        counter.add(data)
        took.append(time.perf_counter() - t)

    worker = threading.Thread(target=count)
    worker.start()
    started.wait()
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    gaps = np.diff(stamps) if len(stamps) > 1 else np.array([took[0]])
    assert took[0] > 0.05, "too short a call to tell"
    assert gaps.max() < 0.5 * took[0], (gaps.max(), took[0])


def test_cli_build_with_the_aot_module_does_not_import_numba(aot_dir: Path,
                                                             tmp_path: Path) -> None:
    text = tmp_path / "in.txt"
    text.write_bytes(b"the quick brown fox jumps over the lazy dog the end\n" * 50)
    script = ("import sys; from hedge.cli import main; code = main(sys.argv[1:]); "
              "print('numba' in sys.modules); sys.exit(code)")
    argv = ["imkp", "build", str(text), "-r", "3", "--threads", "2", "--no-progress",
            "-o", str(tmp_path / "m.imkp")]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(aot_dir))
    env.pop("HEDGE_IMKP_JIT", None)
    ran = subprocess.run([sys.executable, "-c", script, *argv], env=env, capture_output=True,
                         text=True, check=True)
    assert ran.stdout.splitlines()[-1] == "False", ran.stdout
    jit = subprocess.run([sys.executable, "-c", script, *argv[:-1], str(tmp_path / "j.imkp")],
                         env=dict(env, HEDGE_IMKP_JIT="1"), capture_output=True, text=True,
                         check=True)
    assert jit.stdout.splitlines()[-1] == "True"  # the forced jit path does import it
    assert (tmp_path / "m.imkp").read_bytes() == (tmp_path / "j.imkp").read_bytes()
