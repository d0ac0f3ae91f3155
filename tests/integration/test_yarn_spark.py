"""``hedge imkp build --engine spark --spark-master yarn`` on a real YARN cluster.

The mini cluster (MiniMRYarnCluster + MiniDFSCluster) gets a client-mode Spark application
from the CLI, as an operator would submit it: ``HADOOP_CONF_DIR`` holds a core-site.xml and a
yarn-site.xml with the cluster's addresses only, and the inputs are an HDFS folder read by
Spark's own HDFS client plus one local file read as ``file://`` (every NodeManager runs on
this machine). The mapping must equal, byte for byte, the local build of the same text, and
the application must have run in YARN containers: its ApplicationMaster's log says
"Final app status: SUCCEEDED" and an executor's log shows it registered and ran tasks.

Spark's jars reach the containers as ``spark.yarn.jars=local:<pyspark>/jars/*`` (they are on
every node here), which skips zipping and uploading ~450 MB per application.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_imkp_wordcount import zipf_text
from tests.integration.yarn_cluster import MiniYarn

pyspark = pytest.importorskip("pyspark", reason="needs pyspark (pip install pyspark==4.0.1)")
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]

VERSION = "3.4.1"
BUILD_TIMEOUT_S = 300
CLIENT_KEYS = ("fs.defaultFS", "yarn.resourcemanager.address",
               "yarn.resourcemanager.scheduler.address", "yarn.resourcemanager.webapp.address")


def hadoop_conf_dir(cluster: MiniYarn, folder: Path) -> Path:
    """A client configuration folder as on an edge node: the cluster's addresses only (its
    full dump also names test-only classes, e.g. StaticMapping for rack resolution)."""
    text = cluster.conf.read_text()
    props = dict(re.findall(r"<name>([^<]+)</name><value>([^<]*)</value>", text))
    body = "".join(f"  <property><name>{k}</name><value>{props[k]}</value></property>\n"
                   for k in CLIENT_KEYS)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("core-site.xml", "yarn-site.xml"):
        (folder / name).write_text(f"<configuration>\n{body}</configuration>\n")
    return folder


def hedge(args: list[str], env: dict[str, str], cwd: Path,
          timeout: float = BUILD_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hedge.cli", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=timeout)


def test_spark_build_on_yarn_is_identical_to_the_local_build(yarn_cluster, tmp_path: Path
                                                             ) -> None:
    cluster: MiniYarn = yarn_cluster(VERSION, dfs=True)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(zipf_text(30_000, 1.1), encoding="utf-8")
    (tmp_path / "in" / "b.txt").write_text(zipf_text(20_000, 1.0) + "Zürich épée\r\n",
                                           encoding="utf-8")
    (tmp_path / "c.txt").write_text(zipf_text(10_000, 1.2), encoding="utf-8")
    cluster.fs("-mkdir", "-p", "/spark/in")
    cluster.fs("-put", "-f", str(tmp_path / "in" / "a.txt"), str(tmp_path / "in" / "b.txt"),
               "/spark/in/")
    hdfs_in = cluster.default_fs.rstrip("/") + "/spark/in"
    assert hdfs_in.startswith("hdfs://")
    common = ["-r", "4", "--scale", "6", "--no-progress"]

    env = {k: v for k, v in os.environ.items()
           if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_HOME", "SPARK_CONF_DIR")}
    local = hedge(["imkp", "build", str(tmp_path / "in"), str(tmp_path / "c.txt"), *common,
                   "-o", str(tmp_path / "local.imkp")], env, tmp_path)
    assert local.returncode == 0, local.stderr[-3000:]

    jars = Path(pyspark.__file__).parent / "jars"
    env["HADOOP_CONF_DIR"] = str(hadoop_conf_dir(cluster, tmp_path / "hadoop-conf"))
    spark_conf = {"spark.executor.instances": "1", "spark.executor.cores": "1",
                  "spark.executor.memory": "512m", "spark.yarn.am.memory": "512m",
                  "spark.yarn.jars": f"local:{jars}/*",
                  "spark.ui.showConsoleProgress": "false"}
    options = [arg for k, v in spark_conf.items() for arg in ("--spark-conf", f"{k}={v}")]
    run = hedge(["imkp", "build", hdfs_in, str(tmp_path / "c.txt"), *common,
                 "-o", str(tmp_path / "yarn.imkp"), "--engine", "spark",
                 "--spark-master", "yarn", *options], env, tmp_path)
    assert run.returncode == 0, run.stderr[-5000:]
    assert (tmp_path / "yarn.imkp").read_bytes() == (tmp_path / "local.imkp").read_bytes()

    app = re.search(r"hedge: Spark application (application_\d+_\d+) on yarn", run.stderr)
    assert app, run.stderr[-3000:]
    logs = {c.name: (c / "stderr").read_text(errors="replace")
            for d in cluster.application_dirs(app[1].replace("application_", "job_", 1))
            for c in d.glob("container_*") if (c / "stderr").is_file()}
    am = [text for name, text in logs.items() if name.endswith("_01_000001")]
    assert am and "Final app status: SUCCEEDED" in am[0], sorted(logs)
    executors = [text for name, text in logs.items() if not name.endswith("_000001")]
    assert any("YarnCoarseGrainedExecutorBackend: Successfully registered with driver" in text
               and "Finished task" in text for text in executors), sorted(logs)
