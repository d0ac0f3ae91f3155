"""Where the ApplicationMaster put a job's copies: on the node of another attempt of the same
task, or elsewhere.

A stock MapReduce AM asks for a copy's container as it asked for its original's (the split's
hosts), with no regard to the node the original runs on (MAPREDUCE-7169, open; Tez fixed the
same in TEZ-4042), and a speculator has no say in it. A copy on its original's node shares
whatever slows that node, so an operator needs to know how often that happens on their
cluster before trusting copies to help: ``hedge serve`` counts it per job from what the shim
sends (each attempt's node, its task, whether it is a copy) and prints it when the job closes.

A copy is counted once, the first time a scan names it with a known node: as on its
original's node when an attempt of the same task that is live in that scan, or ended in it,
ran on that node. A copy that started and ended between two scans is counted from its ended
record (wire version 3), against the attempts of its task live then.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hedge.model import AttemptTable


@dataclass
class CopyPlacement:
    """Counts over the copies placed so far (each attempt key once)."""

    on_original_node: int = 0  # copies on the node of another attempt of their task
    elsewhere: int = 0         # copies on a node no other attempt of their task ran on
    _counted: set[int] = field(default_factory=set, repr=False)

    @property
    def placed(self) -> int:
        return self.on_original_node + self.elsewhere

    def observe(self, rows: AttemptTable, live: AttemptTable, ended_key: np.ndarray,
                ended_task: np.ndarray, ended_node: np.ndarray,
                ended_copy: np.ndarray) -> None:
        """Count the copies first seen with a node in this scan. ``rows``: the scan's rows;
        ``live``: the job's live attempts after the scan; the ``ended_*`` columns: the
        attempts the scan names as ended. Only the scan's own rows and ended attempts are
        searched for new copies (O(changed)); the live table is read only when one is new."""
        copy = rows.speculative
        fresh = [(k, t, n) for k, t, n in zip(
            np.concatenate([rows.attempt[copy], ended_key[ended_copy]]).tolist(),
            np.concatenate([rows.task[copy], ended_task[ended_copy]]).tolist(),
            np.concatenate([rows.node[copy], ended_node[ended_copy]]).tolist(),
            strict=True) if n >= 0 and k not in self._counted]
        if not fresh:
            return
        key = np.concatenate([live.attempt, ended_key]).astype(np.int64)
        task = np.concatenate([live.task, ended_task]).astype(np.int64)
        node = np.concatenate([live.node, ended_node]).astype(np.int64)
        for k, t, n in fresh:
            if k in self._counted:  # a copy both in a row and ended in this scan
                continue
            self._counted.add(k)
            if ((task == t) & (key != k) & (node == n)).any():
                self.on_original_node += 1
            else:
                self.elsewhere += 1
