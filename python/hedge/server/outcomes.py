"""What a job's ended attempts came to, as the shim reports them: copies won and lost, and
the container time spent on attempts that were thrown away (issue 16's ``wasted_s`` on the
cluster, the same measure the simulator reports).

Since wire version 2 every ended attempt the shim names carries its final state
(succeeded, killed, failed), its start and end (ms after the job start) and whether it was a
copy (docs/wire-format.md). The shim learns an end in one of three ways, and the end time is
as good as what it learns:

- a success: the AM's status event, exact; the task's other attempts end at the same moment
  (Hadoop kills them), recorded as killed;
- a kill hedge requested: the moment the shim sent it;
- a failure or a kill by someone else: Hadoop sends the speculator no event; the shim finds it
  when the attempt has been silent 6 s and records its last report as the end, so the
  wasted time of such an attempt is a lower bound (by at most 6 s plus one scan).

Since wire version 3 a scan that is lost or rejected loses nothing: the full snapshot that
follows names every attempt the job has ended, and the session counts each key once
(:class:`hedge.server.table.EndedLog`). What the counts still miss: attempts that end after
the AM's last scan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hedge.model import AttemptState


@dataclass
class Outcomes:
    """Counts over ended attempts (add with ``+=``); attempt-seconds, not job time."""

    copies_won: int = 0       # copies that succeeded: their task's result is the copy's
    copies_lost: int = 0      # copies killed or failed
    originals_lost: int = 0   # first attempts killed or failed (a copy won, or they failed)
    wasted_s: float = 0.0     # container-seconds of killed and failed attempts, start to end

    @property
    def copies_ended(self) -> int:
        return self.copies_won + self.copies_lost

    def since(self, earlier: Outcomes) -> Outcomes:
        """What was added after ``earlier`` (a copy of this record taken before)."""
        return Outcomes(self.copies_won - earlier.copies_won,
                        self.copies_lost - earlier.copies_lost,
                        self.originals_lost - earlier.originals_lost,
                        self.wasted_s - earlier.wasted_s)

    def __iadd__(self, other: Outcomes) -> Outcomes:
        self.copies_won += other.copies_won
        self.copies_lost += other.copies_lost
        self.originals_lost += other.originals_lost
        self.wasted_s += other.wasted_s
        return self


def outcomes_of(state: np.ndarray, speculative: np.ndarray, start: np.ndarray,
                end: np.ndarray) -> Outcomes:
    """The outcomes of a scan's ended attempts (times in seconds; NaN start: unknown, such an
    attempt's time is not counted)."""
    won = state == AttemptState.SUCCEEDED
    copy = speculative.astype(bool)
    lost = ~won
    spent = end - start
    known = lost & np.isfinite(spent)
    return Outcomes(
        copies_won=int(np.count_nonzero(won & copy)),
        copies_lost=int(np.count_nonzero(lost & copy)),
        originals_lost=int(np.count_nonzero(lost & ~copy)),
        wasted_s=float(np.maximum(spent[known], 0.0).sum()),
    )
