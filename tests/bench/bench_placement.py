#!/usr/bin/env python3
"""Where a moved copy lands: hedge.placement.move on MiniYARN clusters of N NodeManagers.

A copy that launches on the NodeManager of its original is killed with rescheduling
(``org.hedge.shim.CopyPlacement``); the AM's next attempt of the task asks for a container
anywhere, and the ResourceManager gives it to the first NodeManager that heartbeats after
the request. For each cluster size the straggler job of the real-YARN tests runs ``--jobs``
times (policy ``hadoop``, moves on, at most ``--max-moves`` a task). Printed per size: the
share of moves whose next attempt landed on another NodeManager, against the baseline
measured in the same jobs: the share of first copies the stock AM placed on another
NodeManager than their original's (no move involved); and (N-1)/N, what a uniformly random
choice among the N would give. A move whose task ended before its next attempt was placed is
not counted as a landing. In MiniYARN every NodeManager is on host "localhost"; they are told
apart by port, as the shim compares NodeManagers (host:port).

Run: `.venv/bin/python tests/bench/bench_placement.py [--nodemanagers 2,4] [--jobs 10]`
(about 6 minutes per size on two cores; needs `make setup`).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration.plugin_support import ServeProcess, write_token  # noqa: E402
from tests.integration.yarn_cluster import MiniYarn, hedge_settings  # noqa: E402

LAUNCH = re.compile(r"TaskAttempt: \[attempt_\w+_m_000000_(\d+)\] using containerId: "
                    r"\[container_\w+ on NM: \[(\S+?)\]")
MOVED = re.compile(r"hedge: copy attempt_\w+_m_000000_(\d+) launched on \S+, the "
                   r"NodeManager of another attempt")


def landings(am_log: str) -> tuple[bool, int, int, int]:
    """From one job's AM log: (map 0's first copy launched beside its original, moves, moves
    followed by another attempt, of those the ones that landed on another NodeManager)."""
    node = {int(a): nm for a, nm in LAUNCH.findall(am_log)}
    moved = [int(a) for a in MOVED.findall(am_log)]
    beside = 1 in node and node.get(0) == node[1]
    placed = [a for a in moved if a + 1 in node]
    return beside, len(moved), len(placed), sum(node[a + 1] != node[a] for a in placed)


def measure(nodemanagers: int, jobs: int, max_moves: int, work: Path) -> list[int]:
    """[jobs, copies beside their original, moves, landings, landings elsewhere]."""
    cluster = MiniYarn("3.4.1", work / "yarn", nodemanagers=nodemanagers).start()
    token = write_token(work / "token")
    serve = ServeProcess(token, work / "serve.log", policy="none").start()
    totals = [0, 0, 0, 0, 0]
    try:
        for _ in range(jobs):
            run = cluster.run_job({**hedge_settings(serve.port, token, "hadoop"),
                                   "hedge.placement.move": "true",
                                   "hedge.placement.max.moves": str(max_moves)})
            if not run.succeeded:
                raise SystemExit(f"job failed:\n{run.client_log[-2000:]}")
            beside, moves, placed, elsewhere = landings(run.am_log())
            for i, value in enumerate((1, beside, moves, placed, elsewhere)):
                totals[i] += int(value)
            print(f"  {nodemanagers} NMs, job {totals[0]}: {run.seconds:.0f} s, moves {moves}, "
                  f"landed elsewhere {elsewhere} of {placed}", flush=True)
    finally:
        serve.stop()
        cluster.stop()
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodemanagers", default="2,4", help="cluster sizes, comma list")
    parser.add_argument("--jobs", type=int, default=10, help="straggler jobs per size")
    parser.add_argument("--max-moves", type=int, default=5,
                        help="hedge.placement.max.moves (more moves per job: more landings)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.nodemanagers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-placement-") as tmp:
        for n in sizes:
            work = Path(tmp) / f"nm{n}"
            work.mkdir()
            rows.append((n, measure(n, args.jobs, args.max_moves, work)))
    print(f"\n{'NMs':>4} {'jobs':>5} {'beside':>7} {'stock':>6} {'moves':>6} {'landed':>7} "
          f"{'elsewhere':>10} {'share':>6} {'/stock':>7} {'random':>7}")
    for n, (jobs, beside, moves, placed, elsewhere) in rows:
        stock = (jobs - beside) / jobs
        share = elsewhere / placed if placed else float("nan")
        print(f"{n:>4} {jobs:>5} {beside:>7} {stock:>6.2f} {moves:>6} {placed:>7} "
              f"{elsewhere:>10} {share:>6.2f} {share / stock if stock else float('nan'):>7.2f} "
              f"{(n - 1) / n:>7.2f}")
    print("(beside: jobs whose first copy of map 0 launched on its original's NodeManager; "
          "stock: the others' share, the AM's own placement; landed: moves followed by another "
          "attempt; share: of those, on another NodeManager; random: (N-1)/N)")


if __name__ == "__main__":
    main()
