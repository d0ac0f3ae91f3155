"""The packaging facts that keep the Python and Java sides in step."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from hedge import __version__, javaenv
from hedge.errors import HedgeError

REPO = Path(__file__).resolve().parents[2]


def test_pom_version_equals_python_version() -> None:
    pom = (REPO / "java-shim" / "pom.xml").read_text()
    assert re.search(r"<artifactId>hedge-shim</artifactId>\s*<version>([^<]+)</version>", pom)[1] \
        == __version__


def test_shim_jar_bundles_py4j_not_hadoop_and_targets_java8() -> None:
    try:
        jar = javaenv.shim_jar()
    except HedgeError as exc:
        pytest.skip(f"needs the built shim jar: {exc}")
    names = zipfile.ZipFile(jar).namelist()
    assert any(n.startswith("py4j/") for n in names)
    assert not any(n.startswith("org/apache/hadoop/") for n in names)
    with zipfile.ZipFile(jar) as archive:
        header = archive.read("org/hedge/tools/WordCount.class")[:8]
    assert int.from_bytes(header[6:8], "big") == 52  # class file major version 52 = Java 8


def test_fetch_script_rejects_a_corrupted_cache(tmp_path: Path) -> None:
    """A jar set missing its completion marker is rebuilt, never trusted half-written."""
    script = REPO / "scripts" / "fetch_hadoop_jars.py"
    manifest = (REPO / "scripts" / "hadoop-jars.sha256").read_text()
    assert "hadoop-2.7.3/hadoop-mapreduce-client-app-2.7.3.jar" in manifest
    # An empty cache and a PyPI that cannot be reached: the script must fail cleanly and leave
    # nothing that looks complete.
    env = {"HEDGE_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin", "PIP_INDEX_URL": "http://127.0.0.1:9/",
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": "/dev/null"}
    result = subprocess.run([str(Path(javaenv.REPO / ".venv/bin/python")), str(script),
                             "hadoop-3.4.1"], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1
    assert "download of pyspark==4.0.1 failed" in result.stderr
    assert "rerun" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "hadoop" / "3.4.1" / ".complete").exists()
