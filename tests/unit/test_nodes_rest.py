"""History Server REST client against a local replay server (the real one cannot run here).

The replay server on 127.0.0.1 answers the documented JSON shapes of
/ws/v1/history/mapreduce/jobs, .../jobs/{job}/tasks and .../tasks/{task}/attempts.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from hedge.errors import HedgeError
from hedge.nodes.rest import API, HistoryServerClient
from hedge.nodes.sources import load_history

T0 = 1_700_000_000_000  # ms epoch

JOBS = [  # (id, startTime ms)
    ("job_1_0001", T0 + 1_000),
    ("job_1_0002", T0 + 5_000_000),  # two hours later: another time window
]


def attempt(aid, start, finish, node, state="SUCCEEDED", kind="MAP"):
    return {"id": aid, "startTime": start, "finishTime": finish, "elapsedTime": finish - start,
            "nodeHttpAddress": node, "rack": "/default-rack", "state": state, "type": kind,
            "progress": 100.0, "diagnostics": "", "assignedContainerId": "container_x"}


ROUTES: dict[str, object] = {
    f"{API}/jobs/job_1_0001/tasks": {"tasks": {"task": [
        {"id": "task_1_0001_m_000000", "type": "MAP", "state": "SUCCEEDED"},
        {"id": "task_1_0001_r_000000", "type": "REDUCE", "state": "SUCCEEDED"}]}},
    f"{API}/jobs/job_1_0001/tasks/task_1_0001_m_000000/attempts": {"taskAttempts": {
        "taskAttempt": [
            attempt("attempt_1_0001_m_000000_0", T0 + 2000, T0 + 12000, "hostA:8042"),
            attempt("attempt_1_0001_m_000000_1", T0 + 6000, T0 + 9000, "hostB:8042",
                    state="KILLED"),
            attempt("attempt_1_0001_m_000000_2", T0 + 6000, 0, "", state="KILLED"),
            attempt("attempt_1_0001_m_000000_3", T0 + 7000, T0 + 6000, "hostC:8042",
                    state="FAILED")]}},
    f"{API}/jobs/job_1_0001/tasks/task_1_0001_r_000000/attempts": {"taskAttempts": {
        "taskAttempt": [attempt("attempt_1_0001_r_000000_0", T0 + 13000, T0 + 20000,
                                "hostB:8042", kind="REDUCE")]}},
    f"{API}/jobs/job_1_0002/tasks": {"tasks": {"task": [
        {"id": "task_1_0002_m_000000", "type": "MAP", "state": "SUCCEEDED"}]}},
    f"{API}/jobs/job_1_0002/tasks/task_1_0002_m_000000/attempts": {"taskAttempts": {
        "taskAttempt": [attempt("attempt_1_0002_m_000000_0", T0 + 5_001_000,
                                T0 + 5_004_000, "hostC:8042")]}},
}


class Replay(BaseHTTPRequestHandler):
    routes: dict[str, object] = ROUTES
    fail_first: dict[str, int] = {}   # path -> number of 503 answers before success
    slow: set[str] = set()            # paths that answer after 1 s
    calls: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        url = urlparse(self.path)
        type(self).calls.append(self.path)
        if url.path in self.slow:
            time.sleep(1.0)
        if self.fail_first.get(url.path, 0) > 0:
            self.fail_first[url.path] -= 1
            return self._send(503, {"error": "busy"})
        if url.path == f"{API}/jobs":
            q = parse_qs(url.query)
            lo, hi = int(q["startedTimeBegin"][0]), int(q["startedTimeEnd"][0])
            jobs = [{"id": j, "startTime": s, "finishTime": s + 60_000, "state": "SUCCEEDED"}
                    for j, s in JOBS if lo <= s <= hi]
            return self._send(200, {"jobs": {"job": jobs} if jobs else None})
        if url.path in self.routes:
            return self._send(200, self.routes[url.path])
        self._send(404, {"RemoteException": {"exception": "NotFoundException",
                                             "message": f"java.lang.Exception: {url.path} "
                                                        "not found",
                                             "javaClassName": "NotFoundException"}})

    def _send(self, status: int, body: object) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        # the timeout test hangs up on a slow answer on purpose: not an error
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture
def server():
    Replay.fail_first, Replay.slow, Replay.calls = {}, set(), []
    Replay.routes = dict(ROUTES)
    httpd = QuietServer(("127.0.0.1", 0), Replay)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def client(url: str, **kw) -> HistoryServerClient:
    return HistoryServerClient(url, **{"timeout": 2.0, "retries": 2, "backoff": 0.01, **kw})


def test_fetch_builds_history_and_pages_by_window(server):
    c = client(server, window=3600.0)
    table = c.fetch(T0 / 1000, T0 / 1000 + 3 * 3600)
    rows = table.to_pylist()
    assert [r["attempt"] for r in rows] == ["attempt_1_0001_m_000000_0",
                                            "attempt_1_0001_m_000000_1",
                                            "attempt_1_0001_r_000000_0",
                                            "attempt_1_0002_m_000000_0"]
    assert [r["node"] for r in rows] == ["hostA", "hostB", "hostB", "hostC"]
    assert rows[0]["start"] == T0 / 1000 + 2 and rows[0]["end"] == T0 / 1000 + 12
    assert [r["speculative"] for r in rows] == [False, True, False, False]
    assert rows[2]["type"] == "REDUCE"
    assert c.skipped == 2  # the attempt that never got a node, the one ending before start
    job_calls = [p for p in Replay.calls if urlparse(p).path == f"{API}/jobs"]
    assert len(job_calls) == 3  # three one-hour windows


def test_retries_then_succeeds(server):
    Replay.fail_first = {f"{API}/jobs/job_1_0001/tasks": 2}
    table = client(server).fetch(T0 / 1000, T0 / 1000 + 600)
    assert table.num_rows == 3


def test_gives_up_after_retries_with_clear_message(server):
    Replay.fail_first = {f"{API}/jobs/job_1_0001/tasks": 10}
    with pytest.raises(HedgeError, match=r"unreachable after 3 tries \(last: HTTP 503\)"):
        client(server).fetch(T0 / 1000, T0 / 1000 + 600)


def test_timeout_is_retried_and_reported(server):
    Replay.slow = {f"{API}/jobs"}
    with pytest.raises(HedgeError, match=r"after 2 tries \(last: ReadTimeout"):
        client(server, timeout=0.2, retries=1).fetch(T0 / 1000, T0 / 1000 + 600)


def test_not_found_is_not_retried_and_names_the_remote_message(server):
    del Replay.routes[f"{API}/jobs/job_1_0001/tasks"]
    with pytest.raises(HedgeError, match="HTTP 404: java.lang.Exception: .* not found"):
        client(server).fetch(T0 / 1000, T0 / 1000 + 600)
    assert sum(f"{API}/jobs/job_1_0001/tasks" in p for p in Replay.calls) == 1


def test_malformed_attempt_is_rejected(server):
    Replay.routes[f"{API}/jobs/job_1_0002/tasks/task_1_0002_m_000000/attempts"] = {
        "taskAttempts": {"taskAttempt": [{"id": "x", "startTime": "soon", "finishTime": 5,
                                          "nodeHttpAddress": "h:1", "state": "SUCCEEDED"}]}}
    with pytest.raises(HedgeError, match="field 'startTime' = 'soon', expected a number"):
        client(server).fetch(T0 / 1000, T0 / 1000 + 3 * 3600)


def test_unreachable_server():
    c = HistoryServerClient("http://127.0.0.1:9", timeout=0.5, retries=1, backoff=0.01)
    with pytest.raises(HedgeError, match="unreachable after 2 tries"):
        c.fetch(0.0, 10.0)


def test_load_history_dispatches_urls(server):
    table = load_history(server, since=T0 / 1000, until=T0 / 1000 + 3 * 3600)
    assert table.num_rows == 4
