"""The pseudo-distributed process cluster of scripts/cluster.sh: up, two jobs, down.

``up`` starts a NameNode, a DataNode, a ResourceManager, two NodeManagers, a JobHistoryServer
and ``hedge serve``, each a process of its own; the straggler job runs with hedge's
speculator (policy ``hadoop``, then ``window``): it succeeds, ``hedge serve`` opened its
session and copied map 0, the copy won; ``history`` ranks the nodes from the
JobHistoryServer; ``down`` leaves no process behind, by pid and by a scan of /proc for the work dir, and is idempotent. Faults: a
port taken makes ``up`` fail naming the ResourceManager and its log, and stop what it started;
a missing Java or jar is named before anything starts.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.integration.yarn_cluster import require_cluster_side

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "cluster.sh"
VERSION = "3.4.1"
DAEMONS = ("namenode", "datanode", "resourcemanager", "nodemanager-1", "nodemanager-2",
           "hedge-serve", "jobhistory")


def cluster_sh(work: Path, *args: str, timeout: float = 420, bash: bool = False,
               **env: str) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT), "--dir", str(work), *args]
    if bash:  # not through /usr/bin/env: PATH may be cut down
        command.insert(0, "/bin/bash")
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HEDGE_PYTHON": sys.executable, **env})


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def processes_of(work: Path) -> list[str]:
    """Live processes whose working directory is inside ``work`` or whose command line names
    it (the daemons, the containers their NodeManagers launched, `hedge serve`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if alive(int(entry.name)) and (cwd == str(work) or cwd.startswith(f"{work}/")
                                       or str(work) in cmdline):
            found.append(f"{entry.name} (cwd {cwd}): {cmdline[:300]}")
    return found


def assert_nothing_left(work: Path, pids: list[int]) -> None:
    assert [pid for pid in pids if alive(pid)] == []
    assert processes_of(work) == []
    assert list((work / "pids").glob("*.pid")) == []


def assert_hedge_copied_the_straggler(work: Path, job: subprocess.CompletedProcess[str],
                                      serve_log: Path | None = None,
                                      policy: str = "hadoop") -> None:
    """``cluster.sh sleep`` succeeded and hedge served it with ``policy``: a session for the
    job, a decision copying map 0, and a copy won (attempt 1, or a later one where the policy
    replaced a copy: window's tail recopy did in one run). ``serve_log``: the cluster's own
    hedge serve unless given."""
    assert job.returncode == 0, job.stdout + job.stderr
    # the latest job's (folders are named by their start time)
    summary = json.loads(sorted((work / "jobs").glob("sleep-*/summary.json"))[-1].read_text())
    assert summary["state"] == "SUCCEEDED"
    job_id = summary["job"]
    log_file = serve_log or work / "logs" / "hedge-serve.log"
    serve_log = log_file.read_text()
    assert re.search(rf"event=open session=\d+ job={job_id} policy={policy} ", serve_log), \
        serve_log[-3000:]
    decisions = [line for line in serve_log.splitlines()
                 if "event=decision" in line and f"job={job_id} " in line]
    assert any(re.search(r"tasks=\[([\d,]*)\]", line)[1].split(",").count("0")
               for line in decisions), serve_log[-3000:]
    won = [int(e["attempt"].rsplit("_", 1)[1]) for e in summary["attempts"]
           if "_m_000000_" in e["attempt"] and e["status"] == "SUCCEEDED"]
    assert len(won) == 1 and won[0] >= 1, summary["attempts"]
    assert_placement_counted(summary, job_id, won[0], log_file)


def assert_placement_counted(summary: dict, job_id: str, winner: int, serve_log: Path) -> None:
    """hedge serve's close line counts the job's copies placed, and those on the node of
    another attempt of their task (MAPREDUCE-7169: the AM does not avoid it). The truth for
    map 0, whose copy (attempt ``winner``) won: the hosts of its attempts in the job's
    completion events (attempt 0, killed, has one when it was given a container)."""
    host = {int(e["attempt"].rsplit("_", 1)[1]): urlparse(e["tracker"]).hostname
            for e in summary["attempts"] if "_m_000000_" in e["attempt"] and e["tracker"]}
    pattern = (rf"event=close session=\d+ job={job_id} .* copies_placed=(\d+) "
               r"copies_on_original_node=(\d+)")
    deadline = time.monotonic() + 30  # the AM closes its session as it shuts down
    while not (close := re.search(pattern, serve_log.read_text())) and (
            time.monotonic() < deadline):
        time.sleep(1)
    assert close, serve_log.read_text()[-3000:]
    placed, on_original = int(close[1]), int(close[2])
    assert placed >= 1, close[0]
    if 0 in host and winner in host:
        if host[winner] == host[0]:
            assert on_original >= 1, (close[0], host)
        else:
            assert placed - on_original >= 1, (close[0], host)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.yarn
def test_up_straggler_job_history_down(tmp_path: Path) -> None:
    require_cluster_side(VERSION)
    work = tmp_path / "cluster"
    up = cluster_sh(work, "up", "--ports", "auto")
    pids = [int(p.read_text()) for p in (work / "pids").glob("*.pid")]
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        for name in DAEMONS:
            assert f"cluster: {name} ready" in up.stdout
        assert len(pids) == len(DAEMONS) and all(alive(pid) for pid in pids)

        job = cluster_sh(work, "sleep", "--speculation", "hadoop")
        assert_hedge_copied_the_straggler(work, job)

        # window plans its copy on the free slots hedge serve counts from the RM's REST API:
        # an AM shows a speculator none, and without them window never copied on YARN
        # (MiniYARN's RM serves no REST: only this cluster can show it). The cluster's
        # hedge.ini names no RM: hedge serve polls the one the first job's AM named
        job = cluster_sh(work, "sleep", "--speculation", "window")
        assert_hedge_copied_the_straggler(work, job, policy="window")
        serve_log = (work / "logs" / "hedge-serve.log").read_text()
        rm_web = re.search(r"yarn.resourcemanager.webapp.address</name><value>([^<]+)<",
                           (work / "conf" / "yarn-site.xml").read_text())[1]
        assert serve_log.count("event=rm_from_job ") == 1, serve_log[-3000:]
        assert re.search(rf"event=rm_from_job job=job_\S+ url=http://{re.escape(rm_web)}\n",
                         serve_log), serve_log[-3000:]

        ranked = cluster_sh(work, "history", "--json", timeout=120)
        assert ranked.returncode == 0, ranked.stderr
        rank = json.loads(ranked.stdout[ranked.stdout.index("{"):])
        assert rank["attempts"] >= 5  # 4 maps, the copy, 1 reduce (killed ones may not count)
        assert {n["node"] for n in rank["nodes"]} <= {"127.0.0.2", "127.0.0.3"}
    finally:
        down = cluster_sh(work, "down", timeout=180)
    assert down.returncode == 0, down.stdout + down.stderr
    assert_nothing_left(work, pids)
    again = cluster_sh(work, "down", timeout=60)
    assert again.returncode == 0 and "nothing" in again.stdout, again.stdout + again.stderr


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.yarn
def test_up_fails_naming_the_resourcemanager_when_its_port_is_taken(tmp_path: Path) -> None:
    require_cluster_side(VERSION)
    work = tmp_path / "cluster"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        up = cluster_sh(work, "up", "--ports", "auto", "--port", f"rm.rpc={port}")
    assert up.returncode == 1, up.stdout + up.stderr
    log = work / "logs" / "resourcemanager.log"
    assert "resourcemanager failed to start" in up.stderr, up.stderr
    assert f"the last lines of {log}" in up.stderr
    assert "Address already in use" in up.stderr or "BindException" in up.stderr, up.stderr
    assert "nothing of it is left running" in up.stderr
    assert_nothing_left(work, [])
    assert cluster_sh(work, "down", timeout=60).returncode == 0


@pytest.mark.integration
@pytest.mark.parametrize("env,expected", [
    ({"PATH": "/nonexistent"}, "no 'java' on PATH"),
    ({"HEDGE_CACHE": "/nonexistent/cache"}, "Hadoop 3.4.1 classpath file"),
    ({"HEDGE_SHIM_JAR": "/nonexistent/hedge-shim.jar"}, "hedge shim jar not found"),
], ids=["java", "hadoop-jars", "shim-jar"])
def test_up_names_what_is_missing_before_starting_anything(tmp_path: Path, env: dict,
                                                          expected: str) -> None:
    work = tmp_path / "cluster"
    up = cluster_sh(work, "up", "--ports", "auto", timeout=60, bash=True, **env)
    assert up.returncode == 1, up.stdout + up.stderr
    assert "cannot start the Hadoop daemons" in up.stderr and expected in up.stderr, up.stderr
    assert not (work / "pids").exists() or list((work / "pids").glob("*.pid")) == []
    assert processes_of(work) == []
