"""SWIM Facebook workloads (job level, tab-separated, no header).

Columns: job_id, submit_time_s, inter_job_gap_s, map_input_bytes, shuffle_bytes,
reduce_output_bytes (the ``withInputPaths`` variant adds input_path_id and two empty
columns). SWIM has no tasks, so tasks are synthesised from bytes with this rule
(parameters are ``read`` options):

- maps: ``max(1, ceil(map_input_bytes / block_bytes))`` (one map per HDFS block, 128 MiB),
  each reading ``map_input_bytes / maps`` and lasting ``overhead + bytes / map_rate``;
- reduces: ``ceil(shuffle_bytes / reduce_bytes)`` (one reduce per 1 GiB of shuffle; none
  when nothing is shuffled), each lasting
  ``overhead + (shuffle_bytes + reduce_output_bytes) / reduces / reduce_rate``.

Defaults: ``map_rate`` 20 MiB/s and ``reduce_rate`` 10 MiB/s per task, ``overhead`` 2 s
(container and JVM start-up). These are typical MRv2 figures, not measured on Facebook's
cluster: the synthesised tasks carry the job-size and arrival mix, not real stragglers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from hedge.errors import HedgeError, where
from hedge.model import MAP, REDUCE
from hedge.traces.csvio import head_bytes, line_of_row, read_table
from hedge.traces.workload import Workload

MiB = 1 << 20
COLUMNS = ["job_id", "submit_time_s", "inter_job_gap_s", "map_input_bytes", "shuffle_bytes",
           "reduce_output_bytes"]
EXTRA = ["input_path_id", "extra_1", "extra_2"]
NUMERIC = COLUMNS[1:]


SYNTHESIS_NOTE = (
    "SWIM has jobs, not tasks: tasks are synthesised from each job's bytes (one map per "
    "{block:g} MiB at {map_rate:g} MiB/s, one reduce per {reduce:g} MiB of shuffle at "
    "{reduce_rate:g} MiB/s, +{overhead:g} s each), so task durations within a job are equal "
    "by construction: straggler figures reflect the rule, not Facebook's cluster")

# More tasks than this in one synthesised job means a value the rule cannot have meant (the
# largest job in ../shared/data's SWIM Facebook samples reads 2.1e13 bytes: 160,000 maps of
# 128 MiB).
MAX_TASKS_PER_JOB = 10_000_000


def read(path: Path, *, block_bytes: float = 128 * MiB, reduce_bytes: float = 1024 * MiB,
         map_rate: float = 20 * MiB, reduce_rate: float = 10 * MiB,
         overhead: float = 2.0) -> Workload:
    """A SWIM TSV -> Workload with synthesised map and reduce tasks (rule above)."""
    for name, value in (("block_bytes", block_bytes), ("reduce_bytes", reduce_bytes),
                        ("map_rate", map_rate), ("reduce_rate", reduce_rate)):
        if not value > 0:
            raise HedgeError(f"option {name}={value!r}: expected a number > 0")
    if not overhead >= 0:
        raise HedgeError(f"option overhead={overhead!r}: expected a number >= 0")
    first = head_bytes(path).decode("utf-8", "replace").lstrip().split("\n", 1)[0]
    names = COLUMNS + EXTRA if first.count("\t") == len(COLUMNS + EXTRA) - 1 else COLUMNS
    types = {n: pa.float64() for n in NUMERIC} | {"job_id": pa.string()}
    types |= {n: pa.string() for n in EXTRA}
    t = read_table(path, names, types, delimiter="\t", include=COLUMNS)
    cols = {n: t[n].to_numpy(zero_copy_only=False) for n in NUMERIC}
    for name in NUMERIC:
        bad = np.flatnonzero(~np.isfinite(cols[name]) | (cols[name] < 0))  # inf: no arrival
        if len(bad):
            raise HedgeError(f"{where(path, line_of_row(path, int(bad[0])), name)}: expected a "
                             f"finite number >= 0, found {float(cols[name][bad[0]])!r}")
    size_in, shuffle, out = (cols["map_input_bytes"], cols["shuffle_bytes"],
                             cols["reduce_output_bytes"])
    maps_f = np.maximum(1, np.ceil(size_in / block_bytes))
    reduces_f = np.ceil(shuffle / reduce_bytes)
    for name, count, unit in (("map_input_bytes", maps_f, block_bytes),
                              ("shuffle_bytes", reduces_f, reduce_bytes)):
        big = np.flatnonzero(count > MAX_TASKS_PER_JOB)
        if len(big):
            row = int(big[0])
            raise HedgeError(f"{where(path, line_of_row(path, row), name)}: {cols[name][row]:g} "
                             f"bytes make {count[row]:.3g} tasks of {unit:g} bytes, expected at "
                             f"most {MAX_TASKS_PER_JOB:,} tasks per job (bytes, not bits or KB?)")
    maps, reduces = maps_f.astype(np.int64), reduces_f.astype(np.int64)
    map_dur = overhead + size_in / maps / map_rate
    red_dur = overhead + (shuffle + out) / np.maximum(reduces, 1) / reduce_rate

    submit = cols["submit_time_s"]
    order = np.argsort(submit, kind="stable")
    maps, reduces = maps[order], reduces[order]
    per_job = maps + reduces
    job_of_task = np.repeat(np.arange(len(order)), per_job)
    first_task = np.r_[0, np.cumsum(per_job)[:-1]]
    is_map = (np.arange(per_job.sum()) - first_task[job_of_task]) < maps[job_of_task]
    src = order[job_of_task]
    n = len(src)
    return Workload(
        job_ids=list(np.asarray(t["job_id"].to_numpy(zero_copy_only=False))[order]),
        arrival=submit[order] - submit.min(),
        job_offsets=np.r_[0, np.cumsum(per_job)],
        task_type=np.where(is_map, MAP, REDUCE),
        duration=np.where(is_map, map_dur[src], red_dur[src]),
        input_bytes=np.where(is_map, size_in[src] / maps[job_of_task], np.nan),
        machine=np.full(n, -1),
        straggler_factor=np.ones(n),
        source=str(path),
        notes=[SYNTHESIS_NOTE.format(block=block_bytes / MiB, map_rate=map_rate / MiB,
                                     reduce=reduce_bytes / MiB, reduce_rate=reduce_rate / MiB,
                                     overhead=overhead)],
    )
