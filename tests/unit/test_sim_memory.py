"""The memory estimate of ``hedge simulate``: measured per-item bytes, and the refusal."""

from __future__ import annotations

import tracemalloc

import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.sim import memory
from hedge.sim.cluster import ClusterConfig
from hedge.sim.engine import simulate
from hedge.traces import synthetic


def _peak(nodes: int, slots: int, jobs: int, tasks: int) -> int:
    """Traced peak bytes of one hadoop run (the workload is built inside the trace)."""
    tracemalloc.start()
    try:
        wl = synthetic.generate(synthetic.parse_spec(f"jobs={jobs},tasks={tasks}"), 0)
        simulate(wl, "hadoop", ClusterConfig(nodes=nodes, slots=slots), seed=0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def warm() -> None:
    # the compiled kernels load outside tracemalloc (under it, loading them takes ~25 s)
    simulate(synthetic.generate(synthetic.parse_spec("jobs=1,tasks=1"), 0), "hadoop",
             ClusterConfig(nodes=2, slots=1))


@pytest.mark.parametrize("small,large,count,constant", [
    ((10_000, 4, 1, 1), (10_000, 8, 1, 1), 40_000, memory.BYTES_PER_SLOT),
    ((500, 4, 1, 5_000), (500, 4, 1, 10_000), 5_000, memory.BYTES_PER_TASK),
    ((500, 4, 5_000, 1), (500, 4, 10_000, 1), 5_000,
     memory.BYTES_PER_JOB + memory.BYTES_PER_TASK),
], ids=["slot", "task", "job"])
def test_bytes_per_item_cover_the_measured_growth(warm, small, large, count, constant):
    per_item = (_peak(*large) - _peak(*small)) / count
    assert constant / 3 <= per_item <= constant, f"measured {per_item:.0f} B, constant {constant}"


def test_bytes_per_node_cover_the_measured_growth(warm):
    per_node = (_peak(20_000, 4, 1, 1) - _peak(10_000, 4, 1, 1)) / 10_000
    assert per_node <= memory.BYTES_PER_NODE + 4 * memory.BYTES_PER_SLOT


def test_available_bytes_reads_meminfo(tmp_path):
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:  100 kB\nMemAvailable:     2048 kB\n")
    assert memory.available_bytes(info) == 2048 * 1024
    info.write_text("MemTotal:  100 kB\n")
    assert memory.available_bytes(info) is None


def test_check_fits_names_the_options_the_estimate_and_the_memory():
    need = memory.MemoryNeed(nodes=10**8, slots=4, tasks=4, jobs=2)
    with pytest.raises(HedgeError) as err:
        memory.check_fits(need, 1, "--cluster nodes=100000000", available=8 * 10**9)
    text = str(err.value)
    assert text.startswith("--cluster nodes=100000000: the simulation would need about")
    assert f"{need.bytes / 1e9:.1f} GB" in text and "8.0 GB is available" in text
    memory.check_fits(memory.MemoryNeed(10, 4, 4, 2), 1, "x", available=8 * 10**9)


def test_workers_multiply_the_need():
    need = memory.MemoryNeed(nodes=1000, slots=4, tasks=1000, jobs=10)
    memory.check_fits(need, 1, "x", available=need.bytes)
    with pytest.raises(HedgeError, match="2 worker processes"):
        memory.check_fits(need, 2, "x", available=need.bytes)


@pytest.mark.parametrize("args,options", [
    (["--synthetic", "jobs=2,tasks=2", "--cluster", "nodes=100000000"],
     "--cluster nodes=100000000, --synthetic jobs=2,tasks=2"),
    (["--synthetic", "jobs=100000000,tasks=1000"], "--synthetic jobs=100000000,tasks=1000"),
    (["--synthetic", "default:jobs=100000000"], "--synthetic default:jobs=100000000"),
])
def test_simulate_refuses_what_would_not_fit_in_one_line(capsys, args, options):
    assert main(["simulate", *args, "--quiet"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == ""
    assert lines[0].startswith(f"hedge: error: {options}: the simulation would need about")
    assert "MemAvailable" in lines[0]
