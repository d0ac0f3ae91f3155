"""Writes tests/data/kills_as_restarts_vectors.tsv: rule 5 of hedge.policy.limits (a stock
AM restarts what it kills, so a kill is sent only as one of its task's copies) on hand-picked
and random cases, which pytest (tests/unit/test_policy_limits.py) and JUnit
(org.hedge.shim.KillsAsRestartsTest) both check. Regenerate after changing the rule:

    .venv/bin/python -m tests.kills_as_restarts_vectors
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hedge.policy.limits import pair_kills
from tests.vector_files import render, write

VECTORS = Path(__file__).resolve().parent / "data" / "kills_as_restarts_vectors.tsv"
HEADER = """\
# Kills-as-restarts test vectors shared by pytest (tests/unit/test_policy_limits.py) and JUnit
# (org.hedge.shim.KillsAsRestartsTest); written by tests/kills_as_restarts_vectors.py from
# hedge.policy.limits.pair_kills. One case per line, tab-separated; lists are comma-separated
# (empty: none): the task of each kill (-1: not carried out anyway), the copy requests (task,
# copies granted), then the expected sent flags per kill (0/1) and copies left per request.
"""
COLUMNS = ("kill_task", "copy_task", "copies", "sent", "left")

Case = tuple[list[int], list[int], list[int]]


def _ints(values: list) -> str:
    return ",".join(str(int(v)) for v in values)


def line(case: Case) -> str:
    kill_task, copy_task, copies = case
    sent, left = pair_kills(np.array(kill_task, dtype=np.int64),
                            np.array(copy_task, dtype=np.int64),
                            np.array(copies, dtype=np.int64))
    return "\t".join([_ints(kill_task), _ints(copy_task), _ints(copies), _ints(sent),
                      _ints(left)])


def hand_cases() -> list[Case]:
    return [
        ([], [], []),  # nothing asked
        ([3], [3], [1]),  # a kill with a copy of its task: sent, the copy spent
        ([5], [3], [2]),  # a lone kill: held
        ([4, 7, -1, 4], [4, 7], [1, 3]),  # beyond the copies of its task: held, in order
        ([2], [2, 2], [0, 1]),  # a later request of the same task pairs
        ([2], [2], [0]),  # the caps granted no copy: held
        ([1, 1], [1], [2]),  # two kills, two copies of one request
    ]


def random_cases(n: int, seed: int = 23) -> list[Case]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k, m = int(rng.integers(0, 6)), int(rng.integers(0, 6))
        out.append((rng.integers(-1, 5, k).tolist(), rng.integers(0, 5, m).tolist(),
                    rng.integers(0, 3, m).tolist()))
    return out


def text() -> str:
    return render(HEADER, COLUMNS, line, hand_cases() + random_cases(300))


if __name__ == "__main__":
    write(VECTORS, text())
