"""A pseudo-distributed Hadoop cluster with hedge, one process per daemon (scripts/cluster.sh).

``up`` writes a configuration under the work dir (``--dir``, ``$HEDGE_CLUSTER_DIR``, default
``out/cluster``) and starts, from the Maven-resolved jars of one Hadoop version (``--hadoop``,
``$HEDGE_HADOOP_VERSION``, default 3.4.1): a NameNode (formatted on the first ``up``), a
DataNode, a ResourceManager, two NodeManagers, a JobHistoryServer and ``hedge serve``; each
is a process of its own (its own session: ``down`` signals its whole process group), its pid
in ``DIR/pids/NAME.pid``, its output in ``DIR/logs/NAME.log``. The masters listen on
127.0.0.1; the NodeManagers on 127.0.0.2 and 127.0.0.3, still the loopback interface, so the
ResourceManager, the job history and hedge's node ranking and blacklist see two nodes. hedge's
shim jar is on every container's classpath and hedge's speculator, runtime estimator and
control-plane address are in mapred-site.xml (from conf/mapred-site.xml); each NodeManager
runs scripts/hedge-health-check.sh on DIR/blacklist.

Jobs (``wordcount``, ``terasort``, ``sleep``) run as clients on the same classpath;
``history`` ranks the nodes from the JobHistoryServer's REST API; ``status`` shows each
daemon; ``down`` stops them all and then any process left whose working directory or
command line is inside DIR (task containers the NodeManagers did not reap), and is
idempotent. Exit codes: 0 done, 1 failed (the daemon named, its log's last lines printed), 2
usage.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import getpass
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from xml.sax.saxutils import escape

from hedge import javaenv
from hedge.errors import HedgeError

REPO = javaenv.REPO
DEFAULT_DIR = REPO / "out" / "cluster"
DEFAULT_VERSION = "3.4.1"
CLUSTER_VERSIONS = ("3.3.6", "3.4.1")
MASTER = "127.0.0.1"
NODEMANAGERS = {"nodemanager-1": "127.0.0.2", "nodemanager-2": "127.0.0.3"}
HEAPS = {"namenode": "384m", "datanode": "256m", "resourcemanager": "512m",
         "nodemanager-1": "384m", "nodemanager-2": "384m", "jobhistory": "384m"}
MAIN_CLASSES = {
    "namenode": "org.apache.hadoop.hdfs.server.namenode.NameNode",
    "datanode": "org.apache.hadoop.hdfs.server.datanode.DataNode",
    "resourcemanager": "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
    "nodemanager-1": "org.apache.hadoop.yarn.server.nodemanager.NodeManager",
    "nodemanager-2": "org.apache.hadoop.yarn.server.nodemanager.NodeManager",
    "jobhistory": "org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer",
}
# Start order; the JobHistoryServer waits for HDFS to leave safe mode (it creates its folders).
DAEMONS = ("namenode", "datanode", "resourcemanager", "nodemanager-1", "nodemanager-2",
           "hedge-serve", "jobhistory")
# Ports: Hadoop's defaults with --ports standard (nodemanager-2 next to nodemanager-1's),
# any free ones with --ports auto; --port NAME=PORT sets one.
STANDARD_PORTS = {
    "nn.rpc": 9000, "nn.web": 9870,
    "dn.data": 9866, "dn.web": 9864, "dn.ipc": 9867,
    "rm.rpc": 8032, "rm.scheduler": 8030, "rm.tracker": 8031, "rm.admin": 8033, "rm.web": 8088,
    "nm1.rpc": 45454, "nm1.localizer": 8040, "nm1.web": 8042, "nm1.shuffle": 13562,
    "nm2.rpc": 45455, "nm2.localizer": 8140, "nm2.web": 8142, "nm2.shuffle": 13563,
    "jhs.rpc": 10020, "jhs.web": 19888, "jhs.admin": 10033,
    "hedge.py4j": 25334, "hedge.data": 25335,
}
LOG_LINES = 25
READY_TIMEOUT_S = float(os.environ.get("HEDGE_CLUSTER_TIMEOUT", "240"))
# Hadoop's own stop scripts wait 5 s (HADOOP_STOP_TIMEOUT) before kill -9; a NodeManager
# spends 17 s stopping (it waits for its finished applications' log handling): 10 s, then
# SIGKILL, and the sweep of the work dir takes whatever it left.
STOP_TIMEOUT_S = 10
JOB_TIMEOUT_S = 1800
# Container sizes and heartbeats: those of java-shim/cluster's ClusterMain (small containers,
# so two cores and two NodeManagers run a whole job at once; progress reaches the AM's
# speculator twice a second).
NODE_MEMORY_MB, AM_MEMORY_MB, TASK_MEMORY_MB = 3072, 512, 256


class ClusterError(Exception):
    """A failure to report and exit 1 on."""


def tail(path: Path, lines: int = LOG_LINES) -> str:
    """The log's last lines (indented), after its first ERROR/FATAL or exception line when
    that came earlier (a stack trace's last lines rarely say what went wrong)."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        return f"    (no log: {exc.strerror})"
    text = [line[:400] for line in text]  # not a whole classpath
    first = next((i for i, line in enumerate(text)
                  if re.search(r" (ERROR|FATAL) |^\S*(Exception|Error)\b", line)), None)
    out = text[-lines:]
    if first is not None and first < len(text) - lines:
        out = [text[first], "...", *out]
    return "\n".join("    " + line for line in out) or "    (the log is empty)"


def site_xml(properties: dict[str, str]) -> str:
    rows = "".join(f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value>"
                   "</property>\n" for k, v in properties.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def hedge_operator_settings() -> dict[str, str]:
    """The speculation part of conf/mapred-site.xml (what an operator copies), without its
    ImKP part (a cluster-wide ImkpPartitioner would fail every job that ships no mapping) and
    its example deadline (a job's own QoS: 10 minutes for every job would keep the adaptive
    policy from copying anything in a job of one minute)."""
    settings = {}
    for prop in ET.parse(REPO / "conf" / "mapred-site.xml").getroot().iter("property"):
        name, value = prop.findtext("name", "").strip(), prop.findtext("value", "").strip()
        if name in ("mapreduce.job.partitioner.class", "hedge.deadline.ms") \
                or name.startswith("hedge.imkp."):
            continue
        settings[name] = value
    return settings


def free_port(taken: set[int]) -> int:
    while True:
        with socket.socket() as s:
            s.bind((MASTER, 0))
            port = s.getsockname()[1]
        if port not in taken:
            return port


@dataclass
class Cluster:
    """The work dir's layout, its generated configuration and its processes."""

    work: Path
    version: str = DEFAULT_VERSION
    ports: dict[str, int] = field(default_factory=dict)
    # where the daemons and clients run: processes of this machine, or docker containers
    launcher: Launcher = field(default_factory=lambda: ProcessLauncher())
    # Hadoop alone (`up --plain`): no hedge settings, no `hedge serve`, no health script, and
    # an empty DIR/lib on the containers' classpath; what an operator's cluster is before the
    # README's "Putting hedge on your Hadoop 3.x cluster" steps
    plain: bool = False

    @property
    def daemons(self) -> tuple[str, ...]:
        """The daemons this cluster runs, in start order."""
        return tuple(d for d in DAEMONS if not (self.plain and d == "hedge-serve"))

    # ---- layout ----
    @property
    def conf(self) -> Path:
        return self.work / "conf"

    @property
    def logs(self) -> Path:
        return self.work / "logs"

    @property
    def pids(self) -> Path:
        return self.work / "pids"

    @property
    def state_file(self) -> Path:
        return self.work / "cluster.json"

    @property
    def token(self) -> Path:
        return self.work / "token"

    @property
    def blacklist(self) -> Path:
        return self.work / "blacklist"

    @property
    def lib(self) -> Path:
        """With --plain, the folder on every container's classpath: this cluster's
        $HADOOP_HOME/share/hadoop/mapreduce/lib, where an operator copies hedge's jar."""
        return self.work / "lib"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def home(self, name: str) -> Path:
        """A daemon's working directory (and a NodeManager's conf and dirs)."""
        return self.work / name

    def url(self, port: str, host: str = MASTER) -> str:
        return f"http://{host}:{self.ports[port]}"

    @property
    def default_fs(self) -> str:
        return f"hdfs://{MASTER}:{self.ports['nn.rpc']}"

    # ---- state ----
    def load(self) -> Cluster:
        if not self.state_file.is_file():
            raise ClusterError(f"no cluster in {self.work}: run scripts/cluster.sh up first")
        state = json.loads(self.state_file.read_text())
        self.version, self.ports = state["version"], state["ports"]
        self.plain = state.get("plain", False)
        # the launcher of the up that wrote it, whatever this command was given
        self.launcher = launcher_from_state(state.get("launcher", {"kind": "process"}))
        return self

    def save(self) -> None:
        partial = self.state_file.with_suffix(".partial")
        partial.write_text(json.dumps({"version": self.version, "ports": self.ports,
                                       "plain": self.plain, "launcher": self.launcher.state()},
                                      indent=1) + "\n")
        partial.replace(self.state_file)

    def choose_ports(self, mode: str, overrides: dict[str, int]) -> None:
        unknown = set(overrides) - set(STANDARD_PORTS)
        if unknown:
            raise ClusterError(f"unknown port name(s) {sorted(unknown)}; names: "
                               f"{', '.join(STANDARD_PORTS)}")
        if mode == "standard":
            self.ports = dict(STANDARD_PORTS)
        else:
            taken = set(overrides.values())
            self.ports = {}
            for name in STANDARD_PORTS:
                self.ports[name] = free_port(taken)
                taken.add(self.ports[name])
        self.ports.update(overrides)

    # ---- configuration ----
    def write_conf(self) -> None:
        for folder in (self.conf, self.logs, self.pids, self.work / "data", self.work / "imkp"):
            folder.mkdir(parents=True, exist_ok=True)
        if self.plain:
            self.lib.mkdir(exist_ok=True)
        else:
            if not self.token.is_file():
                self.token.write_text(secrets.token_urlsafe(24) + "\n")
                self.token.chmod(0o600)
            self.blacklist.touch()
        for name, text in self.site_files().items():
            (self.conf / name).write_text(text)
        for index, (name, host) in enumerate(NODEMANAGERS.items(), start=1):
            conf = self.home(name) / "conf"
            conf.mkdir(parents=True, exist_ok=True)
            for site in self.site_files():
                shutil.copyfile(self.conf / site, conf / site)
            yarn = {**self.yarn_site(), **self.nodemanager_site(index, name, host)}
            (conf / "yarn-site.xml").write_text(site_xml(yarn))
            # The ShuffleHandler binds every interface: each node needs a port of its own. In
            # mapred-site.xml, not yarn-site.xml: once JobConf is loaded, mapred-default.xml
            # (mapreduce.shuffle.port=13562) is read after yarn-site.xml and would win.
            shuffle = {"mapreduce.shuffle.port": str(self.ports[f"nm{index}.shuffle"])}
            (conf / "mapred-site.xml").write_text(site_xml({**self.mapred_site(), **shuffle}))
        if not self.plain:
            self.write_hedge_ini()

    def write_hedge_ini(self) -> None:
        (self.work / "hedge.ini").write_text(
            "# hedge serve's settings for this cluster (written by scripts/cluster.sh up)\n"
            "[server]\n"
            f"address = {MASTER}:{self.ports['hedge.py4j']}\n"
            f"data_port = {self.ports['hedge.data']}\n"
            f"token_file = {self.token}\n"
            "policy = adaptive\n"
            "[cluster]\n"
            "# empty: the ResourceManager each job's AM names (this cluster's)\n"
            "resourcemanager =\n"
            "poll_interval = 5\n"
            "[imkp]\n"
            f"mappings = {self.work / 'imkp'}\n")

    def site_files(self) -> dict[str, str]:
        return {
            "core-site.xml": site_xml({"fs.defaultFS": self.default_fs,
                                       "hadoop.tmp.dir": str(self.work / "data" / "tmp")}),
            "hdfs-site.xml": site_xml(self.hdfs_site()),
            "yarn-site.xml": site_xml(self.yarn_site()),
            "mapred-site.xml": site_xml(self.mapred_site()),
            "capacity-scheduler.xml": site_xml({
                "yarn.scheduler.capacity.root.queues": "default",
                "yarn.scheduler.capacity.root.default.capacity": "100",
                "yarn.scheduler.capacity.root.default.maximum-capacity": "100",
                # several AMs at once (terasort's, a second job's) on 2 x 3 GB
                "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
                # the DataNode's host (127.0.0.1) runs no NodeManager: do not wait for it
                "yarn.scheduler.capacity.node-locality-delay": "0",
            }),
            "log4j.properties": (
                "log4j.rootLogger=INFO,console\n"
                "log4j.appender.console=org.apache.log4j.ConsoleAppender\n"
                "log4j.appender.console.target=System.err\n"
                "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
                "log4j.appender.console.layout.ConversionPattern="
                "%d{ISO8601} %p %c{2}: %m%n\n"),
        }

    def hdfs_site(self) -> dict[str, str]:
        p, data = self.ports, self.work / "data"
        return {
            "dfs.replication": "1",
            "dfs.permissions.enabled": "false",
            "dfs.namenode.name.dir": (data / "nn").as_uri(),
            "dfs.datanode.data.dir": (data / "dn").as_uri(),
            "dfs.namenode.rpc-address": f"{MASTER}:{p['nn.rpc']}",
            "dfs.namenode.http-address": f"{MASTER}:{p['nn.web']}",
            "dfs.datanode.address": f"{MASTER}:{p['dn.data']}",
            "dfs.datanode.http.address": f"{MASTER}:{p['dn.web']}",
            "dfs.datanode.ipc.address": f"{MASTER}:{p['dn.ipc']}",
            # a restarted NameNode leaves safe mode once its blocks are reported, not 30 s later
            "dfs.namenode.safemode.extension": "0",
        }

    def yarn_site(self) -> dict[str, str]:
        p = self.ports
        # What a container's JVM runs on: this conf dir and the Hadoop jars (as
        # $HADOOP_CONF_DIR and share/hadoop/*/* would be on an installed cluster).
        classpath = [str(self.conf), *self.launcher.hadoop_classpath(self.version)]
        return {
            "yarn.resourcemanager.hostname": MASTER,
            "yarn.resourcemanager.address": f"{MASTER}:{p['rm.rpc']}",
            "yarn.resourcemanager.scheduler.address": f"{MASTER}:{p['rm.scheduler']}",
            "yarn.resourcemanager.resource-tracker.address": f"{MASTER}:{p['rm.tracker']}",
            "yarn.resourcemanager.admin.address": f"{MASTER}:{p['rm.admin']}",
            "yarn.resourcemanager.webapp.address": f"{MASTER}:{p['rm.web']}",
            # a NodeManager started before the ResourceManager retries every second, not 30 s
            "yarn.resourcemanager.connect.retry-interval.ms": "1000",
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "250",
            "yarn.application.classpath": ",".join(classpath),
            "yarn.nodemanager.aux-services": "mapreduce_shuffle",
            "yarn.nodemanager.aux-services.mapreduce_shuffle.class":
                "org.apache.hadoop.mapred.ShuffleHandler",
            "yarn.nodemanager.resource.memory-mb": str(NODE_MEMORY_MB),
            "yarn.nodemanager.resource.cpu-vcores": "8",
            "yarn.scheduler.minimum-allocation-mb": "128",
            # a JVM's resident size overshoots -Xmx; this cluster is not about memory limits
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.nodemanager.vmem-check-enabled": "false",
            # a nearly full disk would make both nodes unhealthy (default limit 90 %)
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage":
                "99",
            "yarn.nodemanager.recovery.enabled": "false",
        }

    def nodemanager_site(self, index: int, name: str, host: str) -> dict[str, str]:
        p, home = self.ports, self.home(name)
        site = {
            "yarn.nodemanager.hostname": host,
            "yarn.nodemanager.address": f"{host}:{p[f'nm{index}.rpc']}",
            "yarn.nodemanager.localizer.address": f"{host}:{p[f'nm{index}.localizer']}",
            "yarn.nodemanager.webapp.address": f"{host}:{p[f'nm{index}.web']}",
            "yarn.nodemanager.local-dirs": str(home / "local"),
            "yarn.nodemanager.log-dirs": str(home / "logs"),
        }
        if self.plain:
            return site
        return {
            **site,
            # hedge's blacklist (`hedge nodes watch --out DIR/blacklist`); 2.x key names,
            # which 3.x reads as its default script too
            "yarn.nodemanager.health-checker.script.path": self.launcher.health_script(),
            "yarn.nodemanager.health-checker.script.opts": str(self.blacklist),
            "yarn.nodemanager.health-checker.interval-ms": "5000",
        }

    def mapred_site(self) -> dict[str, str]:
        p = self.ports
        opens = " ".join(javaenv.JAVA17_OPENS)  # Hadoop 3 on Java 17: AM and tasks too
        hadoop = {
            "mapreduce.framework.name": "yarn",
            "mapreduce.application.classpath":
                f"{self.lib}/*" if self.plain else self.launcher.shim_jar(),
            "yarn.app.mapreduce.am.resource.mb": str(AM_MEMORY_MB),
            "yarn.app.mapreduce.am.command-opts": f"-Xmx384m {opens}",
            "mapreduce.map.memory.mb": str(TASK_MEMORY_MB),
            "mapreduce.reduce.memory.mb": str(TASK_MEMORY_MB),
            "mapreduce.map.java.opts": f"-Xmx200m {opens}",
            "mapreduce.reduce.java.opts": f"-Xmx200m {opens}",
            "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms": "250",
            "mapreduce.task.progress-report.interval": "500",
            "mapreduce.jobhistory.address": f"{MASTER}:{p['jhs.rpc']}",
            "mapreduce.jobhistory.webapp.address": f"{MASTER}:{p['jhs.web']}",
            "mapreduce.jobhistory.admin.address": f"{MASTER}:{p['jhs.admin']}",
        }
        if self.plain:
            return hadoop
        return {
            **hadoop,
            **hedge_operator_settings(),
            "hedge.controlplane.address": f"{MASTER}:{p['hedge.py4j']}",
            "hedge.controlplane.token.file": str(self.token),
            # two cores run the daemons, the AM and its tasks: allow the server a slow answer
            "hedge.controlplane.deadline.ms": "1000",
        }

    # ---- processes ----
    def command(self, name: str) -> tuple[list[str], dict[str, str]]:
        """A daemon's command line and environment, as its launcher runs them."""
        env = {"HEDGE_CLUSTER_DIR": str(self.work)}
        if name == "hedge-serve":
            return (self.launcher.hedge_command(["serve", "--config",
                                                 str(self.work / "hedge.ini")]),
                    self.launcher.env(env))
        conf = self.conf
        if name in NODEMANAGERS:
            conf = self.home(name) / "conf"
            env["HEDGE_HOSTNAME"] = NODEMANAGERS[name]  # what the health-check script matches
        command = self.launcher.java_command(
            self, MAIN_CLASSES[name], [], extra_classpath=(str(conf),), heap=HEAPS[name],
            jvm_options=("-Djava.net.preferIPv4Stack=true",
                         f"-Dhadoop.log.dir={self.logs}"))
        return command, self.launcher.env(env)

    def spawn(self, name: str) -> Daemon:
        """Start one daemon, its output in its log; a handle with poll() and pid."""
        command, env = self.command(name)
        home = self.home(name)
        home.mkdir(parents=True, exist_ok=True)
        return self.launcher.start(self, name, command, env, home, self.log(name))

    def pid(self, name: str) -> int | str | None:
        """A running daemon's pid (its container's name with --docker); None: not running."""
        return self.launcher.running(self, name)

    # ---- readiness (over the daemons' HTTP endpoints) ----
    def ready(self, name: str) -> bool:
        if name == "namenode":
            state = jmx(self.url("nn.web"), "Hadoop:service=NameNode,name=FSNamesystemState")
            return state.get("FSState") == "Operational"
        if name == "datanode":
            state = jmx(self.url("nn.web"), "Hadoop:service=NameNode,name=FSNamesystemState")
            return state.get("NumLiveDataNodes", 0) >= 1
        if name == "resourcemanager":
            info = (get_json(f"{self.url('rm.web')}/ws/v1/cluster/info") or {}).get(
                "clusterInfo", {})
            return info.get("state") == "STARTED" and info.get("haState") == "ACTIVE"
        if name in NODEMANAGERS:  # registered and heartbeating, healthy or not
            return self.node_states().get(NODEMANAGERS[name]) in ("RUNNING", "UNHEALTHY")
        if name == "jobhistory":
            return get_json(f"{self.url('jhs.web')}/ws/v1/history/info") is not None
        if name == "hedge-serve":
            return "hedge serve: listening" in self.log(name).read_text(errors="replace")
        raise ValueError(name)

    def node_states(self) -> dict[str, str]:
        """Each NodeManager host's state; a restarted node is listed twice (its old,
        SHUTDOWN entry too): a live state wins."""
        nodes = get_json(f"{self.url('rm.web')}/ws/v1/cluster/nodes") or {}
        states: dict[str, str] = {}
        for node in (nodes.get("nodes") or {}).get("node") or []:
            host, state = node["nodeHostName"], node["state"]
            if states.get(host) not in ("RUNNING", "UNHEALTHY", "NEW"):
                states[host] = state
        return states


def java_home() -> str:
    """JAVA_HOME of the ``java`` on PATH (containers run $JAVA_HOME/bin/java)."""
    return str(Path(os.path.realpath(javaenv.java_executable())).parents[1])


def get_json(url: str) -> dict | None:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=3) as response:
            return json.loads(response.read())
    except (OSError, ValueError):
        return None


def jmx(base: str, query: str) -> dict:
    beans = (get_json(f"{base}/jmx?qry={query}") or {}).get("beans") or [{}]
    return beans[0]


# ---- launchers: where the daemons and the clients run ----
class Daemon(Protocol):
    """A started daemon: poll() is its exit code once it has ended (else None)."""

    pid: int | str

    def poll(self) -> int | None: ...


class ProcessLauncher:
    """Each daemon a process of this machine in a session of its own (its pid in
    DIR/pids/NAME.pid), from the Maven-resolved jars of `make shim`; clients likewise."""

    kind, what = "process", "pid"

    def state(self) -> dict:
        return {"kind": self.kind}

    def preflight(self, cluster: Cluster, build: bool = False) -> None:
        """Java, the Hadoop jars and hedge's jar, each named when missing."""
        try:
            javaenv.java_executable()
            javaenv.hadoop_jars(cluster.version)
            javaenv.shim_jar()
        except HedgeError as exc:
            raise ClusterError(f"cannot start the Hadoop daemons: {exc}") from None

    # paths as the daemons, their containers and the clients see them
    def hadoop_classpath(self, version: str) -> list[str]:
        return [str(jar) for jar in javaenv.hadoop_jars(version)]

    def shim_jar(self) -> str:
        return str(javaenv.shim_jar())

    def health_script(self) -> str:
        return str(REPO / "scripts" / "hedge-health-check.sh")

    def examples_jar(self) -> str:
        return str(javaenv.examples_jar())

    def cluster_jar(self) -> str:
        return str(javaenv.cluster_jar())

    def java_command(self, cluster: Cluster, main: str, args: list[str],
                     extra_classpath: Sequence[str] = (), heap: str = "512m",
                     jvm_options: Sequence[str] = ()) -> list[str]:
        return javaenv.java_command(main, args, cluster.version,
                                    extra_classpath=tuple(map(Path, extra_classpath)),
                                    heap=heap, jvm_options=jvm_options)

    def hedge_command(self, args: list[str]) -> list[str]:
        return [sys.executable, "-m", "hedge.cli", *args]

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        return {**os.environ, "JAVA_HOME": java_home(), **extra}

    def start(self, cluster: Cluster, name: str, command: list[str], env: dict[str, str],
              cwd: Path, log: Path) -> Daemon:
        with log.open("w") as out:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                    start_new_session=True)
        (cluster.pids / f"{name}.pid").write_text(f"{proc.pid}\n")
        return proc

    def running(self, cluster: Cluster, name: str) -> int | None:
        try:
            pid = int((cluster.pids / f"{name}.pid").read_text())
        except (OSError, ValueError):
            return None
        return pid if belongs(pid, cluster.work) else None

    def client(self, cluster: Cluster, command: list[str], cwd: Path, label: str,
               env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str] | None]:
        """A client's command line and environment for subprocess.run(..., cwd=cwd)."""
        return command, env

    def stop(self, cluster: Cluster, say: Callable[[str], None]) -> int:
        return stop_processes(cluster, say)


DOCKER_IMAGE = "hedge-hadoop:latest"
# What scripts/cluster.sh --docker needs in the image (scripts/docker-image.sh puts it there).
IMAGE_SHIM = "/opt/hedge/hedge-shim.jar"
IMAGE_HEALTH_SCRIPT = "/opt/hedge/hedge-health-check.sh"
IMAGE_EXAMPLES_JAR = "/opt/hedge/jobs/hadoop-mapreduce-examples.jar"
IMAGE_CLUSTER_JAR = "/opt/hedge/jobs/hedge-cluster.jar"
IMAGE_PROBE = ("cat /opt/hadoop/classpath && ls " + " ".join(
    (IMAGE_SHIM, IMAGE_HEALTH_SCRIPT, IMAGE_EXAMPLES_JAR, IMAGE_CLUSTER_JAR)) + " >/dev/null")


class DockerLauncher:
    """Each daemon a container of the hedge-hadoop image (scripts/docker-image.sh), on the
    host's network (the same addresses and ports as the process cluster) with the work dir
    mounted at its own path (the same conf, logs and data); `docker run --init` so that
    SIGTERM reaches the daemon and orphans are reaped. Clients (jobs, `hedge imkp build`,
    `hedge nodes rank`) run in containers of the same image. Every container carries the
    label hedge.cluster=DIR, by which status and down find them."""

    kind, what = "docker", "container"

    def __init__(self, image: str | None = None, classpath: list[str] | None = None) -> None:
        self.image = image or os.environ.get("HEDGE_HADOOP_IMAGE", DOCKER_IMAGE)
        self.classpath = classpath or []  # the image's /opt/hadoop/classpath, read at up

    def state(self) -> dict:
        return {"kind": self.kind, "image": self.image, "classpath": self.classpath}

    def docker(self, *args: str, timeout: float = 120,
               check: bool = True) -> subprocess.CompletedProcess[str]:
        try:
            result = subprocess.run(["docker", *args], stdin=subprocess.DEVNULL,
                                    capture_output=True, text=True, timeout=timeout,
                                    check=False)
        except FileNotFoundError:
            raise ClusterError("no docker client on PATH (apt-get install docker.io)") \
                from None
        if check and result.returncode != 0:
            if "Cannot connect to the Docker daemon" in result.stderr:
                self.engine()
            raise ClusterError(f"docker {' '.join(args[:2])} ... failed (exit "
                               f"{result.returncode}): {result.stderr.strip()[-2000:]}")
        return result

    def engine(self) -> None:
        """A ClusterError with `docker info`'s output unless an engine answers."""
        info = self.docker("info", timeout=60, check=False)
        if info.returncode != 0:
            said = "\n".join("    " + line for line in
                             (info.stdout + info.stderr).strip().splitlines()[-15:])
            raise ClusterError(f"no Docker engine is reachable; `docker info` says:\n{said}\n"
                               "start one (as root: dockerd > /var/log/dockerd.log 2>&1 &) "
                               "or set DOCKER_HOST")

    def preflight(self, cluster: Cluster, build: bool = False) -> None:
        """An engine, and the image (built with scripts/docker-image.sh when missing, when
        it lacks what the cluster runs, or with --build); reads the image's classpath."""
        self.engine()
        probe = None
        if not build and self.docker("image", "inspect", self.image,
                                     check=False).returncode == 0:
            probe = self.docker("run", "--rm", self.image, "sh", "-c", IMAGE_PROBE,
                                check=False)
            if probe.returncode != 0:
                print(f"cluster: image {self.image} lacks the cluster's jobs or health script "
                      f"({probe.stderr.strip()[-300:]}): rebuilding it", flush=True)
        if probe is None or probe.returncode != 0:
            script = REPO / "scripts" / "docker-image.sh"
            print(f"cluster: building {self.image} with {script}", flush=True)
            started = time.monotonic()
            built = subprocess.run([str(script)], stdin=subprocess.DEVNULL, check=False,
                                   env={**os.environ, "HEDGE_HADOOP_IMAGE": self.image,
                                        "HADOOP_VERSION": cluster.version})
            if built.returncode != 0:
                raise ClusterError(f"{script} failed (exit {built.returncode}; its output "
                                   "is above): the images are not there")
            print(f"cluster: images built in {time.monotonic() - started:.0f} s", flush=True)
            probe = self.docker("run", "--rm", self.image, "sh", "-c", IMAGE_PROBE)
        self.classpath = [jar for jar in probe.stdout.strip().split(":") if jar]
        common = f"hadoop-common-{cluster.version}.jar"
        if not any(jar.endswith("/" + common) for jar in self.classpath):
            raise ClusterError(f"image {self.image} holds no {common}: rebuild it for Hadoop "
                               f"{cluster.version} (HADOOP_VERSION={cluster.version} "
                               "scripts/docker-image.sh, or up --build)")

    def hadoop_classpath(self, version: str) -> list[str]:
        if not self.classpath:
            raise ClusterError("the image's classpath is unknown (run up)")
        return list(self.classpath)

    def shim_jar(self) -> str:
        return IMAGE_SHIM

    def health_script(self) -> str:
        return IMAGE_HEALTH_SCRIPT

    def examples_jar(self) -> str:
        return IMAGE_EXAMPLES_JAR

    def cluster_jar(self) -> str:
        return IMAGE_CLUSTER_JAR

    def java_command(self, cluster: Cluster, main: str, args: list[str],
                     extra_classpath: Sequence[str] = (), heap: str = "512m",
                     jvm_options: Sequence[str] = ()) -> list[str]:
        entries = [IMAGE_SHIM, *extra_classpath, *self.hadoop_classpath(cluster.version)]
        return ["java", f"-Xmx{heap}", *javaenv.JAVA17_OPENS, *jvm_options,
                "-cp", ":".join(entries), main, *args]

    def hedge_command(self, args: list[str]) -> list[str]:
        return ["hedge", *args]  # the image's venv is on its PATH

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        # a uid the image's /etc/passwd may not know still has a Hadoop user name
        return {"HADOOP_USER_NAME": getpass.getuser(), **extra}

    def container(self, cluster: Cluster, name: str) -> str:
        digest = hashlib.sha1(str(cluster.work).encode()).hexdigest()[:10]
        return f"hedge-{digest}-{name}"

    def run_options(self, cluster: Cluster, cwd: Path, env: dict[str, str]) -> list[str]:
        options = ["--init", "--network", "host", "-v", f"{cluster.work}:{cluster.work}",
                   "-w", str(cwd), "--user", f"{os.getuid()}:{os.getgid()}",
                   "--label", f"hedge.cluster={cluster.work}"]
        for key, value in env.items():
            options += ["-e", f"{key}={value}"]
        return options

    def start(self, cluster: Cluster, name: str, command: list[str], env: dict[str, str],
              cwd: Path, log: Path) -> Daemon:
        container = self.container(cluster, name)
        self.docker("rm", "-f", container, check=False)  # a previous up's, exited
        log.write_text("")  # the daemon's output goes to its log in the work dir, as a process's
        started = self.docker(
            "run", "-d", "--name", container, "--label", f"hedge.daemon={name}",
            *self.run_options(cluster, cwd, env), self.image,
            "sh", "-c", 'log=$1; shift; exec "$@" >>"$log" 2>&1', "sh", str(log), *command,
            check=False)
        if started.returncode != 0:
            raise ClusterError(f"{name} failed to start: docker run exited with code "
                               f"{started.returncode}: {started.stderr.strip()[-1500:]}")
        return Container(self, container)

    def running(self, cluster: Cluster, name: str) -> str | None:
        found = self.docker("ps", "--filter", f"label=hedge.cluster={cluster.work}",
                            "--filter", f"label=hedge.daemon={name}", "--filter",
                            "status=running", "--format", "{{.Names}}").stdout.split()
        return found[0] if found else None

    def containers(self, cluster: Cluster) -> list[tuple[str, str, str]]:
        """(name, daemon or '', state) of every container of the cluster, running or not."""
        rows = self.docker("ps", "-a", "--filter", f"label=hedge.cluster={cluster.work}",
                           "--format", '{{.Names}}\t{{.Label "hedge.daemon"}}\t{{.State}}')
        return [tuple(line.split("\t")) for line in rows.stdout.splitlines() if line.strip()]

    def client(self, cluster: Cluster, command: list[str], cwd: Path, label: str,
               env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str] | None]:
        name = f"{self.container(cluster, 'client')}-{label}-{secrets.token_hex(3)}"
        return (["docker", "run", "--rm", "--name", name, "--label", f"hedge.client={label}",
                 *self.run_options(cluster, cwd, self.env(env or {})), self.image, *command],
                None)

    def stop(self, cluster: Cluster, say: Callable[[str], None]) -> int:
        """docker stop (SIGTERM, SIGKILL after STOP_TIMEOUT_S) in waves, docker rm -f every
        container of the cluster (a client's too), then the process sweep of the work dir."""
        self.engine()
        containers = self.containers(cluster)
        daemons = {daemon: name for name, daemon, state in containers
                   if daemon and state == "running"}
        if daemons:
            say(f"stopping {', '.join(d for d in DAEMONS if d in daemons)} (containers)")
        for wave in STOP_WAVES:
            names = [daemons[d] for d in wave if d in daemons]
            if names:
                self.docker("stop", "-t", str(STOP_TIMEOUT_S), *names,
                            timeout=STOP_TIMEOUT_S + 120, check=False)
        clients = [name for name, daemon, state in containers if not daemon and
                   state == "running"]
        if clients:
            say(f"removing {len(clients)} client container(s): {', '.join(clients)}")
        if containers:
            self.docker("rm", "-f", *[name for name, _, _ in containers], check=False)
        left = self.containers(cluster)
        if left:
            raise ClusterError(f"containers of {cluster.work} left after docker rm -f: "
                               f"{', '.join(name for name, _, _ in left)}")
        return len(daemons) + len(clients) + sweep(cluster, say)


class Container:
    """A daemon's container (Daemon's pid is its name)."""

    def __init__(self, launcher: DockerLauncher, name: str) -> None:
        self.launcher, self.pid = launcher, name

    def poll(self) -> int | None:
        state = self.launcher.docker("inspect", "-f", "{{.State.Running}} {{.State.ExitCode}}",
                                     self.pid, check=False)
        if state.returncode != 0:
            return -1  # removed
        running, code = state.stdout.split()
        return None if running == "true" else int(code)


def launcher_from_state(state: dict) -> ProcessLauncher | DockerLauncher:
    if state.get("kind") == "docker":
        return DockerLauncher(state.get("image"), state.get("classpath"))
    return ProcessLauncher()


Launcher = ProcessLauncher | DockerLauncher


# ---- processes on this machine ----
def proc_text(pid: int, what: str) -> str:
    try:
        return Path(f"/proc/{pid}/{what}").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def belongs(pid: int, work: Path) -> bool:
    """Whether ``pid`` is a live process of the cluster in ``work``: its working directory is
    inside it, or its command line names a path inside it, or it carries its marker."""
    root = str(work)
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        cwd = ""
    if proc_text(pid, "stat").split(") ")[-1][:1] == "Z":  # a zombie is gone already
        return False
    if cwd == root or cwd.startswith(root + "/"):
        return True
    if f"HEDGE_CLUSTER_DIR={root} " in proc_text(pid, "environ") + " ":
        return True
    return bool(re.search(rf"{re.escape(root)}(/|:|\s|$)", proc_text(pid, "cmdline")))


def ancestors() -> set[int]:
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            pid = int(proc_text(pid, "stat").split(") ")[-1].split()[1])
        except (IndexError, ValueError):
            break
    return pids


def leftovers(work: Path) -> list[int]:
    """Every process of the cluster in ``work`` (except this one and its ancestors)."""
    mine = ancestors()
    return sorted(int(entry.name) for entry in Path("/proc").iterdir()
                  if entry.name.isdigit() and int(entry.name) not in mine
                  and belongs(int(entry.name), work))


def signal_all(pids: list[int], sig: int, groups: bool) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if groups:
                os.killpg(pid, sig)  # each daemon leads its own session: its children too
            else:
                os.kill(pid, sig)


def wait_gone(pids: list[int], work: Path, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while True:
        alive = [pid for pid in pids if belongs(pid, work)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


# the JobHistoryServer and NodeManagers first: they stop cleanly while HDFS and the RM run
STOP_WAVES = (("jobhistory", "nodemanager-1", "nodemanager-2"),
              ("resourcemanager", "datanode", "hedge-serve"), ("namenode",))


def stop(cluster: Cluster, quiet: bool = False) -> int:
    """Stop every daemon (SIGTERM, SIGKILL after STOP_TIMEOUT_S), then whatever else of the
    cluster is left; returns how many daemons and processes were stopped."""
    say = (lambda _: None) if quiet else (lambda text: print(f"cluster: {text}", flush=True))
    return cluster.launcher.stop(cluster, say)


def stop_processes(cluster: Cluster, say: Callable[[str], None]) -> int:
    """The process launcher's stop: SIGTERM to each daemon's process group, then the sweep."""
    daemons = {name: pid for name in DAEMONS if (pid := cluster.pid(name)) is not None}
    if daemons:
        say(f"stopping {', '.join(daemons)}")
    for wave in STOP_WAVES:
        pids = [pid for name, pid in daemons.items() if name in wave]
        signal_all(pids, signal.SIGTERM, groups=True)
        for pid in wait_gone(pids, cluster.work, STOP_TIMEOUT_S):
            say(f"pid {pid} still stopping after {STOP_TIMEOUT_S} s: SIGKILL")
            signal_all([pid], signal.SIGKILL, groups=True)
    stopped = len(daemons) + sweep(cluster, say)
    for name in DAEMONS:
        (cluster.pids / f"{name}.pid").unlink(missing_ok=True)
    return stopped


def sweep(cluster: Cluster, say: Callable[[str], None]) -> int:
    """Stop any process left whose working directory or command line is inside the work dir
    (task containers a NodeManager did not reap); how many there were."""
    stopped = 0
    rest = leftovers(cluster.work) if cluster.work.is_dir() else []
    if rest:
        say(f"stopping {len(rest)} leftover process(es) of {cluster.work}: {rest}")
        signal_all(rest, signal.SIGTERM, groups=False)
        signal_all(wait_gone(rest, cluster.work, 10), signal.SIGKILL, groups=False)
        stopped += len(rest)
    left = wait_gone(leftovers(cluster.work) if cluster.work.is_dir() else [], cluster.work, 10)
    if left:
        raise ClusterError(f"processes of {cluster.work} still running after SIGKILL: {left}")
    return stopped


# ---- commands ----
def preflight(cluster: Cluster, build: bool = False) -> None:
    """What the launcher needs (Java and the jars; or Docker and the image), each named
    when missing, before starting anything."""
    cluster.launcher.preflight(cluster, build)


def up(cluster: Cluster, ports: str, overrides: dict[str, int], build: bool = False) -> None:
    started = time.monotonic()
    if cluster.state_file.is_file():
        previous = Cluster(cluster.work).load()  # with the launcher that started it
        running = [name for name in DAEMONS if previous.pid(name) is not None]
        if set(running) == set(previous.daemons) and previous.plain == cluster.plain \
                and previous.launcher.kind == cluster.launcher.kind \
                and all(previous.ready(name) for name in previous.daemons):
            cluster.load()
            print(f"cluster: already up in {cluster.work}")
            print_urls(cluster)
            return
        if running:
            print(f"cluster: a previous up left {', '.join(running)} running; stopping it")
            stop(previous)
    preflight(cluster, build)
    cluster.choose_ports(ports, overrides)
    cluster.work.mkdir(parents=True, exist_ok=True)
    cluster.write_conf()
    cluster.save()
    try:
        format_namenode(cluster)
        start_and_wait(cluster, cluster.daemons, started)
    except BaseException as exc:
        if isinstance(exc, ClusterError):
            print(f"cluster: up failed: {exc}", file=sys.stderr, flush=True)
        print("cluster: stopping what this up started", file=sys.stderr, flush=True)
        stop(cluster, quiet=True)
        if isinstance(exc, ClusterError):
            raise ClusterError("up failed (see above); nothing of it is left running") \
                from None
        raise
    image = getattr(cluster.launcher, "image", None)
    print(f"cluster: up in {time.monotonic() - started:.0f} s, Hadoop {cluster.version}, "
          f"in {cluster.work}{f' (containers of {image})' if image else ''}")
    print_urls(cluster)


def start_and_wait(cluster: Cluster, names: Sequence[str], started: float) -> None:
    """Start the named daemons and wait until each is ready; a daemon that exits or logs a
    failed service is named with its log's last lines. The JobHistoryServer starts once HDFS
    is writable (it creates its folders there)."""
    procs: dict[str, Daemon] = {}
    pending = list(names)
    for name in names:
        if name == "jobhistory":
            break
        procs[name] = cluster.spawn(name)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while pending:
        for name in list(pending):
            if name not in procs:
                if not {"namenode", "datanode"} & set(pending):  # HDFS is writable
                    procs[name] = cluster.spawn(name)
                continue
            code = procs[name].poll()
            failure = start_failure(cluster.log(name))
            if code is not None or failure:
                how = (f"exited with code {code}" if code is not None else
                       f"{cluster.launcher.what} {procs[name].pid} runs on, but its log "
                       f"says: {failure}")
                raise ClusterError(f"{name} failed to start ({how}); the last lines of "
                                   f"{cluster.log(name)}:\n{tail(cluster.log(name))}")
            if cluster.ready(name):
                pending.remove(name)
                print(f"cluster: {name} ready ({time.monotonic() - started:.0f} s)",
                      flush=True)
        if pending and time.monotonic() > deadline:
            raise ClusterError("not ready after {:.0f} s: {}\n{}".format(
                READY_TIMEOUT_S, ", ".join(pending), "\n".join(
                    f"the last lines of {cluster.log(n)}:\n{tail(cluster.log(n))}"
                    for n in pending)))
        time.sleep(0.5)


def restart(cluster: Cluster, names: list[str]) -> None:
    """Stop the named daemons and start them again on the same configuration, as an operator
    restarts NodeManagers after editing their yarn-site.xml (the process cluster only)."""
    require_up(cluster)
    if cluster.launcher.kind != "process":
        raise ClusterError("restart: only the process cluster (not --docker) restarts a daemon")
    unknown = [name for name in names if name not in cluster.daemons]
    if unknown or not names:
        raise ClusterError(f"restart: unknown daemon(s) {unknown}; this cluster's daemons: "
                           f"{', '.join(cluster.daemons)}")
    started = time.monotonic()
    pids = [cluster.pid(name) for name in names]
    print(f"cluster: stopping {', '.join(names)}", flush=True)
    signal_all(pids, signal.SIGTERM, groups=True)
    for pid in wait_gone(pids, cluster.work, STOP_TIMEOUT_S):
        signal_all([pid], signal.SIGKILL, groups=True)
    left = wait_gone(pids, cluster.work, STOP_TIMEOUT_S)
    if left:
        raise ClusterError(f"restart: pid(s) {left} still running after SIGKILL")
    try:
        start_and_wait(cluster, names, started)
    except BaseException:
        print("cluster: restart failed; the rest of the cluster runs on (down stops it)",
              file=sys.stderr, flush=True)
        raise


def start_failure(log: Path) -> str | None:
    """The line of a Hadoop daemon's log saying one of its services failed to start, with the
    exception that follows it. A ResourceManager whose client port is taken logs it, stops its
    active services and runs on (its web server up, no NodeManager able to join)."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines):
        if re.search(r"Service \S+ failed in state (INITED|STARTED)", line):
            cause = next((c for c in lines[i + 1:i + 4] if "Exception" in c), "")
            return f"{line.strip()[:300]} {cause.strip()[:300]}".strip()
    return None


def format_namenode(cluster: Cluster) -> None:
    if (cluster.work / "data" / "nn" / "current" / "VERSION").is_file():
        return
    command, env = cluster.command("namenode")
    command, env = cluster.launcher.client(
        cluster, [*command, "-format", "-force", "-nonInteractive"], cluster.work,
        "namenode-format", env)
    log = cluster.logs / "namenode-format.log"
    with log.open("w") as out:
        result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, cwd=cluster.work, env=env,
                                timeout=300, check=False)
    if result.returncode != 0:
        raise ClusterError(f"namenode -format exited with code {result.returncode}; the last "
                           f"lines of {log}:\n{tail(log)}")


def print_urls(cluster: Cluster) -> None:
    print(f"  HDFS         {cluster.default_fs} (web {cluster.url('nn.web')})\n"
          f"  YARN         {cluster.url('rm.web')}\n"
          f"  JobHistory   {cluster.url('jhs.web')}\n"
          f"  hedge serve  " + (
              f"not started (--plain: Hadoop alone; hedge's jar goes into {cluster.lib})"
              if cluster.plain else f"{MASTER}:{cluster.ports['hedge.py4j']} (log "
              f"{cluster.log('hedge-serve')})") + "\n"
          f"  client conf  {cluster.conf}")


def status(cluster: Cluster) -> int:
    if not cluster.state_file.is_file():
        print(f"cluster: nothing in {cluster.work} (down)")
        return 1
    cluster.load()
    ok = True
    for name in cluster.daemons:
        pid = cluster.pid(name)
        ready = pid is not None and cluster.ready(name)
        ok &= ready
        state = "ready" if ready else ("running, not ready" if pid else "not running")
        print(f"  {name:16} {state:20} {cluster.launcher.what} {pid or '-':>7}  "
              f"log {cluster.log(name)}")
    if ok:
        print_urls(cluster)
    return 0 if ok else 1


def require_up(cluster: Cluster) -> Cluster:
    cluster.load()
    down = [name for name in cluster.daemons if cluster.pid(name) is None]
    if down:
        raise ClusterError(f"not running: {', '.join(down)}; run scripts/cluster.sh up")
    return cluster


class Client:
    """Hadoop clients (jobs, WebHDFS) against a running cluster."""

    def __init__(self, cluster: Cluster, job: str) -> None:
        self.cluster = require_up(cluster)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.folder = cluster.work / "jobs" / f"{job}-{stamp}"
        self.folder.mkdir(parents=True)
        from hdfs import InsecureClient  # hedge's dependency (imkp build reads HDFS with it)

        self.hdfs = InsecureClient(cluster.url("nn.web"), user=getpass.getuser(), timeout=60)

    def run(self, name: str, main: str, args: list[str], jar: Path | str) -> str:
        """Run one client JVM to its end; its output goes to FOLDER/NAME.log, returned."""
        log = self.folder / f"{name}.log"
        launcher = self.cluster.launcher
        command, env = launcher.client(
            self.cluster, launcher.java_command(self.cluster, main, args,
                                                extra_classpath=(str(self.cluster.conf),
                                                                 str(jar)), heap="512m"),
            self.folder, name)
        print(f"cluster: {name} (log {log})", flush=True)
        started = time.monotonic()
        with log.open("w") as out:
            result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, cwd=self.folder, env=env,
                                    timeout=JOB_TIMEOUT_S, check=False)
        text = log.read_text(errors="replace")
        jobs = re.findall(r"Running job: (job_\d+_\d+)", text)
        seconds = time.monotonic() - started
        if result.returncode != 0:
            raise ClusterError(f"{name} failed (exit {result.returncode}) after {seconds:.0f} s"
                               f"{' (' + ', '.join(jobs) + ')' if jobs else ''}; the last "
                               f"lines of {log}:\n{tail(log, 40)}")
        print(f"cluster: {name} done in {seconds:.0f} s{': ' + ', '.join(jobs) if jobs else ''}",
              flush=True)
        return text


def examples(client: Client, name: str, args: list[str]) -> str:
    return client.run(name, "org.apache.hadoop.examples.ExampleDriver", [name, *args],
                      client.cluster.launcher.examples_jar())


def zipf_text(words: int, seed: int = 1) -> str:
    """Skewed text: word rank k drawn with P ~ k^-1.1 over 5000 words, 12 words a line."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{k}" for k in range(5000)])
    weights = 1.0 / np.arange(1, 5001) ** 1.1
    drawn = vocabulary[rng.choice(5000, size=words, p=weights / weights.sum())]
    return "\n".join(" ".join(drawn[i:i + 12]) for i in range(0, words, 12)) + "\n"


def wordcount(cluster: Cluster, words: int, reducers: int) -> None:
    """The examples WordCount, partitioned by hedge's ImkpPartitioner with a mapping built
    (by `hedge imkp build`, over WebHDFS) from its HDFS input; output checked."""
    client = Client(cluster, "wordcount")
    root = f"/hedge/wordcount-{client.folder.name.split('-', 1)[1]}"
    text = zipf_text(words)
    client.hdfs.write(f"{root}/in/words.txt", data=text.encode(), overwrite=True)
    mapping = client.folder / "words.imkp"
    command, env = cluster.launcher.client(cluster, cluster.launcher.hedge_command(
        ["imkp", "build", f"{cluster.default_fs}{root}/in", "--webhdfs-url",
         cluster.url("nn.web"), "--reducers", str(reducers), "-o", str(mapping)]),
        client.folder, "imkp-build")
    build = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env,
                           cwd=client.folder, check=False)
    if build.returncode != 0:
        raise ClusterError(f"hedge imkp build failed:\n{build.stderr[-3000:]}")
    client.hdfs.upload(f"{root}/words.imkp", str(mapping), overwrite=True)
    examples(client, "wordcount", [
        "-D", f"mapreduce.job.reduces={reducers}",
        "-D", "mapreduce.job.partitioner.class=org.hedge.imkp.ImkpPartitioner",
        "-D", f"hedge.imkp.mapping={cluster.default_fs}{root}/words.imkp",
        f"{root}/in", f"{root}/out"])
    counts: collections.Counter[str] = collections.Counter()
    sizes = []
    for part in sorted(client.hdfs.list(f"{root}/out")):
        if not part.startswith("part-r-"):
            continue
        with client.hdfs.read(f"{root}/out/{part}", encoding="utf-8") as reader:
            lines = reader.read().splitlines()
        load = 0
        for line in lines:
            word, count = line.split("\t")
            counts[word] = int(count)
            load += int(count)
        sizes.append(load)
    expected = collections.Counter(text.split())
    if counts != expected:
        raise ClusterError(f"wordcount output in {root}/out differs from the local count "
                           f"({len(counts)} words vs {len(expected)})")
    print(f"cluster: wordcount output {root}/out equals the local count ({len(counts)} "
          f"distinct words, {words} in all); word occurrences per reducer (ImKP): {sizes}")


def terasort(cluster: Cluster, rows: int, reducers: int) -> None:
    client = Client(cluster, "terasort")
    root = f"/hedge/terasort-{client.folder.name.split('-', 1)[1]}"
    examples(client, "teragen", [f"-Dmapreduce.job.maps={2}", str(rows), f"{root}/in"])
    examples(client, "terasort", [f"-Dmapreduce.job.reduces={reducers}", f"{root}/in",
                                  f"{root}/out"])
    examples(client, "teravalidate", [f"{root}/out", f"{root}/report"])
    with client.hdfs.read(f"{root}/report/part-r-00000", encoding="utf-8") as reader:
        report = reader.read()
    if "error" in report:
        raise ClusterError(f"teravalidate found errors in {root}/out:\n{report[:2000]}")
    print(f"cluster: terasort of {rows} rows sorted and validated ({root}/out)")


def sleep_job(cluster: Cluster, options: argparse.Namespace) -> None:
    """hedge's StragglerJob (java-shim/cluster): attempt 0 of map 0 runs SLOWDOWN x slower."""
    client = Client(cluster, "sleep")
    root = f"/hedge/sleep-{client.folder.name.split('-', 1)[1]}"
    settings = {"hedge.test.maps": options.maps, "hedge.test.records": options.records,
                "hedge.test.record.ms": options.record_ms, "hedge.test.straggler.task": 0,
                "hedge.test.straggler.slowdown": options.slowdown}
    speculation = options.speculation or ("cluster" if cluster.plain else "adaptive")
    if speculation == "cluster":
        pass  # the cluster's mapred-site.xml decides
    elif speculation == "off":
        # both: with either on, the AM still builds the speculator (and asks hedge)
        settings["mapreduce.map.speculative"] = "false"
        settings["mapreduce.reduce.speculative"] = "false"
    elif speculation == "hadoop-default":
        settings["yarn.app.mapreduce.am.job.speculator.class"] = \
            "org.apache.hadoop.mapreduce.v2.app.speculate.DefaultSpeculator"
    else:
        settings["hedge.policy"] = speculation
        if speculation == "late":  # LATE copies only attempts older than this
            settings["hedge.late.min_elapsed"] = "5"
    args = []
    for key, value in settings.items():
        args += ["-D", f"{key}={value}"]
    summary_file = client.folder / "summary.json"
    try:
        client.run("sleep", "org.hedge.cluster.StragglerJob",
                   [*args, "--out", f"{cluster.default_fs}{root}/out", "--summary",
                    str(summary_file)], cluster.launcher.cluster_jar())
    finally:
        if summary_file.is_file():
            report_sleep(cluster, json.loads(summary_file.read_text()), speculation)


def report_sleep(cluster: Cluster, summary: dict, speculation: str) -> None:
    job = summary["job"]
    straggler = sorted((e["attempt"].rsplit("_", 1)[1], e["status"])
                       for e in summary["attempts"] if "_m_000000_" in e["attempt"])
    serve_log = cluster.log("hedge-serve")  # none on a --plain cluster
    decisions = [line for line in
                 (serve_log.read_text(errors="replace") if serve_log.is_file() else "")
                 .splitlines() if "event=decision" in line and f"job={job} " in line]
    seconds = (summary["finished"] - summary["started"]) / 1000
    print(f"cluster: {job} {summary['state']} in {seconds:.0f} s (speculation: {speculation});"
          f" map 0 attempts: {', '.join(f'{a} {s}' for a, s in straggler)}" + (
              f"; hedge serve decisions for it: {len(decisions)}"
              if serve_log.is_file() else ""))
    for line in decisions[:5]:
        print(f"  {line}")


def history(cluster: Cluster, extra: list[str]) -> int:
    require_up(cluster)
    args = ["nodes", "rank", cluster.url("jhs.web"), *extra]
    command, env = cluster.launcher.client(cluster, cluster.launcher.hedge_command(args),
                                           cluster.work, "history")
    print(f"cluster: hedge {' '.join(args)}", flush=True)
    return subprocess.run(command, env=env, check=False).returncode


def parse_port(text: str) -> tuple[str, int]:
    name, _, port = text.partition("=")
    if not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=PORT, got {text!r}")
    return name, int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/cluster.sh", description=(
        "A pseudo-distributed Hadoop cluster with hedge, one process (or, with --docker, one "
        "container) per daemon."))
    parser.add_argument("--docker", action="store_true", help=(
        "run the daemons and clients in containers of the hedge-hadoop image "
        "($HEDGE_HADOOP_IMAGE; scripts/docker-image.sh builds it) [processes]"))
    parser.add_argument("--dir", type=Path, default=None, help=(
        "work dir [$HEDGE_CLUSTER_DIR, else out/cluster, with --docker out/cluster-docker]"))
    parser.add_argument("--hadoop", default=os.environ.get("HEDGE_HADOOP_VERSION",
                                                           DEFAULT_VERSION),
                        choices=CLUSTER_VERSIONS, help="Hadoop version for up [3.4.1]")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("up", help="start the cluster (and format HDFS the first time)")
    p.add_argument("--ports", choices=("standard", "auto"), default="standard",
                   help="Hadoop's default ports, or any free ones [standard]")
    p.add_argument("--port", type=parse_port, action="append", default=[],
                   metavar="NAME=PORT", help=f"one port ({', '.join(STANDARD_PORTS)})")
    p.add_argument("--build", action="store_true", help=(
        "with --docker: rebuild the images (scripts/docker-image.sh) even if present"))
    p.add_argument("--plain", action="store_true", help=(
        "Hadoop alone: no hedge settings, no hedge serve, no health script, an empty DIR/lib "
        "on the containers' classpath (to follow the README's steps for your own cluster)"))
    p = commands.add_parser("restart", help="stop and start daemons (e.g. the NodeManagers "
                            "after editing their yarn-site.xml)")
    p.add_argument("names", nargs="+", metavar="NAME", help=f"daemons: {', '.join(DAEMONS)}")
    commands.add_parser("status", help="each daemon's state")
    commands.add_parser("down", help="stop everything (idempotent)")
    p = commands.add_parser("wordcount", help="examples WordCount with hedge's ImKP partitioner")
    p.add_argument("--words", type=int, default=2_000_000)
    p.add_argument("--reducers", type=int, default=4)
    p = commands.add_parser("terasort", help="examples teragen, terasort, teravalidate")
    p.add_argument("--rows", type=int, default=500_000)
    p.add_argument("--reducers", type=int, default=2)
    p = commands.add_parser("sleep", help="hedge's StragglerJob: one map attempt 6x slow")
    p.add_argument("--speculation", default=None, help=(
        "a hedge policy (hedge.policy: adaptive, hadoop, late, ...), 'hadoop-default' "
        "(Hadoop's own DefaultSpeculator), 'off', or 'cluster' (the cluster's own "
        "mapred-site.xml) [adaptive; with up --plain: cluster]"))
    p.add_argument("--maps", type=int, default=4)
    p.add_argument("--records", type=int, default=10)
    p.add_argument("--record-ms", type=int, default=1000)
    p.add_argument("--slowdown", type=int, default=6)
    commands.add_parser("history", help="hedge nodes rank on the JobHistoryServer (more "
                        "arguments, e.g. --json, go to `hedge nodes rank`)")
    options, extra = parser.parse_known_args(argv)
    if extra and options.command != "history":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    work = options.dir or Path(os.environ.get("HEDGE_CLUSTER_DIR") or (
        DEFAULT_DIR.with_name("cluster-docker") if options.docker else DEFAULT_DIR))
    cluster = Cluster(work.resolve(), options.hadoop,
                      launcher=DockerLauncher() if options.docker else ProcessLauncher(),
                      plain=getattr(options, "plain", False))
    try:
        if options.command == "up":
            up(cluster, options.ports, dict(options.port), build=options.build)
        elif options.command == "status":
            return status(cluster)
        elif options.command == "restart":
            restart(cluster.load(), options.names)
        elif options.command == "down":
            with contextlib.suppress(ClusterError, ValueError, KeyError):
                cluster.load()  # the launcher of the up that started it
            stopped = stop(cluster)
            what = "container(s)" if cluster.launcher.kind == "docker" else "process(es)"
            print(f"cluster: down ({stopped} {what} stopped)" if stopped
                  else f"cluster: down (nothing of {cluster.work} was running)")
        elif options.command == "wordcount":
            wordcount(cluster, options.words, options.reducers)
        elif options.command == "terasort":
            terasort(cluster, options.rows, options.reducers)
        elif options.command == "sleep":
            sleep_job(cluster, options)
        elif options.command == "history":
            return history(cluster, extra)
    except (ClusterError, HedgeError) as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
