"""Helpers for the plugin integration tests: a live `hedge serve` process and the Java AM harness.

The harness (java-shim/src/test/java/org/hedge/shim/harness) builds hedge's speculator through
Hadoop 2.7.3's own ``MRAppMaster.createSpeculator`` and drives it with a scripted job on a
simulated clock; it prints COPY/KILL/FINISH/HEALTH/PAUSE/DONE lines parsed here.
"""

from __future__ import annotations

import re
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hedge import javaenv
from hedge.errors import HedgeError

REPO = Path(__file__).resolve().parents[2]
HARNESS = "org.hedge.shim.harness.HarnessMain"


def write_token(path: Path) -> Path:
    path.write_text(secrets.token_urlsafe(24) + "\n")
    path.chmod(0o600)
    return path


class ServeProcess:
    """`hedge serve` as a child process; ``port``/``data_port`` read from its first stdout line."""

    def __init__(self, token_file: Path, log: Path, policy: str = "static", port: int = 0,
                 extra: tuple[str, ...] = ()) -> None:
        self.token_file, self.log, self.policy = token_file, log, policy
        self.port, self.data_port, self.extra = port, 0, extra
        self.proc: subprocess.Popen[str] | None = None
        self.listening = ""  # its first stdout line, once started

    def start(self) -> ServeProcess:
        command = [sys.executable, "-m", "hedge.cli", "serve", "--address",
                   f"127.0.0.1:{self.port}", "--token-file", str(self.token_file), "--policy",
                   self.policy, *self.extra]
        if self.data_port:
            command += ["--data-port", str(self.data_port)]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE,
                                     stderr=self.log.open("a"), text=True, cwd=REPO)
        line = self.proc.stdout.readline()
        match = re.search(r"py4j=[\d.]+:(\d+) data=[\d.]+:(\d+)", line)
        if not match:
            raise RuntimeError(f"hedge serve did not start: {line!r}; log:\n"
                               f"{self.log.read_text()[-3000:]}")
        self.port, self.data_port = int(match.group(1)), int(match.group(2))
        self.listening = line  # e.g. "... metrics=127.0.0.1:PORT" with --metrics-address
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class HarnessRun:
    stdout: str
    stderr: str
    lines: list[str] = field(default_factory=list)

    def copies(self, session: int | None = None) -> list[tuple[float, int]]:
        prefix = "" if session is None else f"[{session}] "
        out = []
        for line in self.lines:
            m = re.fullmatch(re.escape(prefix) + r"COPY t=([\d.]+) task=(\d+)", line)
            if m:
                out.append((float(m.group(1)), int(m.group(2))))
        return out

    def health(self) -> list[tuple[float, bool]]:
        return [(float(m.group(1)), m.group(2) == "true") for line in self.lines
                if (m := re.fullmatch(r"HEALTH t=([\d.]+) healthy=(\w+)", line))]

    def done(self) -> list[dict[str, str]]:
        return [dict(kv.split("=") for kv in line.split("DONE ", 1)[1].split())
                for line in self.lines if "DONE " in line]


def harness_args(address: str | None, token: Path | None, *args: str,
                 conf: dict[str, str] | None = None) -> list[str]:
    settings = {"hedge.controlplane.backoff.max.ms": "2000",
                "hedge.controlplane.deadline.ms": "1000"}
    if address:
        settings["hedge.controlplane.address"] = address
    if token:
        settings["hedge.controlplane.token.file"] = str(token)
    settings.update(conf or {})
    out = list(args)
    for key, value in settings.items():
        out += ["--conf", f"{key}={value}"]
    return out


def java_command(args: list[str]) -> list[str]:
    return javaenv.java_command(HARNESS, args, "2.7.3", (javaenv.shim_test_classes(),),
                                heap="512m")


def run_harness(args: list[str], timeout: float = 120) -> HarnessRun:
    proc = subprocess.run(java_command(args), capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)
    run = HarnessRun(proc.stdout, proc.stderr, proc.stdout.splitlines())
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run


def run_harness_with_pauses(args: list[str], on_pause, timeout: float = 180) -> HarnessRun:
    """Run the harness; ``on_pause(t)`` runs at each ``PAUSE t=..`` before the job resumes."""
    proc = subprocess.Popen(java_command(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        for line in proc.stdout:
            line = line.rstrip("\n")
            lines.append(line)
            if line.startswith("PAUSE t="):
                on_pause(int(line.split("=")[1]))
                proc.stdin.write("go\n")
                proc.stdin.flush()
            if time.monotonic() > deadline:
                raise TimeoutError("harness took too long")
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = proc.stderr.read()
    assert proc.returncode == 0, stderr[-3000:]
    return HarnessRun("\n".join(lines), stderr, lines)


def require_harness() -> None:
    """Skip, naming what is missing, when the Hadoop jars or the shim build are absent."""
    try:
        javaenv.java_executable()
        javaenv.hadoop_jars("2.7.3")
        javaenv.shim_jar()
        javaenv.shim_test_classes()
    except HedgeError as exc:
        pytest.skip(f"needs the Java side: {exc}")
