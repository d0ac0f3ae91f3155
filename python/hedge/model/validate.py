"""Input checks at the detection API boundary.

The live AM sends real, possibly broken data; a bad report must become a clear HedgeError,
never a crash or a silent wrong decision. One snapshot is checked by
:func:`validate_snapshot`; :class:`ReportHistory` also checks consistency across the scans
of one job (timestamps going backwards, reports after an attempt's end).
"""

from __future__ import annotations

import numpy as np

from hedge.errors import HedgeError
from hedge.model import AttemptState, AttemptTable, Snapshot
from hedge.model.snapshot import strictly_increasing


def _reject(snapshot: Snapshot, mask: np.ndarray, field: str, what: str) -> None:
    if mask.any():
        i = int(np.flatnonzero(mask)[0])
        value = getattr(snapshot.attempts, field)[i].item()
        raise HedgeError(
            f"job {snapshot.job.job_id}: attempt {snapshot.attempts.attempt[i]}: "
            f"field '{field}' = {value!r} {what}"
        )


def validate_snapshot(snapshot: Snapshot) -> None:
    """Reject a snapshot no real AM could have observed.

    The checks of :func:`_checks`, in order (the first failing one gives the message), then
    :meth:`AttemptTable.validate` as a backstop. All of them are computed at once; the
    usual, valid snapshot costs one pass and one reduction, and one marked
    ``Snapshot.validated`` (its builder checked it) none.
    """
    if snapshot.validated:
        return
    a, now = snapshot.attempts, snapshot.now
    if not np.isfinite(now):
        raise HedgeError(f"job {snapshot.job.job_id}: scan time {now!r} is not a finite number")
    with np.errstate(invalid="ignore"):
        checks = _checks(a, now)
    bad = checks[0][1].copy()
    for _, mask, _ in checks[1:]:
        bad |= mask
    if not bad.any():
        return
    for field, mask, what in checks:
        _reject(snapshot, mask, field, what)
    a.validate(now)


def _checks(a: AttemptTable, now: float) -> list[tuple[str, np.ndarray, str]]:
    """(field, mask of the attempts it rejects, what is wrong), in message order: progress
    in [0, 1]; report times ordered (start <= first progress <= sent <= received <= now);
    first progress not above the last (progress going backwards); a SUCCEEDED attempt
    whose last report says 1 (else a report arrived after its end)."""
    back = "(timestamps must not go backwards)"
    return [
        ("progress", ~((a.progress >= 0) & (a.progress <= 1)), "expected a fraction in [0, 1]"),
        ("report_sent", a.report_sent < a.start, f"is before the attempt's start {back}"),
        ("report_received", a.report_received < a.report_sent,
         f"is before the report was sent {back}"),
        ("report_received", a.report_received > now + 1e-9, "is after the scan time"),
        ("first_progress_time", a.first_progress_time > a.report_sent,
         f"is after the last report {back}"),
        ("report_sent", a.report_sent > now + 1e-9, "is after the scan time"),
        ("first_progress_time", a.first_progress_time < a.start,
         f"is before the attempt's start {back}"),
        ("first_progress", a.first_progress > a.progress + 1e-12,
         "is above the last reported progress (progress must not go backwards)"),
        ("progress", (a.state == _SUCCEEDED) & (a.progress < 1),
         "on a SUCCEEDED attempt: its last report must say 1 (a report arrived after the "
         "attempt's end)"),
    ]


_SUCCEEDED = int(AttemptState.SUCCEEDED)


class ReportHistory:
    """Remembers each attempt's last report across the scans of one job.

    ``check(snapshot)`` validates the snapshot, then rejects an attempt whose last report
    is older than one seen before (timestamps going backwards) or that reports anew after
    a scan saw it finished.
    """

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int64)
        self._sent = np.empty(0)
        self._ended = np.empty(0, dtype=bool)
        self._looked_up: tuple[np.ndarray, np.ndarray] | None = None  # (ids, their rows)

    def check(self, snapshot: Snapshot) -> None:
        if snapshot.consistent and snapshot.validated:
            return  # its builder's rows pass every check here (Snapshot.consistent)
        validate_snapshot(snapshot)
        a = snapshot.attempts
        seen, prev_sent, ended = self._lookup(a.attempt)
        with np.errstate(invalid="ignore"):
            _reject(snapshot, seen & (a.report_sent < prev_sent), "report_sent",
                    "is older than the report seen at an earlier scan (timestamps must "
                    "not go backwards)")
            _reject(snapshot, ended & (a.report_sent > prev_sent), "report_sent",
                    "is a new report from an attempt that had already ended")
        self._remember(a.attempt, a.report_sent, a.state != AttemptState.RUNNING)

    def _lookup(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per attempt id: seen before?, its last send time, did it end?"""
        if len(self._ids) == 0:
            none = np.zeros(len(ids), dtype=bool)
            return none, np.full(len(ids), np.nan), none
        if self._same(ids) and strictly_increasing(ids):  # (a repeated id: below)
            return np.ones(len(ids), dtype=bool), self._sent, self._ended
        rows = self._rows(ids)
        if rows is not None:
            self._looked_up = (ids, rows)  # _remember of the same scan reuses them
            seen = rows >= 0
            at = np.maximum(rows, 0)
            return seen, np.where(seen, self._sent[at], np.nan), seen & self._ended[at]
        pos = np.minimum(np.searchsorted(self._ids, ids), len(self._ids) - 1)
        seen = self._ids[pos] == ids
        return seen, np.where(seen, self._sent[pos], np.nan), seen & self._ended[pos]

    def _same(self, ids: np.ndarray) -> bool:
        """The same attempts, in the same (sorted) order, as remembered: a live job between
        two scans usually. Then lookups are the remembered arrays, with no search or sort."""
        return len(ids) == len(self._ids) and np.array_equal(ids, self._ids)

    def _rows(self, ids: np.ndarray) -> np.ndarray | None:
        """Row of each id among the remembered ones (-1: never seen), by a direct index over
        the id range; None (use the search) unless both id lists are strictly increasing (a
        live AM's snapshot is in key order) and the range is dense."""
        old = self._ids
        if not (strictly_increasing(ids) and strictly_increasing(old)):
            return None
        ends = [int(x[i]) for x in (old, ids) if len(x) for i in (0, -1)]
        if not ends or min(ends) < 0 or max(ends) >= 4 * (len(old) + len(ids)) + 64:
            return None
        index = np.full(max(ends) + 1, -1, dtype=np.int64)
        index[old] = np.arange(len(old))
        return index[ids]

    def _remember(self, ids: np.ndarray, sent: np.ndarray, ended: np.ndarray) -> None:
        looked_up, self._looked_up = self._looked_up, None
        sent = np.asarray(sent, dtype=float)
        done = np.asarray(ended) & ~np.isnan(sent)
        if self._same(ids):
            self._sent = sent.copy()  # the caller may update its arrays in place
            self._ended = done
            return
        rows = looked_up[1] if looked_up is not None and looked_up[0] is ids else self._rows(ids)
        if rows is not None:
            new = rows < 0
            if not new.any() or len(self._ids) == 0 or ids[new][0] > self._ids[-1]:
                # every new id sorts after every remembered one: update in place and append
                # (the merge below would give the same arrays, by a sort)
                seen = ~new
                self._ids = np.concatenate([self._ids, ids[new]])
                self._sent = np.concatenate([self._sent, sent[new]])
                self._sent[rows[seen]] = sent[seen]
                self._ended = np.concatenate([self._ended, done[new]])
                self._ended[rows[seen]] = done[seen]
                return
        keep = ~np.isin(self._ids, ids)
        all_ids = np.concatenate([self._ids[keep], ids])
        order = np.argsort(all_ids, kind="stable")
        self._ids = all_ids[order]
        self._sent = np.concatenate([self._sent[keep], sent])[order]
        self._ended = np.concatenate([self._ended[keep], done])[order]
