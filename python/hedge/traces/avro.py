"""Avro's binary encoding, decoded against the writer's schema (Avro 1.x specification).

Hadoop 3 writes job histories (``.jhist``) in this encoding by default: no container file,
just one encoded datum after another behind a schema line (see ``hedge.traces.jhist``).
A schema is compiled once into nested reader functions, each ``read(data, pos) -> (value,
pos)``. Values come out plain: a record is a dict, an enum its symbol, a union the value of
its branch (not wrapped in a ``{type: value}`` dict as in Avro's JSON encoding), bytes and
fixed are ``bytes``.

Truncated input raises ``AvroError`` naming the byte offset; callers add the file name.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

Reader = Callable[[bytes, int], tuple[object, int]]

_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")


class AvroError(ValueError):
    """The bytes do not decode against the schema (truncated, or a value out of range)."""


def read_long(data: bytes, pos: int) -> tuple[int, int]:
    """A zig-zag varint (Avro ``int`` and ``long``) at ``pos``."""
    shift = result = 0
    while True:
        if pos >= len(data):
            raise AvroError(f"byte {pos}: input ends inside a number")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise AvroError(f"byte {pos}: a number longer than 10 bytes")


def _take(data: bytes, pos: int, size: int) -> tuple[bytes, int]:
    if size < 0 or pos + size > len(data):
        raise AvroError(f"byte {pos}: {size} bytes announced, {len(data) - pos} left")
    return data[pos:pos + size], pos + size


def _read_bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    size, pos = read_long(data, pos)
    return _take(data, pos, size)


def _read_string(data: bytes, pos: int) -> tuple[str, int]:
    raw, pos = _read_bytes(data, pos)
    return raw.decode("utf-8", errors="replace"), pos


def _read_boolean(data: bytes, pos: int) -> tuple[bool, int]:
    raw, pos = _take(data, pos, 1)
    return raw != b"\x00", pos


def _fixed_width(codec: struct.Struct) -> Reader:
    def read(data: bytes, pos: int) -> tuple[float, int]:
        raw, pos = _take(data, pos, codec.size)
        return codec.unpack(raw)[0], pos
    return read


_PRIMITIVES: dict[str, Reader] = {
    "null": lambda data, pos: (None, pos),
    "boolean": _read_boolean,
    "int": read_long,
    "long": read_long,
    "float": _fixed_width(_FLOAT),
    "double": _fixed_width(_DOUBLE),
    "bytes": _read_bytes,
    "string": _read_string,
}


class Schema:
    """A compiled writer's schema: ``Schema(parsed_json).read(data, pos)``."""

    def __init__(self, schema: object) -> None:
        self._named: dict[str, Reader] = {}
        self.read: Reader = self._compile(schema, "")

    def _compile(self, schema: object, namespace: str) -> Reader:
        if isinstance(schema, list):
            return self._union([self._compile(branch, namespace) for branch in schema])
        if isinstance(schema, str):
            return _PRIMITIVES.get(schema) or self._reference(schema, namespace)
        if not isinstance(schema, dict) or "type" not in schema:
            raise AvroError(f"not an Avro schema: {str(schema)[:80]!r}")
        kind = schema["type"]
        if kind in ("record", "error", "enum", "fixed"):
            return self._named_type(schema, namespace)
        if kind == "array":
            return _blocks(self._compile(schema["items"], namespace), keyed=False)
        if kind == "map":
            return _blocks(self._compile(schema["values"], namespace), keyed=True)
        return self._compile(kind, namespace)  # {"type": "long", "logicalType": ...}

    def _named_type(self, schema: dict, namespace: str) -> Reader:
        name = str(schema["name"])
        namespace = name.rpartition(".")[0] or str(schema.get("namespace") or namespace)
        full = name if "." in name else f"{namespace}.{name}" if namespace else name
        kind = schema["type"]
        if kind == "enum":
            reader = _enum([str(s) for s in schema["symbols"]])
        elif kind == "fixed":
            size = int(schema["size"])
            reader = lambda data, pos: _take(data, pos, size)  # noqa: E731
        else:
            reader = _record([(str(f["name"]), self._compile(f["type"], namespace))
                              for f in schema["fields"]])
        self._named[full] = self._named[full.rpartition(".")[2]] = reader
        return reader

    def _reference(self, name: str, namespace: str) -> Reader:
        """A named type used by name; looked up when read, so a record may refer to itself."""
        keys = [name] if "." in name or not namespace else [f"{namespace}.{name}", name]

        def read(data: bytes, pos: int) -> tuple[object, int]:
            for key in keys:
                if key in self._named:
                    return self._named[key](data, pos)
            raise AvroError(f"the schema uses the undefined type {name!r}")
        return read

    @staticmethod
    def _union(branches: list[Reader]) -> Reader:
        def read(data: bytes, pos: int) -> tuple[object, int]:
            index, pos = read_long(data, pos)
            if not 0 <= index < len(branches):
                raise AvroError(f"byte {pos}: union branch {index} of {len(branches)}")
            return branches[index](data, pos)
        return read


def _enum(symbols: list[str]) -> Reader:
    def read(data: bytes, pos: int) -> tuple[str, int]:
        index, pos = read_long(data, pos)
        if not 0 <= index < len(symbols):
            raise AvroError(f"byte {pos}: enum symbol {index} of {len(symbols)}")
        return symbols[index], pos
    return read


def _record(fields: list[tuple[str, Reader]]) -> Reader:
    def read(data: bytes, pos: int) -> tuple[dict, int]:
        record = {}
        for name, field in fields:
            record[name], pos = field(data, pos)
        return record, pos
    return read


def _blocks(item: Reader, keyed: bool) -> Reader:
    """Arrays and maps: blocks of ``count`` items (a negative count is followed by the
    block's byte size), ended by a block of 0."""
    def read(data: bytes, pos: int) -> tuple[object, int]:
        items: list[object] = []
        while True:
            count, pos = read_long(data, pos)
            if count == 0:
                return (dict(items) if keyed else items), pos
            if count < 0:
                count = -count
                _, pos = read_long(data, pos)
            for _ in range(count):
                if keyed:
                    key, pos = _read_string(data, pos)
                    value, pos = item(data, pos)
                    items.append((key, value))
                else:
                    value, pos = item(data, pos)
                    items.append(value)
    return read
