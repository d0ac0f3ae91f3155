"""The simulated cluster: its settings, node speeds and ground-truth node degradation.

Model (all times in seconds, work in "seconds on a typical idle node"):

- ``nodes`` nodes with ``slots`` containers each.
- Heterogeneity ``h``: node speed factors ``h ** (0.5 - u)`` with ``u`` uniform in [0, 1]
  (seeded), rescaled so the slowest node is exactly ``h`` times slower than the fastest and
  the typical (median-u) node runs at speed 1.
- Contention ``c``: an attempt on a node with ``b`` busy slots runs ``stretch`` times slower,
  ``stretch = 1 + (c - 1) * (b - 1) / (S - 1)`` (1 when alone, ``c`` when the node is full;
  1 when ``S == 1``).
- Degradation: a fraction ``degraded`` of nodes (seeded) is ``degrade_factor`` times slower
  during periods of mean length ``degrade_period`` separated by exponential gaps of mean
  ``degrade_gap``; the periods are ground truth for node analysis (``Degradation``).
- Heartbeats every ``hw`` seconds with a latency from ``latency`` (``const:X``,
  ``uniform:A:B`` or ``exp:MEAN``), clipped below ``hw`` so reports arrive in order.
- ``startup``: seconds between an attempt's launch and its first unit of work (JVM start).
- ``bandwidth``: bytes/s for remote input; a task placed away from its input's node pays
  ``input_bytes / bandwidth`` extra seconds (only when input sizes are known).
- ``shuffle``: extra seconds every reduce attempt spends fetching map output.
- ``straggler_ratio`` / ``slowdown``: when ``straggler_ratio`` > 0 the simulator draws the
  ground-truth straggler factors itself (uniform in ``slowdown``) instead of using the
  workload's ``straggler_factor``.
- ``scheduler``: ``fifo`` or ``fair`` sharing of slots between jobs; ``scan``: the AM
  speculation scan period; ``tick``: the scheduling period (YARN NodeManager heartbeat,
  1 s): freed slots are re-assigned at the next tick.
- ``power``: watts drawn per busy slot (energy hook, see ``hedge.sim.energy``).
- ``kills``: what the AM does with a kill. ``restart`` (the default: a stock MapReduce AM
  starts a new attempt in place of each one it kills, so a kill is carried out only with a
  copy of its task in the same answer and a lone kill is held, as hedge's shim does;
  ``hedge.policy.limits`` rule 5) or ``free`` (an AM that ends an attempt and frees its slot,
  as the Mantri and Chronos papers assume).
- ``copies``: where a copy runs. ``stock`` (the default): as a stock MapReduce AM places them
  (MAPREDUCE-7169), like an original: on its input's node when that node has a free slot and
  input sizes matter, else the least-loaded node, its original's included; the policy's
  ``prefer_node`` and ``avoid_nodes`` are not carried out (hedge's shim cannot send them).
  ``apart``: never on a node running its task, nor on a node its policy avoids, and on the
  node the policy prefers when it is free: an AM that places copies as the policies ask. The
  default is what hedge gets on YARN (its moves off, as by default), as ``kills`` is. On
  homogeneous clusters the two gave the same job times, copies and waste for none, hadoop and
  hedge-auto (the MRv1 sample, Google 2011 parts 0 and 1, synthetic-busy and -idle of
  ``tests/bench/bench_policies.py``, seed 0, 2026-11-27; the other workloads not compared);
  they differ where nodes do (heterogeneity, contention, degraded nodes).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from hedge.errors import HedgeError


@dataclass(frozen=True)
class ClusterConfig:
    """Settings of one simulated cluster (see the module docstring for the model)."""

    nodes: int = 100
    slots: int = 4
    heterogeneity: float = 1.0
    contention: float = 1.0
    hw: float = 3.0
    latency: str = "uniform:0.05:0.5"
    scan: float = 1.0
    tick: float = 1.0
    startup: float = 0.0
    bandwidth: float = 1e8
    shuffle: float = 0.0
    degraded: float = 0.0
    degrade_factor: float = 3.0
    degrade_period: float = 600.0
    degrade_gap: float = 3600.0
    straggler_ratio: float = 0.0
    slowdown: str = "2:5"
    scheduler: str = "fifo"
    power: float = 30.0
    kills: str = "restart"
    copies: str = "stock"  # what a stock MapReduce AM does (module docstring)

    def __post_init__(self) -> None:
        checks = (
            ("nodes", self.nodes >= 1, "an integer >= 1"),
            ("slots", self.slots >= 1, "an integer >= 1"),
            ("heterogeneity", self.heterogeneity >= 1, "a factor >= 1"),
            ("contention", self.contention >= 1, "a factor >= 1"),
            ("hw", self.hw > 0, "seconds > 0"),
            ("scan", self.scan > 0, "seconds > 0"),
            ("tick", self.tick > 0, "seconds > 0"),
            ("startup", self.startup >= 0, "seconds >= 0"),
            ("bandwidth", self.bandwidth > 0, "bytes/s > 0"),
            ("shuffle", self.shuffle >= 0, "seconds >= 0"),
            ("degraded", 0 <= self.degraded <= 1, "a fraction in [0, 1]"),
            ("degrade_factor", self.degrade_factor >= 1, "a factor >= 1"),
            ("degrade_period", self.degrade_period > 0, "seconds > 0"),
            ("degrade_gap", self.degrade_gap > 0, "seconds > 0"),
            ("straggler_ratio", 0 <= self.straggler_ratio <= 1, "a fraction in [0, 1]"),
            ("scheduler", self.scheduler in ("fifo", "fair"), "'fifo' or 'fair'"),
            ("power", self.power >= 0, "watts >= 0"),
            ("kills", self.kills in ("restart", "free"), "'restart' or 'free'"),
            ("copies", self.copies in ("apart", "stock"), "'apart' or 'stock'"),
        )
        for name, ok, expected in checks:
            if not ok:
                raise HedgeError(f"cluster: {name}={getattr(self, name)!r}, expected {expected}")
        self.slowdown_range()
        latency_sampler(self.latency)

    @property
    def total_slots(self) -> int:
        return self.nodes * self.slots

    def slowdown_range(self) -> tuple[float, float]:
        """``slowdown`` as (low, high), e.g. "2:5" -> (2.0, 5.0)."""
        try:
            low, high = (float(x) for x in self.slowdown.split(":"))
        except ValueError:
            raise HedgeError(
                f"cluster: slowdown={self.slowdown!r}, expected LOW:HIGH such as 2:5"
            ) from None
        if not 1 <= low <= high:
            raise HedgeError(f"cluster: slowdown={self.slowdown!r}, expected 1 <= LOW <= HIGH")
        return low, high

    def as_dict(self) -> dict:
        return asdict(self)


KILLS_NOTE = {
    "restart": "kills=restart: a stock MapReduce AM starts a new attempt in place of each one "
               "it kills, so a kill was carried out only with a copy of its task and any other "
               "was held, its attempt running on until its task ended, as hedge's shim does on "
               "YARN (--cluster kills=free: an AM that ends attempts alone)",
    "free": "kills=free: a killed attempt freed its slot at once; a stock MapReduce AM cannot "
            "do that (it restarts what it kills), so on YARN hedge's shim holds a kill no copy "
            "of its task pairs with and such a policy wastes more than shown here",
}


COPIES_NOTE = {
    "apart": "copies=apart: every copy ran on a node not running its task, and on the node "
             "its policy preferred where that was free; a stock MapReduce AM places a copy "
             "as it placed its original, on its original's node too (MAPREDUCE-7169; "
             "--cluster copies=stock simulates that)",
    "stock": "copies=stock: copies were placed as a stock MapReduce AM places them (their "
             "input's node when free and input sizes are known, else the least-loaded node, "
             "their original's included); the policies' preferred and avoided nodes were "
             "not carried out",
}


def parse_cluster(text: str | None, **defaults: object) -> ClusterConfig:
    """``"nodes=100,slots=4,heterogeneity=3.0"`` -> ClusterConfig (unknown keys rejected);
    ``defaults`` fill the keys the text does not give (e.g. ``nodes`` from a trace)."""
    return ClusterConfig(**{**defaults, **cluster_values(text)})


def cluster_values(text: str | None) -> dict[str, object]:
    """The keys ``text`` sets, typed: ``"nodes=100,slots=4"`` -> {"nodes": 100, "slots": 4}."""
    if not text:
        return {}
    types = {f.name: f.type for f in fields(ClusterConfig)}
    values: dict[str, object] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in types:
            raise HedgeError(
                f"--cluster: '{item}' is not KEY=VALUE with KEY one of {', '.join(types)}"
            )
        kind = types[key]
        try:
            values[key] = int(value) if kind == "int" else float(value) if kind == "float" else value
        except ValueError:
            raise HedgeError(f"--cluster: {key}={value!r}, expected a number") from None
    return values


@dataclass(frozen=True)
class ClusterChoice:
    """The cluster a run uses and, in words, where its size came from (``hedge simulate``
    prints it as one line and puts it in the JSON)."""

    config: ClusterConfig
    origin: str
    demand: float = 0.0  # the trace's load in slots (Workload.slot_demand; 0: not known)

    def describe(self) -> str:
        return f"{self.config.nodes:,} nodes x {self.config.slots} slots ({self.origin})"

    def as_dict(self) -> dict:
        out = {"nodes": self.config.nodes, "slots": self.config.slots, "origin": self.origin}
        return {**out, "trace_load_slots": round(self.demand, 1)} if self.demand else out

    def overload(self) -> str | None:
        """What a run on a cluster smaller than its trace's load must say, else None."""
        slots = self.config.nodes * self.config.slots
        if self.demand <= slots:
            return None
        return (f"the trace keeps about {self.demand:,.0f} slots busy while its jobs arrive, "
                f"{self.demand / slots:.1f}x this cluster's {slots:,}: its queue grows for "
                "as long as its jobs arrive, and job times measure that queue as much as the "
                "policies (--cluster nodes=N gives more nodes)")


def choose_cluster(text: str | None, origin_if_empty: str, **defaults: object) -> ClusterChoice:
    """``--cluster`` text over ``defaults``; the origin names ``--cluster`` when given."""
    origin = f"--cluster {text}" if text else origin_if_empty
    return ClusterChoice(parse_cluster(text, **defaults), origin)


# the share of its slots a cluster sized for a trace's load keeps busy (the default
# workload's cluster is sized the same way): room for bursts, and for copies
SIZED_LOAD = 0.75


def cluster_from_trace(text: str | None, machines: int, slots: int | None,
                       demand: float = 0.0) -> ClusterChoice:
    """The trace's cluster: one node per machine the trace names (``machines``), its slots per
    machine when it records them; ``--cluster`` keys (``text``) win, and what neither gives
    takes hedge's defaults, each said in the origin.

    A trace that names no machines gets hedge's default node count, or more where its load
    (``demand``: ``Workload.slot_demand``) would keep more than ``SIZED_LOAD`` of those
    slots busy: on a cluster smaller than its load a trace's queue grows for as long as its
    jobs arrive, and every policy's job times measure that queue (YH1 asks for about 3,100
    slots, SWIM's FB-2010 day 1,400, against the default's 400)."""
    given = cluster_values(text)
    defaults: dict[str, object] = {}
    why = [f"--cluster {text}"] if text else []
    if "nodes" not in given:
        if machines:
            defaults["nodes"] = machines
            why.append("nodes: the machines the trace's tasks ran on")
        else:
            per_node = int(given.get("slots", slots or ClusterConfig.slots))
            sized = math.ceil(demand / per_node / SIZED_LOAD) if per_node > 0 else 0
            defaults["nodes"] = max(ClusterConfig.nodes, sized)
            reason = (f"sized for the trace's load ({demand:,.0f} slots busy while its jobs "
                      f"arrive) at about {SIZED_LOAD:.0%}" if sized > ClusterConfig.nodes
                      else f"hedge's default {ClusterConfig.nodes}")
            why.append(f"nodes: {reason}, because the trace names no machines")
    if "slots" not in given:
        if slots:
            defaults["slots"] = slots
            why.append("slots: per machine, from the trace")
        else:
            why.append(f"slots: hedge's default {ClusterConfig.slots}, because the trace does "
                       "not record slots per machine")
    return ClusterChoice(parse_cluster(text, **defaults), "; ".join(why), demand)


def latency_sampler(spec: str):
    """Map uniforms u in [0, 1) to latencies: ``const:X``, ``uniform:A:B``, ``exp:MEAN``."""
    kind, _, rest = spec.partition(":")
    try:
        args = [float(x) for x in rest.split(":")] if rest else []
    except ValueError:
        args = None
    shapes = {"const": 1, "uniform": 2, "exp": 1}
    if kind not in shapes or args is None or len(args) != shapes[kind] or min(args) < 0:
        raise HedgeError(
            f"cluster: latency={spec!r}, expected const:X, uniform:A:B or exp:MEAN (seconds >= 0)"
        )
    if kind == "const":
        return lambda u: np.full_like(u, args[0])
    if kind == "uniform":
        return lambda u: args[0] + (args[1] - args[0]) * u
    return lambda u: -args[0] * np.log1p(-u)


def node_speeds(config: ClusterConfig, rng: np.random.Generator) -> np.ndarray:
    """Per-node speed factors: the slowest exactly ``h`` times slower than the fastest."""
    u = rng.random(config.nodes)
    if config.nodes > 1 and u.max() > u.min():
        u = (u - u.min()) / (u.max() - u.min())
    else:
        u = np.full(config.nodes, 0.5)
    return config.heterogeneity ** (0.5 - u)


@dataclass
class Degradation:
    """Ground truth: node ``node[i]`` runs ``factor[i]`` times slower in [start[i], end[i])."""

    node: np.ndarray
    start: np.ndarray
    end: np.ndarray
    factor: np.ndarray

    def __len__(self) -> int:
        return len(self.node)

    def boundaries(self) -> np.ndarray:
        """Sorted times at which some node's speed changes."""
        return np.unique(np.concatenate([self.start, self.end]))

    def slowdown_at(self, t: float, n_nodes: int) -> np.ndarray:
        """Per-node slowdown factor in effect at time ``t`` (1 = healthy)."""
        out = np.ones(n_nodes)
        active = (self.start <= t) & (t < self.end)
        np.maximum.at(out, self.node[active], self.factor[active])
        return out

    def as_records(self) -> list[dict]:
        return [
            {"node": int(n), "start": float(s), "end": float(e), "factor": float(f)}
            for n, s, e, f in zip(self.node, self.start, self.end, self.factor, strict=True)
        ]


def draw_degradation(config: ClusterConfig, horizon: float, rng: np.random.Generator) -> Degradation:
    """Slow periods on a seeded ``degraded`` fraction of nodes, up to ``horizon`` seconds."""
    n_weak = int(round(config.degraded * config.nodes))
    weak = np.sort(rng.choice(config.nodes, size=n_weak, replace=False)) if n_weak else []
    nodes, starts, ends = [], [], []
    for node in weak:
        t = rng.exponential(config.degrade_gap) * rng.random()
        while t < horizon:
            length = rng.exponential(config.degrade_period)
            nodes.append(node)
            starts.append(t)
            ends.append(t + length)
            t += length + rng.exponential(config.degrade_gap)
    return Degradation(
        node=np.asarray(nodes, dtype=np.int64),
        start=np.asarray(starts, dtype=np.float64),
        end=np.asarray(ends, dtype=np.float64),
        factor=np.full(len(nodes), config.degrade_factor),
    )


@dataclass
class Blacklist:
    """Nodes kept free of new containers: node ``node[i]`` is blacklisted in
    [start[i], end[i]) (``-inf``/``inf`` for always). Placement honours it for every
    attempt (originals, copies and relaunches); attempts already running there go on.
    The scans' ``ClusterFacts.blacklist`` lists the nodes blacklisted at scan time."""

    node: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def always(cls, nodes) -> Blacklist:
        """These nodes, for the whole run."""
        node = np.asarray(sorted({int(n) for n in nodes}), dtype=np.int64)
        return cls(node, np.full(len(node), -np.inf), np.full(len(node), np.inf))

    def __len__(self) -> int:
        return len(self.node)

    def check(self, n_nodes: int) -> None:
        bad = (self.node < 0) | (self.node >= n_nodes)
        if bad.any():
            raise HedgeError(f"blacklist: node {int(self.node[bad][0])} does not exist, "
                             f"expected a node index in 0..{n_nodes - 1}")
        if (self.end < self.start).any():
            raise HedgeError("blacklist: a period ends before it starts")

    def boundaries(self) -> np.ndarray:
        """Sorted finite times at which the blacklist changes."""
        times = np.concatenate([self.start, self.end])
        return np.sort(times[np.isfinite(times)])

    def mask_at(self, t: float, n_nodes: int) -> np.ndarray:
        """Per node: blacklisted at time ``t``."""
        out = np.zeros(n_nodes, dtype=bool)
        out[self.node[(self.start <= t) & (t < self.end)]] = True
        return out


def parse_blacklist(text: str | None) -> Blacklist | None:
    """``"3,7"`` (always) or ``"3@100-500,7"`` (node 3 from t=100 s to 500 s) -> Blacklist."""
    if not text:
        return None
    nodes, starts, ends = [], [], []
    for item in text.split(","):
        node, _, period = item.strip().partition("@")
        try:
            nodes.append(int(node))
            if not 0 <= nodes[-1] < 2**31:  # a node index; larger overflowed int64 arrays
                raise ValueError(node)
            if period:
                low, high = period.split("-", 1)
                starts.append(float(low))
                ends.append(float(high))
            else:
                starts.append(-np.inf)
                ends.append(np.inf)
        except ValueError:
            raise HedgeError(f"--blacklist: '{item}' is not NODE or NODE@START-END "
                             "(node index, seconds)") from None
    return Blacklist(np.asarray(nodes, dtype=np.int64), np.asarray(starts), np.asarray(ends))
