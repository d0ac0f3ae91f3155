"""Where hedge's Java side lives: the Hadoop jar cache and the shim jar.

The Hadoop jars are fetched and verified by ``scripts/fetch_hadoop_jars.py`` into
``$HEDGE_CACHE/hadoop/<version>/`` (default cache ``~/.cache/hedge``). The shim jar is built
by ``scripts/build-shim.sh`` into ``java-shim/target/``; ``$HEDGE_SHIM_JAR`` overrides it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from hedge import __version__
from hedge.errors import HedgeError

REPO = Path(__file__).resolve().parents[2]
HADOOP_VERSIONS = ("2.7.3", "3.4.1")


def cache_dir() -> Path:
    return Path(os.environ.get("HEDGE_CACHE", Path.home() / ".cache" / "hedge"))


def hadoop_jars(version: str) -> list[Path]:
    """Every jar of one verified Hadoop set (sorted), or HedgeError saying how to get it."""
    if version not in HADOOP_VERSIONS:
        raise HedgeError(f"Hadoop version '{version}': expected one of {HADOOP_VERSIONS}")
    folder = cache_dir() / "hadoop" / version
    if not (folder / ".complete").is_file():
        raise HedgeError(f"Hadoop {version} jars not found in {folder}: run "
                         "scripts/fetch_hadoop_jars.py (or make setup)")
    return sorted(folder.glob("*.jar"))


def shim_jar() -> Path:
    """The built hedge-shim jar."""
    override = os.environ.get("HEDGE_SHIM_JAR")
    path = Path(override) if override else REPO / "java-shim" / "target" / f"hedge-shim-{__version__}.jar"
    if not path.is_file():
        raise HedgeError(f"hedge shim jar not found at {path}: run scripts/build-shim.sh "
                         "(or make shim)")
    return path


def shim_test_classes() -> Path:
    """Compiled test sources of the shim (drivers and harnesses used by integration tests)."""
    path = REPO / "java-shim" / "target" / "test-classes"
    if not path.is_dir():
        raise HedgeError(f"{path} not found: run scripts/build-shim.sh (or make shim)")
    return path


def java_executable() -> str:
    java = shutil.which("java")
    if java is None:
        raise HedgeError("no 'java' on PATH: install a JDK (make setup installs openjdk-17)")
    return java


def classpath(version: str, *extra: Path) -> str:
    """Shim jar, extra entries, then the Hadoop set, joined for ``java -cp``."""
    entries = [shim_jar(), *extra, *hadoop_jars(version)]
    return os.pathsep.join(str(e) for e in entries)


def run_java(
    main_class: str,
    args: list[str],
    version: str,
    extra_classpath: tuple[Path, ...] = (),
    timeout: float = 300,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a Java main class against one Hadoop version; output captured as text."""
    command = [java_executable(), "-Xmx1g", "-cp", classpath(version, *extra_classpath),
               main_class, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd)
