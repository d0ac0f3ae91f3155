"""A real YARN cluster for hedge's tests: MiniMRYarnCluster in a JVM of its own.

``MiniYarn`` starts ``org.hedge.cluster.ClusterMain`` (java-shim/cluster): a ResourceManager,
NodeManagers and a JobHistoryServer in one JVM, every container (the MRAppMaster, each task)
a JVM of its own launched by a NodeManager. ``MiniYarn.run_job`` submits
``org.hedge.cluster.StragglerJob`` from a separate client JVM; the mini cluster hands the
client's classpath (hedge's shim jar among it) to every container, as an operator's
``mapreduce.application.classpath`` would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from hedge import javaenv
from hedge.errors import HedgeError
from hedge.traces import jhist

CLUSTER_VERSIONS = ("3.3.6", "3.4.1")
READY_TIMEOUT_S = 240
JOB_TIMEOUT_S = 420

# The injected straggler: attempt 0 of map 0 works 6x slower than every other attempt
# (10 records x 1 s for a normal attempt, 10 x 6 s for the straggler). Normal maps run long
# enough that policies comparing running tasks (LATE) see the straggler beside its peers.
STRAGGLER_JOB = {"hedge.test.maps": "4", "hedge.test.records": "10",
                 "hedge.test.record.ms": "1000", "hedge.test.straggler.task": "0",
                 "hedge.test.straggler.slowdown": "6"}


# Policy parameters for a job of seconds: LATE copies only attempts older than min_elapsed
# (60 s by default, as in the paper), longer than this whole job runs.
POLICY_PARAMS = {"late": {"hedge.late.min_elapsed": "5"}}


def require_cluster_side(version: str) -> None:
    """Skip, naming what is missing, when Java, the Hadoop jars or hedge's jars are absent."""
    try:
        javaenv.java_executable()
        javaenv.hadoop_jars(version)
        javaenv.shim_jar()
        javaenv.cluster_jar()
    except HedgeError as exc:
        pytest.skip(f"needs the Java side: {exc}")


def hedge_settings(port: int, token: Path, policy: str) -> dict[str, str]:
    """Job settings that put hedge's speculator and estimator into the job's AM, with the
    policy's POLICY_PARAMS."""
    return {
        **POLICY_PARAMS.get(policy, {}),
        "yarn.app.mapreduce.am.job.speculator.class": "org.hedge.shim.HedgeSpeculator",
        "yarn.app.mapreduce.am.job.task.estimator.class": "org.hedge.shim.HedgeRuntimeEstimator",
        "hedge.controlplane.address": f"127.0.0.1:{port}",
        "hedge.controlplane.token.file": str(token),
        "hedge.policy": policy,
        # two cores run the AM, up to five task JVMs and the server: allow a slow answer
        "hedge.controlplane.deadline.ms": "1000",
        "hedge.controlplane.backoff.max.ms": "4000",
    }


@dataclass
class JobRun:
    """A finished job: the client's summary, the job's output and the AM's log."""

    summary: dict
    output: dict[str, int]
    am_logs: list[str]
    client_log: str

    @property
    def job_id(self) -> str:
        return self.summary["job"]

    @property
    def succeeded(self) -> bool:
        return self.summary["state"] == "SUCCEEDED"

    @property
    def seconds(self) -> float:
        """Job run time (AM start to finish), as the job's own status reports it."""
        return (self.summary["finished"] - self.summary["started"]) / 1000

    def counter(self, name: str) -> int:
        matches = [v for k, v in self.summary["counters"].items() if k.endswith("/" + name)]
        return matches[0] if matches else 0

    def attempt_status(self, task: int, attempt: int) -> str | None:
        """The completion status of map attempt ``attempt`` of map ``task`` (None: none)."""
        suffix = f"_m_{task:06d}_{attempt}"
        for event in self.summary["attempts"]:
            if event["attempt"].endswith(suffix):
                return event["status"]
        return None

    def am_log(self) -> str:
        return "\n".join(self.am_logs)

    def speculator_totals(self) -> list[tuple[int, int]]:
        """(copies, fallback copies) from each AM attempt's 'speculator stopped' line."""
        return [(int(m[1]), int(m[2])) for m in re.finditer(
            r"hedge: speculator stopped; copies (\d+) \(fallback (\d+)\)", self.am_log())]


class MiniYarn:
    """ClusterMain as a child process; ``conf`` is the client configuration it wrote."""

    def __init__(self, version: str, work: Path, nodemanagers: int = 2, dfs: bool = False,
                 ) -> None:
        self.version, self.work, self.nodemanagers, self.dfs = version, work, nodemanagers, dfs
        self.conf = work / "cluster.xml"
        self.log = work / "cluster.log"
        self.proc: subprocess.Popen[str] | None = None
        self.jobs = 0

    def java(self, main: str, args: list[str], heap: str, *extra: Path) -> list[str]:
        return javaenv.java_command(main, args, self.version,
                                    extra_classpath=(javaenv.cluster_jar(), *extra), heap=heap)

    def start(self) -> MiniYarn:
        self.work.mkdir(parents=True, exist_ok=True)
        command = self.java("org.hedge.cluster.ClusterMain",
                            ["--dir", str(self.work), "--nodemanagers", str(self.nodemanagers),
                             *(["--dfs"] if self.dfs else [])], heap="1g")
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log,
                                         stderr=subprocess.STDOUT, text=True, cwd=self.work)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self.conf.is_file():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mini cluster {self.version} did not start; log tail:\n"
                                   f"{self.log.read_text()[-4000:]}")
            time.sleep(0.5)
        return self

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            self.proc.stdin.write("stop\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=90)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=30)

    def submit(self, settings: dict[str, str]) -> tuple[subprocess.Popen[str], Path]:
        """Start one StragglerJob client; returns the process and its job folder."""
        self.jobs += 1
        folder = self.work / f"job{self.jobs}"
        folder.mkdir()
        args = ["-conf", str(self.conf)]
        for key, value in {**STRAGGLER_JOB, **settings}.items():
            args += ["-D", f"{key}={value}"]
        args += ["--out", (folder / "out").as_uri(), "--summary", str(folder / "summary.json")]
        with (folder / "client.log").open("w") as log:
            proc = subprocess.Popen(self.java("org.hedge.cluster.StragglerJob", args, "512m"),
                                    stdout=log, stderr=subprocess.STDOUT, text=True,
                                    cwd=folder)
        return proc, folder

    def finish(self, proc: subprocess.Popen[str], folder: Path) -> JobRun:
        """Wait for a submitted job and gather what it left behind."""
        try:
            proc.wait(timeout=JOB_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        client_log = (folder / "client.log").read_text()
        summary_file = folder / "summary.json"
        if not summary_file.is_file():
            raise AssertionError(f"job client exited {proc.returncode} without a summary:\n"
                                 f"{client_log[-4000:]}")
        summary = json.loads(summary_file.read_text())
        return JobRun(summary, read_output(folder / "out"), self.am_logs(summary["job"]),
                      client_log)

    def client(self, main: str, args: list[str], cwd: Path,
               timeout: float = JOB_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """Run a Hadoop client main class (a Tool) against this cluster, output captured.

        The cluster's configuration is also on the classpath as core-site.xml: FsShell turns
        off quiet mode and fails when no core-site.xml is found."""
        site = self.work / "client-conf"
        if not (site / "core-site.xml").is_file():
            site.mkdir(exist_ok=True)
            shutil.copyfile(self.conf, site / "core-site.xml")
        command = self.java(main, ["-conf", str(self.conf), *args], "512m", site)
        return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout)

    def fs(self, *args: str) -> None:
        """``hadoop fs ARGS`` on the cluster's default file system (HDFS with dfs=True)."""
        result = self.client("org.apache.hadoop.fs.FsShell", list(args), self.work, timeout=120)
        assert result.returncode == 0, f"hadoop fs {' '.join(args)}:\n{result.stderr[-2000:]}"

    @property
    def default_fs(self) -> str:
        text = self.conf.read_text()
        match = re.search(r"<name>fs\.defaultFS</name>\s*<value>([^<]+)</value>", text)
        return match[1] if match else "file:///"

    def run_job(self, settings: dict[str, str]) -> JobRun:
        return self.finish(*self.submit(settings))

    def application_dirs(self, job_id: str) -> list[Path]:
        app = job_id.replace("job_", "application_", 1)
        return sorted(self.work.glob(f"**/{app}"))  # the mini NMs' and NodeManagerProcess

    def am_logs(self, job_id: str) -> list[str]:
        """The syslog of each AM attempt (container 000001 of attempt 01, 02, ...)."""
        logs = []
        for app in self.application_dirs(job_id):
            for syslog in sorted(app.glob("container_*_000001/syslog")):
                logs.append(syslog.read_text(errors="replace"))
        return logs

    def history_file(self, job_id: str) -> Path:
        """A copy of the job's .jhist that stays put (a history server moves the original
        from intermediate/ to done/ at any time); from /hedge/history on a dfs cluster."""
        copy = self.work / "jhist" / f"{job_id}.jhist"
        for _ in range(10):
            if copy.is_file():
                return copy
            root = self.work / "history"
            if self.dfs:
                root = self.work / f"history-{job_id}"
                shutil.rmtree(root, ignore_errors=True)
                self.fs("-get", "/hedge/history", str(root))
            found = sorted(root.glob(f"**/{job_id}-*.jhist"))
            assert len(found) <= 1, found
            try:
                copy.parent.mkdir(exist_ok=True)
                shutil.copyfile(found[0], copy)
            except (IndexError, FileNotFoundError):  # not written yet, or moved meanwhile
                time.sleep(1)
        raise AssertionError(f"no .jhist for {job_id} under {self.work}")


class HistoryServer:
    """A JobHistoryServer in a JVM of its own, serving the cluster's job history.

    MiniMRYarnCluster's own history server shares one JVM with the ResourceManager's and the
    NodeManagers' web apps; Guice's filter is static, so its REST API (/ws/v1/history)
    answers 404 there. This one reads the same done and intermediate folders.
    """

    def __init__(self, cluster: MiniYarn) -> None:
        self.cluster = cluster
        self.folder = cluster.work / "jhs"
        self.port = free_port()
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HistoryServer:
        conf = self.folder / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        text = self.cluster.conf.read_text()
        for key, port in (("webapp.address", self.port), ("address", free_port()),
                          ("admin.address", free_port())):
            text = re.sub(rf"(<name>mapreduce\.jobhistory\.{re.escape(key)}</name>\s*<value>)"
                          r"[^<]*", rf"\g<1>127.0.0.1:{port}", text)
        (conf / "mapred-site.xml").write_text(text)
        command = javaenv.java_command("org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer", [],
                                       self.cluster.version, extra_classpath=(conf,),
                                       heap="512m")
        with (self.folder / "jhs.log").open("w") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                         cwd=self.folder)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("history server did not start; log tail:\n"
                                   f"{(self.folder / 'jhs.log').read_text()[-3000:]}")
            time.sleep(0.5)
        return self

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/ws/v1/history/info", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        terminate(self.proc)


class NodeManagerProcess:
    """A NodeManager in a JVM of its own, joined to a MiniYarn's ResourceManager, under its
    own loopback address (127.0.0.N) as its host name, running hedge's health-check script.

    The mini cluster's own NodeManagers share one JVM, one environment and one host name, so a
    per-node health script cannot tell them apart; this one gets HEDGE_HOSTNAME = its host.
    """

    def __init__(self, cluster: MiniYarn, host: str, blacklist: Path,
                 health_interval_ms: int = 1000) -> None:
        self.cluster, self.host, self.blacklist = cluster, host, blacklist
        self.interval_ms = health_interval_ms
        self.folder = cluster.work / f"nm-{host}"
        self.proc: subprocess.Popen[str] | None = None

    def site(self) -> str:
        """The cluster's configuration with this NodeManager's addresses, dirs and script."""
        own = {
            "yarn.nodemanager.hostname": self.host,
            "yarn.nodemanager.address": f"{self.host}:0",
            "yarn.nodemanager.localizer.address": f"{self.host}:0",
            "yarn.nodemanager.webapp.address": f"{self.host}:0",
            "yarn.nodemanager.local-dirs": str(self.folder / "local"),
            "yarn.nodemanager.log-dirs": str(self.folder / "logs"),
            "yarn.nodemanager.recovery.enabled": "false",
            "yarn.nodemanager.health-checker.script.path":
                str(javaenv.REPO / "scripts" / "hedge-health-check.sh"),
            "yarn.nodemanager.health-checker.script.opts": str(self.blacklist),
            "yarn.nodemanager.health-checker.interval-ms": str(self.interval_ms),
        }
        extra = "".join(f"<property><name>{k}</name><value>{v}</value></property>\n"
                        for k, v in own.items())
        return self.cluster.conf.read_text().replace("</configuration>",
                                                     extra + "</configuration>")

    def start(self) -> NodeManagerProcess:
        conf = self.folder / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "yarn-site.xml").write_text(self.site())
        # The shuffle handler reads its port through a JobConf, whose mapred-default.xml
        # (13562) is loaded after yarn-site.xml and wins there: only mapred-site.xml sets it.
        (conf / "mapred-site.xml").write_text(
            "<configuration><property><name>mapreduce.shuffle.port</name><value>0</value>"
            "</property></configuration>\n")
        command = javaenv.java_command("org.apache.hadoop.yarn.server.nodemanager.NodeManager",
                                       [], self.cluster.version, extra_classpath=(conf,),
                                       heap="512m")
        env = {**os.environ, "HEDGE_HOSTNAME": self.host}
        with (self.folder / "nm.log").open("w") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                         cwd=self.folder, env=env)
        return self

    def stop(self) -> None:
        terminate(self.proc)


def rm_nodes(cluster: MiniYarn) -> dict[str, dict[str, str]]:
    """The ResourceManager's node reports by host: {"state": ..., "health": ...}, over its
    client RPC (org.hedge.cluster.NodeStates; the mini cluster's RM REST API answers 404)."""
    result = cluster.client("org.hedge.cluster.NodeStates", [], cluster.work, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    nodes = {}
    for line in result.stdout.splitlines():
        fields = line.split("\t")
        if len(fields) == 4 and fields[0] == "NODE":  # not a log line
            nodes[fields[1]] = {"state": fields[2], "health": fields[3]}
    return nodes


def terminate(proc: subprocess.Popen[str] | None) -> None:
    """SIGTERM a daemon's process (its shutdown hook stops the service), SIGKILL after 30 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reducer_input_records(history: Path) -> dict[int, int]:
    """REDUCE_INPUT_RECORDS of each reducer's successful attempt, from a .jhist."""
    records: dict[int, int] = {}
    for _, kind, event in jhist.events(history):
        if kind != "REDUCE_ATTEMPT_FINISHED":
            continue
        reducer = int(re.search(r"_r_(\d+)_", event["attemptId"])[1])
        for group in event["counters"]["groups"]:
            for counter in group["counts"]:
                if counter["name"] == "REDUCE_INPUT_RECORDS":
                    records[reducer] = counter["value"]
    return records


def read_output(folder: Path) -> dict[str, int]:
    """A job's text output (key TAB count) as a dict; {} when there is none."""
    counts: dict[str, int] = {}
    for part in sorted(folder.glob("part-r-*")):
        for line in part.read_text().splitlines():
            key, value = line.split("\t")
            counts[key] = int(value)
    return counts


def expected_output(maps: int = int(STRAGGLER_JOB["hedge.test.maps"]),
                    records: int = int(STRAGGLER_JOB["hedge.test.records"])) -> dict[str, int]:
    """What StragglerJob must output: each record r emits key (31 r + k^2) mod 97, k < 50."""
    counts: dict[str, int] = {}
    for record in range(maps * records):
        for k in range(50):
            key = f"key-{(record * 31 + k * k) % 97}"
            counts[key] = counts.get(key, 0) + 1
    return counts
