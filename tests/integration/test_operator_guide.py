"""The README's "Putting hedge on your Hadoop 3.x cluster", followed step by step.

``scripts/cluster.sh up --plain`` starts Hadoop alone (no hedge property, no ``hedge serve``,
no health script); the test then does what each numbered step of the README says, taking the
step's commands and file names from the README text itself (so a step that changes or goes
missing fails here), with /etc/hedge and the edge node's address replaced by this machine's:
the jar into the containers' lib folder, a token made with the README's command, conf/hedge.ini
filled in and checked with conf/hedge-serve.service's own ExecStartPre line, hedge serve started
with its ExecStart line (systemd does not run here), the properties of conf/mapred-site.xml and
conf/yarn-site.xml merged into the cluster's site files, the NodeManagers restarted, and a job
checked as step 7 says: its AM log names hedge's speculator and hedge serve copied the straggler.

One deviation from the literal files, said where it is made: hedge.controlplane.deadline.ms is
1000 ms, not conf/mapred-site.xml's 200 ms (this 2-core machine runs the daemons, the AM and
its tasks: an operator here would raise it too; scripts/cluster.sh does the same).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hedge import javaenv
from tests.integration.test_process_cluster import (
    alive,
    assert_hedge_copied_the_straggler,
    assert_nothing_left,
    cluster_sh,
)
from tests.integration.yarn_cluster import require_cluster_side

REPO = Path(__file__).resolve().parents[2]
VERSION = "3.4.1"
HEDGE_BIN = Path(sys.executable).parent  # .venv/bin: the operator's /opt/hedge/venv/bin
IMKP_AND_DEADLINE = re.compile(r"mapreduce\.job\.partitioner\.class|hedge\.imkp\.|"
                               r"hedge\.deadline\.ms")

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]


def guide_steps() -> dict[int, str]:
    """The numbered steps of the README's guide, by number (each step's text)."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("### Putting hedge on your Hadoop 3.x cluster", 1)[1]
    section = section.split("\n### ", 1)[0]
    parts = re.split(r"^(\d)\. ", section, flags=re.M)
    return {int(parts[i]): " ".join(parts[i + 1].split()) for i in range(1, len(parts), 2)}


def backticked(step: str, pattern: str) -> str:
    """The one `command` of a step matching ``pattern``."""
    found = [c for c in re.findall(r"`([^`]+)`", step) if re.search(pattern, c)]
    assert len(found) == 1, f"the README step has {len(found)} command(s) matching {pattern!r}"
    return found[0]


def site_properties(path: Path) -> dict[str, str]:
    return {p.findtext("name").strip(): (p.findtext("value") or "").strip()
            for p in ET.parse(path).getroot().iter("property")}


def merge_site(path: Path, properties: dict[str, str]) -> None:
    """Add (or replace) properties in a Hadoop site file, as an operator edits it."""
    tree = ET.parse(path)
    root = tree.getroot()
    for prop in list(root.iter("property")):
        if prop.findtext("name").strip() in properties:
            root.remove(prop)
    for name, value in properties.items():
        prop = ET.SubElement(root, "property")
        ET.SubElement(prop, "name").text = name
        ET.SubElement(prop, "value").text = value
    tree.write(path, encoding="utf-8", xml_declaration=True)


def set_ini(path: Path, section: str, key: str, value: str) -> None:
    """Set ``key = value`` in ``[section]`` of an ini file, keeping its comments."""
    lines, current, done = path.read_text().splitlines(), None, False
    for i, line in enumerate(lines):
        if line.startswith("["):
            current = line.strip()[1:-1]
        elif current == section and re.match(rf"{re.escape(key)}\s*=", line):
            lines[i], done = f"{key} = {value}", True
    assert done, f"{key} not in [{section}] of {path}"
    path.write_text("\n".join(lines) + "\n")


def unit_line(key: str, etc: Path) -> list[str]:
    """A line of conf/hedge-serve.service with this machine's paths for the operator's."""
    unit = (REPO / "conf" / "hedge-serve.service").read_text()
    line = re.search(rf"^{key}=(.+)$", unit, re.M)[1]
    line = line.replace("/opt/hedge/venv/bin", str(HEDGE_BIN)).replace("/etc/hedge", str(etc))
    return shlex.split(line)


def node_states(work: Path) -> dict[str, str]:
    port = json.loads((work / "cluster.json").read_text())["ports"]["rm.web"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ws/v1/cluster/nodes",
                                timeout=10) as answer:
        nodes = json.load(answer)["nodes"]["node"]
    live = {n["nodeHostName"]: n["state"] for n in nodes if n["state"] != "SHUTDOWN"}
    return live


def wait_for(check, timeout: float, what: str):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(1)
    raise AssertionError(f"not within {timeout:.0f} s: {what}")


def free_ports(n: int) -> list[int]:
    import socket

    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_the_readme_steps_put_hedge_on_a_plain_hadoop_cluster(tmp_path: Path) -> None:
    require_cluster_side(VERSION)
    steps = guide_steps()
    assert sorted(steps) == [1, 2, 3, 4, 5, 6, 7], sorted(steps)
    work, etc = tmp_path / "cluster", tmp_path / "etc-hedge"
    up = cluster_sh(work, "up", "--plain", "--ports", "auto")
    pids = [int(p.read_text()) for p in (work / "pids").glob("*.pid")]
    serve = None
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        assert "hedge serve  not started" in up.stdout
        mapred = work / "conf" / "mapred-site.xml"
        assert not [k for k in site_properties(mapred) if k.startswith("hedge.")]
        assert "speculator" not in mapred.read_text()

        # 1. Build: `make setup` gives the jar at the path the step names
        jar = javaenv.shim_jar()
        assert re.search(r"java-shim/target/hedge-shim-<version>\.jar", steps[1])
        assert jar.parent == REPO / "java-shim" / "target" and jar.name.startswith("hedge-shim-")

        # 2. The jar on every node: into share/hadoop/mapreduce/lib (here DIR/lib)
        assert "$HADOOP_HOME/share/hadoop/mapreduce/lib/" in steps[2]
        shutil.copy(jar, work / "lib")

        # 3. The control plane: the README's token command, hedge.ini, --check, the service
        token_command = backticked(steps[3], r"/dev/urandom")
        subprocess.run(["bash", "-c", token_command.replace("/etc/hedge", str(etc))],
                       check=True)
        token = etc / "token"
        token.chmod(0o600)  # the step's `chmod 600`
        assert "chmod 600" in steps[3] and len(token.read_text().strip()) >= 16
        copy = backticked(steps[3], r"^cp conf/hedge\.ini").split()
        shutil.copy(REPO / copy[1], etc / Path(copy[1]).name)
        ini = etc / "hedge.ini"
        py4j, data = free_ports(2)
        rm_web = json.loads((work / "cluster.json").read_text())["ports"]["rm.web"]
        for section, key, value in (("server", "address", f"127.0.0.1:{py4j}"),
                                    ("server", "data_port", str(data)),
                                    ("server", "token_file", str(token)),
                                    ("server", "policy", "adaptive"),
                                    ("cluster", "resourcemanager",
                                     f"http://127.0.0.1:{rm_web}")):
            assert key in steps[3], f"step 3 no longer names {key}"
            set_ini(ini, section, key, value)
        assert "hedge serve --config /etc/hedge/hedge.ini --check" in steps[3]
        check = subprocess.run(unit_line("ExecStartPre", etc), capture_output=True, text=True,
                               timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        serve_log = tmp_path / "hedge-serve.log"
        with serve_log.open("w") as out:  # what systemd would run (ExecStart)
            serve = subprocess.Popen(unit_line("ExecStart", etc), stdout=out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for(lambda: "hedge serve: listening" in serve_log.read_text(), 60,
                 f"hedge serve listening (log {serve_log})")

        # 4. The token where AMs run: this one machine reads the same path
        assert "hedge.controlplane.token.file" in steps[4]

        # 5. mapred-site.xml: conf/mapred-site.xml's properties but the ImKP part and the
        #    example deadline, with this control plane's address and token file
        assert "not its ImKP part" in steps[5] and "hedge.deadline.ms" in steps[5]
        hedge_site = {k: v for k, v in site_properties(REPO / "conf" / "mapred-site.xml").items()
                      if not IMKP_AND_DEADLINE.match(k)}
        hedge_site["hedge.controlplane.address"] = f"127.0.0.1:{py4j}"
        hedge_site["hedge.controlplane.token.file"] = str(token)
        hedge_site["hedge.controlplane.deadline.ms"] = "1000"  # the module docstring's deviation
        merge_site(mapred, hedge_site)

        # 6. yarn-site.xml on every NodeManager (conf/yarn-site.xml's properties), restart;
        #    a node on the blacklist then reports UNHEALTHY, the other stays RUNNING
        assert "conf/yarn-site.xml" in steps[6] and "restart the NodeManagers" in steps[6]
        blacklist = work / "blacklist"
        blacklist.write_text("# hedge nodes watch\n127.0.0.3\n")
        health = site_properties(REPO / "conf" / "yarn-site.xml")
        health["yarn.nodemanager.health-checker.script.path"] = str(
            REPO / "scripts" / "hedge-health-check.sh")
        health["yarn.nodemanager.health-checker.script.opts"] = str(blacklist)
        for nm in ("nodemanager-1", "nodemanager-2"):
            merge_site(work / nm / "conf" / "yarn-site.xml", health)
        restart = cluster_sh(work, "restart", "nodemanager-1", "nodemanager-2")
        assert restart.returncode == 0, restart.stdout + restart.stderr
        pids = [int(p.read_text()) for p in (work / "pids").glob("*.pid")]
        wait_for(lambda: node_states(work) == {"127.0.0.2": "RUNNING",
                                               "127.0.0.3": "UNHEALTHY"}, 90,
                 f"127.0.0.3 blacklisted by its health script: {node_states(work)}")

        # 7. Check a job: the AM log names hedge's speculator; hedge serve copied the straggler
        for phrase in ("hedge: speculator for application_", "event=open", "event=decision"):
            assert phrase in steps[7]
        job = cluster_sh(work, "sleep", timeout=600)
        assert_hedge_copied_the_straggler(work, job, serve_log=serve_log, policy="adaptive")
        am_logs = list(work.glob("nodemanager-*/logs/application_*/container_*_01_000001/"
                                 "syslog"))
        assert len(am_logs) == 1, am_logs
        am_log = am_logs[0].read_text(errors="replace")
        assert re.search(rf"hedge: speculator for application_\S+, control plane "
                         rf"127\.0\.0\.1:{py4j}, policy adaptive", am_log), am_log[-3000:]
        for symptom in ("not usable", "refused job", "unavailable (",
                        "Hadoop-default speculation"):  # the fallback's words
            assert symptom not in am_log, f"AM log says {symptom!r}"
        assert not list(work.glob("nodemanager-2/logs/application_*"))  # blacklisted node
    finally:
        if serve is not None:
            serve.terminate()
            serve.wait(timeout=30)
        down = cluster_sh(work, "down", timeout=180)
    assert down.returncode == 0, down.stdout + down.stderr
    assert serve.poll() is not None and not alive(serve.pid)
    assert_nothing_left(work, pids)
