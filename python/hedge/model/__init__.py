"""Snapshot and action types: the contract between observers (simulator, live AM) and policies."""

from hedge.model.actions import Actions
from hedge.model.snapshot import (
    MAP,
    REDUCE,
    AttemptState,
    AttemptTable,
    ClusterFacts,
    FinishedAttempts,
    JobFacts,
    Snapshot,
)

__all__ = [
    "MAP",
    "REDUCE",
    "Actions",
    "AttemptState",
    "AttemptTable",
    "ClusterFacts",
    "FinishedAttempts",
    "JobFacts",
    "Snapshot",
]
