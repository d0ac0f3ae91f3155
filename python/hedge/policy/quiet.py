"""When a job's attempt table, as its AM last saw it, could next change: for the own-state
scan gates (``hedge.policy.base.OwnStateGate``) of policies whose answer stays the same
while the table does (fresh-*, hedge-auto)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def table_quiet(slots, start, k, r0, r1, hw, now, since):  # pragma: no cover - compiled
    """``now`` if one of these slots' attempts started at or after ``since`` or a report
    of theirs was received from ``since`` to ``now`` (``SlotView``: ``r0``/``r1`` are the
    receive times of reports ``k`` and ``k - 1``, and an earlier one received since
    would make ``r1`` so); else the earliest time a report of theirs could still
    arrive: one in flight, or the next one's send time ``start + (k + 1) hw``."""
    first = np.inf
    for s in slots:
        if start[s] >= since:
            return now
        for r in (r0[s], r1[s]):
            if r >= since and r <= now:
                return now
            if r > now and r < first:
                first = r
        due = start[s] + (k[s] + 1) * hw
        if due < first:
            first = due
    return first
