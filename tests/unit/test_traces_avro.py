"""Avro's binary encoding (hedge.traces.avro), against bytes written out by hand from the
specification's examples and rules."""

from __future__ import annotations

import pytest

from hedge.traces.avro import AvroError, Schema, read_long


@pytest.mark.parametrize(("encoded", "value"), [
    (b"\x00", 0), (b"\x01", -1), (b"\x02", 1), (b"\x7f", -64), (b"\x80\x01", 64),
    (b"\xfe\xff\xff\xff\x0f", 2**31 - 1), (b"\xff\xff\xff\xff\x0f", -(2**31)),
])
def test_zigzag_varints_from_the_specification(encoded, value):
    assert read_long(encoded, 0) == (value, len(encoded))


def test_a_record_of_every_primitive_type():
    schema = Schema({"type": "record", "name": "R", "fields": [
        {"name": "n", "type": "null"}, {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"}, {"name": "f", "type": "float"},
        {"name": "d", "type": "double"}, {"name": "raw", "type": "bytes"},
        {"name": "s", "type": "string"}]})
    data = (b"\x01" + b"\x04" + b"\x00\x00\xc0\x3f" + b"\x00\x00\x00\x00\x00\x00\x04\xc0"
            + b"\x04\x00\xff" + b"\x06foo")
    assert schema.read(data, 0) == ({"n": None, "b": True, "i": 2, "f": 1.5, "d": -2.5,
                                     "raw": b"\x00\xff", "s": "foo"}, len(data))


def test_arrays_and_maps_in_blocks_including_sized_ones():
    array = Schema({"type": "array", "items": "long"})
    # two blocks: 2 items, then -1 item with its byte size (1), then the end block
    assert array.read(b"\x04\x06\x24\x01\x02\x08\x00", 0) == ([3, 18, 4], 7)
    mapping = Schema({"type": "map", "values": "string"})
    assert mapping.read(b"\x02\x02a\x02x\x00", 0) == ({"a": "x"}, 6)


def test_unions_enums_fixed_and_named_references():
    schema = Schema({"type": "record", "name": "Node", "namespace": "t", "fields": [
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "id", "type": {"type": "fixed", "name": "Id", "size": 2}},
        {"name": "again", "type": ["null", "Kind"]},
        {"name": "next", "type": ["null", "t.Node"]}]})
    inner = b"\x00" + b"ab" + b"\x00" + b"\x00"           # A, 'ab', null, null
    outer = b"\x02" + b"cd" + b"\x02\x02" + b"\x02" + inner  # B, 'cd', B, the inner node
    value, end = schema.read(outer, 0)
    assert end == len(outer)
    assert value == {"kind": "B", "id": b"cd", "again": "B",
                     "next": {"kind": "A", "id": b"ab", "again": None, "next": None}}


@pytest.mark.parametrize(("schema", "data", "message"), [
    ("long", b"\x80\x80", "byte 2: input ends inside a number"),
    ("string", b"\x0aab", "byte 1: 5 bytes announced, 2 left"),
    (["null", "int"], b"\x04", "union branch 2 of 2"),
    ({"type": "enum", "name": "E", "symbols": ["X"]}, b"\x02", "enum symbol 1 of 1"),
    ("Missing", b"\x00", "undefined type 'Missing'"),
])
def test_bad_bytes_are_named_with_their_offset(schema, data, message):
    with pytest.raises(AvroError, match=message):
        Schema(schema).read(data, 0)
