"""The simulator as a client of the control plane: every scan of a simulated AM goes through
the wire and a ``hedge serve`` session, as a live AM's does.

Why: numba compiles one version of a kernel per kind of array it is given, and a session
hands its policy read-only views of its table where the simulator hands writable arrays.
Warmed through the simulator alone, a fresh server still compiled hedge-auto's judge at its
first real decision (5.5 s of CPU, past the shim's 1 s deadline; seen in clean-clone CI
runs of the real-YARN test). ``hedge.server.warmup`` runs each live policy this way too.

What a scan sends is what the shim sends (``org.hedge.shim.JobTracker``):
- the RUNNING attempts only (a request still waiting for a container is no attempt on YARN);
- the first scan a full snapshot, then deltas carrying every running row and the attempts
  that ended since, with start and end (the end taken as this scan's time). An ended attempt
  whose task has no row left (running or waiting) is its task's winner, the others killed;
- the run times of the tasks that succeeded since (the simulator's, of every such task);
- nodes named ``node<i>``, slots as the simulator counts them. No node-analyzer status and
  no ResourceManager utilisation: what those add to a snapshot is not warmed.

One gap against the shim: an attempt that starts and ends between two scans of its job is
not reported here (the shim reports it ended, with start and end). Policies that read the
job's finished attempts and scan seldom (window, hete-aware) therefore decide differently
here than in the simulator; hadoop, hedge-auto, mantri, spark and static decide the same
(tests/unit/test_server_simulated_am.py).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from hedge.model import Actions, AttemptState, AttemptTable, Snapshot
from hedge.server import wire
from hedge.server.session import Limits, SessionRegistry

if TYPE_CHECKING:  # the simulator is imported where it runs, not by hedge serve's start
    from hedge.sim.cluster import ClusterConfig
    from hedge.sim.results import SimResult
    from hedge.traces.workload import Workload


class SessionPolicy:
    """One simulated job's policy, reached through a control-plane session.

    The simulator calls ``decide``; its scan gates read the session's own policy object (every
    other attribute is that object's).
    """

    def __init__(self, sessions: SessionRegistry, job_id: str, policy_name: str) -> None:
        self.session = sessions.open(job_id, policy_name, {})
        self.seq = 0
        self.nodes_sent = 0
        # attempt key -> (task, start, copy flag) of the rows last sent
        self.sent: dict[int, tuple[int, float, bool]] = {}
        self.runtimes_sent = [Counter(), Counter()]  # per task type, run time -> count

    def __getattr__(self, name: str) -> object:
        if name == "session":  # not set yet: no recursion through a missing attribute
            raise AttributeError(name)
        return getattr(self.session.policy, name)

    def join(self, shared: dict[str, object]) -> None:
        """The session's policy shares its server's dict, not the simulation's."""

    def decide(self, snapshot: Snapshot) -> Actions:
        data = self.request(snapshot)
        request = wire.decode_request(data[:wire.REQUEST.size], data[wire.REQUEST.size:])
        return self.session.decide(request)

    def request(self, snapshot: Snapshot) -> bytes:
        """The scan frame the shim would send for this snapshot."""
        a = snapshot.attempts
        live = a.take(np.flatnonzero(a.state == AttemptState.RUNNING))
        ended = self._ended(live, set(a.task.tolist()))
        job, cluster = snapshot.job, snapshot.cluster
        new_maps = self._new_runtimes(0, job.completed_map_runtimes)
        new_reduces = self._new_runtimes(1, job.completed_reduce_runtimes)
        for key in ended["key"]:
            del self.sent[key]
        for row in range(len(live)):
            self.sent[int(live.attempt[row])] = (
                int(live.task[row]), float(live.start[row]), bool(live.speculative[row]))
        n_nodes = int(live.node.max(initial=-1)) + 1
        new_nodes = [f"node{i}" for i in range(self.nodes_sent, n_nodes)]
        node_base, self.nodes_sent = self.nodes_sent, max(self.nodes_sent, n_nodes)
        self.seq += 1
        return wire.encode_request(
            live, seq=self.seq, now=snapshot.now, job_start=job.start, n_maps=job.n_maps,
            n_reduces=job.n_reduces, deadline=job.deadline,
            completed_map_runtimes=new_maps, completed_reduce_runtimes=new_reduces,
            node_base=node_base, new_nodes=new_nodes, total_slots=cluster.total_slots,
            free_slots=cluster.free_slots, delta=self.seq > 1, removed=ended["key"],
            removed_state=ended["state"], removed_speculative=ended["speculative"],
            removed_start=ended["start"], removed_end=[snapshot.now] * len(ended["key"]))

    def _new_runtimes(self, task_type: int, runtimes: np.ndarray) -> list[float]:
        """The run times completed since the last scan (the shim counts every task that
        succeeds, also those that started and ended between two scans)."""
        new = Counter(runtimes.tolist()) - self.runtimes_sent[task_type]
        self.runtimes_sent[task_type].update(new)
        return list(new.elements())

    def _ended(self, live: AttemptTable, tasks_with_rows: set[int]) -> dict[str, list]:
        """The attempts sent before and not running now; one winner per finished task."""
        running = set(live.attempt.tolist())
        won: set[int] = set()
        out: dict[str, list] = {"key": [], "state": [], "speculative": [], "start": []}
        for key, (task, start, copy) in self.sent.items():
            if key in running:
                continue
            winner = task not in tasks_with_rows and task not in won
            if winner:
                won.add(task)
            out["key"].append(key)
            out["state"].append(AttemptState.SUCCEEDED if winner else AttemptState.KILLED)
            out["speculative"].append(copy)
            out["start"].append(start)
        return out


def simulate_through_sessions(workload: Workload, policy_name: str,
                              cluster: ClusterConfig | None = None, seed: int = 0,
                              ) -> SimResult:
    """Simulate ``policy_name`` on ``workload`` with every decision made by a session of a
    private control plane."""
    from hedge.server.service import ClusterView
    from hedge.sim.engine import Simulator

    sessions = SessionRegistry(Limits(), ClusterView())
    return Simulator(workload, cluster, policy_name, seed=seed, make_policy=lambda job_id:
                     SessionPolicy(sessions, job_id, policy_name)).run()
