"""The ImKP key hash and Hadoop's Text hash, checked against the vectors JUnit also reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hedge.imkp.hashing import (
    hash_partition_array,
    murmur3_32,
    murmur3_32_array,
    text_hash,
    text_hash_array,
)

VECTORS = Path(__file__).resolve().parents[1] / "data" / "imkp_hash_vectors.tsv"


def load_vectors() -> tuple[list[bytes], list[int], list[int]]:
    keys, murmur, text = [], [], []
    for line in VECTORS.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        hexkey, m, t = line.split("\t")
        keys.append(bytes.fromhex(hexkey))
        murmur.append(int(m))
        text.append(int(t))
    return keys, murmur, text


def test_reference_values_from_the_murmur3_literature() -> None:
    # Published MurmurHash3_x86_32 values (independent of our own vector file).
    assert murmur3_32("") == 0
    assert murmur3_32("", seed=1) == 0x514E28B7
    assert murmur3_32("The quick brown fox jumps over the lazy dog") == 0x2E4FF723


def test_hadoop_text_hash_by_hand() -> None:
    assert text_hash("a") == 31 * 1 + 97
    assert text_hash("ab") == 31 * (31 + 97) + 98
    # a byte >= 0x80 counts as a negative Java byte: "é" = c3 a9
    assert text_hash("é") == 31 * (31 + (0xC3 - 256)) + (0xA9 - 256)


def test_scalar_and_vectorised_hashes_match_the_shared_vectors() -> None:
    keys, murmur, text = load_vectors()
    assert len(keys) >= 100
    assert any(b >= 0x80 for k in keys for b in k), "vectors must include non-ASCII keys"
    assert [murmur3_32(k) for k in keys] == murmur
    assert [text_hash(k) for k in keys] == text
    array = pa.array(keys, type=pa.binary())
    assert murmur3_32_array(array).tolist() == murmur
    assert text_hash_array(array).tolist() == text


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string(), pa.binary()])
def test_vectorised_hash_handles_slices_and_offset_types(type_: pa.DataType) -> None:
    words = ["", "x", "héllo", "wörld", "a" * 37, "日本", "🙂🙂", "abcd"] * 3
    array = pa.array(words, type=type_).slice(5, 14)
    expected = [murmur3_32(w) for w in words[5:19]]
    assert murmur3_32_array(array).tolist() == expected


def test_hash_partition_is_hadoops_formula() -> None:
    words = ["the", "and", "Zürich", "x" * 50]
    got = hash_partition_array(pa.array(words), 7)
    assert got.tolist() == [(text_hash(w) & 0x7FFFFFFF) % 7 for w in words]
    assert np.all((got >= 0) & (got < 7))
