"""What one simulation run produced: per-job times and one record per launched attempt."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hedge.sim.cluster import Blacklist, ClusterConfig, Degradation

# attempt outcomes in AttemptRecords.outcome
NORMAL = 0  # succeeded, the task's only launched attempt
WON = 1  # succeeded while other attempts of the task ran (or had run)
KILLED = 2  # killed: by a sibling's success, a policy, or a resume
OUTCOME_NAMES = {NORMAL: "normal", WON: "won", KILLED: "killed"}


@dataclass
class AttemptRecords:
    """One row per attempt that got a slot (struct of arrays).

    ``task``: the task's row in the workload; ``job``: job index; ``node``; ``start`` /
    ``end`` (s); ``outcome`` (NORMAL / WON / KILLED); ``copy``: launched as a speculative
    copy (or a Chronos resume attempt); ``straggler``: the task is a true straggler
    (ground-truth factor > 1).
    """

    task: np.ndarray
    job: np.ndarray
    node: np.ndarray
    start: np.ndarray
    end: np.ndarray
    outcome: np.ndarray
    copy: np.ndarray
    straggler: np.ndarray

    def __len__(self) -> int:
        return len(self.task)

    @property
    def duration(self) -> np.ndarray:
        return self.end - self.start


@dataclass
class SimResult:
    """Result of running one policy on one workload and cluster."""

    policy: str
    seed: int
    cluster: ClusterConfig
    job_ids: list[str]
    arrival: np.ndarray
    finish: np.ndarray
    # absolute deadline per job (NaN: none)
    deadline: np.ndarray
    attempts: AttemptRecords
    # tasks the policy asked to copy or resume (ground truth for detection is the
    # workload's straggler factor > 1)
    detected: np.ndarray
    straggler: np.ndarray
    degradation: Degradation
    node_speed: np.ndarray
    energy: float = 0.0
    wall_seconds: float = 0.0
    scans: int = 0
    extra: dict = field(default_factory=dict)
    # nodes kept free of new containers during the run (None: no blacklist)
    blacklist: Blacklist | None = None
    # whether ``straggler`` is ground truth (a trace has none: precision and recall unknown)
    straggler_truth: bool = True
    # what the figures rest on that only the jobs' policies knew (Policy.run_notes)
    policy_notes: list[str] = field(default_factory=list)

    @property
    def job_time(self) -> np.ndarray:
        return self.finish - self.arrival
