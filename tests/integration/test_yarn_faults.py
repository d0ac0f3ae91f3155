"""Fail-safe on a real YARN cluster: whatever happens to the control plane, the job succeeds.

The straggler job of test_yarn_speculation runs while `hedge serve` is killed mid-job, hung
past the deadline, answers garbage, or holds another token; each time the job must succeed,
with the same output, and Hadoop's default rule (the fallback) must still copy the straggler.
The last test kills the first MRAppMaster: the second AM attempt opens a fresh session.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.plugin_support import ServeProcess, write_token
from tests.integration.test_plugin_faults import FaultyService
from tests.integration.yarn_cluster import JobRun, MiniYarn, expected_output, hedge_settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]

VERSION = "3.4.1"
OPEN_TIMEOUT_S = 120


@pytest.fixture()
def cluster(yarn_cluster) -> MiniYarn:
    return yarn_cluster(VERSION)


@pytest.fixture()
def token(tmp_path: Path) -> Path:
    return write_token(tmp_path / "token")


def wait_for(condition: Callable[[], object], what: str, proc: subprocess.Popen) -> object:
    deadline = time.monotonic() + OPEN_TIMEOUT_S
    while not (found := condition()):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"never saw {what}")
        time.sleep(0.2)
    return found


def opened_jobs(log: Path) -> list[str]:
    """Job ids of the sessions a `hedge serve` log shows opened, in order."""
    return re.findall(r"event=open session=\d+ job=(\S+)", log.read_text())


def assert_fallback_copied_the_straggler(run: JobRun) -> None:
    assert run.succeeded, run.client_log[-3000:]
    assert run.output == expected_output()
    totals = run.speculator_totals()
    assert len(totals) == 1 and totals[0][1] >= 1, totals  # copies by the fallback
    assert run.attempt_status(0, 1) == "SUCCEEDED"


def test_control_plane_killed_mid_job(cluster, token, tmp_path) -> None:
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    try:
        proc, folder = cluster.submit(hedge_settings(serve.port, token, "none"))
        wait_for(lambda: opened_jobs(serve.log), "the job's session open", proc)
        serve.kill()
        run = cluster.finish(proc, folder)
    finally:
        serve.stop()
    assert_fallback_copied_the_straggler(run)
    assert run.am_log().count("unavailable (") == 1, "the outage is logged once"


def test_control_plane_hung_past_the_deadline(cluster, token, tmp_path) -> None:
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    try:
        proc, folder = cluster.submit(hedge_settings(serve.port, token, "none"))
        wait_for(lambda: opened_jobs(serve.log), "the job's session open", proc)
        serve.proc.send_signal(signal.SIGSTOP)
        try:
            run = cluster.finish(proc, folder)
        finally:
            serve.proc.send_signal(signal.SIGCONT)
    finally:
        serve.stop()
    assert_fallback_copied_the_straggler(run)
    assert "1000 ms deadline" in run.am_log()


def test_control_plane_answering_garbage(cluster, token) -> None:
    service = FaultyService(token.read_text().strip(), "garbage")
    service.start()
    try:
        run = cluster.run_job(hedge_settings(service.port, token, "none"))
    finally:
        service.stop()
    assert_fallback_copied_the_straggler(run)
    assert re.search(r"unavailable \(scan \d+ of job_\S+: IOException: bad response magic\)",
                     run.am_log()), "the garbage answer is named in the AM log"


def test_wrong_token_is_reported_as_a_wrong_token(cluster, token, tmp_path) -> None:
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    wrong = write_token(tmp_path / "wrong-token")
    try:
        run = cluster.run_job(hedge_settings(serve.port, wrong, "hadoop"))
    finally:
        serve.stop()
    assert_fallback_copied_the_straggler(run)
    log = run.am_log()
    assert "token" in log and "hedge.controlplane.token.file" in log, log[-3000:]
    server_log = serve.log.read_text()
    assert opened_jobs(serve.log) == []
    assert server_log.count("Traceback") == 0, server_log[-3000:]


def test_second_application_master_opens_a_fresh_session(cluster, token, tmp_path) -> None:
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    try:
        proc, folder = cluster.submit({**hedge_settings(serve.port, token, "hadoop"),
                                       "yarn.app.mapreduce.am.job.recovery.enable": "true",
                                       "mapreduce.am.max-attempts": "2"})
        (job,) = wait_for(lambda: opened_jobs(serve.log), "the job's session open", proc)
        app = job.replace("job_", "", 1)
        pid = wait_for(lambda: am_pid(app), "the first AM's process", proc)
        os.kill(pid, signal.SIGKILL)
        run = cluster.finish(proc, folder)
    finally:
        serve.stop()
    assert run.succeeded, run.client_log[-3000:]
    assert run.output == expected_output()
    assert opened_jobs(serve.log) == [job, job], "one session per AM attempt"
    sessions = re.findall(rf"event=open session=(\d+) job={job} ", serve.log.read_text())
    assert len(set(sessions)) == 2
    assert len(run.am_logs) == 2 and "hedge: speculator for" in run.am_logs[1]


def am_pid(app: str) -> int | None:
    """The pid of the first AM attempt's container JVM of application ``app`` (ts_seq)."""
    container = f"container_{app}_01_000001".encode()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes()
        except OSError:  # the process ended meanwhile
            continue
        if b"org.apache.hadoop.mapreduce.v2.app.MRAppMaster" in args and container in args:
            return int(cmdline.parent.name)
    return None
