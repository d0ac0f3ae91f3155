#!/usr/bin/env python3
"""What /metrics costs per scan: CPU of ``Metrics.scan`` with the Prometheus series against
the same call with them stubbed out (the interval log line's counters only), in one run.

Usage: .venv/bin/python tests/bench/bench_serve_metrics.py [--calls 50000] (a few seconds).
Two kinds of scan: a quiet one (nothing requested: the common case, three series updated)
and a busy one (a copy, a kill and a client fallback: every per-policy series). The extra
CPU per scan is printed in microseconds; set it beside the server's CPU per scan
(``bench_plugin.py --server-cpu``: a few hundred microseconds).
"""

from __future__ import annotations

import argparse
import time
from types import SimpleNamespace

from hedge.server.metrics import Metrics


def _no_op(*args: object) -> None:
    return None


def _stub() -> SimpleNamespace:
    """Stands for the Prometheus series: every update is a call that does nothing."""
    series = SimpleNamespace(inc=_no_op, observe=_no_op)
    children = SimpleNamespace(scans=series, latency=series, cpu=series, copies=series,
                               kills=series, fallbacks=series, copies_won=series,
                               copies_lost=series, wasted=series)
    return SimpleNamespace(policy=lambda name: children,
                           rejected=SimpleNamespace(labels=lambda reason: series))


def cpu_per_call(metrics: Metrics, calls: int, **scan) -> float:  # noqa: ANN003
    start = time.thread_time()
    for _ in range(calls):
        metrics.scan(0.0004, cpu_seconds=0.0003, policy="adaptive", **scan)
        if len(metrics._latencies) > 100_000:  # the log line empties them once per interval
            metrics._latencies.clear()
            metrics._cpu.clear()
    return (time.thread_time() - start) / calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50_000)
    args = parser.parse_args()
    exported, stubbed = Metrics(), Metrics()
    stubbed.exported = _stub()
    for name, scan in (("quiet", {}), ("busy", {"copies": 1, "kills": 1, "fallbacks": 1})):
        base = min(cpu_per_call(stubbed, args.calls, **scan) for _ in range(3))
        full = min(cpu_per_call(exported, args.calls, **scan) for _ in range(3))
        print(f"{name} scan: Metrics.scan {base * 1e6:.2f} us without the Prometheus series, "
              f"{full * 1e6:.2f} us with them (x{full / base:.1f}, +{(full - base) * 1e6:.2f} us "
              "CPU per scan)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
