"""Writes tests/data/wire_request_vectors.tsv: scan request frames as the shim must encode
them (docs/wire-format.md), which pytest (tests/unit/test_shared_vectors.py: hedge.server.wire
encodes each case to these bytes and decodes them back) and JUnit (org.hedge.shim.
WireFormatTest: WireFormat.encode of the same Scan gives these bytes) both check. Regenerate
after changing the layout:

    .venv/bin/python -m tests.wire_vectors

Each case is written with the Java Scan's field names, ``name=value`` separated by spaces;
lists comma-separated; ``M`` is the wire's MISSING time; node names joined by ``|``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hedge.model import AttemptTable
from hedge.server import wire
from tests.vector_files import render, write

VECTORS = Path(__file__).resolve().parent / "data" / "wire_request_vectors.tsv"
HEADER = """\
# Scan request frames shared by pytest (tests/unit/test_shared_vectors.py) and JUnit
# (org.hedge.shim.WireFormatTest); written by tests/wire_vectors.py with hedge.server.wire.
# One frame per line, tab-separated: a name, the scan as the Java Scan's fields (name=value,
# space-separated; lists comma-separated; M = MISSING time; node names joined by |), and the
# frame's bytes in hex.
"""
COLUMNS = ("name", "scan", "frame_hex")
JOB_START_MS = 1_000_000_000

# (name, fields): a full snapshot of two rows and the attempt that ended before it (a full
# snapshot carries every ended attempt), a delta naming ended attempts (a copy that won, its
# original killed with it, a failure whose start and node are unknown), an empty delta
CASES: list[tuple[str, dict[str, str]]] = [
    ("full_two_rows", {
        "seq": "7", "nowMs": "1000060000", "deadlineMs": "-1", "nMaps": "2", "nReduces": "1",
        "nodeBase": "0", "fallbacks": "0", "totalSlots": "-1", "freeSlots": "-1", "delta": "0",
        "task": "0,2", "attempt": "10,11", "node": "0,-1", "start": "1500,M",
        "firstProgressTime": "4000,M", "report": "59000,M", "firstProgress": "0.125,0",
        "progress": "0.5,0", "bytesProcessed": "64,nan", "inputBytes": "nan,nan",
        "taskType": "0,1", "state": "1,1", "speculative": "0,1", "doneMapRuntimes": "12.5",
        "doneReduceRuntimes": "", "removed": "4", "removedTask": "1", "removedNode": "0",
        "removedStart": "1000", "removedEnd": "13500", "removedState": "2",
        "removedSpeculative": "0", "removedInputBytes": "nan", "nodes": "h1"}),
    ("delta_with_ended", {
        "seq": "8", "nowMs": "1000075000", "deadlineMs": "1000900000", "nMaps": "4",
        "nReduces": "2", "nodeBase": "1", "fallbacks": "3", "totalSlots": "16", "freeSlots": "2",
        "delta": "1", "task": "5", "attempt": "14", "node": "1", "start": "70000",
        "firstProgressTime": "M", "report": "74000", "firstProgress": "0", "progress": "0.25",
        "bytesProcessed": "1048576", "inputBytes": "nan", "taskType": "1", "state": "1",
        "speculative": "0", "doneMapRuntimes": "60.25,61", "doneReduceRuntimes": "",
        "removed": "3,12,9", "removedTask": "2,2,0", "removedNode": "0,2,-1",
        "removedStart": "1000,52000,M", "removedEnd": "73000,73000,41000",
        "removedState": "3,2,4", "removedSpeculative": "0,1,0",
        "removedInputBytes": "134217728,134217728,nan", "nodes": "h2|h3"}),
    ("empty_delta", {
        "seq": "9", "nowMs": "1000076000", "deadlineMs": "-1", "nMaps": "4", "nReduces": "2",
        "nodeBase": "3", "fallbacks": "0", "totalSlots": "-1", "freeSlots": "-1", "delta": "1",
        "task": "", "attempt": "", "node": "", "start": "", "firstProgressTime": "", "report": "",
        "firstProgress": "", "progress": "", "bytesProcessed": "", "inputBytes": "",
        "taskType": "", "state": "", "speculative": "", "doneMapRuntimes": "",
        "doneReduceRuntimes": "", "removed": "", "removedTask": "", "removedNode": "",
        "removedStart": "", "removedEnd": "", "removedState": "", "removedSpeculative": "",
        "removedInputBytes": "", "nodes": ""}),
]


def numbers(text: str) -> np.ndarray:
    """A comma-separated list; M (MISSING) and nan become NaN."""
    return np.array([np.nan if v in ("M", "nan") else float(v)
                     for v in text.split(",") if v], dtype=np.float64)


def seconds(text: str) -> np.ndarray:
    """Relative ms (M: unknown) -> seconds since the epoch, as hedge.server.wire takes them."""
    return (JOB_START_MS + numbers(text)) / 1e3


def encode(f: dict[str, str]) -> bytes:
    """The frame hedge.server.wire encodes for these Scan fields."""
    report = seconds(f["report"])
    table = AttemptTable(
        task=numbers(f["task"]), attempt=numbers(f["attempt"]), task_type=numbers(f["taskType"]),
        state=numbers(f["state"]), node=numbers(f["node"]), start=seconds(f["start"]),
        first_progress_time=seconds(f["firstProgressTime"]),
        first_progress=numbers(f["firstProgress"]), progress=numbers(f["progress"]),
        report_sent=report, report_received=report,
        bytes_processed=numbers(f["bytesProcessed"]), input_bytes=numbers(f["inputBytes"]),
        speculative=numbers(f["speculative"]).astype(bool))
    deadline = int(f["deadlineMs"])
    return wire.encode_request(
        table, seq=int(f["seq"]), now=int(f["nowMs"]) / 1e3, job_start=JOB_START_MS / 1e3,
        n_maps=int(f["nMaps"]), n_reduces=int(f["nReduces"]),
        deadline=None if deadline < 0 else deadline / 1e3,
        completed_map_runtimes=numbers(f["doneMapRuntimes"]),
        completed_reduce_runtimes=numbers(f["doneReduceRuntimes"]),
        node_base=int(f["nodeBase"]), new_nodes=f["nodes"].split("|") if f["nodes"] else [],
        fallbacks=int(f["fallbacks"]), total_slots=int(f["totalSlots"]),
        free_slots=int(f["freeSlots"]), delta=f["delta"] == "1",
        removed=numbers(f["removed"]).astype(int),
        removed_state=numbers(f["removedState"]).astype(int),
        removed_speculative=numbers(f["removedSpeculative"]).astype(bool),
        removed_start=seconds(f["removedStart"]), removed_end=seconds(f["removedEnd"]),
        removed_task=numbers(f["removedTask"]).astype(int),
        removed_node=numbers(f["removedNode"]).astype(int),
        removed_input_bytes=numbers(f["removedInputBytes"]))


def line(case: tuple[str, dict[str, str]]) -> str:
    name, fields = case
    scan = " ".join(f"{k}={v}" for k, v in fields.items())
    return f"{name}\t{scan}\t{encode(fields).hex()}"


def text() -> str:
    return render(HEADER, COLUMNS, line, CASES)


if __name__ == "__main__":
    write(VECTORS, text())
