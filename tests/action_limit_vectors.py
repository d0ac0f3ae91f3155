"""Writes tests/data/action_limits_vectors.tsv: the limits of hedge.policy.limits on
hand-picked and random cases, which pytest (tests/unit/test_policy_limits.py) and JUnit
(org.hedge.shim.ActionLimitsTest) both check. Regenerate after changing a rule:

    .venv/bin/python -m tests.action_limit_vectors
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hedge.policy.limits import SpeculationSettings, limit_copies, limit_kills, room
from tests.vector_files import render, write

VECTORS = Path(__file__).resolve().parent / "data" / "action_limits_vectors.tsv"
HEADER = """\
# Action-limit test vectors shared by pytest (tests/unit/test_policy_limits.py) and JUnit
# (org.hedge.shim.ActionLimitsTest); written by tests/action_limit_vectors.py from
# hedge.policy.limits. One case per line, tab-separated; lists are comma-separated (empty: none):
# map_speculative reduce_speculative enforce_caps (0/1), cap_running cap_total (doubles),
# minimum_allowed, n_maps, total_tasks, running_tasks, speculating, then the copy requests
# (task, copies, open 0/1 per request), the expected room and copies granted per request,
# then the kills (task of each killed attempt, -1 unknown; live attempts of that task) and
# the expected kept flags (0/1).
"""
COLUMNS = ("map_on", "reduce_on", "enforce", "cap_running", "cap_total", "minimum", "n_maps",
           "total", "running", "speculating", "req_task", "req_copies", "req_open", "room",
           "granted", "kill_task", "kill_live", "kept")


@dataclass
class Case:
    settings: SpeculationSettings
    n_maps: int
    total: int
    running: int
    speculating: int
    req_task: list[int]
    req_copies: list[int]
    req_open: list[bool]
    kill_task: list[int]
    kill_live: list[int]

    def expected(self) -> tuple[int, list[int], list[bool]]:
        space = room(self.settings, self.total, self.running, self.speculating)
        granted = limit_copies(self.settings, self.n_maps, space, np.array(self.req_task,
                               dtype=np.int64), np.array(self.req_copies, dtype=np.int64),
                               np.array(self.req_open, dtype=bool))
        live = {t: n for t, n in zip(self.kill_task, self.kill_live, strict=True) if t >= 0}
        kept = limit_kills(np.array(self.kill_task, dtype=np.int64), live)
        return space, granted.tolist(), kept.tolist()


def _ints(values: list) -> str:
    return ",".join(str(int(v)) for v in values)


def line(case: Case) -> str:
    s = case.settings
    space, granted, kept = case.expected()
    fields = [int(s.map_speculative), int(s.reduce_speculative), int(s.enforce_caps),
              repr(s.cap_running_tasks), repr(s.cap_total_tasks), s.minimum_allowed_tasks,
              case.n_maps, case.total, case.running, case.speculating, _ints(case.req_task),
              _ints(case.req_copies), _ints(case.req_open), space, _ints(granted),
              _ints(case.kill_task), _ints(case.kill_live), _ints(kept)]
    return "\t".join(str(f) for f in fields)


def hand_cases() -> list[Case]:
    d = SpeculationSettings()
    tight = SpeculationSettings(minimum_allowed_tasks=1, cap_running_tasks=0.0,
                                cap_total_tasks=0.0)
    return [
        Case(d, 4, 4, 4, 0, [], [], [], [], []),  # nothing asked
        Case(d, 4, 6, 4, 0, [1, 5], [1, 1], [True, True], [], []),  # room 10: both
        Case(tight, 4, 6, 4, 0, [1, 5], [1, 1], [True, True], [], []),  # room 1: first only
        Case(tight, 4, 6, 4, 1, [1], [1], [True], [], []),  # room 0: none
        Case(tight, 4, 6, 4, 3, [1], [1], [True], [], []),  # room negative: none
        Case(SpeculationSettings(map_speculative=False), 4, 6, 4, 0, [1, 5], [1, 1],
             [True, True], [], []),  # maps switched off
        Case(SpeculationSettings(reduce_speculative=False), 4, 6, 4, 0, [1, 5], [1, 1],
             [True, True], [], []),  # reduces switched off
        Case(d, 4, 6, 4, 0, [1, 2], [1, 1], [False, True], [], []),  # task 1 completed
        Case(SpeculationSettings(minimum_allowed_tasks=3), 10, 10, 10, 0, [2, 3], [2, 2],
             [True, True], [], []),  # copies per task: 2 then 1
        Case(SpeculationSettings(minimum_allowed_tasks=0, cap_running_tasks=0.5), 10, 10, 7,
             0, [1, 2, 3, 4], [1, 1, 1, 1], [True] * 4, [], []),  # int(3.5) = 3
        Case(SpeculationSettings(minimum_allowed_tasks=0, cap_total_tasks=0.25), 10, 10, 0,
             0, [1, 2, 3], [1, 1, 1], [True] * 3, [], []),  # int(2.5) = 2
        Case(SpeculationSettings(enforce_caps=False, minimum_allowed_tasks=0,
                                 cap_running_tasks=0.0, cap_total_tasks=0.0), 4, 4, 4, 9,
             [0, 1], [5, 3], [True, True], [], []),  # caps lifted
        Case(d, 4, 4, 4, 0, [], [], [], [2], [1]),  # the last attempt is never killed
        Case(d, 4, 4, 4, 0, [], [], [], [2, 2], [2, 2]),  # of two, the first goes
        Case(d, 4, 4, 4, 0, [], [], [], [2, 2, 2], [3, 3, 3]),  # of three, two go
        Case(d, 4, 4, 4, 0, [], [], [], [-1, 3, 1], [0, 2, 1]),  # unknown; 3 goes; 1 stays
        Case(SpeculationSettings(cap_running_tasks=1e-4, cap_total_tasks=0.3,
                                 minimum_allowed_tasks=1), 30, 40, 33, 5, [31, 2, 7, 39],
             [3, 2, 4, 1], [True, True, False, True], [4, 4], [2, 2]),
    ]


def random_cases(n: int, seed: int = 17) -> list[Case]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        total = int(rng.integers(1, 400))
        n_maps = int(rng.integers(0, total + 1))
        running = int(rng.integers(0, total + 1))
        settings = SpeculationSettings(
            map_speculative=bool(rng.random() < 0.8), reduce_speculative=bool(rng.random() < 0.8),
            cap_running_tasks=float(rng.choice([0.0, 0.1, 0.05, 0.33, 1.0, rng.random()])),
            cap_total_tasks=float(rng.choice([0.0, 0.01, 0.1, 0.7, rng.random() / 10])),
            minimum_allowed_tasks=int(rng.choice([0, 1, 2, 10, 25])),
            enforce_caps=bool(rng.random() < 0.9))
        k = int(rng.integers(0, 12))
        tasks = rng.integers(0, total, k).tolist()
        kills = int(rng.integers(0, 6))
        kill_tasks = rng.integers(-1, min(total, 5), kills).tolist()
        live_of = {t: int(rng.integers(1, 4)) for t in set(kill_tasks)}
        out.append(Case(settings, n_maps, total, running, int(rng.integers(0, 30)), tasks,
                        rng.integers(1, 5, k).tolist(), (rng.random(k) < 0.85).tolist(),
                        kill_tasks, [live_of[t] if t >= 0 else 0 for t in kill_tasks]))
    return out


def text() -> str:
    return render(HEADER, COLUMNS, line, hand_cases() + random_cases(300))


if __name__ == "__main__":
    write(VECTORS, text())
