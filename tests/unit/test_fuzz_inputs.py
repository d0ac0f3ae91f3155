"""Bad-input suite, the non-trace readers (issue 20): ImKP mapping files (`hedge imkp show`,
`lookup`), CSV task histories (`hedge nodes rank`), settings files (`hedge serve --check`)
and scan wire frames (`wire.decode_request`). Each mutated or generated input must end in
exit 0 with sane output or exit 2 with one line naming the file (HedgeError for frames).
See tests/fuzz_support.py."""

from __future__ import annotations

import struct
import tempfile
import zlib
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hedge.errors import HedgeError
from hedge.imkp.mapfile import CHECKSUM_AT, HEADER
from hedge.model import AttemptTable
from hedge.server import wire
from tests.fuzz_support import (
    BINARY_OPS,
    FUZZ,
    TEST_DATA,
    TEXT_OPS,
    judge,
    mutate,
    mutations,
    run_cli,
)


def _folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="hedge-fuzz-"))


# ------------------------------------------------------------------------ ImKP mappings

IMKP = (TEST_DATA / "imkp_small.imkp").read_bytes()
# bits of each HEADER field (0: the magic); the checksum (11) is resealed instead
HEADER_BITS = [0, 16, 16, 32, 32, 32, 32, 32, 64, 64, 64, 32, 32]
HEADER_FIELDS = [n for n in range(1, 13) if n != 11]
EXTREMES = [0, 1, 2, 7, 255, 2**16 - 1, 2**31, 2**32 - 1, 2**63, 2**64 - 1]


def resealed(data: bytes) -> bytes:
    """The file with its CRC-32 recomputed, so that a damaged field reaches the checks
    behind the checksum."""
    if len(data) < HEADER.size:
        return data
    crc = zlib.crc32(data[HEADER.size:], zlib.crc32(data[:CHECKSUM_AT]))
    return data[:CHECKSUM_AT] + struct.pack(">I", crc) + data[CHECKSUM_AT + 4:]


@st.composite
def imkp_file(draw) -> bytes:
    data = mutate(IMKP, "binary", draw(mutations(BINARY_OPS, max_size=2)))
    if draw(st.booleans()) and len(data) >= HEADER.size:  # a header field out of range
        fields = list(HEADER.unpack_from(data))
        k = draw(st.sampled_from(HEADER_FIELDS))
        fields[k] = draw(st.sampled_from(EXTREMES)) % (1 << HEADER_BITS[k])
        data = HEADER.pack(*fields) + data[HEADER.size:]
    return resealed(data) if draw(st.booleans()) else data


def test_mutated_imkp_mapping() -> None:
    folder = _folder()
    path = folder / "fuzz.imkp"

    @settings(FUZZ, max_examples=60)
    @given(data=imkp_file(), lookup=st.booleans())
    def run(data, lookup):
        path.write_bytes(data)
        argv = ["imkp", "lookup", str(path), "the", "\u00e9t\u00e9", ""] if lookup \
            else ["imkp", "show", str(path), "--json"]
        problem = judge(run_cli(argv), [path.name], json_out=not lookup)
        assert problem is None, f"{argv[:2]} {data!r}: {problem}"

    run()


# ------------------------------------------------------------------- CSV task histories

HISTORY = "job,task,attempt,node,start,end,state\n" + "".join(
    f"j{j},t{t},a{t}_{k},h{(t + k) % 4},{10 * t + k},{10 * t + k + 5 + t % 3},"
    f"{'SUCCEEDED' if k == 0 else 'KILLED'}\n"
    for j in range(2) for t in range(6) for k in range(2))


def test_mutated_task_history() -> None:
    folder = _folder()
    path = folder / "history.csv"

    @settings(FUZZ, max_examples=50)
    @given(muts=mutations(TEXT_OPS))
    def run(muts):
        path.write_bytes(mutate(HISTORY.encode(), "text:,", muts))
        problem = judge(run_cli(["nodes", "rank", str(path), "--json"]), [path.name], True)
        assert problem is None, f"{muts}: {problem}"

    run()


# -------------------------------------------------------------------------- settings

SETTINGS = """[server]
address = 127.0.0.1:25334
data_port = 25335
policy = adaptive
allowed_policies =
metrics_interval = 60
nodes_status =

[cluster]
resourcemanager =
poll_interval = 10
max_age = 60

[imkp]
mappings =

[limits]
max_sessions = 1000
max_rows = 200000
max_nodes = 100000
max_copies = 16
idle_timeout = 900

[policy.adaptive]
progress.standard = 0.5
estimator = rate
"""


def test_mutated_settings_file() -> None:
    folder = _folder()
    path, token = folder / "hedge.ini", folder / "token"
    token.write_text("0123456789abcdef0123\n")
    token.chmod(0o600)

    @settings(FUZZ, max_examples=50)
    @given(muts=mutations(TEXT_OPS))
    def run(muts):
        data = mutate(SETTINGS.encode(), "text:=", muts)
        # a mutation must not turn the ResourceManager into an address --check would probe
        data = data.replace(b"http", b"htxp")
        path.write_bytes(data)
        outcome = run_cli(["serve", "--check", "--config", str(path), "--token-file",
                           str(token)])
        problem = judge(outcome, [path.name, "policy", "--config"])
        assert problem is None, f"{muts} {data!r}: {problem}"

    run()


# -------------------------------------------------------------------------- wire frames

def frame(n: int = 3) -> bytes:
    start = 1000.0 + np.arange(n)
    table = AttemptTable(
        task=np.arange(n), attempt=np.arange(n) + 100, task_type=np.zeros(n),
        state=np.ones(n), node=np.arange(n) % 2, start=start,
        first_progress_time=start + 2.5, first_progress=np.full(n, 0.125),
        progress=np.linspace(0.25, 0.75, n), report_sent=start + 5.0,
        report_received=start + 5.0, bytes_processed=np.full(n, 1e9),
        input_bytes=np.full(n, np.nan), speculative=np.arange(n) == 2)
    return wire.encode_request(table, seq=7, now=1010.0, job_start=999.5, n_maps=n,
                               n_reduces=1, completed_map_runtimes=[12.5],
                               new_nodes=["h1", "h2"], removed=[5])


FRAME = frame()
U32_FIELDS = [3, 4, 8, 9, 10, 11, 12, 13, 14, 15, 18, 19]  # counts and lengths in REQUEST


def decode(data: bytes) -> None:
    """decode_request as the server calls it: an 88-byte header, then the body."""
    header, body = data[:wire.REQUEST.size], data[wire.REQUEST.size:]
    if len(header) < wire.REQUEST.size:
        return  # the server reads exactly 88 bytes before decoding
    wire.decode_request(header, body)


@st.composite
def wire_frame(draw) -> bytes:
    data = mutate(FRAME, "binary", draw(mutations(BINARY_OPS, max_size=2)))
    if draw(st.booleans()) and len(data) >= wire.REQUEST.size:
        fields = list(wire.REQUEST.unpack_from(data))
        k = draw(st.sampled_from(U32_FIELDS))
        fields[k] = draw(st.sampled_from(EXTREMES)) % (1 << 32)
        body = data[wire.REQUEST.size:]
        size = wire.body_size(fields[10], fields[11], fields[12], fields[14], fields[18])
        if draw(st.booleans()) and size < 1 << 20:  # lengths that agree: decoding goes on
            fields[4], body = size, body[:size].ljust(size, b"\x00")
        data = wire.REQUEST.pack(*fields) + body
    return data


def test_decode_request_on_mutated_and_random_frames() -> None:
    decode(FRAME)  # the unmutated frame decodes

    @settings(FUZZ, max_examples=300)
    @given(data=st.one_of(wire_frame(), st.binary(min_size=88, max_size=300)))
    def run(data):
        try:
            decode(data)
        except HedgeError as exc:
            assert str(exc).startswith("scan request: ") and "\n" not in str(exc)

    run()

