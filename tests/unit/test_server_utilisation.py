"""Node utilisation from the ResourceManager REST API (``hedge.server.utilisation``).

Mock note: no ResourceManager runs in a unit test (test_process_cluster.py polls a real
one); a local ``http.server`` in a thread stands in for its documented ``GET /ws/v1/cluster/nodes`` (JSON as in the Hadoop 2.7 and 3.x
"Cluster Nodes API" docs: 2.7 has allocation fields only, >= 2.8 adds resourceUtilization,
3.x totalResource).
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from hedge.cli import main
from hedge.detect.detectors import adaptive_factor
from hedge.errors import HedgeError
from hedge.server.service import ControlPlaneService, ServerConfig
from hedge.server.settings import load_settings
from hedge.server.utilisation import (
    RM_FROM_JOBS,
    ResourceManagers,
    UtilisationPoller,
    parse_nodes,
)
from tests.unit.test_server_session import straggler_request

TOKEN = "0123456789abcdef-test-token"


def node(host: str, state: str = "RUNNING", used_mb: int = 0, avail_mb: int = 8192,
         used_vc: int = 0, avail_vc: int = 8, **extra) -> dict:
    """A node object as the Cluster Nodes API documents it (2.7 fields + optional 3.x ones)."""
    return {"rack": "/default-rack", "state": state, "id": f"{host}:45454",
            "nodeHostName": host, "nodeHTTPAddress": f"{host}:8042", "healthStatus": "Healthy",
            "lastHealthUpdate": 1324056895432, "healthReport": "", "numContainers": 1,
            "usedMemoryMB": used_mb, "availMemoryMB": avail_mb, "usedVirtualCores": used_vc,
            "availableVirtualCores": avail_vc, **extra}


# Hadoop 2.7: allocation only.
#   h1: mem 2048/(2048+6144) = 0.25, cpu 2/(2+6) = 0.25
#   h2: mem 6144/(6144+2048) = 0.75, cpu 4/(4+4) = 0.5
#   h3 LOST, h4 UNHEALTHY, h5 DECOMMISSIONED: excluded
NODES_27 = {"nodes": {"node": [
    node("h1", used_mb=2048, avail_mb=6144, used_vc=2, avail_vc=6),
    node("h2", used_mb=6144, avail_mb=2048, used_vc=4, avail_vc=4),
    node("h3", state="LOST", used_mb=8192, avail_mb=0, used_vc=8, avail_vc=0),
    node("h4", state="UNHEALTHY", used_mb=8192, avail_mb=0),
    node("h5", state="DECOMMISSIONED"),
]}}


def util(pmem: int, cpu: float) -> dict:
    return {"nodePhysicalMemoryMB": pmem, "nodeVirtualMemoryMB": pmem + 1024,
            "nodeCPUUsage": cpu, "aggregatedContainersPhysicalMemoryMB": pmem // 2,
            "aggregatedContainersVirtualMemoryMB": pmem, "containersCPUUsage": cpu / 2}


# Hadoop 3.x: measured utilisation over the node's YARN resource.
#   m1: totalResource 8192 MB / 8 vcores, 4096 MB and 2.0 cores in use -> mem 0.5, cpu 0.25
#   m2: no totalResource: total = used + avail = 4096 MB / 4 vcores; 1024 MB, 3.0 cores
#       -> mem 0.25, cpu 0.75 (allocation would say 0 and 0)
#   m3: NodeManager monitor off (zeros) -> allocation: 1024/4096 = 0.25, 1/4 = 0.25
#   m4: 10000 MB in use of 8192 (OS + daemons), 12 cores busy of 8 vcores -> clipped 1.0, 1.0
#   m5: id host "m5" differs from nodeHostName "m5.example.com": both names match
NODES_3X = {"nodes": {"node": [
    node("m1", used_mb=1024, avail_mb=7168, used_vc=1, avail_vc=7,
         totalResource={"memory": 8192, "vCores": 8}, resourceUtilization=util(4096, 2.0)),
    node("m2", used_mb=0, avail_mb=4096, used_vc=0, avail_vc=4,
         resourceUtilization=util(1024, 3.0)),
    node("m3", used_mb=1024, avail_mb=3072, used_vc=1, avail_vc=3,
         resourceUtilization=util(0, 0.0)),
    node("m4", totalResource={"memory": 8192, "vCores": 8},
         resourceUtilization=util(10000, 12.0)),
    {**node("m5.example.com", used_mb=4096, avail_mb=4096, used_vc=2, avail_vc=6),
     "id": "m5:45454"},
    node("m6", state="NEW", resourceUtilization=util(8000, 8.0)),
]}}


class FakeRM:
    """A local HTTP server answering GET /ws/v1/cluster/nodes with whatever is set."""

    def __init__(self) -> None:
        self.status, self.body = 200, json.dumps(NODES_27).encode()
        self.gate = threading.Event()
        self.gate.set()  # cleared: requests wait (an RM that hangs)
        self.requests = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's API
                fake.requests += 1
                fake.gate.wait(10)
                if self.path != "/ws/v1/cluster/nodes":
                    self.send_error(404)
                    return
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(fake.body)))
                self.end_headers()
                self.wfile.write(fake.body)

            def log_message(self, *args) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, doc: object = None, status: int = 200, raw: bytes | None = None) -> None:
        self.status = status
        self.body = raw if raw is not None else json.dumps(doc).encode()

    def close(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def rm():
    fake = FakeRM()
    yield fake
    fake.close()


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_hadoop_27_allocation_fractions_running_nodes_only(rm) -> None:
    poller = UtilisationPoller(rm.url, clock=Clock())
    assert poller.poll_once()
    fields = poller.fields(["h2", "h1", "h3", "h4", "elsewhere"])
    np.testing.assert_allclose(fields["cpu_util"], [0.5, 0.25, np.nan, np.nan, np.nan])
    np.testing.assert_allclose(fields["mem_util"], [0.75, 0.25, np.nan, np.nan, np.nan])
    record = poller.record
    assert (record.running, record.measured) == (2, 0)
    assert record.hosts.tolist() == ["h1", "h2"]


def test_hadoop_3x_measured_fractions_fallbacks_clipping_and_names(rm) -> None:
    rm.answer(NODES_3X)
    poller = UtilisationPoller(rm.url, clock=Clock())
    assert poller.poll_once()
    names = ["m1", "m2", "m3", "m4", "m5", "m5.example.com", "m6"]
    fields = poller.fields(names)
    np.testing.assert_allclose(fields["cpu_util"], [0.25, 0.75, 0.25, 1.0, 0.25, 0.25, np.nan])
    np.testing.assert_allclose(fields["mem_util"], [0.5, 0.25, 0.25, 1.0, 0.5, 0.5, np.nan])
    assert (poller.record.running, poller.record.measured) == (5, 3)


def test_no_known_session_node_means_unknown_not_nan_arrays(rm) -> None:
    poller = UtilisationPoller(rm.url, clock=Clock())
    assert poller.fields(["h1"]) == {}  # nothing polled yet
    poller.poll_once()
    assert poller.fields(["h3", "nowhere"]) == {}
    assert poller.fields([]) == {}


def test_stale_data_is_dropped_after_max_age(rm) -> None:
    clock = Clock()
    poller = UtilisationPoller(rm.url, poll_interval=10, max_age=60, clock=clock)
    poller.poll_once()
    rm.answer(status=500, raw=b"{}")
    clock.t += 60.0
    assert not poller.poll_once()  # failed: the last good poll is still served ...
    assert poller.fields(["h1"])["mem_util"].tolist() == [0.25]
    clock.t += 0.5
    assert poller.fields(["h1"]) == {}  # ... until it is older than max_age


def test_outages_are_logged_once_and_recovery_once(rm, caplog) -> None:
    caplog.set_level(logging.INFO, logger="hedge.server")
    clock = Clock()
    poller = UtilisationPoller(rm.url, max_age=60, clock=clock)
    failures = [dict(status=500, raw=b"Internal Server Error"), dict(raw=b"<html>not json"),
                dict(doc={"nodes": 3}), dict(doc={"nodes": {"node": [{"state": "RUNNING",
                                                                       "usedMemoryMB": "x"}]}})]
    for failure in failures:
        rm.answer(**failure)
        assert not poller.poll_once()
        assert poller.fields(["h1"]) == {}
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and lines[0].startswith("event=rm_unreachable")
    assert "HTTPError" in lines[0] and "500" in lines[0]
    rm.answer(NODES_27)
    clock.t += 30
    assert poller.poll_once() and poller.poll_once()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and lines[1].startswith("event=rm_recovered")
    assert "nodes=2" in lines[1] and "down_s=30" in lines[1]
    assert poller.fields(["h2"])["cpu_util"].tolist() == [0.5]
    rm.close()  # the RM goes away entirely: connection refused
    assert not poller.poll_once() and not poller.poll_once()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and lines[2].startswith("event=rm_unreachable")
    assert "ConnectionError" in lines[2]


def test_rm_that_hangs_never_blocks_a_reader(rm) -> None:
    poller = UtilisationPoller(rm.url, poll_interval=1, timeout=5, clock=Clock())
    poller.poll_once()
    rm.gate.clear()  # the next request hangs inside the RM
    rm.answer(NODES_3X)
    poller.start()
    try:
        for _ in range(100):
            if rm.requests >= 2:
                break
            threading.Event().wait(0.02)
        assert rm.requests >= 2  # the poller thread is now waiting for the RM ...
        # ... and a scan still reads the previous poll at once
        assert poller.fields(["h1"])["cpu_util"].tolist() == [0.25]
    finally:
        rm.gate.set()
        poller.stop()


def test_parse_accepts_documented_shapes() -> None:
    assert parse_nodes({"nodes": None}, 0.0).running == 0  # RM with no node manager at all
    one = parse_nodes({"nodes": {"node": node("x", used_mb=4096, avail_mb=4096)}}, 0.0)
    assert one.mem.tolist() == [0.5]
    zero = parse_nodes({"nodes": {"node": [node("z", avail_mb=0, avail_vc=0)]}}, 0.0)
    assert np.isnan(zero.mem).all() and np.isnan(zero.cpu).all()
    with pytest.raises(HedgeError, match=r"nodes.node\[0\]: field 'usedVirtualCores' = 'two'"):
        parse_nodes({"nodes": {"node": [node("y", used_vc="two")]}}, 0.0)
    with pytest.raises(HedgeError, match="expected a JSON object with field 'nodes'"):
        parse_nodes([1, 2], 0.0)


@contextlib.contextmanager
def polling_service(rm: FakeRM, policy: str, **config) -> Iterator[ControlPlaneService]:  # noqa: ANN003
    """A running control plane polling ``rm`` (every second), once its first poll is in."""
    service = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy=policy,
                                               resourcemanager=rm.url, rm_poll_interval=1.0,
                                               **config))
    service.start()
    try:
        for _ in range(250):
            if service.utilisation.record is not None:
                break
            threading.Event().wait(0.02)
        yield service
    finally:
        service.stop()


def test_snapshot_through_the_service_carries_utilisation_and_moves_the_threshold(rm) -> None:
    # h0: mem 0.9, cpu 0.5; h1: mem 0.7, cpu 0.3 (allocation, Hadoop 2.7 style)
    rm.answer({"nodes": {"node": [
        node("h0", used_mb=9, avail_mb=1, used_vc=5, avail_vc=5),
        node("h1", used_mb=7, avail_mb=3, used_vc=3, avail_vc=7)]}})
    with polling_service(rm, "adaptive") as service:
        session = service.sessions.open("job_u", "adaptive", {}, cluster=service.cluster_view)
        session.decide(straggler_request())  # nodes h0, h1
        snapshot = session.snapshot(straggler_request(seq=2))
        np.testing.assert_allclose(snapshot.cluster.cpu_util, [0.5, 0.3])
        np.testing.assert_allclose(snapshot.cluster.mem_util, [0.9, 0.7])
        # Th = Q + a P + b R, defaults a = b = 0.5, mu = phi = omega = 0.6 except mu = 0.5:
        # Q = 1.5 (no deadline); P = mean(0.9, 0.85, 0.95, 0.1) - 0.5 = 0.2;
        # R = max(mean mem 0.8 - 0.6, mean cpu 0.4 - 0.6) = 0.2
        assert adaptive_factor(snapshot) == pytest.approx(1.5 + 0.5 * 0.2 + 0.5 * 0.2)
        rm.answer(status=503, raw=b"")
        service.utilisation.max_age = 0.0  # the last poll is now stale: R = 0
        unknown = session.snapshot(straggler_request(seq=3))
        assert len(unknown.cluster.cpu_util) == len(unknown.cluster.mem_util) == 0
        assert adaptive_factor(unknown) == pytest.approx(1.5 + 0.5 * 0.2)


def test_slots_are_whole_containers_per_running_node() -> None:
    # NODES_27, 1,024 MB / 1 vcore containers: h1 fits 6 free of 8 (6,144 MB, 6 vcores
    # free), h2 2 of 8 (2,048 MB free: memory binds); LOST and other states count nothing
    record = parse_nodes(NODES_27, 0.0)
    assert record.slots(1024, 1) == (16, 8)
    # 3,000 MB containers: 2 per 8,192 MB node; free: h1 2 (6,144), h2 0 (2,048)
    assert record.slots(3000, 1) == (4, 2)
    # 2 vcores each: h2's 4 free vcores fit 2, its 2,048 MB only 2; h1 3 (6 vcores)
    assert record.slots(1024, 2) == (8, 5)
    # NODES_3X: totals from totalResource where given (m1, m4: 8 each), else used + avail
    # (m2 4, m3 4, m5 8); free m1 7, m2 4, m3 3, m4 8, m5 4 (the NEW m6 not counted)
    assert parse_nodes(NODES_3X, 0.0).slots(1024, 1) == (32, 26)
    assert parse_nodes({"nodes": None}, 0.0).slots(1024, 1) == (0, 0)


def test_a_session_whose_am_knows_no_slots_gets_them_from_the_rm(rm) -> None:
    """hedge's shim on YARN sends no slot counts (-1): the RM's poll counts them, so window
    has free slots to plan its copies on and hedge-auto a busy share."""
    rm.answer(NODES_27)
    with polling_service(rm, "window", rm_container=(2048, 1)) as service:
        session = service.sessions.open("job_s", "window", {})
        session.decide(straggler_request())  # total and free slots -1: unknown to the AM
        cluster = session.snapshot(straggler_request(seq=2)).cluster
        assert (cluster.total_slots, cluster.free_slots) == (8, 4)  # 2,048 MB containers
        service.utilisation.max_age = 0.0  # stale: unknown again
        cluster = session.snapshot(straggler_request(seq=3)).cluster
        assert (cluster.total_slots, cluster.free_slots) == (0, 0)


def test_the_slots_are_counted_in_the_jobs_own_map_container(rm) -> None:
    """The shim sends the job's mapreduce.map.memory.mb and cpu.vcores where its
    configuration sets them; the server's [cluster] container size stands in for the rest."""
    rm.answer(NODES_27)
    with polling_service(rm, "window") as service:
        for params, slots in (("mapreduce.map.memory.mb=3000\n", (4, 2)),  # NODES_27
                              ("mapreduce.map.cpu.vcores=2\nmin.progress=0.3\n", (8, 5)),
                              ("", (16, 8))):  # the server's 1,024 MB and 1 vcore
            _, number, secret, *_ = service.open("job_c", "window", params).split()
            session = service.sessions.authenticate(int(number), bytes.fromhex(secret))
            session.decide(straggler_request())
            cluster = session.snapshot(straggler_request(seq=2)).cluster
            assert (cluster.total_slots, cluster.free_slots) == slots, params
        with pytest.raises(HedgeError, match=r"mapreduce.map.memory.mb = '-1': expected a "
                                             r"whole number > 0 \(the job's map container\)"):
            service.open("job_c", "window", "mapreduce.map.memory.mb=-1\n")


def opened(service: ControlPlaneService, job_id: str, params: str):  # noqa: ANN201
    """The session ``service.open`` gave ``job_id``."""
    _, number, secret, *_ = service.open(job_id, "window", params).split()
    return service.sessions.authenticate(int(number), bytes.fromhex(secret))


def slots_seen(session, wait: bool = True) -> tuple[int, int]:  # noqa: ANN001
    """(total, free) slots of the session's next snapshot, once its RM's first poll is in
    (``wait``; without: at once, for a session with no RM)."""
    for _ in range(250 if wait else 1):
        cluster = session.snapshot(straggler_request(seq=2)).cluster
        if cluster.total_slots:
            break
        threading.Event().wait(0.02)
    return cluster.total_slots, cluster.free_slots


def test_without_a_configured_rm_each_job_names_its_own(rm, caplog) -> None:
    """The shim sends the RM web address of the AM's configuration: a server without
    [cluster] resourcemanager polls it from the first job naming it, for every job naming
    it; a job naming none gets no RM facts."""
    caplog.set_level(logging.INFO, logger="hedge.server")
    rm.answer(NODES_27)
    service = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="window",
                                               rm_poll_interval=1.0))
    service.start()
    try:
        first = opened(service, "job_1", f"resourcemanager={rm.url}/\n")
        first.decide(straggler_request())
        assert slots_seen(first) == (16, 8)  # NODES_27 in 1,024 MB containers
        second = opened(service, "job_2", f"resourcemanager={rm.url}\n")
        second.decide(straggler_request())
        assert slots_seen(second) == (16, 8)
        assert list(service.resourcemanagers._named) == [rm.url]  # one poller for both
        alone = opened(service, "job_3", "")
        alone.decide(straggler_request())
        assert slots_seen(alone, wait=False) == (0, 0)
        with pytest.raises(HedgeError, match=r"resourcemanager \(the RM web address the job's "
                                             r"AM names\) = 'rm:8088': expected the "
                                             r"ResourceManager web address"):
            service.open("job_4", "window", "resourcemanager=rm:8088\n")
    finally:
        service.stop()
    log = caplog.text
    assert log.count(f"event=rm_from_job job=job_1 url={rm.url}") == 1
    assert "event=rm_from_job job=job_2" not in log
    assert f"job=job_2 policy=window params={{}} container=1024MBx1 rm={rm.url}" in log
    assert "job=job_3 policy=window params={} container=1024MBx1 rm=none" in log


def test_a_configured_rm_wins_and_off_polls_none(rm, caplog) -> None:
    rm.answer(NODES_27)
    elsewhere = f"http://127.0.0.1:{free_port()}"
    with polling_service(rm, "window") as service:
        for job in ("job_1", "job_2"):
            session = opened(service, job, f"resourcemanager={elsewhere}\n")
            session.decide(straggler_request())
            assert slots_seen(session) == (16, 8)  # the configured RM's
    ignored = f"event=rm_from_job_ignored job=job_1 url={elsewhere} configured={rm.url}"
    assert caplog.text.count("event=rm_from_job_ignored") == 1 and ignored in caplog.text
    off = ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="window",
                                           resourcemanager="off"))
    polled = rm.requests
    session = opened(off, "job_3", f"resourcemanager={rm.url}\n")
    session.decide(straggler_request())
    assert slots_seen(session, wait=False) == (0, 0)
    assert off.resourcemanagers.for_job("job_3", rm.url) is None and rm.requests == polled


def test_a_server_polls_a_bounded_number_of_rms_from_jobs(rm, caplog, monkeypatch) -> None:
    monkeypatch.setattr("hedge.server.utilisation.MAX_RMS_FROM_JOBS", 1)
    rms = ResourceManagers(RM_FROM_JOBS)
    try:
        assert rms.for_job("job_1", rm.url) is rms.for_job("job_2", rm.url) is not None
        other = f"http://127.0.0.1:{free_port()}"
        assert rms.for_job("job_3", other) is None and rms.for_job("job_4", other) is None
    finally:
        rms.stop()
    assert caplog.text.count("event=rm_from_job_refused") == 1
    assert (f"job=job_3 url={other} reason='already polling 1 ResourceManagers'"
            in caplog.text)


def test_cluster_settings_are_validated(tmp_path: Path) -> None:
    ini = tmp_path / "hedge.ini"
    ini.write_text("[cluster]\nresourcemanager = http://rm.example:8088/\npoll_interval = 5\n"
                   "max_age = 30\n")
    config, _ = load_settings(ini)
    assert (config.resourcemanager, config.rm_poll_interval, config.rm_max_age) == (
        "http://rm.example:8088", 5.0, 30.0)
    assert load_settings(None)[0].resourcemanager == ""  # the one each job's AM names
    for off in ("off", "OFF"):
        ini.write_text(f"[cluster]\nresourcemanager = {off}\n")
        assert load_settings(ini)[0].resourcemanager == "off"
    assert config.rm_container == (1024, 1)  # MapReduce's default map container
    ini.write_text("[cluster]\ncontainer_mb = 2048\ncontainer_vcores = 2\n")
    assert load_settings(ini)[0].rm_container == (2048, 2)
    bad = {
        "resourcemanager = rm:8088": r"\[cluster\] resourcemanager = 'rm:8088': expected the "
                                     r"ResourceManager web address, http://host:port \(e.g. "
                                     r"http://rm:8088\), empty \(the one each job's AM names\) "
                                     r"or off",
        "resourcemanager = http://rm:8088/ws/v1": "resourcemanager",
        "poll_interval = 0": r"\[cluster\] poll_interval = '0': expected seconds in \[1, 3600\]",
        "poll_interval = soon": r"poll_interval = 'soon': expected seconds",
        "poll_interval = 20\nmax_age = 10": r"max_age = '10': expected seconds in \[20, 86400\]",
        "rm = http://rm:8088": r"\[cluster\] unknown key\(s\) \['rm'\]",
        "container_mb = 0": r"\[cluster\] container_mb = '0': expected MB in \[1, 1e\+07\]",
        "container_vcores = half": r"container_vcores = 'half': expected vcores",
    }
    for body, message in bad.items():
        ini.write_text(f"[cluster]\n{body}\n")
        with pytest.raises(HedgeError, match=message):
            load_settings(ini)


def test_serve_check_reports_the_cluster_section(tmp_path: Path, rm, capsys) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    ini = tmp_path / "hedge.ini"
    ini.write_text(f"[server]\ntoken_file = {token}\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 0
    assert ("cluster utilisation: from the ResourceManager each job's AM names"
            in capsys.readouterr().out)
    ini.write_text(f"[server]\ntoken_file = {token}\n[cluster]\nresourcemanager = off\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 0
    assert "cluster utilisation: off" in capsys.readouterr().out
    ini.write_text(f"[server]\ntoken_file = {token}\n[cluster]\nresourcemanager = {rm.url}\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 0
    out = capsys.readouterr().out
    assert f"cluster utilisation: {rm.url}/ws/v1/cluster/nodes every 10 s, max age 60 s" in out
    assert "2 RUNNING node(s), 0 of them with measured utilisation" in out
    assert "slots of 1024 MB and 1 vcore(s): 8 free of 16" in out
    down = f"http://127.0.0.1:{free_port()}"
    ini.write_text(f"[server]\ntoken_file = {token}\n[cluster]\nresourcemanager = {down}\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 0  # a warning, not an error
    captured = capsys.readouterr()
    assert "not reachable now" in captured.out
    assert "warning: resourcemanager not answering now" in captured.err


def test_remembered_lookups_follow_each_new_poll(rm) -> None:
    poller = UtilisationPoller(rm.url, clock=Clock())
    poller.poll_once()
    names = ["h1", "h2"]
    first = poller.fields(list(names))
    assert first["mem_util"].tolist() == [0.25, 0.75]
    assert not first["mem_util"].flags.writeable  # shared between scans: read-only
    first.clear()
    assert poller.fields(list(names))["mem_util"].tolist() == [0.25, 0.75]
    # h1 fills up, h2 empties; the remembered lookup is redone with the new poll
    rm.answer({"nodes": {"node": [node("h1", used_mb=8192, avail_mb=0, used_vc=8, avail_vc=0),
                                  node("h2", used_mb=0, avail_mb=8192)]}})
    poller.poll_once()
    assert poller.fields(list(names))["mem_util"].tolist() == [1.0, 0.0]
    assert poller.fields(["h2"])["cpu_util"].tolist() == [0.0]
    assert len(poller._memo[1]) == 2
    poller.poll_once()  # lists not scanned during a whole interval are forgotten after it
    poller.fields(["h2"])
    poller.poll_once()
    assert list(poller._memo[1]) == [("h2",)]
