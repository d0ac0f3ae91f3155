"""hedge serve's /metrics and /health over real HTTP, driven in-process over the real sockets
(the Java shim's run against a `hedge serve` process: tests/integration/test_serve_metrics.py)."""

from __future__ import annotations

import json
import socket
import struct
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from hedge.cli import main
from hedge.model import AttemptState, AttemptTable
from hedge.server import wire
from hedge.server.metrics import Metrics
from hedge.server.service import ControlPlaneService, EntryPoint, ServerConfig
from hedge.server.session import Limits
from tests.unit.test_server_service import TOKEN, connect, exchange, frame

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> tuple[Samples, str]:
    """Every sample of /metrics by (name, sorted labels), and the text itself."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    return samples, text


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def eventually(check, timeout: float = 5.0):  # noqa: ANN001, ANN201
    """``check()`` once it holds: a refused connection is counted by the server's handler
    thread, possibly just after the client read the refusal."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@pytest.fixture()
def service():
    svc = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static",
                                           limits=Limits(max_sessions=2),
                                           metrics_address=("127.0.0.1", 0)))
    svc.start()
    yield svc
    svc.stop()


def attempts(rows: list[dict]) -> AttemptTable:
    """Running map attempts (fields as in test_server_session's straggler)."""
    n = len(rows)
    start = np.array([r.get("start", 0.0) for r in rows])
    return AttemptTable(
        task=[r["task"] for r in rows], attempt=[r["key"] for r in rows],
        task_type=np.zeros(n), state=np.ones(n), node=[r.get("node", 0) for r in rows],
        start=start, first_progress_time=start + 0.1,
        first_progress=np.full(n, 0.01), progress=[r["progress"] for r in rows],
        report_sent=np.full(n, 60.5), report_received=np.full(n, 60.5),
        bytes_processed=np.zeros(n), input_bytes=np.full(n, np.nan),
        speculative=[r.get("speculative", False) for r in rows])


def delta(seq: int, rows: list[dict], done: list[float] = (), fallbacks: int = 0,
          **ended) -> bytes:  # noqa: ANN003 - the removed_* arguments of encode_request
    return wire.encode_request(attempts(rows), seq=seq, now=61.0, job_start=0.0, n_maps=4,
                               n_reduces=0, node_base=2, delta=True,
                               completed_map_runtimes=done, fallbacks=fallbacks, **ended)


def py4j_login(port: int, token: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"A\n{token}\ne\n".encode())
        return sock.recv(64)


def test_scrape_counts_sessions_scans_copies_rejections_and_failed_logins(service) -> None:
    port = service.metrics_port
    entry = EntryPoint(service)
    _, sid, secret, _, _ = entry.open("job_1", "", "").split()
    assert entry.open("job_2", "no-such-policy", "").startswith("ERROR unknown policy")
    assert entry.open("job_3", "static", "").startswith("OK")
    assert "too many sessions" in entry.open("job_4", "static", "")  # max_sessions = 2
    bad, status = connect(service, int(sid), bytes(16))  # wrong session secret
    assert status == 1
    bad.close()
    assert py4j_login(service.port, "not-the-token-at-all") == b"!xn\n"

    sock, _ = connect(service, int(sid), bytes.fromhex(secret))
    answers = [exchange(sock, frame())]  # full snapshot: map 3 straggles, gets a copy
    assert answers[0].speculate_task.tolist() == [3]
    # the copy starts (key 8, speculative), then map 3 succeeds: both its attempts end
    answers.append(exchange(sock, delta(6, [{"task": 3, "key": 8, "progress": 0.2,
                                             "speculative": True, "start": 60.2}],
                                        fallbacks=2)))
    # the copy wins at 60.9; the original (started at 0) is killed then: 60.9 s thrown away
    answers.append(exchange(sock, delta(
        7, [], done=[60.9], removed=[6, 8], removed_state=[AttemptState.KILLED,
                                                           AttemptState.SUCCEEDED],
        removed_speculative=[False, True], removed_start=[0.0, 60.2], removed_end=[60.9, 60.9])))
    answers.append(exchange(sock, frame(progress_slow=1.5)))  # invalid: progress > 1
    malformed = bytearray(frame())
    struct.pack_into("<I", malformed, 48, 3)  # header's row count no longer fits the body
    answers.append(exchange(sock, bytes(malformed)))
    sock.close()
    assert [a.status for a in answers] == [0, 0, 0, 1, 1]
    copies = sum(int(a.speculate_copies.sum()) for a in answers)

    def counted() -> tuple[Samples, str]:
        samples, text = scrape(port)
        assert value(samples, "hedge_connection_failures_total", channel="data",
                     kind="session") == 1
        assert value(samples, "hedge_auth_failures_total", channel="py4j") == 1
        return samples, text

    samples, text = eventually(counted)
    static = {"policy": "static"}
    expected = [
        ("hedge_sessions_open", {}, 2),
        ("hedge_sessions_opened_total", static, 2),
        ("hedge_sessions_refused_total", {"reason": "refused"}, 1),
        ("hedge_sessions_refused_total", {"reason": "limit"}, 1),
        ("hedge_sessions_refused_total", {"reason": "internal"}, 0),
        ("hedge_scans_total", static, 5),
        ("hedge_decision_latency_seconds_count", static, 5),
        ("hedge_copies_requested_total", static, copies),
        ("hedge_copies_won_total", static, 1),
        ("hedge_copies_lost_total", static, 0),
        ("hedge_wasted_attempt_seconds_total", static, 60.9),
        ("hedge_kills_requested_total", static, 0),
        ("hedge_client_fallbacks_total", static, 2),
        ("hedge_scans_rejected_total", {"reason": "invalid"}, 1),
        ("hedge_scans_rejected_total", {"reason": "malformed"}, 1),
        ("hedge_scans_rejected_total", {"reason": "policy_error"}, 0),
        ("hedge_auth_failures_total", {"channel": "data"}, 1),
        ("hedge_connection_failures_total", {"channel": "py4j", "kind": "wrong_token"}, 1),
    ]
    assert [(name, labels, value(samples, name, **labels)) for name, labels, _ in expected] \
        == expected
    assert copies >= 1
    # every scan took well under a second: all in the histogram's last finite bucket
    assert value(samples, "hedge_decision_latency_seconds_bucket", policy="static",
                 le="1.0") == 5
    assert "job_" not in text  # job ids are never labels
    # the per-interval log line is still there, and /metrics did not reset it
    line = service.metrics.line(len(service.sessions))
    assert "sessions=2 scans=5" in line and "rejected=2" in line and "fallbacks=2" in line
    assert value(scrape(port)[0], "hedge_scans_total", policy="static") == 5


def test_health_is_200_while_serving_503_when_the_policy_breaks_and_nothing_after_stop(
        service) -> None:
    port = service.metrics_port
    status, body = get(port, "/health")
    assert status == 200
    assert json.loads(body) == {"status": "ok", "policy": "static", "sessions": 0,
                                "py4j_port": service.port, "data_port": service.data_port}
    assert get(port, "/nope")[0] == 404
    service.config.policy_defaults = {"static": {"factor": "fast"}}  # no longer builds
    status, body = get(port, "/health")
    assert status == 503
    report = json.loads(body)
    assert report["status"] == "unavailable"
    assert report["problems"] == ["default policy 'static' does not build: policy parameter "
                                  "'hedge.static.factor' = 'fast': expected a float value"]
    service.stop()
    assert "stopping" in service.health()[0]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_two_servers_in_one_process_count_apart() -> None:
    first, second = Metrics(), Metrics()
    first.scan(0.001, copies=2, policy="static")
    registry = first.exported.registry
    assert registry.get_sample_value("hedge_copies_requested_total", {"policy": "static"}) == 2
    assert second.exported.registry.get_sample_value("hedge_copies_requested_total",
                                                     {"policy": "static"}) is None


def test_check_names_a_bad_or_taken_metrics_port_in_one_line(tmp_path: Path, capsys) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    ini = tmp_path / "hedge.ini"
    ini.write_text(f"[server]\ntoken_file = {token}\nmetrics_address = 127.0.0.1:99999\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[server] metrics_address = '127.0.0.1:99999': expected " \
        "host:port with a port in 0..65535" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        ini.write_text(f"[server]\ntoken_file = {token}\nmetrics_address = 127.0.0.1:{busy}\n")
        assert main(["serve", "--config", str(ini), "--check"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"metrics_address = '127.0.0.1:{busy}': port {busy} is in use" in err
    assert main(["serve", "--config", str(ini), "--check"]) == 0  # freed
    assert (f"metrics endpoint: http://127.0.0.1:{busy}/metrics and /health"
            in capsys.readouterr().out)
    assert main(["serve", "--token-file", str(token), "--metrics-address", "nohost", "--check"]) \
        == 2
    assert "--metrics-address = 'nohost': expected host:port" in capsys.readouterr().err
