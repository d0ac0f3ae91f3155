"""Warming the policies' compiled code in a fresh ``hedge serve``, off the request path.

The first decision of a numba-backed policy in a new process imports numba and loads its
kernels from numba's cache (compiles them, when the cache is cold): hedge-auto's first
``decide`` took 1.9 s of wall time with the cache warm (1.6 s of CPU), ten times that cold.
Inside a scan that is past the shim's deadline (1 s by default), so the first job of a fresh
server had its first scans decided by Hadoop's rule (seen in a clean-clone CI run). A daemon
thread started with the server runs every policy the AM can drive through a tiny simulation
before jobs come, twice: as the simulator calls it, and with every decision made by a
session of a private control plane (``hedge.server.simulated_am``), since numba compiles a
kernel again for the session's read-only arrays. It takes no lock a live session needs,
and a failure there is logged and never stops the server. ``python -m hedge.server.warmup``
runs every policy (the simulator-only ones too) the same way in the foreground: ``make
setup`` fills numba's cache with it, and an operator runs it once after installing hedge
elsewhere.
"""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("hedge.server")

# small, with stragglers and reduces, so copies, races and kills all run their code
WARM_WORKLOAD = "jobs=4,tasks=16,reduces=4,straggler_ratio=0.25"


def warm_policies() -> threading.Thread:
    """Start warming every live-AM policy in a daemon thread; returns the thread."""
    thread = threading.Thread(target=_warm, name="hedge-warmup", daemon=True)
    thread.start()
    return thread


def warmed_policies(live_only: bool = True) -> list[str]:
    """hedge's own policies (not ones a plug-in or a test registered), those the AM can
    drive when ``live_only``."""
    from hedge.policy import available, policy_class
    from hedge.policy.base import POLICY_MODULES

    classes = {name: policy_class(name) for name in available()}
    return [name for name, cls in classes.items() if cls.__module__ in POLICY_MODULES
            and (cls.live_am_supported or not live_only)]


def _warm(live_only: bool = True) -> None:
    from hedge.server.simulated_am import simulate_through_sessions
    from hedge.sim.cluster import ClusterConfig
    from hedge.sim.sweep import RunSpec, WorkloadSource, run_one, workload_for

    started, cpu = time.monotonic(), time.thread_time()
    source = WorkloadSource(synthetic=WARM_WORKLOAD)
    names, live = warmed_policies(live_only), set(warmed_policies())
    for name in names:
        try:
            run_one(RunSpec(source, name, 0, ClusterConfig()))
            if name in live:
                simulate_through_sessions(workload_for(source, 0), name)
        except Exception as exc:  # a policy that cannot warm still serves, compiling later
            log.warning("event=warm_failed policy=%s error=%r", name, exc)
    log.info("event=warm policies=%d seconds=%.1f cpu_seconds=%.1f", len(names),
             time.monotonic() - started, time.thread_time() - cpu)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    _warm(live_only=False)
