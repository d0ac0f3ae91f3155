"""hawk/eagle ``.tr`` traces (Sparrow/Hawk/Eagle simulators; possibly gzip).

One job per line, fields separated by spaces: ``arrival n_tasks mean_duration d_1 .. d_n``
(seconds). The mean is informational and is not checked against the durations. Lines are
variable-length, so they are parsed line by line (one numpy conversion per job).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hedge.errors import HedgeError, where
from hedge.traces.csvio import open_text
from hedge.traces.workload import Workload

# A task longer than this is a unit or parsing mistake in the file, not a straggler; taking
# it would stretch the simulated clock without end (one 1e308 s task spun for minutes).
MAX_DURATION_S = 1e8


def _parse(path: Path, lineno: int, words: list[str]) -> tuple[float, np.ndarray]:
    if len(words) < 3:
        raise HedgeError(f"{where(path, lineno)}: expected 'arrival n_tasks mean d_1..d_n', "
                         f"found {len(words)} fields")
    try:
        values = np.array(words, dtype=np.float64)
    except ValueError:
        names = ["arrival", "n_tasks", "mean_duration"]
        for k, word in enumerate(words):
            try:
                float(word)
            except ValueError:
                name = names[k] if k < 3 else f"d_{k - 2}"
                raise HedgeError(f"{where(path, lineno, name)}: expected a number, found "
                                 f"{word!r}") from None
        raise
    n = values[1]
    # a job without tasks has nothing to replay or measure (the simulator cannot hold one)
    if not np.isfinite(n) or n != int(n) or n < 1:
        raise HedgeError(f"{where(path, lineno, 'n_tasks')}: expected a count >= 1, found "
                         f"{words[1]!r}")
    if len(values) != 3 + int(n):
        raise HedgeError(f"{where(path, lineno)}: n_tasks is {int(n)}, so expected "
                         f"{3 + int(n)} fields, found {len(values)}")
    durations = values[3:]
    if (durations < 0).any():
        k = int(np.argmax(durations < 0))
        raise HedgeError(f"{where(path, lineno, f'd_{k + 1}')}: negative duration "
                         f"{words[3 + k]}")
    if not np.isfinite(values).all():
        raise HedgeError(f"{where(path, lineno)}: expected finite numbers")
    if (durations > MAX_DURATION_S).any():
        k = int(np.argmax(durations > MAX_DURATION_S))
        raise HedgeError(f"{where(path, lineno, f'd_{k + 1}')}: duration {words[3 + k]} s, "
                         f"expected at most {MAX_DURATION_S:.0e} s (about 3 years)")
    return float(values[0]), durations


def read(path: Path) -> Workload:
    """A ``.tr`` file -> Workload (maps only); jobs sorted by arrival, first at 0."""
    arrivals: list[float] = []
    durations: list[np.ndarray] = []
    with open_text(path) as f:
        for lineno, line in enumerate(f, start=1):
            words = line.split()
            if not words:
                continue
            arrival, d = _parse(path, lineno, words)
            arrivals.append(arrival)
            durations.append(d)
    if not arrivals:
        raise HedgeError(f"{path}: empty file, expected lines 'arrival n_tasks mean d_1..d_n'")
    arrival = np.array(arrivals)
    order = np.argsort(arrival, kind="stable")
    return Workload.from_jobs(
        job_ids=[str(i) for i in order],
        arrival=arrival[order] - arrival.min(),
        durations=[durations[i] for i in order],
        source=str(path),
    )
