"""Node history from a real cluster: `hedge traces stats` and `hedge nodes rank` read what the
JobHistoryServer keeps, from its `.jhist` files and from its REST API, and agree.

The REST API is a JobHistoryServer process of its own over the cluster's history folders
(see yarn_cluster.HistoryServer). The job: the straggler job under Hadoop's own DefaultSpeculator with hedge's runtime
estimator (no control plane), so the history holds a speculative attempt and a killed one.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.integration.yarn_cluster import (
    HistoryServer,
    MiniYarn,
    expected_output,
    require_cluster_side,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]

VERSION = "3.4.1"


def hedge(*args: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "hedge.cli", *args], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory):
    """A cluster of its own: the history server must hold this one job and no other."""
    require_cluster_side(VERSION)
    cluster = MiniYarn(VERSION, tmp_path_factory.mktemp("yarn-history")).start()
    try:
        run = cluster.run_job({"yarn.app.mapreduce.am.job.task.estimator.class":
                               "org.hedge.shim.HedgeRuntimeEstimator"})
        assert run.succeeded and run.output == expected_output(), run.client_log[-3000:]
        yield cluster, run, cluster.history_file(run.job_id)
    finally:
        cluster.stop()


def test_traces_stats_reads_the_job_history_file(finished) -> None:
    _, run, history = finished
    stats = hedge("traces", "stats", str(history), "--json")
    assert stats["tasks"] == 5  # 4 maps, 1 reduce: compared apart by default
    assert stats["jobs_detail"]["job_id"] == [f"{run.job_id}:MAP", f"{run.job_id}:REDUCE"]
    mixed = hedge("traces", "stats", str(history), "--json", "--mixed")
    assert mixed["jobs"] == 1 and mixed["jobs_detail"]["job_id"] == [run.job_id]


def test_nodes_rank_reads_the_history_server_and_its_files_alike(finished) -> None:
    cluster, run, history = finished
    server = HistoryServer(cluster).start()
    try:
        from_server = hedge("nodes", "rank", server.url, "--json")
    finally:
        server.stop()
    from_file = hedge("nodes", "rank", str(history), "--json")
    assert from_file["attempts"] == from_server["attempts"] == 5
    assert [n["node"] for n in from_file["nodes"]] == [n["node"] for n in from_server["nodes"]]
