"""scripts/cluster.sh: usage, and --docker saying plainly when no Docker engine answers.

A stand-in `docker` command on PATH behaves like a client whose engine is not running; `up`
and `down` exit 1 quoting what `docker info` said, and `up` starts nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "cluster.sh"
NO_ENGINE = ("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
             "Is the docker daemon running?")


def fake_docker(folder: Path) -> dict[str, str]:
    """A `docker` whose every command fails as a client without an engine does."""
    folder.mkdir(exist_ok=True)
    docker = folder / "docker"
    docker.write_text(f"#!/bin/sh\necho 'Client:'\necho '{NO_ENGINE}' >&2\nexit 1\n")
    docker.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}",
            "HEDGE_PYTHON": sys.executable}


def run(work: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), "--docker", "--dir", str(work), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_no_engine_is_reported_plainly(tmp_path: Path) -> None:
    env = fake_docker(tmp_path / "bin")
    for command in ("up", "down"):
        result = run(tmp_path / "cluster", env, command)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "cluster: no Docker engine is reachable; `docker info` says:" in result.stderr
        assert NO_ENGINE in result.stderr
    assert not (tmp_path / "cluster" / "cluster.json").exists()


def test_usage_without_a_command(tmp_path: Path) -> None:
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "scripts/cluster.sh up" in result.stdout
    assert "scripts/cluster.sh --docker up" in result.stdout
