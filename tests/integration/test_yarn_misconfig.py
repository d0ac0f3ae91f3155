"""Cluster-side misconfiguration on a real YARN cluster: one clear line, and the job runs on.

An operator can get hedge's mapred-site.xml settings wrong in four ways the control plane
cannot see for them: a policy name the server does not know, an address nothing listens on,
a token file the ApplicationMaster cannot read, and a shim jar from another hedge release
than `hedge serve`. Each time the straggler job of test_yarn_speculation must succeed with
the right output, Hadoop's default rule (the fallback) must still copy the straggler, and
the AM's log must say once which property is wrong, its value and the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hedge.server import wire
from hedge.server.service import ControlPlaneService, ServerConfig
from tests.integration.plugin_support import ServeProcess, write_token
from tests.integration.test_yarn_faults import VERSION, assert_fallback_copied_the_straggler
from tests.integration.yarn_cluster import JobRun, MiniYarn, free_port, hedge_settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]


@pytest.fixture()
def cluster(yarn_cluster) -> MiniYarn:
    return yarn_cluster(VERSION)


@pytest.fixture()
def token(tmp_path: Path) -> Path:
    return write_token(tmp_path / "token")


def hedge_warning(run: JobRun, marker: str) -> str:
    """The AM's one log line that contains ``marker`` (asserting there is exactly one)."""
    lines = [line for line in run.am_log().splitlines() if marker in line]
    assert len(lines) == 1, f"{marker!r} in {len(lines)} AM log lines: {lines[:3]}"
    return lines[0]


def test_unknown_policy_name(cluster, token, tmp_path) -> None:
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    try:
        run = cluster.run_job(hedge_settings(serve.port, token, "bogus"))
    finally:
        serve.stop()
    assert_fallback_copied_the_straggler(run)
    line = hedge_warning(run, "control plane refused job")
    assert "unknown policy 'bogus', expected one of:" in line and "adaptive" in line, line
    assert "(hedge.policy = bogus)" in line, line
    assert "Hadoop-default speculation" in line, line


def test_unreachable_address(cluster, token) -> None:
    port = free_port()  # nothing listens there
    run = cluster.run_job(hedge_settings(port, token, "hadoop"))
    assert_fallback_copied_the_straggler(run)
    line = hedge_warning(run, "unavailable (")
    assert f"hedge.controlplane.address = 127.0.0.1:{port}" in line, line
    assert "Connection refused" in line, line
    assert "check that 'hedge serve' runs" in line, line


def test_unreadable_token_file(cluster, tmp_path) -> None:
    missing = tmp_path / "no-such-token"
    run = cluster.run_job(hedge_settings(free_port(), missing, "hadoop"))
    assert_fallback_copied_the_straggler(run)
    line = hedge_warning(run, "control plane not usable")
    assert f"cannot read hedge.controlplane.token.file = {missing}" in line, line
    assert "NoSuchFileException" in line and "ship the token with -files" in line, line


class OtherReleaseService(ControlPlaneService):
    """A real control plane that speaks the next wire version, as a `hedge serve` of another
    hedge release would (only the version it announces differs)."""

    def open(self, job_id: str, policy: str, params_text: str) -> str:
        answer = super().open(job_id, policy, params_text)
        return answer.rsplit(" ", 1)[0] + f" {wire.VERSION + 1}"


def test_shim_jar_of_another_release(cluster, token) -> None:
    service = OtherReleaseService(ServerConfig(port=0, token=token.read_text().strip(),
                                               policy="hadoop"))
    service.start()
    try:
        run = cluster.run_job(hedge_settings(service.port, token, "hadoop"))
    finally:
        service.stop()
    assert_fallback_copied_the_straggler(run)
    line = hedge_warning(run, "wire version")
    assert f"speaks wire version {wire.VERSION + 1}, this hedge-shim jar speaks " \
           f"{wire.VERSION}" in line, line
    assert "install the hedge-shim jar of the same hedge release" in line, line
    assert "unavailable (" not in run.am_log(), "a version mismatch is not an outage"
