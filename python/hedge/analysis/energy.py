"""Power and energy model of a node running tasks.

A node's power is a static part plus a dynamic part driven by the tasks it runs:

    P = P_static + P_dyn,   P_dyn = P_cpu + P_mem + P_net
    P_cpu = min(n, c) * P_core               (n running tasks on c cores)
    P_mem = sum over tasks of (memory accesses/s) * (J per access)
    P_net = sum over remote tasks of (bytes/s read over the network) * (J per byte)

(local tasks read from disk and pay no network energy). The power of a *slot* running a task
is the node's power with the task minus its power without it, so static power is never
charged to a slot. Energy is the integral of power over time, ``E = ∫ P dt``, and energy
efficiency is ``EE = 1 / E`` (work done per joule when the work is fixed).

:func:`schedule_energy` integrates this model over a schedule of attempts (node, start,
end), vectorised with one sort: per node the running-task count is piecewise constant
between attempt starts and ends. Each running attempt is charged its share of the node's
dynamic power, ``P_core * min(n, c) / n`` plus its own memory and network power, so the
attempts' energies add up to the nodes' dynamic energy exactly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np

from hedge.errors import HedgeError

# The breakdown the window-reservation study reports, in this order.
ENERGY_CATEGORIES = (
    "normal-success",
    "straggler-success",
    "straggler-killed",
    "copy-success",
    "copy-killed",
)


@dataclass(frozen=True)
class PowerModel:
    """Per-node power constants (all nodes alike).

    ``static`` W whatever the load; ``core`` W per busy core; ``cores`` per node;
    ``mem_access_energy`` J per memory access and ``mem_access_rate`` accesses/s of one
    running task; ``net_byte_energy`` J per byte a remote task reads over the network.
    Defaults are of the order measured on commodity Hadoop nodes (about 100 W idle, 10-20 W
    per busy core, nanojoules per DRAM access, tens of nanojoules per network byte).
    """

    static: float = 100.0
    core: float = 15.0
    cores: int = 8
    mem_access_energy: float = 2e-9
    mem_access_rate: float = 5e7
    net_byte_energy: float = 5e-8

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not np.isfinite(value) or value < 0:
                raise HedgeError(
                    f"power model: field '{f.name}' = {value!r}, expected a finite value >= 0"
                )
        if self.cores < 1 or int(self.cores) != self.cores:
            raise HedgeError(f"power model: field 'cores' = {self.cores!r}, expected an integer >= 1")

    @classmethod
    def of(cls, power: PowerModel | dict | None) -> PowerModel:
        """A model from a model, a dict of its fields (a policy parameter) or None (the
        defaults); anything else is one HedgeError naming the fields."""
        if power is None:  # frozen, so one default serves every caller (a window policy
            return _DEFAULT_POWER  # per job: validating its fields each time cost 2 %)
        if isinstance(power, cls):
            return power
        if isinstance(power, dict):
            try:
                return cls(**power)
            except TypeError as exc:
                raise HedgeError(f"power model: {exc}; expected fields of {asdict(cls())}"
                                 ) from None
        raise HedgeError(f"power = {power!r}, expected a PowerModel or a dict of its fields")

    @property
    def task_mem_power(self) -> float:
        """Memory power of one running task (W)."""
        return self.mem_access_rate * self.mem_access_energy

    def cpu_power(self, n_tasks: np.ndarray | float) -> np.ndarray:
        """``P_cpu = min(n, c) * P_core`` for n running tasks."""
        return np.minimum(np.asarray(n_tasks, dtype=np.float64), self.cores) * self.core

    def node_power(
        self, n_tasks: np.ndarray | float, net_rate: np.ndarray | float = 0.0
    ) -> np.ndarray:
        """Power (W) of a node running ``n_tasks`` tasks that together read ``net_rate``
        bytes/s over the network: ``P_static + P_cpu + n * P_mem,task + net_rate * e_byte``."""
        n = np.asarray(n_tasks, dtype=np.float64)
        return (
            self.static
            + self.cpu_power(n)
            + n * self.task_mem_power
            + np.asarray(net_rate, dtype=np.float64) * self.net_byte_energy
        )

    def slot_power(
        self, n_other: np.ndarray | float, net_rate: np.ndarray | float = 0.0
    ) -> np.ndarray:
        """Power (W) of one slot: the node's power with the task minus without it, on a node
        already running ``n_other`` tasks; ``net_rate`` is the task's own network read rate
        (bytes/s, 0 for a local task)."""
        n = np.asarray(n_other, dtype=np.float64)
        return self.node_power(n + 1, net_rate) - self.node_power(n, 0.0)


_DEFAULT_POWER = PowerModel()  # PowerModel.of(None)


def energy_efficiency(energy: np.ndarray | float) -> np.ndarray:
    """``EE = 1 / E`` (per joule); infinite for zero energy."""
    e = np.asarray(energy, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return 1.0 / e


@dataclass
class ScheduleEnergy:
    """Energy (J) of a schedule: per attempt (dynamic share), per node (static), and totals."""

    attempt: np.ndarray
    node_static: np.ndarray

    @property
    def dynamic(self) -> float:
        return float(self.attempt.sum())

    @property
    def static(self) -> float:
        return float(self.node_static.sum())

    @property
    def total(self) -> float:
        return self.dynamic + self.static


def schedule_energy(
    node: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    model: PowerModel,
    n_nodes: int,
    net_rate: np.ndarray | None = None,
    horizon: tuple[float, float] | None = None,
) -> ScheduleEnergy:
    """Integrate the power model over attempts ``(node, start, end)``.

    ``net_rate``: bytes/s each attempt reads over the network (0 for local; default all
    local). ``horizon = (t0, t1)``: nodes draw static power over it (default: from the
    first start to the last end). Attempt i's energy is
    ``∫_{s_i}^{e_i} (P_core * min(n(t), c) / n(t) + P_mem,task + net_rate_i * e_byte) dt``
    with n(t) the number of attempts running on its node at t.
    """
    node = np.asarray(node, dtype=np.int64)
    start = np.asarray(start, dtype=np.float64)
    end = np.asarray(end, dtype=np.float64)
    m = len(node)
    if not (len(start) == len(end) == m):
        raise HedgeError("schedule: node, start and end differ in length")
    if m and ((end < start).any() or (node < 0).any() or (node >= n_nodes).any()):
        raise HedgeError(
            f"schedule: every attempt needs 0 <= node < {n_nodes} and end >= start"
        )
    rate = np.zeros(m) if net_rate is None else np.asarray(net_rate, dtype=np.float64)
    own = (end - start) * (model.task_mem_power + rate * model.net_byte_energy)
    cpu = _cpu_share_energy(node, start, end, model)
    if horizon is None:
        horizon = (float(start.min()), float(end.max())) if m else (0.0, 0.0)
    node_static = np.full(n_nodes, model.static * max(horizon[1] - horizon[0], 0.0))
    return ScheduleEnergy(attempt=cpu + own, node_static=node_static)


def _cpu_share_energy(
    node: np.ndarray, start: np.ndarray, end: np.ndarray, model: PowerModel
) -> np.ndarray:
    """Per attempt ``∫ P_core * min(n, c) / n dt`` over its run, with n(t) per node.

    Sort all start (+1) and end (-1) events by (node, time, ends first); the running count
    after each event is a per-node cumulative sum; the per-task share is constant until the
    node's next event. G(t), the integral of the share from the node's first event, is a
    cumulative sum too, and attempt i gets G(e_i) - G(s_i).

    The events are listed ends first, so two stable sorts (by time, then by node) put ends
    before starts at equal times: half the time of a three-key ``lexsort`` on a million
    attempts, the same order.
    """
    m = len(node)
    if m == 0:
        return np.empty(0)
    times = np.concatenate([end, start])
    nodes = np.concatenate([node, node])
    delta = np.concatenate([-np.ones(m), np.ones(m)])
    order = np.argsort(times, kind="stable")
    # node numbers (non-negative, checked by the caller) that fit 16 bits sort by radix
    key = nodes.astype(np.int16) if nodes.max() < 2**15 else nodes
    order = order[np.argsort(key[order], kind="stable")]
    t, nd, d = times[order], nodes[order], delta[order]
    running = np.cumsum(d)  # node blocks each sum to 0, so a global cumsum is per node
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(running > 0, model.core * np.minimum(running, model.cores) / running, 0)
    same_node_next = np.append(nd[1:] == nd[:-1], False)
    gap = np.where(same_node_next, np.append(np.diff(t), 0.0), 0.0)
    g_after = np.cumsum(share * gap)  # G just after each event's segment ends
    g_at = g_after - share * gap  # G at each event's time
    g = np.empty(2 * m)
    g[order] = g_at
    return g[:m] - g[m:]


def energy_breakdown(attempt_energy: np.ndarray, category: np.ndarray) -> dict[str, float]:
    """Sum attempt energies by category (indices into :data:`ENERGY_CATEGORIES`)."""
    sums = np.bincount(
        np.asarray(category, dtype=np.int64),
        weights=np.asarray(attempt_energy, dtype=np.float64),
        minlength=len(ENERGY_CATEGORIES),
    )
    return {name: float(sums[i]) for i, name in enumerate(ENERGY_CATEGORIES)}


def attempt_category(speculative: np.ndarray, succeeded: np.ndarray, straggler: np.ndarray
                     ) -> np.ndarray:
    """Category index per attempt: copies by outcome; originals by straggler and outcome.

    An original that is not a straggler is "normal-success" (normal attempts are only
    killed when a copy wins, which makes them stragglers in hindsight)."""
    spec = np.asarray(speculative, dtype=bool)
    ok = np.asarray(succeeded, dtype=bool)
    strag = np.asarray(straggler, dtype=bool)
    original = np.where(strag, np.where(ok, 1, 2), 0)
    original = np.where(~strag & ~ok, 2, original)
    return np.where(spec, np.where(ok, 3, 4), original).astype(np.int64)
