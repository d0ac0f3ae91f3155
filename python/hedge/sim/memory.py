"""Will a simulation fit in memory? An estimate made before anything big is allocated.

The simulator keeps flat arrays per slot (the running attempts' state), per node, per task
and per job, so its peak memory is close to linear in each. The bytes per item below are
the growth of the traced peak (numpy allocations, tracemalloc) between two sizes of each,
measured with the ``hadoop`` policy, rounded up; ``tests/unit/test_sim_memory.py`` re-measures
them and fails when they stop covering the simulator (or overstate it threefold). Peak RSS
grew less (138 B per slot): untouched zero pages are not resident until slots get used.
The base is the interpreter, numpy, pyarrow and the compiled kernels (peak RSS ~240 MB).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hedge.errors import HedgeError

BYTES_PER_SLOT = 230  # measured 210: live-attempt slot arrays, the scans' slot views
BYTES_PER_NODE = 50  # measured ~35: busy counts, speeds, permutation, masks
BYTES_PER_TASK = 500  # measured 450: workload, per-task state, attempt records
BYTES_PER_JOB = 450  # measured ~420: per-job state, job ids, generating the jobs
BASE_BYTES = 300 * 2**20

MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True)
class MemoryNeed:
    """Estimated peak bytes of one simulation process, and what drives it."""

    nodes: int
    slots: int
    tasks: int
    jobs: int

    @property
    def bytes(self) -> int:
        return (BASE_BYTES + BYTES_PER_SLOT * self.nodes * self.slots
                + BYTES_PER_NODE * self.nodes + BYTES_PER_TASK * self.tasks
                + BYTES_PER_JOB * self.jobs)


def available_bytes(meminfo: Path = MEMINFO) -> int | None:
    """``MemAvailable`` of /proc/meminfo in bytes (None where the kernel does not say)."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB"


def check_fits(need: MemoryNeed, processes: int, what: str,
               available: int | None = None) -> None:
    """HedgeError naming ``what`` (the options that set the size), the estimate and the
    memory available when ``processes`` simulations of ``need`` would not fit."""
    free = available_bytes() if available is None else available
    total = need.bytes * processes
    if free is None or total <= free:
        return
    per = f"{processes} worker processes x {_gb(need.bytes)}, " if processes > 1 else ""
    raise HedgeError(
        f"{what}: the simulation would need about {_gb(total)} of memory ({per}"
        f"{need.nodes:,} nodes x {need.slots} slots, {need.tasks:,} tasks, {need.jobs:,} jobs)"
        f" but {_gb(free)} is available (MemAvailable in {MEMINFO}); expected a smaller "
        "cluster or workload")
