"""Where hedge's Java side lives: the Hadoop classpaths, the shim and cluster jars, ``java``.

``scripts/build-shim.sh`` (``make shim``) builds everything from Maven Central: the shim jar
into ``java-shim/target/`` (``$HEDGE_SHIM_JAR`` overrides it), the mini-cluster test bed into
``java-shim/cluster/target/``, and one runtime classpath per tested Hadoop version into
``$HEDGE_CACHE/hadoop/<version>.classpath`` (default cache ``~/.cache/hedge``; the jars it
lists live in the Maven repository ``$HEDGE_CACHE/m2``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from hedge import __version__
from hedge.errors import HedgeError

REPO = Path(__file__).resolve().parents[2]
# 2.7.3: what the shim compiles against (and the AM harness); 3.3.6 and 3.4.1: the mini cluster.
HADOOP_VERSIONS = ("2.7.3", "3.3.6", "3.4.1")
BUILD_HINT = "run scripts/build-shim.sh (or make shim)"

# Hadoop 3.x (its RPC, shell, Kerberos and test clusters) reflects into these JDK internals;
# on Java 17 that fails unless they are opened to the class path. Harmless on 2.7.3, so every
# command gets them.
JAVA17_OPENS: tuple[str, ...] = tuple(
    f"--add-opens={package}=ALL-UNNAMED" for package in (
        "java.base/java.lang",
        "java.base/java.lang.reflect",
        "java.base/java.io",
        "java.base/java.net",
        "java.base/java.nio",
        "java.base/java.util",
        "java.base/java.util.concurrent",
        "java.base/java.util.concurrent.atomic",
        "java.base/sun.nio.ch",
        "java.base/sun.nio.cs",
        "java.base/sun.security.action",
        "java.base/sun.util.calendar",
        "java.security.jgss/sun.security.krb5",
    )
)


def cache_dir() -> Path:
    return Path(os.environ.get("HEDGE_CACHE", Path.home() / ".cache" / "hedge"))


def classpath_file(version: str) -> Path:
    """The runtime classpath file build-shim.sh writes for one Hadoop version."""
    if version not in HADOOP_VERSIONS:
        raise HedgeError(f"Hadoop version '{version}': expected one of {HADOOP_VERSIONS}")
    return cache_dir() / "hadoop" / f"{version}.classpath"


def hadoop_jars(version: str) -> list[Path]:
    """The jars of one Hadoop version's runtime classpath (Hadoop and its dependencies)."""
    path = classpath_file(version)
    if not path.is_file():
        raise HedgeError(f"Hadoop {version} classpath file {path} not found: {BUILD_HINT}")
    jars = [Path(entry) for entry in path.read_text().strip().split(os.pathsep) if entry]
    if not jars:
        raise HedgeError(f"Hadoop {version} classpath file {path} is empty: {BUILD_HINT}")
    for jar in jars:
        if not jar.is_file():
            raise HedgeError(f"{jar}, listed in {path}, not found (Maven repository pruned?): "
                             f"{BUILD_HINT}")
    return jars


def shim_jar() -> Path:
    """The built hedge-shim jar."""
    override = os.environ.get("HEDGE_SHIM_JAR")
    path = Path(override) if override else REPO / "java-shim" / "target" / f"hedge-shim-{__version__}.jar"
    if not path.is_file():
        raise HedgeError(f"hedge shim jar not found at {path}: {BUILD_HINT}")
    return path


def cluster_jar() -> Path:
    """The built hedge-cluster jar (the mini-cluster test bed, never shipped)."""
    path = REPO / "java-shim" / "cluster" / "target" / f"hedge-cluster-{__version__}.jar"
    if not path.is_file():
        raise HedgeError(f"hedge cluster jar not found at {path}: {BUILD_HINT}")
    return path


# hadoop-mapreduce-examples (wordcount, teragen, terasort, ...), copied by build-shim.sh. Maven
# Central has no 3.4.0 or 3.4.1 build of it; the 3.3.6 jar uses only the stable MapReduce API
# and runs on every 3.x Hadoop here.
EXAMPLES_VERSION = "3.3.6"


def examples_jar() -> Path:
    """The hadoop-mapreduce-examples jar in the hedge cache."""
    path = cache_dir() / "hadoop" / f"hadoop-mapreduce-examples-{EXAMPLES_VERSION}.jar"
    if not path.is_file():
        raise HedgeError(f"Hadoop examples jar {path} not found: {BUILD_HINT}")
    return path


def shim_test_classes() -> Path:
    """Compiled test sources of the shim (drivers and harnesses used by integration tests)."""
    path = REPO / "java-shim" / "target" / "test-classes"
    if not path.is_dir():
        raise HedgeError(f"{path} not found: {BUILD_HINT}")
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


def java_command(
    main_class: str,
    args: Sequence[str],
    version: str,
    extra_classpath: Sequence[Path] = (),
    heap: str = "1g",
    jvm_options: Sequence[str] = (),
) -> list[str]:
    """The full ``java`` command line for a main class against one Hadoop version."""
    return [java_executable(), f"-Xmx{heap}", *JAVA17_OPENS, *jvm_options,
            "-cp", classpath(version, *extra_classpath), main_class, *args]


def run_java(
    main_class: str,
    args: list[str],
    version: str,
    extra_classpath: tuple[Path, ...] = (),
    timeout: float = 300,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a Java main class against one Hadoop version; output captured as text."""
    command = java_command(main_class, args, version, extra_classpath)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd)
