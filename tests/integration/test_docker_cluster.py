"""The docker cluster of ``scripts/cluster.sh --docker``: up, one job, down.

The same daemons as the process cluster (test_process_cluster.py), each in a container of the
hedge-hadoop image that scripts/docker-image.sh builds without a registry (``up`` builds it
when missing): ``up`` starts them on the host's network; the straggler job runs from a client
container with hedge's speculator (policy ``hadoop``): it succeeds, ``hedge serve`` (in its
container) opened the job's session and copied map 0, the copy won; ``down`` leaves no
container (by the cluster's label) and no process of the work dir, and is idempotent. A
NameNode whose port is taken exits: ``up`` names it with its log's last lines and removes
every container it started. Needs a reachable Docker engine (else skipped with what
`docker info` said); run with ``.venv/bin/pytest -m docker``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_process_cluster import (
    DAEMONS,
    VERSION,
    assert_hedge_copied_the_straggler,
    cluster_sh,
    processes_of,
)
from tests.integration.yarn_cluster import require_cluster_side

IMAGE = os.environ.get("HEDGE_HADOOP_IMAGE", "hedge-hadoop:latest")
UP_TIMEOUT_S = 1800  # a cold image build (debootstrap, docker build) is part of the first up


def require_docker() -> None:
    """Skip, naming what is missing: the client, or an engine that answers `docker info`;
    without the image, what building it needs (root, the Java side of make shim)."""
    if shutil.which("docker") is None:
        pytest.skip("needs a Docker engine: no `docker` client on PATH (apt-get install "
                    "docker.io, then dockerd as root)")
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60,
                          check=False)
    if info.returncode != 0:
        said = (info.stdout + info.stderr).strip()[-1500:]
        pytest.skip(f"needs a Docker engine: `docker info` exited {info.returncode}:\n{said}")
    image = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True,
                           check=False)
    if image.returncode != 0:  # up builds it: scripts/docker-image.sh's needs
        if os.geteuid() != 0:
            pytest.skip(f"image {IMAGE} is missing and building it needs root (debootstrap)")
        require_cluster_side(VERSION)


def containers(work: Path, running_only: bool = False) -> list[str]:
    command = ["docker", "ps", "--filter", f"label=hedge.cluster={work}", "--format",
               "{{.Names}}"]
    if not running_only:
        command.insert(2, "-a")
    listed = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    return sorted(listed.stdout.split())


def docker_sh(work: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return cluster_sh(work, "--docker", *args, timeout=timeout)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.yarn
@pytest.mark.docker
def test_docker_up_straggler_job_down(tmp_path: Path) -> None:
    require_docker()
    work = tmp_path / "cluster"
    up = docker_sh(work, "up", "--ports", "auto", timeout=UP_TIMEOUT_S)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        for name in DAEMONS:
            assert f"cluster: {name} ready" in up.stdout
        running = containers(work, running_only=True)
        assert [name.split("-", 2)[2] for name in running] == sorted(DAEMONS), running
        state = json.loads((work / "cluster.json").read_text())
        assert state["launcher"]["kind"] == "docker"

        job = docker_sh(work, "sleep", "--speculation", "hadoop", timeout=1200)
        # hedge serve (a container of the image) served the job and copied map 0; the copy won
        assert_hedge_copied_the_straggler(work, job)
    finally:
        down = docker_sh(work, "down", timeout=300)
    assert down.returncode == 0, down.stdout + down.stderr
    assert containers(work) == []
    assert processes_of(work) == []
    again = docker_sh(work, "down", timeout=120)
    assert again.returncode == 0 and "nothing" in again.stdout, again.stdout + again.stderr


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.yarn
@pytest.mark.docker
def test_docker_up_names_the_namenode_whose_container_exited(tmp_path: Path) -> None:
    require_docker()
    work = tmp_path / "cluster"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        up = docker_sh(work, "up", "--ports", "auto", "--port", f"nn.rpc={port}",
                       timeout=UP_TIMEOUT_S)
    assert up.returncode == 1, up.stdout + up.stderr
    log = work / "logs" / "namenode.log"
    assert "namenode failed to start (exited with code" in up.stderr, up.stderr
    assert f"the last lines of {log}" in up.stderr
    assert "Address already in use" in up.stderr or "BindException" in up.stderr, up.stderr
    assert "nothing of it is left running" in up.stderr
    assert containers(work) == []
    assert processes_of(work) == []
