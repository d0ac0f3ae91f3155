"""Mapping file: round trip, the golden file JUnit also reads, and loud failures."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.imkp import mapfile
from hedge.imkp.mapfile import Mapping, decode, encode, read_mapping, write_mapping
from hedge.imkp.pack import build_mapping, lpt, refine, select_heavy

DATA = Path(__file__).resolve().parents[1] / "data"


def small_mapping() -> Mapping:
    totals = np.array([10, 0, 7, 3, 25, 1], dtype=np.int64)  # group 4 holds heavy key b"x"
    return build_mapping(totals, [b"x"], np.array([20]), np.array([4]), reducers=2, scale=3,
                         heaviest=20)


def test_round_trip_keeps_everything() -> None:
    m = small_mapping()
    back = decode(encode(m))
    assert back.reducers == 2 and back.groups == 6 and back.scale == 3
    assert back.group_reducer.tolist() == m.group_reducer.tolist()
    assert back.group_count.tolist() == [10, 0, 7, 3, 5, 1]
    assert back.heavy_keys == [b"x"] and back.heavy_count.tolist() == [20]
    assert back.total == 46 and back.heaviest_key_count == 20
    assert back.loads.tolist() == m.loads.tolist()
    assert back.lower_bound == max(23, 20)


def test_lpt_packing_by_hand() -> None:
    # items heaviest first: 20 (heavy) -> r0; 10, 7, 5 -> r1 (10, 17, 22); 3 -> r0 (23);
    # 1 -> r1 (23); the empty group -> r0
    m = small_mapping()
    assert m.heavy_reducer.tolist() == [0]
    assert m.loads.tolist() == [23, 23]
    assert lpt(np.array([5, 4, 3, 3, 2]), 2).tolist() == [0, 1, 1, 0, 1]


def test_heavy_keys_need_more_than_a_group_share_and_tie_break_by_key() -> None:
    keys = [b"b", b"a", b"c", b"d"]
    counts = np.array([30, 30, 10, 11])
    heavy, heavy_counts = select_heavy(keys, counts, total=100, groups=10, limit=3)
    assert heavy == [b"a", b"b", b"d"]  # 10 is not > 100/10
    assert heavy_counts.tolist() == [30, 30, 11]
    assert select_heavy(keys, counts, 100, 10, 0)[0] == []


def test_golden_file_matches_the_lookup_vectors_junit_checks() -> None:
    m = read_mapping(DATA / "imkp_small.imkp")
    assert (m.reducers, m.groups) == (7, 21)
    assert m.loads.tolist() == [3987, 2616, 2723, 2740, 2625, 2689, 2620]
    for line in (DATA / "imkp_small_lookup.tsv").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        key, reducer = line.split("\t")
        assert m.reducer_of(bytes.fromhex(key)) == int(reducer)


def test_atomic_write_leaves_only_the_file_and_makes_it_readable(tmp_path: Path) -> None:
    write_mapping(small_mapping(), tmp_path / "m.imkp")
    assert [p.name for p in tmp_path.iterdir()] == ["m.imkp"]
    assert os.stat(tmp_path / "m.imkp").st_mode & stat.S_IRGRP


def test_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(mapfile.os, "fsync", broken)
    with pytest.raises(OSError, match="disk full"):
        write_mapping(small_mapping(), tmp_path / "m.imkp")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b[:-3], "truncated"),
        (lambda b: b[:30], "truncated ImKP mapping file"),
        (lambda b: b"", "not an ImKP mapping file"),
        (lambda b: b + b"\0", "trailing bytes"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), r"corrupted \(checksum mismatch\)"),
        (lambda b: b[:19] + b"\x09" + b[20:], "checksum"),  # R changed in the header
        (lambda b: b[:8] + b"\x00\x02" + b[10:], "version 2, this hedge reads version 1"),
        (lambda b: b"GARBAGE!" + b[8:], "not an ImKP mapping file"),
    ],
)
def test_bad_files_fail_loudly_naming_the_file(tmp_path: Path, damage, message: str) -> None:  # noqa: ANN001
    path = tmp_path / "job.imkp"
    path.write_bytes(damage(encode(small_mapping())))
    with pytest.raises(HedgeError, match=message) as info:
        read_mapping(path)
    assert str(path) in str(info.value)
    assert "hedge imkp build" in str(info.value)


def test_missing_file_is_a_hedge_error(tmp_path: Path) -> None:
    with pytest.raises(HedgeError, match="cannot read mapping file"):
        read_mapping(tmp_path / "none.imkp")


def test_refinement_fixes_what_lpt_leaves() -> None:
    sizes = np.array([3, 3, 2, 2, 2])
    placed = lpt(sizes, 2)
    assert np.bincount(placed, weights=sizes).tolist() == [7, 5]  # LPT alone
    refine(sizes, placed, 2)
    assert np.bincount(placed, weights=sizes).tolist() == [6, 6]  # {3, 3} and {2, 2, 2}


def test_header_flags_follow_the_shared_vectors_junit_checks() -> None:
    bound = (DATA / "imkp_bound.imkp").read_bytes()
    m = decode(bound)
    assert m.heaviest_is_bound and m.heaviest_key_count == 76 and m.total == 1000
    assert m.lower_bound == 334  # ceil(1000 / 3): the bound on a key is no lower bound
    assert encode(m) == bound  # the writer sets the flag as the shared file has it
    assert not read_mapping(DATA / "imkp_small.imkp").heaviest_is_bound
    rows = [line.split("\t") for line in
            (DATA / "imkp_header_flags.tsv").read_text(encoding="utf-8").splitlines()
            if not line.startswith("#")]
    assert len(rows) == 6
    for flags, expected in rows:
        data = bound[:60] + bytes.fromhex(flags) + bound[64:]
        if expected == "reject":
            with pytest.raises(HedgeError, match=f"unknown header flags 0x{int(flags, 16):x} "):
                decode(data, "job.imkp")
        else:
            back = decode(data)
            assert back.heaviest_is_bound == (expected == "bound"), flags
            assert back.heaviest_key_count == 76
