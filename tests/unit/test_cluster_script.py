"""scripts/cluster.sh refuses to start, saying why, where Docker or the images are missing.

The pseudo-distributed cluster itself cannot run on hedge's build machines (no image
registry is reachable); these tests check the preflight that says so, with a stand-in
`docker` command on PATH that behaves like a client whose engine or registry is missing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "cluster.sh"


def fake_docker(folder: Path, engine_up: bool) -> dict[str, str]:
    """A `docker` that answers `info` per engine_up, knows no image, and cannot pull."""
    folder.mkdir(exist_ok=True)
    docker = folder / "docker"
    docker.write_text(
        "#!/bin/sh\n"
        f'[ "$1" = info ] && exit {0 if engine_up else 1}\n'
        '[ "$1" = pull ] && { echo "dial tcp: lookup registry: no such host" >&2; exit 1; }\n'
        "exit 1\n"
    )
    docker.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"}


def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), "up"], capture_output=True, text=True, env=env,
                          timeout=120)


def test_no_engine_is_reported_plainly(tmp_path: Path) -> None:
    result = run(fake_docker(tmp_path / "bin", engine_up=False))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "cluster: no Docker engine is running (start dockerd, or check DOCKER_HOST)")


def test_unreachable_registry_is_reported_plainly(tmp_path: Path) -> None:
    result = run(fake_docker(tmp_path / "bin", engine_up=True))
    assert result.returncode == 1
    assert "no image registry is reachable from this machine" in result.stderr
    assert "docker pull apache/hadoop:3.3.6" in result.stderr


def test_usage_without_a_command(tmp_path: Path) -> None:
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "scripts/cluster.sh up" in result.stdout
