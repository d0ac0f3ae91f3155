"""What a policy may ask the AM (or the simulator) to do after one scan."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _ints() -> np.ndarray:
    return np.empty(0, dtype=np.int64)


@dataclass
class Actions:
    """A policy's answer to one snapshot.

    - ``speculate_task[i]`` gets ``speculate_copies[i]`` extra attempts
      (``T_ADD_SPEC_ATTEMPT`` once per copy on the live AM); ``prefer_node[i]`` is a node
      to place them on (-1: anywhere).
    - ``avoid_nodes``: nodes no new attempt of this job should be placed on.
    - ``kill_attempt``: attempt ids to kill (their task keeps its other attempts).
    - ``resume_task[i]``: kill the task's running attempts and launch ``resume_copies[i]``
      attempts that process only the input the killed attempt had not reached (Chronos
      Speculative-Resume). Simulator only: stock Hadoop discards a killed map's partial output.
    - ``reserve_slots``: slots to hold back for copies in the next window.
    - ``next_scan_in``: seconds until the policy wants the next scan (None: default period);
      Hadoop's DefaultSpeculator waits 15 s after a scan that speculated. ``math.inf``: no
      timed rescan.
    - ``wake_on_completion`` (optional, default False): also rescan the job at the first
      scan after one of its tasks completes. With ``next_scan_in=math.inf`` a policy that
      cannot act before some task finishes (Hadoop: no speculation before a completion)
      lets the simulator skip idle scans; a live AM may simply keep scanning periodically.
    - ``why`` (optional): the policy's reasons for these copies and kills, with their
      numbers, for an operator asking "why was this copied?" (``hedge serve`` logs it with
      the decision; the simulator does not read it).
    """

    speculate_task: np.ndarray = field(default_factory=_ints)
    speculate_copies: np.ndarray = field(default_factory=_ints)
    prefer_node: np.ndarray = field(default_factory=_ints)
    avoid_nodes: np.ndarray = field(default_factory=_ints)
    kill_attempt: np.ndarray = field(default_factory=_ints)
    resume_task: np.ndarray = field(default_factory=_ints)
    resume_copies: np.ndarray = field(default_factory=_ints)
    reserve_slots: int = 0
    next_scan_in: float | None = None
    wake_on_completion: bool = False
    why: str = ""

    def __post_init__(self) -> None:
        self.speculate_task = np.asarray(self.speculate_task, dtype=np.int64)
        n = len(self.speculate_task)
        copies = np.asarray(self.speculate_copies, dtype=np.int64)
        self.speculate_copies = copies if len(copies) else np.ones(n, dtype=np.int64)
        prefer = np.asarray(self.prefer_node, dtype=np.int64)
        self.prefer_node = prefer if len(prefer) else np.full(n, -1, dtype=np.int64)
        self.avoid_nodes = np.asarray(self.avoid_nodes, dtype=np.int64)
        self.kill_attempt = np.asarray(self.kill_attempt, dtype=np.int64)
        self.resume_task = np.asarray(self.resume_task, dtype=np.int64)
        self.resume_copies = np.asarray(self.resume_copies, dtype=np.int64)
        if len(self.resume_copies) != len(self.resume_task):
            raise ValueError("resume_task and resume_copies differ in length")
        if not (len(self.speculate_copies) == len(self.prefer_node) == n):
            raise ValueError("speculate_task, speculate_copies and prefer_node differ in length")

    @classmethod
    def nothing(cls) -> Actions:
        """``Actions()``, made without its nine array conversions: most scans of most
        policies answer this, and building it took about 9 us (issue 21). Its arrays are
        empty and read-only, shared by every such answer."""
        answer = object.__new__(cls)
        answer.__dict__.update(_NOTHING)
        return answer

    @property
    def copies_requested(self) -> int:
        return int(self.speculate_copies.sum())


def _frozen_nothing() -> dict[str, object]:
    """The fields of ``Actions()``, its (empty) arrays made read-only."""
    fields = dict(vars(Actions()))
    for value in fields.values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return fields


_NOTHING = _frozen_nothing()
