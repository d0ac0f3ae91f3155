#!/usr/bin/env python3
"""Plugin scan latency: Java -> Python -> Java round trip per scan vs Hadoop's own scan.

For 100 / 1,000 / 10,000 / 100,000 running attempts in one job, the AM harness (hedge's speculator
built by Hadoop 2.7.3's MRAppMaster.createSpeculator, a live `hedge serve` process) times
every scan call: snapshot + encoding + data-channel round trip + the policy's decision +
applying the answer. The same harness job is then scanned by Hadoop's DefaultSpeculator
(LegacyTaskRuntimeEstimator), and the ratio hedge / DefaultSpeculator is printed.

Usage: .venv/bin/python tests/bench/bench_plugin.py [--policy adaptive] [--scans 200]
[--warmup 60] [--sizes 100,10000] (several minutes with the defaults: policies none, adaptive
and hedge-auto, 4 sizes each); --server-cpu measures only the server's CPU per scan, in this
process, on synthetic delta scans (no Java; about a minute).
Issue 21's targets, printed next to each p99: <= 2 ms at 10,000 running attempts and <= 20 ms
at 100,000 (TARGETS_P99_MS).
Both speculators get the same untimed warm-up scans (JIT); p99 is the ceil(0.99 n)-th fastest
of the n timed scans. The JVM runs with its defaults (G1) and -Xmx1g, as an AM does unless
yarn.app.mapreduce.am.command-opts is tuned.

Wall-clock figures move with whatever else runs on the machine, so a second table gives the
CPU time per scan of both sides (the AM's scan thread, and the server's deciding thread as
each answer reports it) and, for the scans slower than the 10 ms target, how much of their
time was CPU: a slow scan that used 2 ms of CPU in 15 ms waited 13 ms for a core. The load
average before and after is printed too.

Issue 21's control-plane step (hedge's side only, -Dhedge.bench.only=hedge, --trace; 500 timed
scans after 500 warm-up; load average 4-8 on 2 cores, shared). Until then the long tasks worked
600 s, so with --warmup 500 the job emptied at about the 105th timed scan: the earlier p50s
(wall 0.37 ms, server CPU 0.17 ms at 10 k) were an empty job's and the p99s the live job's,
which is where "p99 CPU is 5-10x p50" came from (same run at 10 k, none: server CPU p50 of
timed scans 0-49 0.91 ms, of each 50 from the 150th 0.16-0.22 ms). With the job alive for
every timed scan (ms, p50 / p99):

| policy, attempts | wall | AM scan thread CPU | server CPU |
|---|---|---|---|
| none, 10 k | 4.54 / 13.9 | 0.48 / 0.79 | 0.72 / 1.05 |
| adaptive, 10 k | 6.85 / 14.1 | 0.55 / 0.88 | 1.75 / 2.56 |
| none, 100 k | 18.7 / 42.9 | 4.65 / 5.87 | 2.76 / 3.93 |
| adaptive, 100 k | 30.4 / 60.8 | 4.35 / 8.81 | 9.97 / 13.6 |

No occasional pause: CPU p99 is 1.3-1.6x p50 on both sides (server max 1.31 ms against p50
0.72 at 10 k, none); the scan thread allocates 2 KB per scan (the G1 pauses of -Xlog:gc come
from the harness's event objects, between scans); the server collects between scans only. The
wall time beyond the CPU is waiting for a core (at 10 k the scans over 10 ms used at most
1.9 ms of CPU). adaptive at 100 k: every third scan's snapshot takes about 9 ms against 4
(rows of that tick, not yet explained), hence its AM CPU p99 of 2x p50. JobTracker now keeps
Hadoop's cap counts by event: the walks it replaces cost 12.5 ms CPU per call pair at 90,000
live attempts (measured apart), but no scan of these runs reached them (capRoom runs only when
an answer asks copies of open tasks, and on every fallback scan; the slowest scan of the
adaptive 100 k run used 9.7 ms), so the figures do not move: adaptive 100 k after, AM 5.0 /
10.3, server 10.9 / 14.9 (a slower period: the server, unchanged, rose 9 %); adaptive 10 k,
two alternations before / after, AM CPU p99 0.90, 1.01 / 0.99, 1.02.
Targets: CPU per scan meets both (10 k: 0.79 + 1.05 ms, none; 100 k: 5.9 + 3.9 ms, none;
8.8 + 13.6 ms, adaptive) except adaptive's server CPU p99 at 10 k (2.56 ms, its decision about
1 ms of it; 2.9-3.1 ms in the later alternations, whose server p50 was 1.9-2.2 ms); wall p99
meets neither on this loaded machine.

hedge-auto's scan at 100,000 attempts (2026-11-27): its candidates were picked by sorting
every one (numba's merge sort, 10 ms) and its residuals sorted by numba (9.5 ms, numpy's
vectorised sort 1.3); now one pass keeps the 32 slowest and numpy sorts (bit-identical,
``test_policy_auto_kernels``). --server-cpu, p50 / p99 ms: 10 k 2.95 / 3.18 -> 1.01 / 1.49,
100 k 24.97 / 25.99 -> 8.23 / 9.88. Through the shim (load 1.2-1.6): wall p99 10 k 5.78 ->
5.39 (server CPU 1.77 / 2.52), 100 k 49.98 -> 15.39 (server CPU 8.17 / 9.29); none in the
same run 6.20 and 13.76, its CPU java 0.86 + python 1.02 at 10 k: the wall beyond the CPU is
waiting for one of the 2 cores.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration.plugin_support import ServeProcess, write_token  # noqa: E402

from hedge import javaenv  # noqa: E402

SIZES = (100, 1000, 10000, 100000)
# issue 21: the control plane's p99 per scan at these sizes (ms)
TARGETS_P99_MS = {10000: 2.0, 100000: 20.0}
# the CPU table's "slow" scans: over this wall time (the harness counts them)
TARGET_P99_MS = 10.0


def bench_size(rows: int, scans: int, port: int, token: Path, warmup: int = 60,
               trace: Path | None = None) -> dict[str, dict[str, float]]:
    # the JVM's defaults (G1) and an AM-sized heap: what yarn.app.mapreduce.am.command-opts
    # gives an AM unless someone tunes it
    command = javaenv.java_command(
        "org.hedge.shim.harness.BenchMain",
        [str(rows), str(scans),
         "--conf", f"hedge.controlplane.address=127.0.0.1:{port}",
         "--conf", f"hedge.controlplane.token.file={token}",
         "--conf", "hedge.controlplane.deadline.ms=2000"],
        "2.7.3", (javaenv.shim_test_classes(),), heap="1g",
        jvm_options=(f"-Dhedge.bench.warmup={warmup}",
                     f"-Dhedge.bench.trace={'true' if trace else 'false'}"))
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"BenchMain failed:\n{proc.stderr[-3000:]}")
    if trace:
        trace.write_text("".join(f"{line}\n" for line in proc.stderr.splitlines()
                                 if line.startswith("TRACE ")))
    out: dict[str, dict[str, float]] = {}
    for line in proc.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        fields = dict(kv.split("=") for kv in rest.split())
        if kind == "BENCH":
            name = fields.pop("speculator")
            out[name] = {k: float(v) for k, v in fields.items()}
        elif kind == "PARTS":
            out["parts"] = {k: float(v) for k, v in fields.items()}
    if "unavailable" in proc.stderr or "rejected" in proc.stderr:
        print(f"  note: the control plane missed scans at {rows} rows:\n{proc.stderr[-800:]}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="none,adaptive,hedge-auto",
                        help="comma list; 'none' isolates the plugin's own cost (snapshot, "
                        "transport, decoding, validation) from the policy's")
    parser.add_argument("--scans", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=60,
                        help="untimed scans first (both speculators): JIT warm-up; issue 9's "
                        "first figures used 10, which left the JIT compiling during timing")
    parser.add_argument("--server-cpu", action="store_true",
                        help="only the server's CPU per scan, in this process (no Java): the "
                        "same decode/validate/decide/encode path on synthetic delta scans")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="comma list of running attempts per job")
    parser.add_argument("--trace", type=Path, metavar="DIR",
                        help="write every timed hedge scan (wall, snapshot, round trip, "
                        "scan-thread CPU, server CPU, bytes allocated) to "
                        "DIR/trace-POLICY-ROWS.txt")
    args = parser.parse_args()
    sizes = tuple(int(n) for n in args.sizes.split(","))
    if args.server_cpu:
        for policy in args.policy.split(","):
            server_cpu(policy, args.scans, args.warmup, sizes)
        return 0
    try:
        javaenv.shim_test_classes()
        javaenv.hadoop_jars("2.7.3")
    except Exception as exc:  # noqa: BLE001
        print(f"bench_plugin: needs the Java side: {exc}", file=sys.stderr)
        return 2
    if args.trace:
        args.trace.mkdir(parents=True, exist_ok=True)
    for policy in args.policy.split(","):
        run_policy(policy, args.scans, args.warmup, sizes, args.trace)
    return 0


def verdict(rows: int, p99_ms: float) -> str:
    """Issue 21's target for this size next to a p99, or "" where it sets none."""
    target = TARGETS_P99_MS.get(rows)
    if target is None:
        return ""
    return f"target <= {target:g} ms: {'met' if p99_ms <= target else 'NOT met'}"


def run_policy(policy: str, scans: int, warmup: int, sizes: tuple[int, ...],
               trace: Path | None = None) -> None:
    print(f"\npolicy {policy}; {scans} timed scans after {warmup} untimed; load average "
          f"before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        token = write_token(Path(tmp) / "token")
        serve = ServeProcess(token, Path(tmp) / "serve.log", policy=policy,
                             extra=("--metrics-interval", "1")).start()
        try:
            results = {}
            for n in sizes:
                results[n] = bench_size(n, scans, serve.port, token, warmup,
                                        trace and trace / f"trace-{policy}-{n}.txt")
                time.sleep(1.2)  # the server's per-second metrics line for the last scans
                results[n]["server"] = server_latency(Path(tmp) / "serve.log")
        finally:
            serve.stop()
    print(f"{'attempts':>9} | {'hedge p50':>9} {'p99':>8} | {'Hadoop p50':>10} {'p99':>8} | "
          f"{'ratio p50':>9} {'p99':>6} | {'snapshot':>8} {'round trip':>10} "
          f"{'server p50':>10}  (ms)  p99 against issue 21's target")
    for n, r in results.items():
        h, d, p = r["hedge"], r["default"], r.get("parts", {})
        server, _ = r["server"]
        print(f"{n:>9} | {h['p50_ms']:>9.2f} {h['p99_ms']:>8.2f} | {d['p50_ms']:>10.2f} "
              f"{d['p99_ms']:>8.2f} | {h['p50_ms'] / d['p50_ms']:>9.2f} "
              f"{h['p99_ms'] / d['p99_ms']:>6.2f} | {p.get('snapshot_ms', float('nan')):>8.2f} "
              f"{p.get('roundtrip_ms', float('nan')):>10.2f} {server:>10.2f}  "
              f"{verdict(n, h['p99_ms'])}")
    print(f"\nCPU per scan (ms), p50 / p99: the AM's scan thread (java), the server's deciding "
          f"thread (python, as each answer reports it), DefaultSpeculator's scan; and the scans "
          f"slower than {TARGET_P99_MS:g} ms: how many, their median wall time and the CPU "
          f"(java + python) they used")
    print(f"{'attempts':>9} | {'java':>13} | {'python':>13} | {'Hadoop':>13} | "
          f"{'slow':>4} {'wall p50':>8} {'CPU p50':>7} {'CPU max':>7}")
    for n, r in results.items():
        h, d = r["hedge"], r["default"]
        print(f"{n:>9} | {h['cpu_p50_ms']:>6.2f} {h['cpu_p99_ms']:>6.2f} | "
              f"{h['server_cpu_p50_ms']:>6.2f} {h['server_cpu_p99_ms']:>6.2f} | "
              f"{d['cpu_p50_ms']:>6.2f} {d['cpu_p99_ms']:>6.2f} | {int(h['slow']):>4} "
              f"{h['slow_ms_p50']:>8.2f} {h['slow_cpu_p50_ms']:>7.2f} "
              f"{h['slow_cpu_max_ms']:>7.2f}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    for n, r in results.items():
        if n in TARGETS_P99_MS:
            print(f"{n:,} attempts: hedge p99 {r['hedge']['p99_ms']:.2f} ms, "
                  f"{verdict(n, r['hedge']['p99_ms'])}")
    h = results[10000 if 10000 in results else max(results)]["hedge"]
    if h["slow"] and h["slow_cpu_max_ms"] < 0.5 * TARGET_P99_MS:
        print(f"  the {int(h['slow'])} scans over {TARGET_P99_MS:g} ms used at most "
              f"{h['slow_cpu_max_ms']:.2f} ms of CPU: the rest of their time was spent waiting "
              "for a core (load from other processes), not working")


def synthetic_frames(rows: int, scans: int) -> list[bytes]:
    """A full snapshot, then one delta per simulated second: every attempt reports every 3 s
    (a third of the rows per scan, as on the harness job), every 50th runs 5x slower."""
    import numpy as np

    from hedge.model import AttemptTable
    from hedge.server import wire

    rng = np.random.default_rng(0)
    t0, keys = 1_700_000_000.0, np.arange(rows)
    start = np.full(rows, t0 + 1.0)
    speed = np.where(keys % 50 == 0, 1 / 3000, 1 / 600)
    phase = rng.integers(0, 3000, rows) / 1000.0

    def table(now: float, sel: np.ndarray) -> AttemptTable:
        sent = np.round(now - (now - phase[sel]) % 3.0, 3)
        progress = np.clip((sent - start[sel]) * speed[sel], 0.0, 0.99)
        n = len(sel)
        return AttemptTable(
            task=sel, attempt=sel, task_type=np.zeros(n), state=np.ones(n), node=sel % 100,
            start=start[sel], first_progress_time=start[sel] + 2.0,
            first_progress=np.minimum(progress, 2 * speed[sel]), progress=progress,
            report_sent=sent, report_received=sent, bytes_processed=progress * 1e8,
            input_bytes=np.full(n, np.nan), speculative=np.zeros(n, bool))

    now = t0 + 100.0
    frames = [wire.encode_request(table(now, keys), seq=1, now=now, job_start=t0, n_maps=rows,
                                  n_reduces=0, new_nodes=[f"host{i}" for i in range(100)])]
    for k in range(2, scans + 1):
        now += 1.0
        due = keys[table(now, keys).report_sent > now - 1.0]
        frames.append(wire.encode_request(table(now, due), seq=k, now=now, job_start=t0,
                                          n_maps=rows, n_reduces=0, node_base=100, delta=True))
    return frames


def server_cpu(policy: str, scans: int, warmup: int, sizes: tuple[int, ...] = SIZES) -> None:
    """CPU time of ControlPlaneService.answer per scan (decode, checks, merge, the policy's
    decision, encoding), on the thread that runs it, after ``warmup`` untimed scans."""
    import numpy as np

    from hedge.server import wire
    from hedge.server.service import ControlPlaneService, ServerConfig, _collect_if_due

    print(f"\nserver CPU per scan, policy {policy}, in-process ({scans} timed scans after "
          f"{warmup}); load average {os.getloadavg()[0]:.1f}")
    service = ControlPlaneService(ServerConfig(token="x" * 32))
    size = wire.REQUEST.size
    gc.freeze()
    gc.disable()  # as `hedge serve` runs: collections between scans only
    try:
        for rows in sizes:
            session = service.sessions.open(f"job_{rows}", policy, {})
            cpu = []
            for i, frame in enumerate(synthetic_frames(rows, warmup + scans)):
                c0 = time.thread_time()
                out = service.answer(session, frame[:size], bytearray(frame[size:]))
                if i >= warmup:
                    cpu.append(time.thread_time() - c0)
                if out[4] != wire.STATUS_OK:
                    raise SystemExit(f"scan {i} rejected: {out[32:].decode()}")
                _collect_if_due()
            ms = np.asarray(cpu) * 1e3
            p99 = float(np.percentile(ms, 99))
            print(f"{rows:>9} attempts: p50 {np.median(ms):.3f} ms  p99 {p99:.3f} ms  "
                  f"min {ms.min():.3f} ms  {verdict(rows, p99)}")
    finally:
        gc.enable()


def server_latency(log: Path) -> tuple[float, float]:
    """Medians of the server's per-second p50 decision latency and CPU lines (new lines only)."""
    values = [(float(m.group(1)), float(m.group(2))) for line in log.read_text().splitlines()
              if (m := re.search(r"scans=[1-9]\d* .*p50_ms=([\d.]+) .*cpu_p50_ms=([\d.]+)",
                                 line))]
    server_latency.seen = getattr(server_latency, "seen", {})
    start = server_latency.seen.get(log, 0)
    server_latency.seen[log] = len(values)
    fresh = values[start:]
    if not fresh:
        return float("nan"), float("nan")
    return tuple(sorted(v[k] for v in fresh)[len(fresh) // 2] for k in (0, 1))


if __name__ == "__main__":
    sys.exit(main())
