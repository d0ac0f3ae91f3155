"""hedge serve's connection hygiene in-process: rate-limited failure lines, the authentication
deadline and caps of both listeners, TLS on the data channel and its settings."""

from __future__ import annotations

import logging
import socket
import ssl
import time

import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.server import wire
from hedge.server.connections import ConnectionGate, FailureLog
from hedge.server.service import ControlPlaneService, EntryPoint, ServerConfig
from hedge.server.settings import load_settings
from tests.tls_support import make_certificate
from tests.unit.test_server_service import TOKEN, exchange, frame


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_failure_lines_are_rate_limited_per_kind_then_counted(caplog) -> None:
    clock = Clock()
    failures = FailureLog(limit=3, window=60.0, clock=clock)
    with caplog.at_level(logging.WARNING, logger="hedge.server"):
        for port in range(10):
            failures.failed("py4j", ("10.0.0.1", port), "wrong_token", "wrong token")
        failures.failed("py4j", ("10.0.0.2", 7), "timeout", "nothing received")
        clock.now = 59.0
        failures.flush()
        assert len(caplog.messages) == 4  # 3 wrong tokens + 1 timeout, nothing summarised yet
        clock.now = 61.0
        failures.flush()
    lines = caplog.messages
    assert lines[0] == "event=connection_failed channel=py4j peer=10.0.0.1:0 reason='wrong token'"
    assert lines[-1] == ("event=connection_failed_suppressed channel=py4j kind=wrong_token "
                         "count=7 window_s=60")
    assert len(lines) == 5


@pytest.fixture()
def guarded():
    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static",
                                           auth_timeout=0.5, max_unauthenticated=4,
                                           max_connections=6))
    svc.start()
    yield svc
    svc.stop()


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (reads to end of file)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    return True


@pytest.mark.parametrize("listener", ["py4j", "data"])
def test_silent_connections_are_closed_after_the_deadline_and_capped(guarded, caplog,
                                                                     listener) -> None:
    port = guarded.port if listener == "py4j" else guarded.data_port
    with caplog.at_level(logging.WARNING, logger="hedge.server"):
        silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
        time.sleep(0.2)
        early = [_closed_within(sock, 0.01) for sock in silent]
        assert early == [True, True, False, False, False, False]  # the oldest two evicted
        assert all(_closed_within(sock, 2.0) for sock in silent)  # the 0.5 s deadline
        time.sleep(0.1)  # the last line is written as its socket closes
    text = "\n".join(caplog.messages)
    assert text.count(f"channel={listener} ") == 6
    assert text.count("to admit a newer connection: [limits] max_unauthenticated = 4") == 2
    assert text.count("nothing received within the 0.5 s [limits] auth_timeout") == 4
    for sock in silent:
        sock.close()


def test_garbage_and_wrong_tokens_are_one_line_each_without_traceback(guarded, caplog) -> None:
    with caplog.at_level(logging.INFO):
        for payload in (b"GET / HTTP/1.0\r\n\r\n", b"A\nnot-the-token\ne\n", b"\x00" * 40):
            for port in (guarded.port, guarded.data_port):
                with socket.create_connection(("127.0.0.1", port)) as sock:
                    sock.sendall(payload)
                    _closed_within(sock, 5.0)
    failed = [r for r in caplog.records if "event=connection_failed" in r.getMessage()]
    assert len(failed) == 6 and not any(r.exc_info for r in caplog.records)
    assert "wrong token" in "\n".join(r.getMessage() for r in failed)


def test_an_authenticated_data_connection_is_not_cut_by_the_auth_deadline(guarded) -> None:
    ok, sid, secret, _, _ = EntryPoint(guarded).open("job_1", "", "factor=1.5").split()
    sock = socket.create_connection(("127.0.0.1", guarded.data_port), timeout=5)
    sock.sendall(wire.HELLO.pack(wire.HELLO_MAGIC, wire.VERSION, 0, int(sid),
                                 bytes.fromhex(secret)))
    assert wire.HELLO_REPLY.unpack(sock.recv(wire.HELLO_REPLY.size))[1] == 0
    time.sleep(0.8)  # past the 0.5 s authentication deadline
    assert exchange(sock, frame()).speculate_task.tolist() == [3]
    assert guarded._data.gate.unauthenticated == 0 and guarded._data.gate.open == 1
    sock.close()


def test_a_tls_data_channel_answers_scans_and_refuses_plain_clients(tmp_path, caplog) -> None:
    cert, key = make_certificate(tmp_path)
    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static",
                                           tls_cert=str(cert), tls_key=str(key)))
    svc.start()
    try:
        ok, sid, secret, _, _ = EntryPoint(svc).open("job_1", "", "factor=1.5").split()
        hello = wire.HELLO.pack(wire.HELLO_MAGIC, wire.VERSION, 0, int(sid),
                                bytes.fromhex(secret))
        context = ssl.create_default_context(cafile=str(cert))
        raw = socket.create_connection(("127.0.0.1", svc.data_port), timeout=5)
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
            sock.sendall(hello)
            assert wire.HELLO_REPLY.unpack(sock.recv(wire.HELLO_REPLY.size))[1] == 0
            assert exchange(sock, frame()).speculate_task.tolist() == [3]
        with caplog.at_level(logging.WARNING, logger="hedge.server"), \
                socket.create_connection(("127.0.0.1", svc.data_port), timeout=5) as plain:
            plain.sendall(hello)
            assert plain.recv(100) == b""  # refused: no hello reply in clear text
    finally:
        svc.stop()
    assert "a plain (non-TLS) client on a TLS listener" in caplog.text


# --- settings -----------------------------------------------------------------------------
def _settings(tmp_path, text: str):
    path = tmp_path / "hedge.ini"
    path.write_text(text)
    return load_settings(path)[0]


def test_tls_and_connection_settings_are_read(tmp_path) -> None:
    cert, key = make_certificate(tmp_path)
    config = _settings(tmp_path, f"[server]\ntls_cert = {cert}\ntls_key = {key}\n"
                                 "[limits]\nauth_timeout = 2.5\nmax_connections = 300\n"
                                 "max_unauthenticated = 20\nmax_sessions = 9\n")
    assert (config.tls_cert, config.tls_key) == (str(cert), str(key))
    assert (config.auth_timeout, config.max_connections, config.max_unauthenticated,
            config.limits.max_sessions) == (2.5, 300, 20, 9)


@pytest.mark.parametrize(("case", "expected"), [
    ("cert_only", "[server] tls_cert is set but tls_key is not"),
    ("missing", "[server] tls_cert = {missing}: cannot read it: No such file or directory"),
    ("not_pem", "[server] tls_cert = {junk}: not a PEM certificate"),
    ("key_not_pem", "[server] tls_key = {junk}: not a PEM private key"),
    ("other_key", "cannot be used together"),
    ("auth_timeout", "[limits] auth_timeout = '0': expected seconds in [0.1, 3600]"),
    ("max_connections", "[limits] max_connections = 'many': expected an integer in"),
])
def test_bad_tls_or_connection_settings_are_one_line(tmp_path, case, expected) -> None:
    cert, key = make_certificate(tmp_path)
    _, other_key = make_certificate(tmp_path, "other")
    junk = tmp_path / "junk.pem"
    junk.write_text("hello\n")
    missing = tmp_path / "missing.pem"
    server = {"cert_only": f"tls_cert = {cert}", "missing": f"tls_cert = {missing}\n"
              f"tls_key = {key}", "not_pem": f"tls_cert = {junk}\ntls_key = {key}",
              "key_not_pem": f"tls_cert = {cert}\ntls_key = {junk}",
              "other_key": f"tls_cert = {cert}\ntls_key = {other_key}"}.get(case, "")
    limits = {"auth_timeout": "auth_timeout = 0",
              "max_connections": "max_connections = many"}.get(case, "")
    with pytest.raises(HedgeError) as error:
        _settings(tmp_path, f"[server]\n{server}\n[limits]\n{limits}\n")
    assert expected.format(missing=missing, junk=junk) in str(error.value)
    assert "\n" not in str(error.value)


def test_check_reports_tls(tmp_path, capsys) -> None:
    cert, key = make_certificate(tmp_path)
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    assert main(["serve", "--token-file", str(token), "--tls-cert", str(cert), "--tls-key",
                 str(key), "--check"]) == 0
    assert f"tls: {cert} (key {key})" in capsys.readouterr().out
    assert main(["serve", "--token-file", str(token), "--tls-cert", str(cert), "--check"]) == 2
    assert "TLS needs both a certificate and its key" in capsys.readouterr().err


def test_the_connection_cap_refuses_and_the_oldest_waiting_one_is_evicted() -> None:
    gate = ConnectionGate("data", max_connections=3, max_unauthenticated=2,
                          auth_timeout=1.0, failures=FailureLog())
    pairs = [socket.socketpair() for _ in range(4)]
    socks = [a for a, _ in pairs]
    assert gate.admit(socks[0]) is None and gate.admit(socks[1]) is None
    assert gate.admit(socks[2]) is None  # evicts socks[0]: its peer sees the end at once
    assert pairs[0][1].recv(1) == b"" and gate.unauthenticated == 2
    gate.authenticated(socks[1])
    assert gate.admit(socks[3]) == ("too many connections: 3 open, the limit is [limits] "
                                    "max_connections = 3")
    gate.release(socks[0])
    assert gate.admit(socks[3]) is None and gate.open == 3
    for a, b in pairs:
        a.close()
        b.close()
