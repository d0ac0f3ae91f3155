#!/usr/bin/env python3
"""What the ResourceManager utilisation view costs a scan, and what a poll costs its thread.

For one job of 10,000 running attempts spread over 100 / 1,000 / 10,000 nodes (the session's
node list), a session of the ``adaptive`` policy decides the same full scan repeatedly:

- baseline: ClusterView without utilisation (no ResourceManager polled);
- with utilisation: the last poll of a 10,000-node cluster (Hadoop 3.x style answer) is
  looked up for the session's nodes at every scan (ClusterView -> UtilisationPoller.fields).

Printed: CPU ms per scan (time.process_time, median of repeats) of both and their ratio.
Then the poller thread's own CPU per poll: parsing the decoded JSON of 1,000 / 10,000 nodes
(the HTTP transfer and json decoding are the RM's and requests' business, not a scan's).

Usage: .venv/bin/python tests/bench/bench_utilisation.py [--scans 30]  (about 30 s)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from hedge.model import AttemptTable  # noqa: E402
from hedge.server import wire  # noqa: E402
from hedge.server.service import ClusterView  # noqa: E402
from hedge.server.session import Limits, SessionRegistry  # noqa: E402
from hedge.server.utilisation import UtilisationPoller, parse_nodes  # noqa: E402

ROWS = 10_000
NODE_COUNTS = (100, 1_000, 10_000)
CLUSTER_NODES = 10_000


def rm_answer(n: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    nodes = []
    for i in range(n):
        nodes.append({
            "state": "RUNNING", "id": f"node{i:05d}:45454", "nodeHostName": f"node{i:05d}",
            "usedMemoryMB": 4096, "availMemoryMB": 4096, "usedVirtualCores": 4,
            "availableVirtualCores": 4, "totalResource": {"memory": 8192, "vCores": 8},
            "resourceUtilization": {"nodePhysicalMemoryMB": int(rng.integers(1, 8192)),
                                    "nodeCPUUsage": float(rng.uniform(0, 8))},
        })
    return {"nodes": {"node": nodes}}


def request(n_nodes: int) -> wire.ScanRequest:
    rng = np.random.default_rng(2)
    n = ROWS
    a = AttemptTable(
        task=np.arange(n), attempt=np.arange(n), task_type=np.zeros(n), state=np.ones(n),
        node=rng.integers(0, n_nodes, n), start=np.zeros(n), first_progress_time=np.full(n, 5.0),
        first_progress=np.full(n, 0.01), progress=rng.uniform(0.05, 0.95, n),
        report_sent=np.full(n, 59.0), report_received=np.full(n, 59.0),
        bytes_processed=np.zeros(n), input_bytes=np.full(n, np.nan), speculative=np.zeros(n, bool),
    )
    names = [f"node{i * (CLUSTER_NODES // n_nodes):05d}" for i in range(n_nodes)]
    data = wire.encode_request(a, seq=1, now=60.0, job_start=0.0, n_maps=n, n_reduces=0,
                               new_nodes=names)
    return wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])


def cpu_per_scan(view: ClusterView, req: wire.ScanRequest, scans: int) -> float:
    session = SessionRegistry(Limits(), view).open("bench", "adaptive", {})
    session.decide(req)  # warm-up (first scan builds the table)
    times = []
    for _ in range(scans):
        c0 = time.process_time()
        session.decide(req)
        times.append(time.process_time() - c0)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=30)
    args = parser.parse_args()
    poller = UtilisationPoller("http://rm.invalid:8088", max_age=1e9)
    poller.publish(parse_nodes(rm_answer(CLUSTER_NODES), time.monotonic()))
    print(f"scan CPU, adaptive policy, {ROWS} running attempts, RM view of {CLUSTER_NODES} "
          "nodes (median ms per scan)")
    print(f"{'session nodes':>14} {'baseline':>10} {'with util':>10} {'ratio':>7}")
    for n_nodes in NODE_COUNTS:
        req = request(n_nodes)
        base = cpu_per_scan(ClusterView(), req, args.scans)
        with_util = cpu_per_scan(ClusterView(utilisation=poller), req, args.scans)
        print(f"{n_nodes:>14} {base:>10.2f} {with_util:>10.2f} {with_util / base:>7.2f}")
    print("\npoller thread CPU per poll (parse decoded JSON), ms; ratio to a 10k-attempt scan")
    base = cpu_per_scan(ClusterView(), request(1_000), args.scans)
    for n in (1_000, CLUSTER_NODES):
        doc = rm_answer(n)
        times = []
        for _ in range(5):
            c0 = time.process_time()
            parse_nodes(doc, 0.0)
            times.append(time.process_time() - c0)
        ms = statistics.median(times) * 1e3
        print(f"{n:>6} nodes: {ms:8.2f} ms  ({ms / base:.2f} x a scan's {base:.2f} ms)")


if __name__ == "__main__":
    main()
