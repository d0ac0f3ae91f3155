"""The packaging facts that keep the Python and Java sides in step."""

from __future__ import annotations

import re
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


def test_pom_py4j_version_equals_the_python_pin() -> None:
    """The shim bundles Py4J from Maven Central; the control plane's must be the same release."""
    pom = (REPO / "java-shim" / "pom.xml").read_text()
    pin = re.search(r"^\s*py4j==(\S+)", (REPO / "setup.cfg").read_text(), re.MULTILINE)[1]
    assert re.search(r"<py4j.version>([^<]+)</py4j.version>", pom)[1] == pin


def test_missing_classpath_file_names_it_and_the_build_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEDGE_CACHE", str(tmp_path))
    with pytest.raises(HedgeError) as error:
        javaenv.hadoop_jars("3.3.6")
    assert str(tmp_path / "hadoop" / "3.3.6.classpath") in str(error.value)
    assert "make shim" in str(error.value)


def test_classpath_listing_a_vanished_jar_names_the_jar(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEDGE_CACHE", str(tmp_path))
    present, gone = tmp_path / "a.jar", tmp_path / "m2" / "b.jar"
    present.write_bytes(b"")
    (tmp_path / "hadoop").mkdir()
    (tmp_path / "hadoop" / "2.7.3.classpath").write_text(f"{present}:{gone}\n")
    with pytest.raises(HedgeError) as error:
        javaenv.hadoop_jars("2.7.3")
    assert str(gone) in str(error.value)
    assert "make shim" in str(error.value)
    (tmp_path / "hadoop" / "2.7.3.classpath").write_text(f"{present}\n")
    assert javaenv.hadoop_jars("2.7.3") == [present]


@pytest.mark.parametrize("version", javaenv.HADOOP_VERSIONS)
def test_each_classpath_holds_that_versions_mapreduce_app(version: str) -> None:
    """MRAppMaster and the Speculator interfaces of the same release, or the shim's speculator
    cannot load in that version's AM."""
    try:
        jars = javaenv.hadoop_jars(version)
    except HedgeError as exc:
        pytest.skip(f"needs the built classpaths: {exc}")
    names = {jar.name for jar in jars}
    assert f"hadoop-mapreduce-client-app-{version}.jar" in names
    assert f"hadoop-common-{version}.jar" in names
    assert not [n for n in names if n.startswith("hadoop-") and version not in n
                and not n.startswith("hadoop-shaded-")], names


def test_java_command_opens_jdk_internals_and_orders_the_classpath(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEDGE_CACHE", str(tmp_path))
    monkeypatch.setenv("HEDGE_SHIM_JAR", str(tmp_path / "shim.jar"))
    (tmp_path / "shim.jar").write_bytes(b"")
    hadoop = tmp_path / "hadoop-common.jar"
    hadoop.write_bytes(b"")
    (tmp_path / "hadoop").mkdir()
    (tmp_path / "hadoop" / "3.4.1.classpath").write_text(str(hadoop))
    command = javaenv.java_command("Main", ["x"], "3.4.1", (tmp_path / "extra",), heap="256m")
    assert command[1] == "-Xmx256m"
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in command
    assert "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED" in command
    cp = command[command.index("-cp") + 1]
    assert cp.split(":") == [str(tmp_path / "shim.jar"), str(tmp_path / "extra"), str(hadoop)]
    assert command[-2:] == ["Main", "x"]
