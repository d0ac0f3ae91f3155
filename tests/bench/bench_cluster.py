#!/usr/bin/env python3
"""The process cluster (scripts/cluster.sh) as a benchmark: scan latency inside the real
MRAppMaster, and the straggler job's time with speculation off, Hadoop's and hedge's.

One command brings a pseudo-distributed cluster up in a work dir of its own (NameNode,
DataNode, ResourceManager, two NodeManagers, JobHistoryServer and `hedge serve` as separate
processes, free ports), runs, and brings it down again even when something fails:

1. **Job time.** hedge's StragglerJob (4 maps of 10 records x 1 s, map 0 attempt 0 six times
   slower, 1 reduce; what `scripts/cluster.sh sleep` runs) with speculation off, with Hadoop's
   DefaultSpeculator (the cluster's estimator, as `sleep --speculation hadoop-default`) and
   with hedge (`--policy`, default adaptive). Job time is the AM's, start to finish; each is
   printed as a ratio to the speculation-off run of the same session.
2. **Per-scan decision latency** in the MRAppMaster of a job of `--maps` (1000) maps and one
   reduce: hedge's shim times every scan that asks the control plane (snapshot, encoding,
   round trip to `hedge serve`) and logs `hedge: scan latency ms p50=.. p99=.. max=.. n=..` at
   stop; the same job under Hadoop's DefaultSpeculator (stock LegacyTaskRuntimeEstimator)
   runs as org.hedge.cluster.TimedDefaultSpeculator, which times each of its scans
   (computeSpeculations) and logs the same figures. On two cores such a job would take many
   minutes, so each runs for `--watch` seconds (its AM holds all tasks from the start), is then
   killed (`mapred job -kill`, waiting for the AM to reach KILLED: it stops its services
   and logs), and the figures are read
   from the AM's syslog in the NodeManager's container log dir. Latencies are wall time on
   the AM's scan thread; hedge's include waiting for `hedge serve` (another process on the
   same two cores); the p50 ratio is hedge's over DefaultSpeculator's of the same session.

Run: `.venv/bin/python tests/bench/bench_cluster.py [--maps 1000] [--watch 150]
[--policy adaptive] [--keep]` (about 12 minutes on two cores; needs `make setup` and `make
shim`). The work dir is a fresh temporary folder, removed afterwards unless --keep or a
failure (then its path is printed). Figures are not asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "python"))

import pseudo_cluster as pc  # noqa: E402

from hedge import javaenv  # noqa: E402

HEDGE_LINE = re.compile(
    r"hedge: scan latency ms p50=(?P<p50>[\d.]+) p99=(?P<p99>[\d.]+) max=(?P<max>[\d.]+) "
    r"mean=(?P<mean>[\d.]+) n=(?P<n>\d+) \(.*tasks (?P<tasks>\d+), attempt rows up to "
    r"(?P<rows>\d+)\)")
DEFAULT_LINE = re.compile(
    r"hedge-bench: DefaultSpeculator scan latency ms p50=(?P<p50>[\d.]+) p99=(?P<p99>[\d.]+) "
    r"max=(?P<max>[\d.]+) mean=(?P<mean>[\d.]+) n=(?P<n>\d+) \(tasks (?P<tasks>\d+)\)")
STOPPED_LINE = re.compile(r"hedge: speculator stopped; copies (\d+) \(fallback (\d+)\)")
TIMED_DEFAULT = "org.hedge.cluster.TimedDefaultSpeculator"
HARD_KILL_TIMEOUT = "yarn.app.mapreduce.am.hard-kill-timeout-ms"
LEGACY_ESTIMATOR = "org.apache.hadoop.mapreduce.v2.app.speculate.LegacyTaskRuntimeEstimator"


@dataclass
class Latency:
    speculator: str
    p50: float
    p99: float
    max: float
    mean: float
    scans: int
    tasks: int
    rows: int | None
    maps_done: int | None
    copies: str
    watched_s: float


def straggler_job_time(cluster: pc.Cluster, speculation: str) -> float:
    """One `scripts/cluster.sh sleep` run; the job's time (AM start to finish) in seconds."""
    before = set((cluster.work / "jobs").glob("sleep-*"))
    pc.sleep_job(cluster, argparse.Namespace(speculation=speculation, maps=4, records=10,
                                             record_ms=1000, slowdown=6))
    (folder,) = set((cluster.work / "jobs").glob("sleep-*")) - before
    summary = json.loads((folder / "summary.json").read_text())
    if summary["state"] != "SUCCEEDED":
        raise pc.ClusterError(f"{summary['job']} ended {summary['state']}")
    return (summary["finished"] - summary["started"]) / 1000


def am_syslog(cluster: pc.Cluster, job: str) -> Path | None:
    app = job.replace("job_", "application_", 1)
    logs = sorted(cluster.work.glob(f"nodemanager-*/logs/{app}/container_*_000001/syslog"))
    return logs[-1] if logs else None


def latency_run(cluster: pc.Cluster, name: str, settings: dict[str, str], maps: int,
                watch_s: float) -> Latency:
    """Run the big job for watch_s seconds after its AM started, kill it, read the AM log."""
    client = pc.Client(cluster, f"latency-{name}")
    root = f"/hedge/latency-{client.folder.name.split('-', 1)[1]}-{name}"
    settings = {"hedge.test.maps": str(maps), "hedge.test.records": "20",
                "hedge.test.record.ms": "500", "hedge.test.straggler.task": "0",
                "hedge.test.straggler.slowdown": "6", **settings}
    args = [a for key, value in settings.items() for a in ("-D", f"{key}={value}")]
    summary_file = client.folder / "summary.json"
    command = javaenv.java_command(
        "org.hedge.cluster.StragglerJob",
        [*args, "--out", f"{cluster.default_fs}{root}/out", "--summary", str(summary_file)],
        cluster.version, extra_classpath=(cluster.conf, javaenv.cluster_jar()), heap="512m")
    log = client.folder / "job.log"
    print(f"bench: {name}: a job of {maps} maps and 1 reduce (log {log})", flush=True)
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, cwd=client.folder)
    try:
        job, deadline = None, time.monotonic() + 300
        while job is None or am_syslog(cluster, job) is None:
            if proc.poll() is not None:
                raise pc.ClusterError(f"the {name} job client exited with {proc.returncode} "
                                      f"before its AM ran; the last lines of {log}:\n"
                                      f"{pc.tail(log, 40)}")
            if time.monotonic() > deadline:
                raise pc.ClusterError(f"no AM log for the {name} job after 300 s "
                                      f"(job {job}); the last lines of {log}:\n{pc.tail(log)}")
            found = re.findall(r"Submitted application application_(\d+_\d+)",
                               log.read_text(errors="replace"))
            job = f"job_{found[0]}" if found else None
            time.sleep(1)
        started = time.monotonic()
        print(f"bench: {name}: {job}'s AM is running; watching it for {watch_s:.0f} s",
              flush=True)
        while time.monotonic() - started < watch_s and proc.poll() is None:
            time.sleep(2)
        watched = time.monotonic() - started
        if proc.poll() is None:
            kill = subprocess.run(
                # the client waits for the AM to reach KILLED (its services stop and log)
                # instead of having the ResourceManager kill its container after 10 s
                javaenv.java_command("org.apache.hadoop.mapred.JobClient",
                                     ["-D", f"{HARD_KILL_TIMEOUT}=600000", "-kill", job],
                                     cluster.version, extra_classpath=(cluster.conf,),
                                     heap="256m"),
                capture_output=True, text=True, timeout=180, check=False)
            print(f"bench: {name}: killed {job} (mapred job -kill: exit {kill.returncode})",
                  flush=True)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    pattern = HEDGE_LINE if name == "hedge" else DEFAULT_LINE
    syslog, deadline = am_syslog(cluster, job), time.monotonic() + 240
    while True:  # the AM logs at stop, a few seconds after the job ends
        text = syslog.read_text(errors="replace") if syslog else ""
        match = pattern.search(text)
        if match or time.monotonic() > deadline:
            break
        time.sleep(2)
    if match is None:
        raise pc.ClusterError(f"no '{pattern.pattern[:40]}...' line in the AM log {syslog}; "
                              f"its last lines:\n{pc.tail(syslog) if syslog else '(none)'}")
    maps_done = None
    if summary_file.is_file():
        summary = json.loads(summary_file.read_text())
        maps_done = sum(1 for e in summary["attempts"]
                        if "_m_" in e["attempt"] and e["status"] == "SUCCEEDED")
    stopped = STOPPED_LINE.search(text)
    copies = (f"{stopped[1]} ({stopped[2]} fallback)" if stopped else
              str(len(re.findall(r"We launched \d+ speculations", text))) + " scans copying")
    values = match.groupdict()
    print(f"bench: {name}: {match[0]} (AM log {syslog})", flush=True)
    return Latency(name, float(values["p50"]), float(values["p99"]), float(values["max"]),
                   float(values["mean"]), int(values["n"]), int(values["tasks"]),
                   int(values["rows"]) if values.get("rows") else None, maps_done, copies,
                   watched)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", type=int, default=1000, help="maps of the latency job [1000]")
    parser.add_argument("--watch", type=float, default=150,
                        help="seconds each latency job runs before it is killed [150]")
    parser.add_argument("--policy", default="adaptive", help="hedge's policy [adaptive]")
    parser.add_argument("--hadoop", default=pc.DEFAULT_VERSION, choices=pc.CLUSTER_VERSIONS)
    parser.add_argument("--skip-job-time", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    options = parser.parse_args()
    began = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="hedge-bench-cluster-"))
    cluster = pc.Cluster(work / "cluster", options.hadoop)
    times: dict[str, float] = {}
    latencies: list[Latency] = []
    ok = False
    try:
        pc.up(cluster, "auto", {})
        if not options.skip_job_time:
            for speculation in ("off", "hadoop-default", options.policy):
                times[speculation] = straggler_job_time(cluster, speculation)
        if not options.skip_latency:
            latencies.append(latency_run(cluster, "hedge", {"hedge.policy": options.policy},
                                         options.maps, options.watch))
            latencies.append(latency_run(
                cluster, "default",
                {"yarn.app.mapreduce.am.job.speculator.class": TIMED_DEFAULT,
                 "yarn.app.mapreduce.am.job.task.estimator.class": LEGACY_ESTIMATOR},
                options.maps, options.watch))
        ok = True
    except pc.ClusterError as exc:
        print(f"bench: {exc}", file=sys.stderr)
    finally:
        try:
            pc.stop(cluster)
        except pc.ClusterError as exc:
            print(f"bench: down: {exc}", file=sys.stderr)
            ok = False
    report(times, latencies, options, time.monotonic() - began)
    if ok and not options.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"bench: logs kept in {work}")
    return 0 if ok else 1


def report(times: dict[str, float], latencies: list[Latency], options: argparse.Namespace,
           seconds: float) -> None:
    print(f"\nProcess cluster, Hadoop {options.hadoop}, 2 NodeManagers; bench took "
          f"{seconds / 60:.1f} min.")
    if times:
        base = times["off"]
        print("\nStraggler job (4 maps x 10 s, map 0 attempt 0 6x slow, 1 reduce): job time, "
              f"ratio to the speculation-off run of this session ({base:.1f} s)")
        print(f"{'speculation':28} {'job s':>7} {'ratio':>7}")
        labels = {"off": "off", "hadoop-default": "Hadoop DefaultSpeculator",
                  options.policy: f"hedge ({options.policy})"}
        for key, value in times.items():
            print(f"{labels[key]:28} {value:7.1f} {value / base:7.3f}")
    if latencies:
        default = next((lat for lat in latencies if lat.speculator == "default"), None)
        print(f"\nPer-scan decision latency in the MRAppMaster (wall ms on the AM's scan "
              f"thread), job of {options.maps} maps + 1 reduce, each killed after "
              f"~{options.watch:.0f} s of running; ratio: p50 / DefaultSpeculator's p50")
        print(f"{'speculator':28} {'scans':>6} {'p50':>7} {'p99':>7} {'max':>7} {'mean':>7} "
              f"{'tasks':>6} {'rows':>5} {'maps done':>9} {'copies':>14} {'ratio':>7}")
        for lat in latencies:
            label = (f"hedge ({options.policy})" if lat.speculator == "hedge"
                     else "Hadoop DefaultSpeculator")
            ratio = (f"{lat.p50 / default.p50:7.2f}" if default and default.p50 > 0 else
                     f"{'-':>7}")
            print(f"{label:28} {lat.scans:6d} {lat.p50:7.3f} {lat.p99:7.3f} {lat.max:7.3f} "
                  f"{lat.mean:7.3f} {lat.tasks:6d} {lat.rows if lat.rows is not None else '-':>5}"
                  f" {lat.maps_done if lat.maps_done is not None else '-':>9} {lat.copies:>14}"
                  f" {ratio}")
        print("tasks: the job's tasks in the scanned snapshot's header; rows: the most attempt "
              "rows one hedge snapshot carried (deltas: attempts changed since the last "
              "scan); DefaultSpeculator with LegacyTaskRuntimeEstimator, hedge with the "
              "cluster's HedgeRuntimeEstimator.")


if __name__ == "__main__":
    sys.exit(main())
