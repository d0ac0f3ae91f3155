"""A real `hedge serve` process under bad connections: a burst of garbage and wrong tokens is
a bounded number of one-line warnings (no traceback); silent sockets are closed after the
authentication deadline, their number is capped (the oldest evicted), and an AM-harness job
meanwhile still gets its straggler copied by hedge, not by the fallback."""

from __future__ import annotations

import socket
import time

import pytest

from tests.integration.plugin_support import (
    ServeProcess,
    harness_args,
    require_harness,
    run_harness,
    write_token,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def serve_with_limits(tmp_path, limits: str) -> ServeProcess:  # noqa: ANN001
    settings = tmp_path / "hedge.ini"
    settings.write_text(f"[limits]\n{limits}\n")
    token = write_token(tmp_path / "token")
    return ServeProcess(token, tmp_path / "serve.log", extra=("--config", str(settings))).start()


def test_a_burst_of_bad_connections_is_bounded_one_line_warnings(tmp_path) -> None:
    serve = serve_with_limits(tmp_path, "auth_timeout = 2")
    try:
        for i in range(40):
            port = serve.port if i % 4 else serve.data_port
            payload = (b"A\nnot-the-token-at-all\ne\n" if i % 2 else b"\x16\x03\x01garbage\n")
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(payload)
                while sock.recv(4096):
                    pass
    finally:
        serve.stop()
    log = serve.log.read_text()
    assert "Traceback" not in log
    lines = [line for line in log.splitlines() if "event=connection_failed " in line]
    # 40 failures of 3 (channel, kind) pairs: at most 10 lines each per minute
    assert 20 <= len(lines) <= 30, log[-3000:]
    assert all("peer=127.0.0.1:" in line for line in lines)
    assert any("wrong token" in line for line in lines)
    assert any("a TLS client on a plain listener" in line for line in lines)
    assert len(log.splitlines()) < 40  # and nothing else per connection


def test_silent_sockets_are_closed_capped_and_a_job_still_works(tmp_path) -> None:
    require_harness()
    serve = serve_with_limits(tmp_path, "auth_timeout = 3\nmax_unauthenticated = 20")
    silent: list[socket.socket] = []
    try:
        for port in (serve.port, serve.data_port):
            silent += [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
        opened = time.monotonic()
        run = run_harness(harness_args(f"127.0.0.1:{serve.port}", serve.token_file,
                                       "--maps", "12", "--straggler", "5:4"))
        for sock in silent:  # every one closed by the server: refused or past the deadline
            sock.settimeout(max(0.1, opened + 6 - time.monotonic()))
            while sock.recv(4096):
                pass
    finally:
        for sock in silent:
            sock.close()
        serve.stop()
    assert [task for _, task in run.copies()] == [5], run.stdout
    assert run.done()[0]["fallback_copies"] == "0"
    log = serve.log.read_text()
    for channel in ("py4j", "data"):
        assert log.count(f"channel={channel} ") >= 10  # rate-limited lines of 30 failures
    assert "to admit a newer connection: [limits] max_unauthenticated = 20" in log
    assert "nothing received within the 3 s [limits] auth_timeout" in log
    assert "Traceback" not in log
