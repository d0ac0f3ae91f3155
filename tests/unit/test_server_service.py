"""The control-plane service over real sockets (Python client), settings and `serve --check`."""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.model import AttemptTable
from hedge.policy.detectors import StaticPolicy
from hedge.server import wire
from hedge.server.service import ControlPlaneService, EntryPoint, ServerConfig
from hedge.server.settings import load_settings
from tests.unit.test_server_session import straggler_request

TOKEN = "0123456789abcdef-test-token"


@pytest.fixture()
def service():
    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static"))
    svc.start()
    yield svc
    svc.stop()


def connect(svc: ControlPlaneService, session_id: int, secret: bytes) -> tuple[socket.socket, int]:
    sock = socket.create_connection(("127.0.0.1", svc.data_port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(wire.HELLO.pack(wire.HELLO_MAGIC, wire.VERSION, 0, session_id, secret))
    magic, status = wire.HELLO_REPLY.unpack(sock.recv(wire.HELLO_REPLY.size))
    assert magic == b"HDGA"
    return sock, status


def exchange(sock: socket.socket, frame: bytes) -> wire.ScanResponse:
    sock.sendall(frame)
    head = b""
    while len(head) < wire.RESPONSE.size:
        head += sock.recv(wire.RESPONSE.size - len(head))
    n, k, msg = struct.unpack_from("<III", head, 20)
    rest = b""
    while len(rest) < 4 * (3 * n + k) + msg:
        rest += sock.recv(4 * (3 * n + k) + msg - len(rest))
    return wire.decode_response(head + rest)


def frame(progress_slow: float = 0.1) -> bytes:
    r = straggler_request(progress_slow=min(progress_slow, 1.0))
    a = r.attempts
    a.progress[3] = progress_slow
    return wire.encode_request(a, seq=5, now=r.now, job_start=r.job_start, n_maps=4,
                               n_reduces=0, new_nodes=["h0", "h1"])


def test_open_scan_and_isolation_over_the_data_channel(service) -> None:
    entry = EntryPoint(service)
    ok, sid, secret, port, version = entry.open("job_1", "", "factor=1.5").split()
    assert ok == "OK" and int(port) == service.data_port and int(version) == wire.VERSION
    other = entry.open("job_2", "static", "").split()
    good, status = connect(service, int(sid), bytes.fromhex(secret))
    bad, status2 = connect(service, int(other[1]), bytes.fromhex(other[2]))
    assert status == status2 == 0
    rejected = exchange(bad, frame(progress_slow=1.5))  # session 2 sends garbage
    assert rejected.status == wire.STATUS_REJECTED and "progress" in rejected.message
    answer = exchange(good, frame())
    assert (answer.status, answer.seq, answer.speculate_task.tolist()) == (0, 5, [3])
    line = service.metrics.line(len(service.sessions))
    assert "sessions=2 scans=2" in line and "copies=1" in line and "rejected=1" in line
    entry.close(sid)
    assert len(service.sessions) == 1
    good.close()
    bad.close()


def test_wrong_secret_and_unknown_policy_are_refused(service) -> None:
    entry = EntryPoint(service)
    _, sid, _secret, _, _ = entry.open("job_3", "static", "").split()
    sock, status = connect(service, int(sid), bytes(16))
    assert status == 1
    sock.close()
    assert entry.open("job_4", "no-such-policy", "").startswith("ERROR unknown policy")
    assert "has no parameter" in entry.open("job_5", "static", "speed=2")


def test_oversized_frame_drops_the_connection_not_the_session(service) -> None:
    entry = EntryPoint(service)
    _, sid, secret, _, _ = entry.open("job_6", "static", "").split()
    sock, _ = connect(service, int(sid), bytes.fromhex(secret))
    header = wire.REQUEST.pack(b"HDGS", 1, 0, 1, 2**31, 0, 0, -1, 1, 0, 0, 0, 0, 0, 0, 0, -1,
                               -1, 0, 0)
    answer = exchange(sock, header)
    assert answer.status == wire.STATUS_REJECTED and "frame refused" in answer.message
    assert sock.recv(1) == b""  # closed by the server
    again, status = connect(service, int(sid), bytes.fromhex(secret))
    assert status == 0 and exchange(again, frame()).speculate_task.tolist() == [3]
    again.close()


def test_short_token_is_refused() -> None:
    with pytest.raises(HedgeError, match="at least 16 characters"):
        ControlPlaneService(ServerConfig(token="short"))


def test_settings_file_and_serve_check(tmp_path: Path, capsys) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    ini = tmp_path / "hedge.ini"
    ini.write_text(f"[server]\naddress = 0.0.0.0:26000\ntoken_file = {token}\npolicy = static\n"
                   "[limits]\nmax_sessions = 5\n[policy.static]\nfactor = 2.0\n")
    config, token_file = load_settings(ini)
    assert (config.host, config.port, config.limits.max_sessions) == ("0.0.0.0", 26000, 5)
    assert config.policy_defaults == {"static": {"factor": "2.0"}} and token_file == str(token)
    assert main(["serve", "--config", str(ini), "--check"]) == 0
    assert "config OK" in capsys.readouterr().out
    ini.write_text(f"[server]\ntoken_file = {token}\n[policy.static]\nfactor = fast\n"
                   "[server2]\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 2
    assert "unknown section [server2]" in capsys.readouterr().err
    ini.write_text(f"[server]\ntoken_file = {token}\npolicy = static\n[policy.static]\n"
                   "factor = fast\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 2
    assert "hedge.static.factor' = 'fast'" in capsys.readouterr().err
    assert main(["serve", "--check"]) == 2
    assert "no token file" in capsys.readouterr().err


@pytest.mark.parametrize(("line", "message"), [
    ("[limits]\nmax_rows = -3\n", r"\[limits\] max_rows = '-3': expected an integer >= 0"),
    ("[limits]\nmax_rows = 2.5\n", r"max_rows = '2.5': expected an integer >= 0"),
    ("[server]\nmetrics_interval = soon\n", r"metrics_interval = 'soon': expected a number"),
    ("[server]\nmetrics_interval = nan\n", r"metrics_interval = 'nan': expected a number >= 0"),
    ("[server]\ndata_port = 70000\n", r"data_port = '70000': expected a port in \[0, 65535\]"),
])
def test_bad_numbers_in_the_settings_file_name_key_value_and_range(tmp_path: Path, line: str,
                                                                    message: str) -> None:
    ini = tmp_path / "hedge.ini"
    ini.write_text(line)
    with pytest.raises(HedgeError, match=message):
        load_settings(ini)


def test_metrics_line_is_logged_each_interval_and_idle_sessions_are_reaped(caplog) -> None:
    from hedge.server.session import Limits

    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static",
                                           metrics_interval=0.05,
                                           limits=Limits(idle_timeout=0.01)))
    with caplog.at_level("INFO", logger="hedge.server"):
        svc.start()
        try:
            EntryPoint(svc).open("job_idle", "static", "")
            deadline = time.monotonic() + 5
            while len(svc.sessions) and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            svc.stop()
    text = caplog.text
    assert "event=reaped" in text and "job=job_idle" in text
    assert "hedge.metrics sessions=" in text and "p99_ms=" in text and "fallbacks=" in text


class _Cycle:
    me: object = None


def test_cyclic_gc_runs_between_scans_not_inside_them() -> None:
    import gc

    from hedge.server.service import _collect_if_due

    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static"))
    svc.start()
    try:
        assert not gc.isenabled()  # no automatic collection inside a decision
        before = gc.get_threshold()
        gc.set_threshold(50, 10, 10)
        try:
            for _ in range(60):  # cycles: only the collector frees them
                a = _Cycle()
                a.me = a
            assert gc.get_count()[0] >= 50
            _collect_if_due()
            assert gc.get_count()[0] < 50  # generation 0 was collected, as CPython would
        finally:
            gc.set_threshold(*before)
    finally:
        svc.stop()
    assert gc.isenabled()


def test_one_connection_reuses_its_buffer_across_frames_of_any_size(service) -> None:
    """Frames larger and smaller than the connection's receive buffer decode alike."""
    entry = EntryPoint(service)
    _, sid, secret, _, _ = entry.open("job_big", "none", "").split()
    sock, status = connect(service, int(sid), bytes.fromhex(secret))
    session = service.sessions.authenticate(int(sid), bytes.fromhex(secret))

    def table(keys: np.ndarray, progress: float) -> AttemptTable:
        n = len(keys)
        return AttemptTable(
            task=keys, attempt=keys, task_type=np.zeros(n), state=np.ones(n),
            node=np.zeros(n), start=np.zeros(n), first_progress_time=np.full(n, 1.0),
            first_progress=np.full(n, 0.01), progress=np.full(n, progress),
            report_sent=np.full(n, 50.0 + progress), report_received=np.full(n, 50.0 + progress),
            bytes_processed=np.zeros(n), input_bytes=np.full(n, np.nan),
            speculative=np.zeros(n, bool))

    big = np.arange(3000)  # 153 KB: more than the first 64 KB buffer
    for seq, (keys, delta, progress) in enumerate(
            [(big, False, 0.2), (big[:5], True, 0.3), (big[:1000], False, 0.4),
             (big[-3:], True, 0.5)], 1):
        data = wire.encode_request(table(keys, progress), seq=seq, now=60.0, job_start=0.0,
                                   n_maps=3000, n_reduces=0, new_nodes=[] if delta else ["h"],
                                   node_base=1 if delta else 0, delta=delta)
        answer = exchange(sock, data)
        assert (answer.status, answer.seq) == (wire.STATUS_OK, seq), answer.message
        assert answer.server_cpu_us > 0
    snap = session.snapshot(wire.decode_request(data[:wire.REQUEST.size],
                                                data[wire.REQUEST.size:]))
    # the second full frame replaced the first: keys 0..999 at 0.4, plus the last delta's
    assert len(snap.attempts) == 1003
    assert snap.attempts.progress[[0, 999, 1000]].tolist() == pytest.approx([0.4, 0.4, 0.5])
    sock.close()


def test_stop_does_not_wait_for_an_idle_py4j_client() -> None:
    # A JVM keeps its pooled Py4J connections open; one that sends nothing must not hang
    # shutdown (py4j alone closes the stream its reader thread blocks on).
    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static"))
    svc.start()
    idle = socket.create_connection(("127.0.0.1", svc.port), timeout=5)
    time.sleep(0.2)  # the server's reader thread is now blocked on this connection
    stopper = threading.Thread(target=svc.stop, daemon=True)
    stopper.start()
    stopper.join(10)
    idle.close()
    assert not stopper.is_alive(), "stop() hung on an idle Py4J connection"


@pytest.mark.parametrize(("section", "message"), [
    ("[policy.adaptive]\nestimator = bogus\n",
     r"\[policy.adaptive\]: policy 'adaptive': estimator = 'bogus': unknown runtime estimator, "
     r"expected one of: legacy, rate, jvm, fresh"),
    ("[policy.adaptive]\nprogress.weight = nan\n",
     r"\[policy.adaptive\]: policy parameter 'hedge.adaptive.progress.weight' = 'nan'"),
    ("[policy.bogus]\nx = 1\n", r"\[policy.bogus\]: unknown policy 'bogus', expected one of"),
    ("[policy.hadoop]\nfoo = 1\n", r"\[policy.hadoop\]: hedge.hadoop.foo: policy 'hadoop' has no "
                                   r"parameter 'foo'"),
])
def test_every_policy_section_is_checked_not_only_the_default_policys(
        tmp_path: Path, section: str, message: str) -> None:
    """Issue 20: these passed --check, and a bad estimator then failed every scan."""
    ini = tmp_path / "hedge.ini"
    ini.write_text("[server]\npolicy = adaptive\n" + section)
    with pytest.raises(HedgeError, match=rf"hedge.ini: {message}"):
        load_settings(ini)


def test_a_job_of_another_policy_gets_that_policys_server_defaults(tmp_path: Path) -> None:
    ini = tmp_path / "hedge.ini"
    ini.write_text("[server]\npolicy = adaptive\n[policy.static]\nfactor = 3.5\n")
    config, _ = load_settings(ini)
    service = ControlPlaneService(ServerConfig(token=TOKEN, policy_defaults=config.policy_defaults))
    factors = []
    for params in ("", "factor=2.5"):  # the job's own value wins over the server's
        session_id, secret = service.open("job_1_0001", "static", params).split()[1:3]
        session = service.sessions.authenticate(int(session_id), bytes.fromhex(secret))
        factors.append(session.policy.factor)
    assert factors == [3.5, 2.5]


def test_a_metrics_interval_that_is_not_a_number_fails_the_check(tmp_path: Path, capsys) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    assert main(["serve", "--token-file", str(token), "--metrics-interval", "nan", "--check"]) == 2
    assert "metrics interval = nan: expected seconds > 0" in capsys.readouterr().err


def test_binary_settings_or_token_files_are_one_line(tmp_path: Path, capsys) -> None:
    """Issue 20: both were internal errors (UnicodeDecodeError)."""
    binary = tmp_path / "binary"
    binary.write_bytes(b"\x00\xb7\xff" * 20)
    assert main(["serve", "--config", str(binary), "--check"]) == 2
    assert "binary: byte 1: not UTF-8 text, expected a settings file" in capsys.readouterr().err
    assert main(["serve", "--token-file", str(binary), "--check"]) == 2
    assert "binary: byte 1: not UTF-8 text, expected one token" in capsys.readouterr().err


def test_a_policys_job_note_is_logged_with_its_jobs_close(caplog) -> None:
    """hedge-auto's tasks left to their skew reach the operator in the server's log."""
    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN))
    ok, sid, secret, *_ = svc.open("job_7", "hedge-auto", "").split()
    session = svc.sessions.authenticate(int(sid), bytes.fromhex(secret))
    session.policy._skewed, session.policy._n_reduces = {3: 1}, 12  # a reduce left to skew
    with caplog.at_level("INFO", logger="hedge.server"):
        svc.close(int(sid))
    notes = [r.getMessage() for r in caplog.records if "event=policy_note" in r.getMessage()]
    assert len(notes) == 1 and "job=job_7 policy=hedge-auto" in notes[0]
    assert "hedge imkp build INPUT -r 12 -o MAPPING" in notes[0]
    ok, sid, *_ = svc.open("job_8", "hedge-auto", "").split()
    with caplog.at_level("INFO", logger="hedge.server"):
        svc.close(int(sid))  # nothing to say: no note
    assert sum("event=policy_note" in r.getMessage() for r in caplog.records) == 1


def test_the_decision_line_carries_the_policys_reasons(service, caplog, monkeypatch) -> None:
    """A policy's ``Actions.why`` (hedge-auto's copy and kill reasons) is logged with its
    decision, at INFO: an operator need not turn on debug logging to ask why."""
    ok, sid, secret, *_ = EntryPoint(service).open("job_w", "static", "factor=1.5").split()
    decide = StaticPolicy.decide
    monkeypatch.setattr(StaticPolicy, "decide", lambda self, snap: replace(
        decide(self, snap), why="copy tasks=[3] benefit=9.0"))
    sock, _ = connect(service, int(sid), bytes.fromhex(secret))
    with caplog.at_level("INFO", logger="hedge.server"):
        assert exchange(sock, frame()).speculate_task.tolist() == [3]
    sock.close()
    lines = [r.getMessage() for r in caplog.records if "event=decision" in r.getMessage()]
    assert len(lines) == 1 and lines[0].endswith(" why='copy tasks=[3] benefit=9.0'")
