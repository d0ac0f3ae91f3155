"""The progress line of one simulation run (stderr, only on a terminal-facing run).

No time-remaining estimate: a run's wall time per task swings by orders of magnitude as jobs
arrive and policies scan (a rate-based ETA went from seconds to hours within one run), so
the line says only what is known: which run of how many, tasks and jobs finished, the
simulated clock and the wall time so far.
"""

from __future__ import annotations

import sys

from tqdm import tqdm


class RunProgress:
    """``[2/4] adaptive: 1,204/5,000 tasks, 31/100 jobs, simulated 2,140 s [00:12]``."""

    def __init__(self, label: str, tasks: int, jobs: int, enabled: bool,
                 delay: float = 2.0) -> None:
        self.enabled = enabled
        self.jobs = jobs
        self._done = 0
        self._bar = tqdm(total=tasks, desc=label, file=sys.stderr, delay=delay, leave=False,
                         mininterval=0 if delay == 0 else 0.1,
                         disable=not enabled,
                         bar_format="{desc}: {n:,}/{total:,} tasks{postfix} [{elapsed}]")

    def update(self, tasks_done: int, jobs_done: int, sim_time: float) -> None:
        """Called every simulation step; redraws (rate-limited by tqdm) when tasks finished."""
        if not self.enabled or tasks_done <= self._done:
            return
        self._bar.set_postfix_str(f"{jobs_done:,}/{self.jobs:,} jobs, simulated "
                                  f"{sim_time:,.0f} s", refresh=False)
        self._bar.update(tasks_done - self._done)
        self._done = tasks_done

    def close(self) -> None:
        self._bar.close()
