"""Blacklisting through real NodeManagers: hedge's health-check script marks a node unhealthy.

A ResourceManager with one NodeManager of its own (MiniMRYarnCluster, host localhost) and a
NodeManager process under host 127.0.0.3 running scripts/hedge-health-check.sh every second
(its shuffle port is an ephemeral one, set in its own mapred-site.xml: the shuffle handler
ignores yarn-site.xml's, so two such NodeManagers used to collide on 13562).
`hedge nodes watch` ranks a task history in which 127.0.0.3 is three times slower and
publishes a blacklist naming it: the ResourceManager must report that node UNHEALTHY within
the check interval (plus a heartbeat), a job started afterwards must run no container there,
and once `hedge nodes watch` sees a history where the nodes do not differ, the blacklist it
publishes is empty and the node comes back.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.yarn_cluster import (
    MiniYarn,
    NodeManagerProcess,
    expected_output,
    require_cluster_side,
    rm_nodes,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]

VERSION = "3.4.1"
GOOD, WEAK = "localhost", "127.0.0.3"
# the health script runs every second; the NodeManager reports at its next heartbeat
STATE_CHANGE_S = 15


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    require_cluster_side(VERSION)
    work = tmp_path_factory.mktemp("yarn-blacklist")
    blacklist = work / "blacklist"
    cluster = MiniYarn(VERSION, work / "cluster", nodemanagers=1).start()
    weak = NodeManagerProcess(cluster, WEAK, blacklist).start()
    try:
        wait_for_states(cluster, {GOOD: "RUNNING", WEAK: "RUNNING"}, timeout=180)
        yield cluster, blacklist, work
    finally:
        weak.stop()
        cluster.stop()


def wait_for_states(cluster: MiniYarn, wanted: dict[str, str], timeout: float) -> float:
    """Seconds until the RM reports every node in its wanted state (AssertionError if never)."""
    start = time.monotonic()
    states: dict[str, str] = {}
    while time.monotonic() - start < timeout:
        states = {host: node["state"] for host, node in rm_nodes(cluster).items()}
        if all(states.get(host) == state for host, state in wanted.items()):
            return time.monotonic() - start
        time.sleep(0.5)
    raise AssertionError(f"nodes {states}, expected {wanted} within {timeout} s")


def node_history(path: Path, weak_factor: float) -> Path:
    """20 jobs of 8 tasks over the two nodes; tasks on WEAK take ``weak_factor`` times as
    long."""
    rng = random.Random(1)
    rows = ["job,task,attempt,node,start,end,state"]
    for job in range(20):
        for task in range(8):
            node = GOOD if task % 2 else WEAK
            duration = rng.uniform(9, 11) * (weak_factor if node == WEAK else 1)
            rows.append(f"job{job},t{task},a{task},{node},{job * 100},"
                        f"{job * 100 + duration:.2f},SUCCEEDED")
    path.write_text("\n".join(rows) + "\n")
    return path


def watch_once(history: Path, blacklist: Path, nodes: Path) -> list[str]:
    """One round of `hedge nodes watch`; the nodes the blacklist it published names."""
    watch = subprocess.run(
        [sys.executable, "-m", "hedge.cli", "nodes", "watch", str(history), "--out",
         str(blacklist), "--iterations", "1", "--interval", "1", "--min-dwell", "0",
         "--max-fraction", "0.5", "--nodes", str(nodes)],
        capture_output=True, text=True, timeout=120)
    assert watch.returncode == 0, watch.stderr[-2000:]
    return [line for line in blacklist.read_text().splitlines() if not line.startswith("#")]


def test_blacklisted_node_goes_unhealthy_gets_no_container_and_comes_back(cluster) -> None:
    cluster, blacklist, work = cluster
    nodes = work / "nodes.txt"
    nodes.write_text(f"{GOOD}\n{WEAK}\n")
    assert watch_once(node_history(work / "slow.csv", 3.0), blacklist, nodes) == [WEAK]

    waited = wait_for_states(cluster, {WEAK: "UNHEALTHY", GOOD: "RUNNING"},
                             timeout=STATE_CHANGE_S)
    print(f"{WEAK} reported UNHEALTHY {waited:.1f} s after the blacklist was published")
    report = rm_nodes(cluster)[WEAK]["health"]
    assert "blacklisted" in report, report

    run = cluster.run_job({"mapreduce.map.speculative": "false",
                           "hedge.test.straggler.task": "-1"})
    assert run.succeeded and run.output == expected_output(), run.client_log[-3000:]
    # an attempt killed before it got a container (a reduce's speculative copy, say) has no
    # tracker: it ran nowhere
    trackers = [event["tracker"] for event in run.summary["attempts"] if "//" in event["tracker"]]
    hosts = {tracker.split("//")[1].split(":")[0] for tracker in trackers}
    assert hosts == {GOOD}, run.summary["attempts"]

    assert watch_once(node_history(work / "equal.csv", 1.0), blacklist, nodes) == []
    wait_for_states(cluster, {WEAK: "RUNNING", GOOD: "RUNNING"}, timeout=STATE_CHANGE_S)
