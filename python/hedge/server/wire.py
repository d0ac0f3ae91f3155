"""The scan wire format between the Java shim and the control plane (``docs/wire-format.md``).

One request frame per speculation scan per job, one response frame back, over a plain TCP
"data channel" (Py4J only opens and closes sessions). Everything is little-endian. A request
is a fixed 88-byte header followed by packed columns, one value per attempt row:

    f64 bytes_processed, f64 input_bytes,
    i32 task, i32 attempt, i32 node, i32 start, i32 first_progress_time, i32 report,
    f32 first_progress, f32 progress, u8 task_type, u8 state, u8 speculative,

then ``f32`` run times (seconds) of the job's completed maps and reduces, then the attempts
that ended as columns ``f64`` input bytes, ``i32`` key, ``i32`` task, ``i32`` node, ``i32``
start, ``i32`` end, ``u8`` final state, ``u8`` speculative (wire version 3; version 2 sent no
task, node or input bytes, version 1 keys only), then the UTF-8 names of nodes first used
since the last answered scan, separated by ``\\n``. A delta scan (flag bit 0) carries only the
attempts changed and ended since the last scan; the session merges it into its key-indexed
table. A full snapshot carries every live attempt and every attempt that ended so far.
Times are whole milliseconds relative to the job start (Hadoop's own resolution),
``MISSING`` when unknown.
The AM only knows when a report *arrived*, so ``report`` fills both ``report_sent`` and
``report_received``.

Decoding is ``np.frombuffer`` per column (no per-row Python code); encoders for both
directions live here too so tests and benchmarks speak exactly what the shim speaks.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from hedge.errors import HedgeError
from hedge.model import Actions, AttemptState, AttemptTable

# 2: each ended attempt carries its start, end, final state and copy flag; 3: its task, node
# and input bytes too, and a full snapshot carries the job's every ended attempt
VERSION = 3
MISSING = -(2**31)  # i32 time "unknown"
NEVER_MS = 2**31 - 1  # next_scan_ms: no timed rescan (Actions.next_scan_in = inf)

# handshake: magic, version, reserved, session id, 16-byte secret
HELLO = struct.Struct("<4sHHQ16s")
HELLO_MAGIC = b"HDGH"
HELLO_REPLY = struct.Struct("<4sI")  # b"HDGA", status (0 ok, 1 refused)

# request header (88 bytes)
REQUEST = struct.Struct("<4sHHIIqqqIIIIIIIIiiII")
REQUEST_MAGIC = b"HDGS"
# response header (32 bytes); status: 0 ok, 1 input rejected (message follows); the u16 at
# offset 6 is the server's CPU time for the decision in microseconds (saturating)
RESPONSE = struct.Struct("<4sBBHIiIIII")
CPU_US_MAX = 65_535
RESPONSE_MAGIC = b"HDGR"
STATUS_OK = 0
STATUS_REJECTED = 1
FLAG_WAKE_ON_COMPLETION = 1
FLAG_DELTA = 1  # request flag: only attempts changed since the last answered scan

# (attribute, numpy dtype) in payload order; 8-byte columns first so they stay aligned
COLUMNS: tuple[tuple[str, str], ...] = (
    ("bytes_processed", "<f8"),
    ("input_bytes", "<f8"),
    ("task", "<i4"),
    ("attempt", "<i4"),
    ("node", "<i4"),
    ("start", "<i4"),
    ("first_progress_time", "<i4"),
    ("report", "<i4"),
    ("first_progress", "<f4"),
    ("progress", "<f4"),
    ("task_type", "u1"),
    ("state", "u1"),
    ("speculative", "u1"),
)
ROW_BYTES = sum(np.dtype(dtype).itemsize for _, dtype in COLUMNS)
# the ended attempts of a scan, column after column (times: ms after the job start)
ENDED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("input_bytes", "<f8"), ("key", "<i4"), ("task", "<i4"), ("node", "<i4"), ("start", "<i4"),
    ("end", "<i4"), ("state", "u1"), ("speculative", "u1"),
)
ENDED_BYTES = sum(np.dtype(dtype).itemsize for _, dtype in ENDED_COLUMNS)
# the final states an ended attempt can report
ENDED_STATES = (AttemptState.SUCCEEDED, AttemptState.KILLED, AttemptState.FAILED)
TIME_COLUMNS = ("start", "first_progress_time", "report")
assert REQUEST.size == 88 and RESPONSE.size == 32
# decode_request reads the columns by position within their dtype's block
assert [name for name, _ in COLUMNS[2:8]] == ["task", "attempt", "node", *TIME_COLUMNS]
assert [name for name, _ in ENDED_COLUMNS] == ["input_bytes", "key", "task", "node", "start",
                                               "end", "state", "speculative"]


@dataclass
class ScanRequest:
    """One decoded scan: header fields, the attempt table and the job's completed run times."""

    seq: int
    now: float  # seconds since the epoch (AM clock)
    job_start: float
    deadline: float | None
    n_maps: int
    n_reduces: int
    attempts: AttemptTable
    completed_map_runtimes: np.ndarray
    completed_reduce_runtimes: np.ndarray
    node_base: int  # index of the first new node name
    new_nodes: list[str]
    # delta scans: rows are only attempts changed since the last scan, run times only new
    # completions, `removed` the attempt keys that ended since; a full snapshot: every live
    # attempt, every completed run time, every attempt that ended so far
    delta: bool
    removed: np.ndarray
    # per removed key: final AttemptState, copy flag, start and end (seconds; NaN unknown),
    # task index, node index (-1 unknown) and input bytes (NaN unknown)
    removed_state: np.ndarray
    removed_speculative: np.ndarray
    removed_start: np.ndarray
    removed_end: np.ndarray
    removed_task: np.ndarray
    removed_node: np.ndarray
    removed_input_bytes: np.ndarray
    fallbacks: int  # scans the client decided on its own since its last answered scan
    total_slots: int  # -1: unknown to the AM
    free_slots: int


def body_size(n_rows: int, n_done_maps: int, n_done_reduces: int, node_bytes: int,
              n_removed: int = 0) -> int:
    return (n_rows * ROW_BYTES + 4 * (n_done_maps + n_done_reduces) + ENDED_BYTES * n_removed
            + node_bytes)


def _times(column: np.ndarray, start_ms: int) -> np.ndarray:
    """Seconds since the epoch of i32 ms after ``start_ms`` (one column, or several
    stacked), converted as the scan time is: whole ms first, then one product. (The job's
    start in seconds plus the column's seconds rounds otherwise: a report received in the
    scan's own millisecond came out 0.2 us after it, and the scan was refused.)"""
    seconds = (start_ms + column.astype(np.int64)) * 1e-3
    seconds[column == MISSING] = np.nan
    return seconds


def _empty(dtype: str) -> np.ndarray:
    empty = np.empty(0, dtype=dtype)
    empty.flags.writeable = False
    return empty


# what a scan without completions or ended attempts carries (most scans): shared, read-only
_NO_TIMES, _NO_KEYS, _NO_STATES, _NO_FLAGS = (_empty("f8"), _empty("i8"), _empty("u1"),
                                              _empty("?"))


def _blocks(body: bytes | bytearray | memoryview, n: int, offset: int,
            layout: tuple[tuple[str, str], ...]) -> tuple[list[np.ndarray], int]:
    """The columns ``layout`` of ``n`` rows from ``offset``, as one 2-D block (a row per
    column) per run of consecutive columns of one dtype: one ``np.frombuffer`` per block,
    and the conversions that follow are one numpy call per block. Returns (blocks, end)."""
    blocks, i = [], 0
    while i < len(layout):
        j = i
        while j < len(layout) and layout[j][1] == layout[i][1]:
            j += 1
        block = np.frombuffer(body, dtype=layout[i][1], count=n * (j - i), offset=offset)
        blocks.append(block.reshape(j - i, n))
        offset += block.nbytes
        i = j
    return blocks, offset


def decode_request(header: bytes, body: bytes | bytearray | memoryview) -> ScanRequest:
    """Decode one request (header already length-checked by the caller). HedgeError if bad.

    Every scan pays this, so columns that share a dtype and a conversion are converted as
    one block (a few numpy calls per scan, whatever the row count), and the attempt table
    is built from columns already in the model's dtypes.
    """
    (magic, version, flags, seq, body_len, now_ms, start_ms, deadline_ms, n_maps, n_reduces,
     n_rows, n_done_maps, n_done_reduces, node_base, node_bytes, fallbacks, total_slots,
     free_slots, n_removed, _reserved) = REQUEST.unpack(header)
    if magic != REQUEST_MAGIC:
        raise HedgeError(f"scan request: magic {magic!r}, expected {REQUEST_MAGIC!r}")
    if version != VERSION:
        raise HedgeError(f"scan request: wire version {version}, expected {VERSION}")
    expected = body_size(n_rows, n_done_maps, n_done_reduces, node_bytes, n_removed)
    if body_len != expected or len(body) != expected:
        raise HedgeError(f"scan request: body of {len(body)} bytes (header says {body_len}), "
                         f"expected {expected} for {n_rows} rows")
    attempts, offset = _attempts(body, n_rows, start_ms)
    done_maps = _runtimes(body, n_done_maps, offset)
    offset += 4 * n_done_maps
    done_reduces = _runtimes(body, n_done_reduces, offset)
    offset += 4 * n_done_reduces
    ended, offset = _ended(body, n_removed, offset, start_ms)
    try:
        text = bytes(body[offset:offset + node_bytes]).decode("utf-8")
    except UnicodeDecodeError:
        raise HedgeError("scan request: node names are not valid UTF-8") from None
    new_nodes = text.split("\n") if node_bytes else []
    if any(not name for name in new_nodes):
        raise HedgeError("scan request: empty node name in the node list")
    return ScanRequest(
        seq=seq, now=now_ms * 1e-3, job_start=start_ms * 1e-3,
        deadline=None if deadline_ms < 0 else deadline_ms * 1e-3,
        n_maps=n_maps, n_reduces=n_reduces, attempts=attempts,
        completed_map_runtimes=done_maps, completed_reduce_runtimes=done_reduces,
        node_base=node_base, new_nodes=new_nodes, fallbacks=fallbacks,
        total_slots=total_slots, free_slots=free_slots, delta=bool(flags & FLAG_DELTA),
        removed=ended["key"], removed_state=ended["state"],
        removed_speculative=ended["speculative"], removed_start=ended["start"],
        removed_end=ended["end"], removed_task=ended["task"], removed_node=ended["node"],
        removed_input_bytes=ended["input_bytes"],
    )


def _attempts(body: bytes | bytearray | memoryview, n: int, start_ms: int,
              ) -> tuple[AttemptTable, int]:
    """The attempt rows in the model's dtypes (the f8 columns stay views of ``body``)."""
    (floats, i32, f32, u8), offset = _blocks(body, n, 0, COLUMNS)
    ints = i32[:3].astype(np.int64)  # task, attempt, node
    times = _times(i32[3:], start_ms)  # start, first_progress_time, report
    fractions = f32.astype(np.float64)  # first_progress, progress
    codes = u8[:2].astype(np.int8)  # task_type, state (the cast AttemptTable's makes)
    # the AM only knows when a report arrived: one column for sent and received
    attempts = AttemptTable.of_columns(
        task=ints[0], attempt=ints[1], task_type=codes[0], state=codes[1], node=ints[2],
        start=times[0], first_progress_time=times[1], first_progress=fractions[0],
        progress=fractions[1], report_sent=times[2], report_received=times[2].copy(),
        bytes_processed=floats[0], input_bytes=floats[1], speculative=u8[2].astype(bool))
    return attempts, offset


def _runtimes(body: bytes | bytearray | memoryview, n: int, offset: int) -> np.ndarray:
    if n == 0:
        return _NO_TIMES
    return np.frombuffer(body, "<f4", n, offset).astype(np.float64)


def _ended(body: bytes | bytearray | memoryview, n: int, offset: int, start_ms: int,
           ) -> tuple[dict[str, np.ndarray], int]:
    """The ended attempts: key, task, node, final state (checked), copy flag, start and end
    in seconds, input bytes."""
    if n == 0:
        return {"key": _NO_KEYS, "task": _NO_KEYS, "node": _NO_KEYS, "state": _NO_STATES,
                "speculative": _NO_FLAGS, "start": _NO_TIMES, "end": _NO_TIMES,
                "input_bytes": _NO_TIMES}, offset
    (floats, i32, u8), offset = _blocks(body, n, offset, ENDED_COLUMNS)
    key, state = i32[0], u8[0]
    # states 2..4 (ENDED_STATES); a range test, np.isin costs more than a small scan
    bad = (state < min(ENDED_STATES)) | (state > max(ENDED_STATES))
    if bad.any():
        raise HedgeError(f"scan request: ended attempt {int(key[bad][0])} has final "
                         f"state {int(state[bad][0])}, expected 2 (succeeded), 3 "
                         "(killed) or 4 (failed)")
    ints = i32[:3].astype(np.int64)  # key, task, node
    times = _times(i32[3:], start_ms)  # start, end
    return {"key": ints[0], "task": ints[1], "node": ints[2], "state": state,
            "speculative": u8[1].astype(bool), "start": times[0], "end": times[1],
            "input_bytes": floats[0]}, offset


def _ms(times: np.ndarray, base: float) -> np.ndarray:
    out = np.full(len(times), MISSING, dtype="<i4")
    known = ~np.isnan(times)
    out[known] = np.rint((times[known] - base) * 1e3).astype(np.int64)
    return out


def encode_request(
    attempts: AttemptTable, *, seq: int, now: float, job_start: float, n_maps: int,
    n_reduces: int, deadline: float | None = None,
    completed_map_runtimes: np.ndarray | list[float] = (),
    completed_reduce_runtimes: np.ndarray | list[float] = (),
    node_base: int = 0, new_nodes: tuple[str, ...] | list[str] = (), fallbacks: int = 0,
    total_slots: int = -1, free_slots: int = -1, delta: bool = False,
    removed: np.ndarray | list[int] = (), removed_state: np.ndarray | list[int] | None = None,
    removed_speculative: np.ndarray | list[bool] | None = None,
    removed_start: np.ndarray | list[float] | None = None,
    removed_end: np.ndarray | list[float] | None = None,
    removed_task: np.ndarray | list[int] | None = None,
    removed_node: np.ndarray | list[int] | None = None,
    removed_input_bytes: np.ndarray | list[float] | None = None,
) -> bytes:
    """The request the shim would send for this table (Python twin of the Java encoder).

    Times are rounded to whole milliseconds relative to ``job_start`` (itself in whole ms).
    Ended attempts given by key alone are reported killed, not copies, of task 0 on an
    unknown node, with unknown start and input bytes and an end at ``now``.
    """
    start_ms = int(round(job_start * 1e3))
    base = start_ms * 1e-3
    values = {
        "bytes_processed": attempts.bytes_processed, "input_bytes": attempts.input_bytes,
        "task": attempts.task, "attempt": attempts.attempt, "node": attempts.node,
        "start": _ms(attempts.start, base),
        "first_progress_time": _ms(attempts.first_progress_time, base),
        "report": _ms(attempts.report_received, base),
        "first_progress": attempts.first_progress, "progress": attempts.progress,
        "task_type": attempts.task_type, "state": attempts.state,
        "speculative": attempts.speculative,
    }
    names = "\n".join(new_nodes).encode("utf-8")
    done_m = np.asarray(completed_map_runtimes, dtype="<f4")
    done_r = np.asarray(completed_reduce_runtimes, dtype="<f4")
    gone = np.asarray(removed, dtype="<i4")
    n = len(gone)

    def given(values, default) -> np.ndarray:
        return np.full(n, default) if values is None else np.asarray(values)

    ended = {
        "key": gone, "state": given(removed_state, AttemptState.KILLED),
        "start": _ms(given(removed_start, np.nan).astype(np.float64), base),
        "end": _ms(given(removed_end, now).astype(np.float64), base),
        "speculative": given(removed_speculative, False),
        "task": given(removed_task, 0), "node": given(removed_node, -1),
        "input_bytes": given(removed_input_bytes, np.nan),
    }
    parts = [np.ascontiguousarray(values[name], dtype=dtype).tobytes() for name, dtype in COLUMNS]
    parts += [done_m.tobytes(), done_r.tobytes()]
    parts += [np.ascontiguousarray(ended[name], dtype=dtype).tobytes()
              for name, dtype in ENDED_COLUMNS]
    body = b"".join([*parts, names])
    header = REQUEST.pack(
        REQUEST_MAGIC, VERSION, FLAG_DELTA if delta else 0, seq, len(body),
        int(round(now * 1e3)), start_ms,
        -1 if deadline is None else int(round(deadline * 1e3)), n_maps, n_reduces,
        len(attempts), len(done_m), len(done_r), node_base, len(names), fallbacks,
        total_slots, free_slots, n, 0,
    )
    return header + body


def next_scan_ms(next_scan_in: float | None) -> int:
    """Actions.next_scan_in on the wire: -1 default period, NEVER_MS for no timed rescan."""
    if next_scan_in is None:
        return -1
    if math.isinf(next_scan_in) or next_scan_in * 1e3 >= NEVER_MS:
        return NEVER_MS
    return max(0, int(round(next_scan_in * 1e3)))


def cpu_micros(cpu_seconds: float) -> int:
    """The response's server CPU field: whole microseconds, saturating at 65,535."""
    return min(CPU_US_MAX, max(0, int(round(cpu_seconds * 1e6))))


def encode_response(seq: int, actions: Actions, cpu_seconds: float = 0.0) -> bytes:
    """An OK response carrying copies (task, copies, preferred node) and kills, and the
    server's CPU time for the decision (informational)."""
    n, k = len(actions.speculate_task), len(actions.kill_attempt)
    flags = FLAG_WAKE_ON_COMPLETION if actions.wake_on_completion else 0
    header = RESPONSE.pack(RESPONSE_MAGIC, STATUS_OK, 0, cpu_micros(cpu_seconds), seq,
                           next_scan_ms(actions.next_scan_in), flags, n, k, 0)
    arrays = (actions.speculate_task, actions.speculate_copies, actions.prefer_node,
              actions.kill_attempt)
    return header + b"".join(np.asarray(a, dtype="<i4").tobytes() for a in arrays)


def encode_rejection(seq: int, message: str) -> bytes:
    """A response telling the client its input was refused (it falls back for this scan)."""
    text = message.encode("utf-8")[:4096]
    return RESPONSE.pack(RESPONSE_MAGIC, STATUS_REJECTED, 0, 0, seq, -1, 0, 0, 0,
                         len(text)) + text


@dataclass
class ScanResponse:
    status: int
    seq: int
    next_scan_ms: int
    wake_on_completion: bool
    speculate_task: np.ndarray
    speculate_copies: np.ndarray
    prefer_node: np.ndarray
    kill_attempt: np.ndarray
    message: str
    server_cpu_us: int = 0


def decode_response(data: bytes) -> ScanResponse:
    """Decode a response (the Java client's job; here for tests and benchmarks)."""
    magic, status, _, cpu_us, seq, next_ms, flags, n, k, msg_len = RESPONSE.unpack_from(data, 0)
    if magic != RESPONSE_MAGIC:
        raise HedgeError(f"scan response: magic {magic!r}, expected {RESPONSE_MAGIC!r}")
    ints = np.frombuffer(data, "<i4", 3 * n + k, RESPONSE.size)
    end = RESPONSE.size + 4 * (3 * n + k)
    return ScanResponse(
        status=status, seq=seq, next_scan_ms=next_ms,
        wake_on_completion=bool(flags & FLAG_WAKE_ON_COMPLETION),
        speculate_task=ints[:n], speculate_copies=ints[n:2 * n], prefer_node=ints[2 * n:3 * n],
        kill_attempt=ints[3 * n:], message=data[end:end + msg_len].decode("utf-8"),
        server_cpu_us=cpu_us,
    )
