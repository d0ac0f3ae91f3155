"""Cluster utilisation from the YARN ResourceManager, for the adaptive threshold's R term.

``UtilisationPoller`` polls ``GET {rm}/ws/v1/cluster/nodes`` (ResourceManager REST "Cluster
Nodes API") in a background thread and keeps the last good answer as one immutable
:class:`Utilisation` record; scans read it without locks and never wait for the RM.

Per RUNNING node (other states are skipped), fractions in [0, 1]:

- **measured** (Hadoop >= 2.8 / 3.x, ``resourceUtilization`` present and reported, i.e.
  ``nodePhysicalMemoryMB > 0`` and ``nodeCPUUsage >= 0``):

      mem = nodePhysicalMemoryMB / total memory MB
      cpu = nodeCPUUsage / total vcores

  ``nodePhysicalMemoryMB`` is the node's physical memory in use (total - available, MB,
  NodeManager's NodeResourceMonitorImpl). ``nodeCPUUsage`` is *not* a percentage: it is
  ``ResourceUtilization.getCPU()``, which the NodeManager fills with the number of
  processors busy (``getNumVCoresUsed()`` = overall CPU% / 100; 2.5 = two and a half cores;
  YARN-8932 notes the javadoc's "normalized to 1 CPU" is misleading), so it is divided by
  the node's vcores. The REST API does not give the physical memory size or processor count,
  so the totals are the node's YARN resource: ``totalResource.memory`` / ``totalResource.vCores``
  when present (3.x), else ``usedMemoryMB + availMemoryMB`` and ``usedVirtualCores +
  availableVirtualCores``. Memory used by the OS and daemons, or more processors than vcores,
  can push a ratio past 1: it is clipped to [0, 1].
- **allocation** (Hadoop 2.7, or a node whose NodeManager does not report utilisation,
  where the RM shows zeros):

      mem = usedMemoryMB / (usedMemoryMB + availMemoryMB)
      cpu = usedVirtualCores / (usedVirtualCores + availableVirtualCores)

The same answer counts the cluster's **slots** for a scan whose AM does not know them (hedge's
shim on YARN sends none: a speculator's AppContext shows no headroom): containers of the
job's map container (the shim sends ``mapreduce.map.memory.mb`` / ``cpu.vcores`` where the job
sets them; else ``[cluster] container_mb`` / ``container_vcores``, MapReduce's default 1,024 MB
and 1 vcore) that fit on each RUNNING node, whole ones per node, by its YARN resource (total)
and by ``availMemoryMB`` / ``availableVirtualCores`` (free). The window policies plan their
copies on the free ones, hedge-auto weighs a copy by the busy share.

A node with a zero total gets NaN (unknown). Session nodes are matched by host name: the AM
reports ``NodeId.getHost()``, which is the RM's ``nodeHostName`` and the host part of its
``id`` (``host:port``); both are indexed. Unknown session nodes get NaN, and an array with no
known node at all is returned empty (the adaptive rule's "no information": R = 0).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np

from hedge.errors import HedgeError

log = logging.getLogger("hedge.server")

NODES_PATH = "/ws/v1/cluster/nodes"
# [cluster] resourcemanager's two words: poll the ResourceManager each job's AM names (the
# default, empty), or none at all
RM_FROM_JOBS, RM_OFF = "", "off"
# ResourceManagers polled for jobs at most: one cluster has one (an HA pair's AMs name the
# same first RM id); more means the server is shared by clusters, or AMs are misconfigured
MAX_RMS_FROM_JOBS = 8
_MEMO_LIMIT = 4096  # node lists remembered per poll (one per live session, normally)


@dataclass(frozen=True)
class Utilisation:
    """One poll's answer: RUNNING nodes by host name (sorted), their fractions, its age."""

    hosts: np.ndarray  # sorted host names (str)
    cpu: np.ndarray  # fraction per host, NaN = unknown
    mem: np.ndarray
    running: int  # RUNNING nodes in the answer
    measured: int  # of which fractions come from resourceUtilization
    fetched_at: float  # clock() when the answer arrived
    # per RUNNING node: available MB, available vcores, total MB, total vcores
    capacity: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))

    def slots(self, container_mb: float, container_vcores: float) -> tuple[int, int]:
        """(total, free) containers of that size, whole ones per node."""
        c = self.capacity
        fit = np.minimum(c[:, 0::2] // container_mb, c[:, 1::2] // container_vcores)
        free, total = (int(v) for v in np.maximum(fit, 0).sum(axis=0))
        return total, free

    def lookup(self, nodes: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(cpu, mem) aligned with ``nodes``; NaN where a name is not a RUNNING node."""
        names = np.asarray(nodes, dtype=str)
        if len(self.hosts) == 0 or len(names) == 0:
            nan = np.full(len(names), np.nan)
            return nan, nan.copy()
        pos = np.minimum(np.searchsorted(self.hosts, names), len(self.hosts) - 1)
        found = self.hosts[pos] == names
        cpu = np.where(found, self.cpu[pos], np.nan)
        mem = np.where(found, self.mem[pos], np.nan)
        return cpu, mem


def parse_resourcemanager(text: str, where: str = "resourcemanager", alternatives: str = "",
                          ) -> str:
    """``http(s)://host[:port]`` (no path, query or credentials) -> the same, normalised;
    ``alternatives`` names what else the caller accepts, for the error message."""
    text = text.strip().rstrip("/")
    try:
        parts = urlsplit(text)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        parts, port_ok = None, False
    if (parts is None or not port_ok or parts.scheme not in ("http", "https")
            or not parts.hostname or parts.path or parts.query or parts.username):
        raise HedgeError(f"{where} = {text!r}: expected the ResourceManager web address, "
                         f"http://host:port (e.g. http://rm:8088){alternatives}")
    return text

def _number(node: dict, key: str, where: str) -> float:
    value = node.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise HedgeError(f"{where}: field '{key}' = {value!r}, expected a number")
    return float(value)


def _ratio(used: float, total: float) -> float:
    return min(max(used / total, 0.0), 1.0) if total > 0 else float("nan")


def node_resources(node: dict, where: str = "node") -> tuple[float, float, float, float]:
    """(available MB, available vcores, total MB, total vcores) of one node object of the
    Cluster Nodes API: totals from ``totalResource`` (3.x), else used + available."""
    used_mb, avail_mb = _number(node, "usedMemoryMB", where), _number(node, "availMemoryMB", where)
    used_vc = _number(node, "usedVirtualCores", where)
    avail_vc = _number(node, "availableVirtualCores", where)
    total = node.get("totalResource")
    if isinstance(total, dict):
        return avail_mb, avail_vc, _number(total, "memory", where), _number(total, "vCores",
                                                                           where)
    return avail_mb, avail_vc, used_mb + avail_mb, used_vc + avail_vc


def node_fractions(node: dict, where: str = "node") -> tuple[float, float, bool]:
    """(cpu, mem, measured) for one node object of the Cluster Nodes API (module docstring)."""
    used_mb, avail_mb = _number(node, "usedMemoryMB", where), _number(node, "availMemoryMB", where)
    used_vc = _number(node, "usedVirtualCores", where)
    avail_vc = _number(node, "availableVirtualCores", where)
    _, _, total_mb, total_vc = node_resources(node, where)
    util = node.get("resourceUtilization")
    if isinstance(util, dict):
        pmem = _number(util, "nodePhysicalMemoryMB", where)
        cores = _number(util, "nodeCPUUsage", where)
        if pmem > 0 and cores >= 0:  # zeros: the NodeManager's monitor is off
            return _ratio(cores, total_vc), _ratio(pmem, total_mb), True
    return _ratio(used_vc, used_vc + avail_vc), _ratio(used_mb, used_mb + avail_mb), False


def parse_nodes(doc: object, fetched_at: float, where: str = NODES_PATH) -> Utilisation:
    """A :class:`Utilisation` from the decoded JSON of the Cluster Nodes API."""
    nodes_obj = doc.get("nodes") if isinstance(doc, dict) else None
    if nodes_obj is None and isinstance(doc, dict) and "nodes" in doc:
        nodes_obj = {}  # the RM answers {"nodes": null} when it has no node at all
    if not isinstance(nodes_obj, dict):
        raise HedgeError(f"{where}: expected a JSON object with field 'nodes'")
    listed = nodes_obj.get("node", [])
    if isinstance(listed, dict):  # a single node may come unwrapped
        listed = [listed]
    if not isinstance(listed, list):
        raise HedgeError(f"{where}: field 'nodes.node' must be a list of node objects")
    by_host: dict[str, tuple[float, float, bool]] = {}
    capacity: list[tuple[float, float, float, float]] = []
    running = measured = 0
    for i, node in enumerate(listed):
        if not isinstance(node, dict):
            raise HedgeError(f"{where}: nodes.node[{i}] is not an object")
        if node.get("state") != "RUNNING":
            continue
        fractions = node_fractions(node, f"{where}: nodes.node[{i}]")
        capacity.append(node_resources(node, f"{where}: nodes.node[{i}]"))
        running, measured = running + 1, measured + fractions[2]
        host = str(node.get("nodeHostName") or "")
        id_host = str(node.get("id") or "").rpartition(":")[0]
        for name in {host, id_host} - {""}:
            by_host[name] = fractions
    hosts = sorted(by_host)
    values = np.array([by_host[h][:2] for h in hosts], dtype=float).reshape(len(hosts), 2)
    return Utilisation(hosts=np.array(hosts, dtype=str), cpu=values[:, 0], mem=values[:, 1],
                       running=running, measured=measured, fetched_at=fetched_at,
                       capacity=np.array(capacity, dtype=float).reshape(len(capacity), 4))


def _aligned(record: Utilisation, nodes: Sequence[str]) -> dict[str, np.ndarray]:
    """ClusterFacts fields for ``nodes`` from one record; an all-unknown array is left out."""
    cpu, mem = record.lookup(nodes)
    out = {}
    for name, values in (("cpu_util", cpu), ("mem_util", mem)):
        if not np.isnan(values).all():
            values.flags.writeable = False  # shared by the scans until the next poll
            out[name] = values
    return out


class UtilisationPoller:
    """Polls the RM every ``poll_interval`` s; :meth:`fields` serves the last good poll.

    A failed poll keeps the previous record until it is older than ``max_age`` seconds, then
    :meth:`fields` answers ``{}`` (unknown). Failures are logged once per outage
    (``event=rm_unreachable``) and the first success after one once (``event=rm_recovered``).
    """

    def __init__(self, resourcemanager: str, poll_interval: float = 10.0, max_age: float = 60.0,
                 timeout: float | None = None, clock: Callable[[], float] = time.monotonic,
                 ) -> None:
        self.address = resourcemanager.rstrip("/")
        self.url = self.address + NODES_PATH
        self.poll_interval = poll_interval
        self.max_age = max_age
        self.timeout = min(3.0, poll_interval) if timeout is None else timeout
        self.clock = clock
        self.record: Utilisation | None = None  # replaced whole, never mutated
        # per-record lookups by session node list: a scan does a dict hit, not a string search
        self._memo: tuple[Utilisation | None, dict[tuple[str, ...], list]] = (None, {})
        self._down_since: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def fetch(self) -> Utilisation:
        """One GET and parse (HedgeError on any failure)."""
        import requests

        try:
            response = requests.get(self.url, timeout=self.timeout,
                                    headers={"Accept": "application/json"})
            response.raise_for_status()
            doc = response.json()
        except requests.RequestException as exc:
            raise HedgeError(f"{self.url}: {type(exc).__name__}: {exc}") from None
        except ValueError as exc:
            raise HedgeError(f"{self.url}: answer is not JSON ({exc})") from None
        return parse_nodes(doc, self.clock(), self.url)

    def poll_once(self) -> bool:
        """Fetch, swap in the new record; log outage/recovery transitions. True on success."""
        try:
            record = self.fetch()
        except HedgeError as exc:
            if self._down_since is None:
                self._down_since = self.clock()
                log.warning("event=rm_unreachable url=%s reason=%r (utilisation unknown after "
                            "max_age=%.0fs; logged once per outage)", self.url,
                            str(exc).removeprefix(f"{self.url}: "), self.max_age)
            return False
        self.publish(record)
        if self._down_since is not None:
            log.info("event=rm_recovered url=%s nodes=%d measured=%d down_s=%.0f", self.url,
                     record.running, record.measured, self.clock() - self._down_since)
            self._down_since = None
        return True

    def fields(self, nodes: Sequence[str]) -> dict[str, np.ndarray]:
        """``cpu_util``/``mem_util`` for ClusterFacts aligned with ``nodes``; {} when unknown.

        An array whose every entry is unknown is left out (empty = no information), so the
        adaptive rule's mean never sees an all-NaN array.
        """
        record = self.current()
        if record is None:
            return {}
        table, memo = self._memo
        if table is not record or len(memo) > _MEMO_LIMIT:  # a poll is being published now
            return _aligned(record, nodes)
        # Keyed by the node names themselves: a session passes a new list at every scan, but
        # its names rarely change, and hashing a tuple of str (hashes cached) is a C loop.
        key = tuple(nodes)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = [_aligned(record, key), True]
        hit[1] = True
        return dict(hit[0])

    def slots(self, container_mb: float, container_vcores: float) -> tuple[int, int] | None:
        """(total, free) containers of that size by the last good poll; None when unknown."""
        record = self.current()
        return None if record is None else record.slots(container_mb, container_vcores)

    def current(self) -> Utilisation | None:
        """The last good poll, None when there is none or it is older than ``max_age``."""
        record = self.record  # one read: the poller may swap it concurrently
        if record is None or self.clock() - record.fetched_at > self.max_age:
            return None
        return record

    def publish(self, record: Utilisation) -> None:
        """Make ``record`` the current poll. The node lists scanned since the previous poll
        are looked up here (in the poller's thread), so the next scans are dict hits; lists
        no scan asked for during a whole interval (ended sessions) are forgotten."""
        fresh = {key: [_aligned(record, key), False]
                 for key, (_, used) in list(self._memo[1].items()) if used}
        self._memo = (record, fresh)
        self.record = record

    # --- background thread ----------------------------------------------------------------
    def start(self) -> None:
        log.info("event=rm_polling url=%s interval_s=%g max_age_s=%g timeout_s=%g", self.url,
                 self.poll_interval, self.max_age, self.timeout)
        self._thread = threading.Thread(target=self._run, name="hedge-rm-poller", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(self.poll_interval)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout + 1.0)


class ResourceManagers:
    """Which ResourceManager a job's cluster facts come from.

    ``setting`` is ``[cluster] resourcemanager``: a web address polls that RM for every job
    (an address a job's AM names is then ignored, logged once per address); ``off`` polls
    none; empty (the default) polls the RM each job's AM names. The shim sends the address
    the AM's own configuration resolves (``yarn.resourcemanager.webapp.address``, or its
    https twin), so a server needs no setting to count a YARN cluster's free slots. Pollers
    of named RMs start at the first job naming one and run until :meth:`stop`; at most
    ``MAX_RMS_FROM_JOBS`` of them (a job naming one more gets none, logged once).
    """

    def __init__(self, setting: str, poll_interval: float = 10.0, max_age: float = 60.0,
                 ) -> None:
        self.setting = setting
        self.poll_interval, self.max_age = poll_interval, max_age
        self.configured = (None if setting in (RM_FROM_JOBS, RM_OFF)
                           else UtilisationPoller(setting, poll_interval, max_age))
        self._named: dict[str, UtilisationPoller] = {}
        self._logged: set[str] = set()  # addresses ignored or refused, logged once each
        self._lock = threading.Lock()

    def for_job(self, job_id: str, address: str) -> UtilisationPoller | None:
        """The poller of the RM ``job_id``'s cluster facts come from; None: no RM.
        ``address`` is the one its AM named ("" when it named none)."""
        if self.configured is not None:
            if address and address != self.configured.address:
                self._log_once(address, "event=rm_from_job_ignored job=%s url=%s "
                               "configured=%s", job_id, address, self.configured.address)
            return self.configured
        if self.setting == RM_OFF or not address:
            return None
        with self._lock:
            poller = self._named.get(address)
            full = poller is None and len(self._named) >= MAX_RMS_FROM_JOBS
            if poller is None and not full:
                poller = self._named[address] = UtilisationPoller(
                    address, self.poll_interval, self.max_age)
                log.info("event=rm_from_job job=%s url=%s", job_id, address)
                poller.start()
        if full:
            self._log_once(address, "event=rm_from_job_refused job=%s url=%s reason='already "
                           "polling %d ResourceManagers'", job_id, address, MAX_RMS_FROM_JOBS)
        return poller

    def _log_once(self, address: str, message: str, *args: object) -> None:
        with self._lock:
            if address in self._logged:
                return
            self._logged.add(address)
        log.warning(message, *args)

    def start(self) -> None:
        if self.configured is not None:
            self.configured.start()

    def stop(self) -> None:
        with self._lock:
            pollers = [*self._named.values(), *([self.configured] if self.configured else [])]
        for poller in pollers:
            poller.stop()
