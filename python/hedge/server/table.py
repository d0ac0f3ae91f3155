"""One job's live attempts on the server, updated in place from full and delta scans.

The shim numbers a job's attempts 0, 1, 2... (dense keys) and, after the first full
snapshot, sends only the rows that changed plus the keys that ended. The session used to
scatter those into arrays indexed by key and gather the live rows into a new table on every
scan (14 fancy-indexed copies of every live attempt, plus dtype conversions). Here the live
rows are kept *compact*, in the model's dtypes and in key order, so the snapshot a policy
sees is a set of read-only views (no copy at all):

- changed rows of known keys: one scatter per column, O(changed);
- new keys: appended (amortised growth); the shim's keys only grow, so key order holds,
  and a frame that breaks it is re-sorted (O(n log n), never seen from the shim);
- ended keys: the rows after the first ended one move up (one masked copy per column),
  only on scans that end attempts.

Views stay valid until the next update; policies never keep snapshot arrays across scans
(they copy what they remember), and the views are read-only so a policy cannot corrupt the
table by writing into its input.
"""

from __future__ import annotations

import numpy as np

from hedge.model import AttemptTable, FinishedAttempts
from hedge.model.snapshot import strictly_increasing

# the model's dtype of every AttemptTable column (the table stores them converted once)
DTYPES: dict[str, np.dtype] = {
    name: getattr(AttemptTable.empty(), name).dtype for name in AttemptTable.COLUMNS
}


def _readonly(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class GrowingArray:
    """A float64 array that only grows by appending (amortised doubling, no per-scan copy)."""

    def __init__(self) -> None:
        self._data = np.empty(16)
        self.n = 0
        self._view: np.ndarray | None = None  # of the current n, until the next change

    def clear(self) -> None:
        self.n = 0
        self._view = None

    def extend(self, values: np.ndarray) -> None:
        if len(values) == 0:
            return
        self._view = None
        end = self.n + len(values)
        if end > len(self._data):
            bigger = np.empty(max(end, 2 * len(self._data)))
            bigger[:self.n] = self._data[:self.n]
            self._data = bigger
        self._data[self.n:end] = values
        self.n = end

    def view(self) -> np.ndarray:
        if self._view is None:
            self._view = _readonly(self._data[:self.n])
        return self._view


class EndedLog:
    """The job's ended attempts as the shim reports them, each key counted once, and the
    winners among them (``JobFacts.finished``: task, key, node, start, end and input bytes,
    as the shim sends them for an ended attempt).

    A delta names the attempts ended since the previous scan; a full snapshot names every
    attempt the job has ended (wire version 3). So a scan lost or rejected after the server
    took its ended attempts in, or a server restart, costs nothing: the full snapshot that
    follows repeats them, and only the keys not seen before count.
    """

    _FINISHED = ("task", "attempt", "node", "start", "end", "input_bytes")

    def __init__(self) -> None:
        self._seen = np.zeros(0, dtype=bool)  # by attempt key
        self._columns = {name: GrowingArray() for name in self._FINISHED}
        self._facts: FinishedAttempts | None = None

    def add(self, key: np.ndarray, won: np.ndarray, **finished: np.ndarray) -> np.ndarray:
        """Take in ended attempts (distinct, non-negative keys); ``won`` marks those whose
        finish is known (succeeded, start and end known), ``finished`` their columns
        (``_FINISHED`` but the key). Returns the mask of the keys not reported before."""
        if len(key) == 0:
            return np.zeros(0, dtype=bool)
        size = int(key.max()) + 1
        if size > len(self._seen):
            bigger = np.zeros(max(size, 2 * len(self._seen)), dtype=bool)
            bigger[:len(self._seen)] = self._seen
            self._seen = bigger
        new = ~self._seen[key]
        self._seen[key] = True
        keep = new & won
        if keep.any():
            self._facts = None
            values = {**finished, "attempt": key}
            for name, column in self._columns.items():
                column.extend(np.asarray(values[name], dtype=np.float64)[keep])
        return new

    def facts(self) -> FinishedAttempts:
        if self._facts is None:
            c = {name: column.view() for name, column in self._columns.items()}
            self._facts = FinishedAttempts(
                task=c["task"].astype(np.int64), attempt=c["attempt"].astype(np.int64),
                node=c["node"].astype(np.int64), start=c["start"], end=c["end"],
                input_bytes=c["input_bytes"])
        return self._facts


class LiveAttempts:
    """The live attempts of one job in key order: compact columns plus a key -> row index.

    ``row_of[key]`` is the row of a live attempt, -1 for keys that ended or never came.
    """

    def __init__(self) -> None:
        self.n = 0
        self.columns = {name: np.empty(0, dtype) for name, dtype in DTYPES.items()}
        self.row_of = np.empty(0, dtype=np.int64)
        # the views table() gave: still right after updates in place of known rows; dropped
        # whenever rows are added, removed or moved to new buffers
        self._views: AttemptTable | None = None

    def __len__(self) -> int:
        return self.n

    @property
    def key_space(self) -> int:
        """Keys below this may be named by a removal (keys ever seen, rounded up)."""
        return len(self.row_of)

    def replace(self, rows: AttemptTable) -> None:
        """A full snapshot: exactly these attempts are live."""
        self.n = 0
        self._views = None
        self.row_of[:] = -1
        self.upsert(rows)

    def upsert(self, rows: AttemptTable) -> None:
        """Rows of a delta scan: overwrite known keys, append new ones (keys are distinct)."""
        keys = rows.attempt
        if len(keys) == 0:
            return
        self._cover_keys(int(keys.max()) + 1)
        at = self.row_of[keys]
        known = at >= 0
        if known.all():
            for name, column in self.columns.items():
                column[at] = getattr(rows, name)
            return
        new = ~known
        n_new = int(np.count_nonzero(new))
        if not known.any():
            # only new attempts (a full snapshot, or a scan of new launches)
            self._append(rows, None, n_new)
        else:
            for name, column in self.columns.items():
                column[at[known]] = getattr(rows, name)[known]
            self._append(rows, new, n_new)

    def remove(self, keys: np.ndarray) -> None:
        """Attempts that ended (keys below :attr:`key_space`; unknown ones are ignored)."""
        if len(keys) == 0:
            return
        rows = self.row_of[keys]
        rows = rows[rows >= 0]
        if len(rows) == 0:
            return
        self._views = None
        self.row_of[keys] = -1
        first = int(rows.min())
        keep = np.ones(self.n - first, dtype=bool)
        keep[rows - first] = False
        n = first + int(np.count_nonzero(keep))
        for column in self.columns.values():
            column[first:n] = column[first:self.n][keep]
        self.n = n
        moved = self.columns["attempt"][first:n]
        self.row_of[moved] = np.arange(first, n)

    def has(self, keys: np.ndarray) -> bool:
        """Whether every key names a live attempt (O(len(keys)))."""
        if len(keys) == 0:
            return True
        if keys.min() < 0 or keys.max() >= self.key_space:
            return False
        return bool((self.row_of[keys] >= 0).all())

    def table(self) -> AttemptTable:
        """The live attempts as read-only views (valid until the next update; the same
        object while only known rows change, since those are written in place)."""
        if self._views is None:
            self._views = AttemptTable.of_columns(**{
                name: _readonly(column[:self.n]) for name, column in self.columns.items()})
        return self._views

    def _cover_keys(self, size: int) -> None:
        if size > len(self.row_of):
            bigger = np.full(max(size, 2 * len(self.row_of)), -1, dtype=np.int64)
            bigger[:len(self.row_of)] = self.row_of
            self.row_of = bigger

    def _append(self, rows: AttemptTable, select: np.ndarray | None, count: int) -> None:
        self._views = None
        start, end = self.n, self.n + count
        if end > len(self.columns["attempt"]):
            capacity = max(end, 2 * len(self.columns["attempt"]), 16)
            for name, column in self.columns.items():
                bigger = np.empty(capacity, dtype=column.dtype)
                bigger[:start] = column[:start]
                self.columns[name] = bigger
        for name, column in self.columns.items():
            values = getattr(rows, name)
            column[start:end] = values if select is None else values[select]
        self.n = end
        keys = self.columns["attempt"][:end]
        if (start > 0 and keys[start] < keys[start - 1]
                or not strictly_increasing(keys[start:end])):
            self._sort()
        else:
            self.row_of[keys[start:end]] = np.arange(start, end)

    def _sort(self) -> None:
        """Restore key order (frames from the shim never need it: its keys only grow)."""
        order = np.argsort(self.columns["attempt"][:self.n], kind="stable")
        for column in self.columns.values():
            column[:self.n] = column[:self.n][order]
        self.row_of[self.columns["attempt"][:self.n]] = np.arange(self.n)

